package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO pr_checks (id, project_id, number, head_sha, head_ref, base_ref, pull_ref, fork, link, source,
				state, attempts, worker, run_after, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued', 0, '', $11, $12, $13)
			ON CONFLICT (project_id, number, head_sha) DO NOTHING`,
			c.ID, c.ProjectID, c.Number, c.HeadSHA, c.HeadRef, c.BaseRef, c.PullRef, c.Fork, c.Link, c.Source,
			c.RunAfter, c.CreatedAt, c.UpdatedAt)
		if isForeignKeyViolation(err) {
			return apperr.New(apperr.NotFound, "project %q not found", c.ProjectID)
		}
		if err != nil {
			return err
		}
		created = tag.RowsAffected() == 1
		out, err = scanPRCheck(tx.QueryRow(ctx, `SELECT `+prCheckColumns+` FROM pr_checks WHERE project_id = $1 AND number = $2 AND head_sha = $3`,
			c.ProjectID, c.Number, c.HeadSHA))
		return err
	})
	if err != nil {
		return prcheck.Check{}, false, fmt.Errorf("queue pull request check: %w", err)
	}
	return out, created, nil
}

// ClaimPRCheck implements prcheck.Store. SKIP LOCKED lets workers of
// several replicas claim different checks at once.
func (s *Store) ClaimPRCheck(ctx context.Context, worker string, now, leaseUntil time.Time) (prcheck.Check, bool, error) {
	c, err := scanPRCheck(s.pool.QueryRow(ctx, `UPDATE pr_checks SET state = 'running', attempts = attempts + 1, worker = $1, lease_until = $2, updated_at = $3
		WHERE id = (SELECT id FROM pr_checks
			WHERE (state = 'queued' AND run_after <= $3) OR (state = 'running' AND lease_until < $3)
			ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+prCheckColumns, worker, leaseUntil, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return prcheck.Check{}, false, nil
	}
	if err != nil {
		return prcheck.Check{}, false, fmt.Errorf("claim pull request check: %w", err)
	}
	return c, true, nil
}

// RenewPRCheck implements prcheck.Store.
func (s *Store) RenewPRCheck(ctx context.Context, c prcheck.Check, leaseUntil time.Time, runs []prcheck.RunRef) error {
	var runsJSON []byte // NULL keeps the runs
	if runs != nil {
		var err error
		if runsJSON, err = json.Marshal(runs); err != nil {
			return fmt.Errorf("encode runs: %w", err)
		}
	}
	tag, err := s.pool.Exec(ctx, `UPDATE pr_checks SET lease_until = $1, runs = coalesce($2::jsonb, runs)
		WHERE id = $3 AND state = 'running' AND worker = $4 AND attempts = $5`,
		leaseUntil, runsJSON, c.ID, c.Worker, c.Attempts)
	return fencedWrite(tag, err, "renew pull request check")
}

// FinishPRCheck implements prcheck.Store.
func (s *Store) FinishPRCheck(ctx context.Context, c prcheck.Check, state prcheck.State, errText string, runAfter time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE pr_checks SET state = $1, error = $2, run_after = CASE WHEN $1 = 'queued' THEN $3 ELSE run_after END,
			worker = '', lease_until = NULL, updated_at = now()
		WHERE id = $4 AND state = 'running' AND worker = $5 AND attempts = $6`,
		string(state), errText, runAfter, c.ID, c.Worker, c.Attempts)
	return fencedWrite(tag, err, "finish pull request check")
}

// fencedWrite is the error of an update fenced by its claim: lost when it
// changed no row.
func fencedWrite(tag pgconn.CommandTag, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return prcheck.ErrLeaseLost
	}
	return nil
}

// PRChecks implements prcheck.Store.
func (s *Store) PRChecks(ctx context.Context, projectID string, number int) ([]prcheck.Check, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+prCheckColumns+` FROM pr_checks WHERE project_id = $1 AND number = $2 ORDER BY created_at DESC, id DESC`, projectID, number)
	if err != nil {
		return nil, fmt.Errorf("list pull request checks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (prcheck.Check, error) { return scanPRCheck(row) })
	if err != nil {
		return nil, fmt.Errorf("list pull request checks: %w", err)
	}
	return out, nil
}

func scanPRCheck(row pgx.Row) (prcheck.Check, error) {
	var c prcheck.Check
	var state string
	var runs []byte
	var leaseUntil *time.Time
	err := row.Scan(&c.ID, &c.ProjectID, &c.Number, &c.HeadSHA, &c.HeadRef, &c.BaseRef, &c.PullRef, &c.Fork, &c.Link, &c.Source,
		&state, &c.Attempts, &c.Worker, &leaseUntil, &c.RunAfter, &runs, &c.Error, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return c, err
	}
	c.State = prcheck.State(state)
	if leaseUntil != nil {
		c.LeaseUntil = leaseUntil.UTC()
	}
	c.RunAfter, c.CreatedAt, c.UpdatedAt = c.RunAfter.UTC(), c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	if err := json.Unmarshal(runs, &c.Runs); err != nil {
		return c, fmt.Errorf("decode runs of check %s: %w", c.ID, err)
	}
	return c, nil
}
