package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		s, err := sqlite.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatalf("open sqlite store: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close sqlite store: %v", err)
			}
		})
		return s
	})
}

// TestDataDirWithURICharacters: a data directory whose path holds
// characters that mean something in a URI keeps its database inside it.
func TestDataDirWithURICharacters(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := filepath.Join(base, "docs#1?x=1 %41")
	s, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, sqlite.FileName)); err != nil {
		t.Fatalf("the database is not in the data directory: %v", err)
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("files beside the data directory: %v", entries)
	}
}
