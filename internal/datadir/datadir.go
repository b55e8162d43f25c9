// Package datadir guards a SQLite data directory against being replaced
// while docsmith uses it. Every process that opens the directory's store
// (serve, and the set-up commands) holds a shared lock on a file in it for
// as long as it does; restore takes the lock exclusively, so it is refused
// while any of them runs, and they are refused while a restore runs.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docsmith/docsmith/internal/workspace"
)

// LockName is the lock file inside the data directory. It holds nothing:
// the lock is the file's flock, which the system drops when the process
// that took it ends, however it ends.
const LockName = "docsmith.lock"

var (
	// ErrInUse is a data directory another process holds.
	ErrInUse = errors.New("the data directory is in use by a running docsmith")
	// ErrRestoring is a data directory a restore holds.
	ErrRestoring = errors.New("the data directory is being restored")
	// ErrNoLocks is a system without flock: processes cannot be kept apart.
	ErrNoLocks = workspace.ErrNoLocks
)

// Lock is a lock taken on a data directory.
type Lock struct {
	f *os.File
}

// Share takes a shared lock on dir, which must exist. It fails with
// ErrRestoring while a restore holds dir. On a system without flock it
// returns a Lock that keeps nothing apart, and no error.
func Share(dir string) (*Lock, error) {
	f, err := openLockFile(dir)
	if err != nil {
		return nil, err
	}
	switch err := workspace.Flock(f, false); {
	case err == nil, errors.Is(err, ErrNoLocks):
		return &Lock{f: f}, nil
	case errors.Is(err, workspace.ErrLocked):
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s; start docsmith again once it is done", ErrRestoring, dir)
	default:
		_ = f.Close()
		return nil, fmt.Errorf("lock the data directory %s: %w", dir, err)
	}
}

// Exclusive takes dir's lock for this process alone, without waiting. It
// fails with ErrInUse while any other process holds it, and with
// ErrNoLocks on a system without flock.
func Exclusive(dir string) (*Lock, error) {
	f, err := openLockFile(dir)
	if err != nil {
		return nil, err
	}
	switch err := workspace.Flock(f, true); {
	case err == nil:
		return &Lock{f: f}, nil
	case errors.Is(err, workspace.ErrLocked):
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s (a server, or a docsmith command, holds %s); stop it first", ErrInUse, dir, LockName)
	case errors.Is(err, ErrNoLocks):
		_ = f.Close()
		return nil, fmt.Errorf("%w: cannot tell whether a server uses %s", ErrNoLocks, dir)
	default:
		_ = f.Close()
		return nil, fmt.Errorf("lock the data directory %s: %w", dir, err)
	}
}

// Release drops the lock. A nil Lock is released already.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the file drops its flock
	l.f = nil
	return err
}

// openLockFile opens (creating) dir's lock file. A lock file that is not a
// regular file (a symbolic link someone left, say) is refused: the lock
// must be on the directory's own file.
func openLockFile(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockName)
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("lock the data directory: %s is not a regular file", path)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	return f, nil
}
