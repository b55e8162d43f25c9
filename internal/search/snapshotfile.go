package search

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// Snapshot files: a Memory keeps each domain's index as a snapshot (see
// engine.EncodeSnapshot) in its SnapshotDir, so that a process starting
// again loads the domain without analysing every chunk again.

// snapshotStale is how old a temporary snapshot file must be before it is
// taken for one a killed process left behind.
const snapshotStale = 10 * time.Minute

// snapshotPath is the domain's snapshot file in dir: named by a hash of
// the domain, so that no domain ID becomes a path.
func snapshotPath(dir, domain string) string {
	sum := sha256.Sum256([]byte(domain))
	return filepath.Join(dir, fmt.Sprintf("%x.idx", sum[:12]))
}

// writeSnapshotFile writes a snapshot to path with write, through a
// temporary file renamed into place, so that a reader finds a whole
// snapshot or none.
func writeSnapshotFile(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeSnapshotBytes writes an encoded snapshot to path (see
// writeSnapshotFile).
func writeSnapshotBytes(path string, data []byte) error {
	return writeSnapshotFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// sweepSnapshotTemps removes the temporary files of snapshots that a
// process killed while writing left in dir.
func sweepSnapshotTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.Contains(e.Name(), ".idx.tmp-") {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > snapshotStale {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// readSnapshotHeader reads what the snapshot at path says it holds.
func readSnapshotHeader(path string) (engine.SnapshotHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return engine.SnapshotHeader{}, err
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, engine.SnapshotHeaderSize)
	if _, err := io.ReadFull(f, buf); err != nil {
		return engine.SnapshotHeader{}, fmt.Errorf("read the snapshot's header: %w", err)
	}
	return engine.DecodeSnapshotHeader(buf)
}

// readSnapshot reads the whole snapshot at path, checks it and returns the
// index it holds.
func readSnapshot(path string) (engine.SnapshotHeader, *engine.Index, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return engine.SnapshotHeader{}, nil, err
	}
	return engine.DecodeSnapshot(data)
}
