package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/checkrun"
)

var _ checkrun.Store = (*Store)(nil)

// SaveRun implements checkrun.Store.
func (s *Store) SaveRun(ctx context.Context, r checkrun.Run) (checkrun.Run, error) {
	if err := checkrun.CheckRun(r); err != nil {
		return checkrun.Run{}, apperr.Wrap(err, apperr.Invalid, "%s", err.Error())
	}
	report, err := checkrun.EncodeReport(r.Report)
	if err != nil {
		return checkrun.Run{}, apperr.Wrap(err, apperr.TooLarge, "%s", err.Error())
	}
	r.ID = checkrun.NewRunID()
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	r.CreatedAt = r.CreatedAt.UTC().Truncate(time.Microsecond)
	err = s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO check_runs (id, domain, trigger, pr_number, pr_link, report, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Domain, r.Trigger, r.PRNumber, r.PRLink, string(report), toMicros(r.CreatedAt))
		return err
	})
	if err != nil {
		return checkrun.Run{}, fmt.Errorf("save a check run of %s: %w", r.Domain, err)
	}
	if r.Report, err = checkrun.DecodeReport(report); err != nil {
		return checkrun.Run{}, err
	}
	return r, nil
}

const checkRunColumns = `id, domain, trigger, pr_number, pr_link, report, created_at`

// GetRun implements checkrun.Store.
func (s *Store) GetRun(ctx context.Context, domain, id string) (checkrun.Run, error) {
	r, err := scanCheckRun(s.read.QueryRowContext(ctx, `SELECT `+checkRunColumns+` FROM check_runs WHERE domain = ? AND id = ?`, domain, id))
	if errors.Is(err, sql.ErrNoRows) {
		return checkrun.Run{}, apperr.New(apperr.NotFound, "check run %q of %s not found", id, domain)
	}
	if err != nil {
		return checkrun.Run{}, fmt.Errorf("read check run %s of %s: %w", id, domain, err)
	}
	return r, nil
}

// ListRuns implements checkrun.Store.
func (s *Store) ListRuns(ctx context.Context, domain, trigger string, limit int) ([]checkrun.Run, error) {
	q := `SELECT ` + checkRunColumns + ` FROM check_runs WHERE domain = ?`
	args := []any{domain}
	if trigger != "" {
		q += ` AND trigger = ?`
		args = append(args, trigger)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, checkrun.ListLimit(limit))
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list the check runs of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []checkrun.Run{}
	for rows.Next() {
		r, err := scanCheckRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list the check runs of %s: %w", domain, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the check runs of %s: %w", domain, err)
	}
	return out, nil
}

func scanCheckRun(row interface{ Scan(...any) error }) (checkrun.Run, error) {
	var r checkrun.Run
	var report string
	var created int64
	if err := row.Scan(&r.ID, &r.Domain, &r.Trigger, &r.PRNumber, &r.PRLink, &report, &created); err != nil {
		return checkrun.Run{}, err
	}
	r.CreatedAt = fromMicros(created)
	var err error
	r.Report, err = checkrun.DecodeReport([]byte(report))
	return r, err
}
