package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/prcheck"
)

var _ prcheck.Store = (*Store)(nil)

const prCheckColumns = `id, project_id, number, head_sha, head_ref, base_ref, pull_ref, fork, link, source,
	state, attempts, worker, lease_until, run_after, runs, error, created_at, updated_at`

// EnqueuePRCheck implements prcheck.Store.
func (s *Store) EnqueuePRCheck(ctx context.Context, c prcheck.Check) (prcheck.Check, bool, error) {
	var out prcheck.Check
	created := false
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO pr_checks (id, project_id, number, head_sha, head_ref, base_ref, pull_ref, fork, link, source,
				state, attempts, worker, lease_until, run_after, runs, error, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, '', 0, ?, '[]', '', ?, ?)
			ON CONFLICT (project_id, number, head_sha) DO NOTHING`,
			c.ID, c.ProjectID, c.Number, c.HeadSHA, c.HeadRef, c.BaseRef, c.PullRef, c.Fork, c.Link, c.Source,
			toMicros(c.RunAfter), toMicros(c.CreatedAt), toMicros(c.UpdatedAt))
		if isForeignKeyViolation(err) {
			return apperr.New(apperr.NotFound, "project %q not found", c.ProjectID)
		}
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		created = n == 1
		out, err = scanPRCheck(tx.QueryRowContext(ctx, `SELECT `+prCheckColumns+` FROM pr_checks WHERE project_id = ? AND number = ? AND head_sha = ?`,
			c.ProjectID, c.Number, c.HeadSHA))
		return err
	})
	if err != nil {
		return prcheck.Check{}, false, fmt.Errorf("queue pull request check: %w", err)
	}
	return out, created, nil
}

// ClaimPRCheck implements prcheck.Store: the oldest due check, in one
// write transaction (the single writer makes it the only claim).
func (s *Store) ClaimPRCheck(ctx context.Context, worker string, now, leaseUntil time.Time) (prcheck.Check, bool, error) {
	var c prcheck.Check
	found := false
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM pr_checks
			WHERE (state = 'queued' AND run_after <= ?1) OR (state = 'running' AND lease_until < ?1)
			ORDER BY created_at, id LIMIT 1`, toMicros(now)).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find a due check: %w", err)
		}
		c, err = scanPRCheck(tx.QueryRowContext(ctx, `UPDATE pr_checks SET state = 'running', attempts = attempts + 1, worker = ?, lease_until = ?, updated_at = ?
			WHERE id = ? RETURNING `+prCheckColumns, worker, toMicros(leaseUntil), toMicros(now), id))
		if err != nil {
			return fmt.Errorf("lease check %s: %w", id, err)
		}
		found = true
		return nil
	})
	if err != nil {
		return prcheck.Check{}, false, fmt.Errorf("claim pull request check: %w", err)
	}
	return c, found, nil
}

// RenewPRCheck implements prcheck.Store.
func (s *Store) RenewPRCheck(ctx context.Context, c prcheck.Check, leaseUntil time.Time, runs []prcheck.RunRef) error {
	var runsJSON any // NULL keeps the runs
	if runs != nil {
		b, err := json.Marshal(runs)
		if err != nil {
			return fmt.Errorf("encode runs: %w", err)
		}
		runsJSON = string(b)
	}
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE pr_checks SET lease_until = ?, runs = coalesce(?, runs)
			WHERE id = ? AND state = 'running' AND worker = ? AND attempts = ?`,
			toMicros(leaseUntil), runsJSON, c.ID, c.Worker, c.Attempts)
		return fencedWrite(res, err, "renew pull request check")
	})
}

// FinishPRCheck implements prcheck.Store.
func (s *Store) FinishPRCheck(ctx context.Context, c prcheck.Check, state prcheck.State, errText string, runAfter time.Time) error {
	now := time.Now()
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE pr_checks SET state = ?, error = ?, run_after = CASE WHEN ? = 'queued' THEN ? ELSE run_after END,
				worker = '', lease_until = 0, updated_at = ?
			WHERE id = ? AND state = 'running' AND worker = ? AND attempts = ?`,
			string(state), errText, string(state), toMicros(runAfter), toMicros(now), c.ID, c.Worker, c.Attempts)
		return fencedWrite(res, err, "finish pull request check")
	})
}

// fencedWrite is the error of an update fenced by its claim: lost when it
// changed no row.
func fencedWrite(res sql.Result, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return prcheck.ErrLeaseLost
	}
	return nil
}

// PRChecks implements prcheck.Store.
func (s *Store) PRChecks(ctx context.Context, projectID string, number int) ([]prcheck.Check, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+prCheckColumns+` FROM pr_checks WHERE project_id = ? AND number = ? ORDER BY created_at DESC, id DESC`, projectID, number)
	if err != nil {
		return nil, fmt.Errorf("list pull request checks: %w", err)
	}
	defer rows.Close()
	var out []prcheck.Check
	for rows.Next() {
		c, err := scanPRCheck(rows)
		if err != nil {
			return nil, fmt.Errorf("list pull request checks: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func scanPRCheck(row interface{ Scan(...any) error }) (prcheck.Check, error) {
	var c prcheck.Check
	var state, runs string
	var leaseUntil, runAfter, created, updated int64
	err := row.Scan(&c.ID, &c.ProjectID, &c.Number, &c.HeadSHA, &c.HeadRef, &c.BaseRef, &c.PullRef, &c.Fork, &c.Link, &c.Source,
		&state, &c.Attempts, &c.Worker, &leaseUntil, &runAfter, &runs, &c.Error, &created, &updated)
	if err != nil {
		return c, err
	}
	c.State = prcheck.State(state)
	if leaseUntil != 0 {
		c.LeaseUntil = fromMicros(leaseUntil)
	}
	c.RunAfter, c.CreatedAt, c.UpdatedAt = fromMicros(runAfter), fromMicros(created), fromMicros(updated)
	if err := json.Unmarshal([]byte(runs), &c.Runs); err != nil {
		return c, fmt.Errorf("decode runs of check %s: %w", c.ID, err)
	}
	return c, nil
}
