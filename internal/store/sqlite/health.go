package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docsmith/docsmith/internal/store/writehealth"
)

// MarkerName is the file written beside the database when it is created.
// A data directory that has it but lacks the database has lost its
// database (deleted, or moved away): Open refuses to start on an empty one
// in its place unless told to. Its name does not start with FileName, so
// that removing "docsmith.db*" (the database with its WAL) leaves it.
const MarkerName = "docsmith-database.created"

// ErrDatabaseLost: the data directory once held a database that is gone.
var ErrDatabaseLost = errors.New("the data directory held a database that is gone")

// diskFullMessage is what a client sees when a write met a full disk.
const diskFullMessage = "the server's disk is full: nothing was stored; retry once an operator has freed space"

// noteWrite records a write that failed for a reason of the store's own
// and returns its error, a full disk turned into an apperr StorageFull
// error that says so. Errors that are not the store's fault (a duplicate
// id, a cancelled request) leave its health as it was; successes count, so
// that readiness follows the latest writes (see Ping).
func (s *Store) noteWrite(err error) error {
	return s.health.Note(err, storageFault, IsDiskFull, diskFullMessage)
}

// exec runs one statement as a write transaction of its own.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// IsDiskFull reports whether err comes from a full disk.
func IsDiskFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// storageFault reports whether err is the database's own failure to store
// anything, as opposed to a refusal of what was asked.
func storageFault(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CORRUPT,
			sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOTADB:
			return true
		}
		return false
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EROFS)
}

// Ping checks that the database answers and that its latest writes did not
// fail for a reason of the store's own: readiness stays false while a fault
// is among them (see writehealth.Window). Only when no write came since the
// last check does a probe write decide.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.read.PingContext(ctx); err != nil {
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
	err = s.write.run(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO health_probe (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`,
			toMicros(time.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("%w: %w", writehealth.ErrWritesFail, err)
	}
	s.health.Clear()
	return nil
}

// checkMarker refuses a data directory whose database is gone, unless
// allowNew.
func checkMarker(dir, path, marker string, allowNew bool) error {
	_, dbErr := os.Stat(path)
	_, markErr := os.Stat(marker)
	switch {
	case dbErr == nil, !errors.Is(dbErr, os.ErrNotExist):
		return nil // there is a database (or a problem Open will report)
	case markErr == nil && !allowNew:
		return fmt.Errorf("%w: %s has %s, written when its database was created, but no %s", ErrDatabaseLost, dir, MarkerName, FileName)
	}
	return nil
}

// writeMarker notes beside the database that it exists, once.
func writeMarker(marker string, allowNew bool) error {
	if _, err := os.Stat(marker); err == nil && !allowNew {
		return nil
	}
	body := fmt.Sprintf("docsmith created its database %s in this directory at %s.\n"+
		"While this file is here, docsmith refuses to start if %s is missing,\n"+
		"rather than start over with an empty database.\n", FileName, time.Now().UTC().Format(time.RFC3339), FileName)
	if err := os.WriteFile(marker, []byte(body), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", marker, err)
	}
	return nil
}
