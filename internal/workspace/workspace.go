// Package workspace makes the short-lived directories that agent turns and
// index builds check repositories out into, and removes the ones a killed
// process left behind.
//
// A workspace is locked (flock) by the process that made it for as long as
// it lives. The kernel drops the lock when that process ends, however it
// ends, so a workspace whose lock can be taken belongs to no live process —
// whichever of several worker processes sharing a data directory made it —
// and Sweep removes it. A workspace is locked before it gets its final name,
// so a sweep never sees a live workspace unlocked.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// staging prefixes a workspace's name until it is locked.
const staging = ".new-"

// stagingGrace is how long a staging directory may stay before a sweep may
// remove it; one left by a process killed between mkdir and lock is older.
const stagingGrace = 10 * time.Minute

// Dir is a live workspace, locked by this process until Remove.
type Dir struct {
	// Path is the workspace's directory.
	Path string
	lock *os.File
}

// Create makes a new workspace below parent (made if missing) whose name
// starts with prefix, which should say whose it is ("turn-<job>-<seq>-").
func Create(parent, prefix string) (*Dir, error) {
	if strings.ContainsAny(prefix, `/\`) || strings.HasPrefix(prefix, ".") {
		return nil, fmt.Errorf("workspace: bad prefix %q", prefix)
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: create %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, staging+prefix+"*")
	if err != nil {
		return nil, fmt.Errorf("workspace: create: %w", err)
	}
	lock, err := os.Open(tmp)
	if err == nil {
		if err = TryLock(lock); errors.Is(err, ErrNoLocks) {
			err = nil // without flock, Sweep counts every workspace live
		}
		if err != nil {
			_ = lock.Close()
		}
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("workspace: lock: %w", err)
	}
	final := filepath.Join(parent, strings.TrimPrefix(filepath.Base(tmp), staging))
	if err := os.Rename(tmp, final); err != nil {
		_ = lock.Close()
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("workspace: create: %w", err)
	}
	return &Dir{Path: final, lock: lock}, nil
}

// Remove deletes the workspace and then releases its lock.
func (d *Dir) Remove() error {
	err := os.RemoveAll(d.Path)
	return errors.Join(err, d.lock.Close())
}

// Sweep removes the workspaces below parent whose names start with prefix
// and that no live process holds, and returns their names. A missing parent
// holds none.
func Sweep(parent, prefix string, log *slog.Logger) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: sweep %s: %w", parent, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		name := e.Name()
		switch {
		case !e.IsDir():
			continue
		case strings.HasPrefix(name, prefix):
		case strings.HasPrefix(name, staging+prefix):
			if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < stagingGrace {
				continue
			}
		default:
			continue
		}
		ok, err := removeIfStale(filepath.Join(parent, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			removed = append(removed, name)
			log.Info("removed a stale workspace left by an ended turn or build", "workspace", name, "dir", parent)
		}
	}
	return removed, errors.Join(errs...)
}

// removeIfStale removes dir when its lock can be taken.
func removeIfStale(dir string) (bool, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // removed meanwhile by its owner
	}
	if err != nil {
		return false, fmt.Errorf("workspace: open %s: %w", dir, err)
	}
	defer func() { _ = f.Close() }()
	if err := TryLock(f); err != nil {
		// Without flock a workspace cannot be told live from stale, so
		// every one counts as live.
		if errors.Is(err, ErrLocked) || errors.Is(err, ErrNoLocks) {
			return false, nil
		}
		return false, fmt.Errorf("workspace: lock %s: %w", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("workspace: remove %s: %w", dir, err)
	}
	return true, nil
}

// TryLock takes an exclusive flock on f without waiting (see Flock).
func TryLock(f *os.File) error { return Flock(f, true) }

// Flock's and TryLock's errors: the lock is held by another open file (in this
// process or another), or this system has no flock.
var (
	ErrLocked  = errors.New("held by a live process")
	ErrNoLocks = errors.New("this system has no file locks")
)
