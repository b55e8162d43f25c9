package postgres

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/store/writehealth"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestWriteFaults: PostgreSQL's disk_full (53100) becomes a StorageFull
// error and marks the store unhealthy; other resource and I/O failures mark
// it without the full-disk message; a refused value does neither.
func TestWriteFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		fault    bool
		diskFull bool
	}{
		{"disk full", &pgconn.PgError{Code: "53100", Message: "could not extend file: No space left on device"}, true, true},
		{"ENOSPC from the client side", fmt.Errorf("write: %w", syscall.ENOSPC), true, true},
		{"out of memory", &pgconn.PgError{Code: "53200"}, true, false},
		{"I/O error", &pgconn.PgError{Code: "58030"}, true, false},
		{"read-only server", &pgconn.PgError{Code: "25006"}, true, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false, false},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, false, false},
		{"plain error", errors.New("boom"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &Store{}
			err := s.noteWrite(fmt.Errorf("insert org: %w", tt.err))
			if got := s.health.Faulty(); got != tt.fault {
				t.Errorf("unhealthy = %v, want %v", got, tt.fault)
			}
			if got := apperr.Is(err, apperr.StorageFull); got != tt.diskFull {
				t.Errorf("StorageFull = %v (%v), want %v", got, err, tt.diskFull)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("the cause is lost: %v", err)
			}
		})
	}
}

// TestReadinessFollowsRealWrites: on a real PostgreSQL, readiness is false
// right after a write met a full disk, although the probe would succeed,
// and comes back once the latest writes succeed; with no write since the
// last check, the probe decides.
func TestReadinessFollowsRealWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openFresh(t)
	full := &pgconn.PgError{Code: "53100", Message: "could not extend file: No space left on device"}
	s.noteWrite(fmt.Errorf("insert job: %w", full)) //nolint:errcheck // the fault is the point
	if err := s.Ping(ctx); !errors.Is(err, writehealth.ErrWritesFail) || !IsDiskFull(err) {
		t.Fatalf("Ping right after a write met a full disk = %v, want ErrWritesFail for a full disk", err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping with no write since, the probe succeeding: %v", err)
	}
	s.noteWrite(fmt.Errorf("insert job: %w", full)) //nolint:errcheck // the fault is the point
	for i := range writehealth.Window {
		if err := s.CreateOrg(ctx, tenant.Org{ID: fmt.Sprintf("org-%d", i), CreatedAt: time.Now()}); err != nil {
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
