package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/store/writehealth"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestLostDatabaseIsRefused: a data directory whose database was created
// here and then deleted is refused, not silently replaced by an empty one;
// AllowNew starts over; a directory from before the marker existed gets one.
func TestLostDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateOrg(ctx, tenant.Org{ID: "acme", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, MarkerName)); err != nil {
		t.Fatalf("no marker beside a new database: %v", err)
	}
	// Reopening the same database is fine.
	s, err = Open(ctx, dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	_ = s.Close()

	for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		_ = os.Remove(filepath.Join(dir, name))
	}
	if _, err := Open(ctx, dir); !errors.Is(err, ErrDatabaseLost) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open after the database was deleted = %v, want ErrDatabaseLost naming the directory", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused Open created a database anyway: %v", err)
	}
	s, err = OpenWith(ctx, dir, Options{AllowNew: true})
	if err != nil {
		t.Fatalf("Open with AllowNew: %v", err)
	}
	if _, err := s.GetOrg(ctx, "acme"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("the new database is not empty: %v", err)
	}
	_ = s.Close()

	// A database from before the marker: Open adds the marker.
	old := t.TempDir()
	s, err = Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if err := os.Remove(filepath.Join(old, MarkerName)); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := os.Stat(filepath.Join(old, MarkerName)); err != nil {
		t.Errorf("no marker added beside an existing database: %v", err)
	}
}

// TestFullDatabaseSaysSo: a store whose writes fail with SQLITE_FULL (its
// page count capped, as a full disk would) answers writes with a
// StorageFull error whose message says the disk is full.
func TestFullDatabaseSaysSo(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var pages int
	err = s.write.runRaw(ctx, func(ctx context.Context, tx *wtx) error {
		return tx.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages)
	})
	if err != nil {
		t.Fatal(err)
	}
	onWriteConn(t, s, `PRAGMA max_page_count = `+strconv.Itoa(pages))
	var werr error
	for i := range 1000 {
		werr = s.CreateOrg(ctx, tenant.Org{ID: "org-" + strconv.Itoa(i) + strings.Repeat("x", 200), CreatedAt: time.Now()})
		if werr != nil {
			break
		}
	}
	if !apperr.Is(werr, apperr.StorageFull) || !IsDiskFull(werr) {
		t.Fatalf("a write to a full database = %v, want a StorageFull error", werr)
	}
	if !strings.Contains(apperr.MessageOf(werr), "disk is full") {
		t.Errorf("message %q does not say the disk is full", apperr.MessageOf(werr))
	}
	if !s.health.Faulty() {
		t.Error("the failed write left the store's health as it was")
	}
}

// TestReadinessFalseWhileWritesFail: after a write fails for a reason of
// the store's own, Ping fails while a probe write still fails, and passes
// once one succeeds.
func TestReadinessFalseWhileWritesFail(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping of a healthy store: %v", err)
	}
	// The write connection refuses writes, as a file gone read-only would.
	onWriteConn(t, s, `PRAGMA query_only = 1`)
	if err := s.CreateOrg(ctx, tenant.Org{ID: "acme", CreatedAt: time.Now()}); err == nil {
		t.Fatal("a write succeeded on a read-only connection")
	}
	if err := s.Ping(ctx); !errors.Is(err, writehealth.ErrWritesFail) || IsDiskFull(err) {
		t.Fatalf("Ping while writes fail = %v, want ErrWritesFail (not a full disk)", err)
	}
	onWriteConn(t, s, `PRAGMA query_only = 0`)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping once writes succeed again: %v", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping after recovery: %v", err)
	}
}

// TestReadinessFollowsRealWrites: on a full database, where a probe write
// still fits in a page SQLite holds, readiness is false right after real
// writes were refused, and stays false until enough real writes succeed
// again; with no write since the last check, the probe decides.
func TestReadinessFollowsRealWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A probe has written its row: later probes fit in place.
	s.health.Note(errors.New("i/o"), func(error) bool { return true }, func(error) bool { return false }, "") //nolint:errcheck // sets up a fault
	// The fault is among the latest writes: this Ping fails, the next probes.
	_ = s.Ping(ctx)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("probe on a healthy store: %v", err)
	}
	var pages int
	err = s.write.runRaw(ctx, func(ctx context.Context, tx *wtx) error {
		return tx.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages)
	})
	if err != nil {
		t.Fatal(err)
	}
	onWriteConn(t, s, `PRAGMA max_page_count = `+strconv.Itoa(pages))
	create := func(i int) error {
		return s.CreateOrg(ctx, tenant.Org{ID: "org-" + strconv.Itoa(i) + strings.Repeat("x", 60), CreatedAt: time.Now()})
	}
	full := 0
	for i := 0; i < 1000 && full < 2; i++ {
		if err := create(i); apperr.Is(err, apperr.StorageFull) {
			full++
		}
	}
	if full < 2 {
		t.Fatal("the capped database never refused a write")
	}
	if err := s.Ping(ctx); !errors.Is(err, writehealth.ErrWritesFail) || !IsDiskFull(err) {
		t.Fatalf("Ping right after two refused writes = %v, want ErrWritesFail for a full disk", err)
	}
	// Room again: readiness returns once the latest writes succeed.
	onWriteConn(t, s, `PRAGMA max_page_count = 1000000`)
	for i := range writehealth.Window {
		if err := create(2000 + i); err != nil {
			t.Fatal(err)
		}
		err := s.Ping(ctx)
		if i < writehealth.Window-1 && !errors.Is(err, writehealth.ErrWritesFail) {
			t.Fatalf("Ping after %d good writes = %v, want still not ready", i+1, err)
		}
		if i == writehealth.Window-1 && err != nil {
			t.Fatalf("Ping after %d good writes: %v", i+1, err)
		}
	}
}

// onWriteConn runs a statement on the store's write connection, outside any
// transaction.
func onWriteConn(t *testing.T, s *Store, query string) {
	t.Helper()
	err := s.write.runRaw(t.Context(), func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, query)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
