package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
	_, err = s.pool.Exec(ctx, `INSERT INTO check_runs (id, domain, trigger, pr_number, pr_link, report, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.ID, r.Domain, r.Trigger, r.PRNumber, r.PRLink, string(report), r.CreatedAt)
	if err := s.noteWrite(err); err != nil {
		return checkrun.Run{}, fmt.Errorf("save a check run of %s: %w", r.Domain, err)
	}
	if r.Report, err = checkrun.DecodeReport(report); err != nil {
		return checkrun.Run{}, err
	}
	return r, nil
}

const checkRunColumns = `id, domain, trigger, pr_number, pr_link, report::text, created_at`

// GetRun implements checkrun.Store.
func (s *Store) GetRun(ctx context.Context, domain, id string) (checkrun.Run, error) {
	r, err := scanCheckRun(s.pool.QueryRow(ctx, `SELECT `+checkRunColumns+` FROM check_runs WHERE domain = $1 AND id = $2`, domain, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return checkrun.Run{}, apperr.New(apperr.NotFound, "check run %q of %s not found", id, domain)
	}
	if err != nil {
		return checkrun.Run{}, fmt.Errorf("read check run %s of %s: %w", id, domain, err)
	}
	return r, nil
}

// ListRuns implements checkrun.Store.
func (s *Store) ListRuns(ctx context.Context, domain, trigger string, limit int) ([]checkrun.Run, error) {
	var p params
	q := `SELECT ` + checkRunColumns + ` FROM check_runs WHERE domain = ` + p.add(domain)
	if trigger != "" {
		q += ` AND trigger = ` + p.add(trigger)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ` + p.add(checkrun.ListLimit(limit))
	rows, err := s.pool.Query(ctx, q, p.args...)
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

func scanCheckRun(row pgx.Row) (checkrun.Run, error) {
	var r checkrun.Run
	var report string
	if err := row.Scan(&r.ID, &r.Domain, &r.Trigger, &r.PRNumber, &r.PRLink, &report, &r.CreatedAt); err != nil {
		return checkrun.Run{}, err
	}
	r.CreatedAt = r.CreatedAt.UTC()
	var err error
	r.Report, err = checkrun.DecodeReport([]byte(report))
	return r, err
}
