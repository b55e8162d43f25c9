package datadir_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/docsmith/docsmith/internal/datadir"
)

// TestLocks: processes that use a data directory share it; a restore
// takes it alone, refused while any of them holds it and refusing them
// while it does. Each open file is its own holder, in one process too.
func TestLocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := datadir.Share(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := datadir.Share(dir)
	if err != nil {
		t.Fatalf("a second process could not share the directory: %v", err)
	}
	if _, err := datadir.Exclusive(dir); !errors.Is(err, datadir.ErrInUse) {
		t.Fatalf("exclusive while shared = %v, want ErrInUse", err)
	}
	_ = a.Release()
	if _, err := datadir.Exclusive(dir); !errors.Is(err, datadir.ErrInUse) {
		t.Fatalf("exclusive while one holder is left = %v, want ErrInUse", err)
	}
	_ = b.Release()
	x, err := datadir.Exclusive(dir)
	if err != nil {
		t.Fatalf("exclusive once every holder is gone: %v", err)
	}
	if _, err := datadir.Share(dir); !errors.Is(err, datadir.ErrRestoring) {
		t.Fatalf("share while held alone = %v, want ErrRestoring", err)
	}
	_ = x.Release()
	if err := x.Release(); err != nil {
		t.Fatalf("a second release = %v", err)
	}

	// A lock file that is a link elsewhere is not locked through.
	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(t.TempDir(), "other"), filepath.Join(linked, datadir.LockName)); err != nil {
		t.Fatal(err)
	}
	if _, err := datadir.Share(linked); err == nil {
		t.Fatal("a linked lock file was used")
	}
}
