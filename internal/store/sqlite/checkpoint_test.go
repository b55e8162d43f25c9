package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCommitsLeaveCheckpointsToTheCheckpointer: a commit that takes the
// log past SQLite's automatic threshold (1,000 pages) does not copy it into
// the database file; the checkpointer does, beside the writer.
func TestCommitsLeaveCheckpointsToTheCheckpointer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		every time.Duration
	}{{"by hand", time.Hour}, {"on its own", 10 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := OpenWith(t.Context(), dir, Options{checkpointEvery: tc.every})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			var auto int
			err = s.writeTx(t.Context(), func(ctx context.Context, tx *wtx) error {
				return tx.QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto)
			})
			if err != nil || auto != 0 {
				t.Fatalf("the writer's wal_autocheckpoint = %d (%v), want 0", auto, err)
			}
			db := filepath.Join(dir, FileName)
			before := fileSize(t, db)
			const blob = 6 << 20
			err = s.writeTx(t.Context(), func(ctx context.Context, tx *wtx) error {
				_, err := tx.ExecContext(ctx, `CREATE TABLE filler (b BLOB); INSERT INTO filler VALUES (zeroblob(?))`, blob)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if tc.every == time.Hour {
				if after := fileSize(t, db); after != before {
					t.Fatalf("a commit checkpointed: the database file went from %d to %d bytes", before, after)
				}
				if err := s.checkpoint.checkpoint(t.Context(), "PASSIVE"); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for fileSize(t, db) < before+blob {
				if time.Now().After(deadline) {
					t.Fatalf("the log was not copied: the database file has %d bytes", fileSize(t, db))
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
