package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docsmith/docsmith/internal/store/writehealth"
)

// diskFullMessage is what a client sees when a write met a full disk.
const diskFullMessage = "the database server's disk is full: nothing was stored; retry once an operator has freed space"

// noteWrite records a write that failed for a reason of the database's
// own and returns its error, a full disk turned into an apperr StorageFull
// error that says so. Other errors leave the store's health as it was.
func (s *Store) noteWrite(err error) error {
	return s.health.Note(err, storageFault, IsDiskFull, diskFullMessage)
}

// IsDiskFull reports whether err comes from a full disk: SQLSTATE 53100
// (disk_full) from the server, or ENOSPC here.
func IsDiskFull(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// storageFault reports whether err is the database's own failure to store
// anything: insufficient resources (class 53), a system or I/O error
// (class 58), data corruption (XX001, XX002) or a read-only server (25006).
func storageFault(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return errors.Is(err, syscall.ENOSPC)
	}
	switch {
	case strings.HasPrefix(pe.Code, "53"), strings.HasPrefix(pe.Code, "58"):
		return true
	}
	switch pe.Code {
	case "XX001", "XX002", "25006":
		return true
	}
	return false
}

// Ping checks that the database answers and that its latest writes did not
// fail for a reason of the database's own: readiness stays false while a
// fault is among them (see writehealth.Window). Only when no write came
// since the last check does a probe write decide.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return err
	}
	err := s.health.Check()
	if err == nil {
		return nil
	}
	if !errors.Is(err, writehealth.ErrProbe) {
		return fmt.Errorf("%w: %w", writehealth.ErrWritesFail, err)
	}
	// Not through noteWrite: the probe is not one of the latest writes.
	if _, err := s.pool.Exec(ctx, `INSERT INTO health_probe (id, checked_at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`, time.Now().UTC()); err != nil {
		return fmt.Errorf("%w: %w", writehealth.ErrWritesFail, err)
	}
	s.health.Clear()
	return nil
}
