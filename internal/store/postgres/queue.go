package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// ClaimTurn leases the oldest queued turn that may run now: its job is
// active, has no running turn, and no earlier queued turn. The schema's
// claim_turn function (migrations/0012_claim_turn.sql, as 0014 replaced it)
// walks the queue in order and stops at the first such turn; SKIP LOCKED
// lets workers in every process claim at once without waiting on each other.
func (s *Store) ClaimTurn(ctx context.Context, worker string, now, leaseUntil time.Time) (agentjob.Claim, bool, error) {
	c := agentjob.Claim{Worker: worker}
	err := s.pool.QueryRow(ctx, `SELECT job_id, project_id, seq, attempts FROM claim_turn($1, $2, $3)`, worker, leaseUntil, now).Scan(&c.JobID, &c.ProjectID, &c.Seq, &c.Attempts)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return agentjob.Claim{}, false, nil
	case isUniqueViolation(err):
		// Another worker started a turn of the same job in a race the
		// query's snapshot could not see; the index refused the second.
		return agentjob.Claim{}, false, nil
	case err != nil:
		return agentjob.Claim{}, false, fmt.Errorf("claim turn: %w", err)
	}
	return c, true, nil
}

func leaseLost(c agentjob.Claim) error { return agentjob.LeaseLostError(c) }

// RenewLease extends a running turn's lease and reports whether a cancel
// was requested. A lease taken over by another worker is a Conflict.
func (s *Store) RenewLease(ctx context.Context, c agentjob.Claim, leaseUntil time.Time) (bool, error) {
	var canceled bool
	err := s.pool.QueryRow(ctx, `UPDATE job_turns SET lease_until = $1 WHERE job_id = $2 AND seq = $3 AND state = 'running' AND lease_owner = $4 AND attempts = $5 RETURNING cancel_requested`,
		leaseUntil, c.JobID, c.Seq, c.Worker, c.Attempts).Scan(&canceled)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, leaseLost(c)
	}
	if err != nil {
		return false, fmt.Errorf("renew lease: %w", err)
	}
	return canceled, nil
}

// ExpiredTurns lists running turns whose lease ran out.
func (s *Store) ExpiredTurns(ctx context.Context, now time.Time) ([]agentjob.Claim, error) {
	rows, err := s.pool.Query(ctx, `SELECT t.job_id, j.project_id, t.seq, t.attempts, t.lease_owner, t.cancel_requested FROM job_turns t JOIN jobs j ON j.id = t.job_id WHERE t.state = 'running' AND t.lease_until < $1 ORDER BY t.lease_until`, now)
	if err != nil {
		return nil, fmt.Errorf("list expired turns: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentjob.Claim, error) {
		var c agentjob.Claim
		err := row.Scan(&c.JobID, &c.ProjectID, &c.Seq, &c.Attempts, &c.Worker, &c.CancelRequested)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("list expired turns: %w", err)
	}
	return out, nil
}

// RequeueTurn hands a running turn back to the queue on shutdown, without
// using up its attempt. A turn whose job was canceled meanwhile is not
// queued again (lease lost): it stays expired, and recovery ends it.
func (s *Store) RequeueTurn(ctx context.Context, c agentjob.Claim) error {
	tag, err := s.pool.Exec(ctx, `UPDATE job_turns SET state = 'queued', attempts = $1, lease_owner = '', lease_until = NULL WHERE job_id = $2 AND seq = $3 AND state = 'running' AND lease_owner = $4 AND attempts = $5 AND NOT cancel_requested`,
		c.Attempts-1, c.JobID, c.Seq, c.Worker, c.Attempts)
	if err != nil {
		return fmt.Errorf("requeue turn: %w", s.noteWrite(err))
	}
	if tag.RowsAffected() == 0 {
		return leaseLost(c)
	}
	return nil
}

// SaveCheckpoint records how far the claim's turn got, only while the claim
// still holds it.
func (s *Store) SaveCheckpoint(ctx context.Context, c agentjob.Claim, cp agentjob.Checkpoint) error {
	tag, err := s.pool.Exec(ctx, `UPDATE job_turns SET pushed_sha = $1, pushed_summary = $2, pushed_files = $3, pr_number = $4, pr_link = $5 WHERE job_id = $6 AND seq = $7 AND state = 'running' AND lease_owner = $8 AND attempts = $9`,
		cp.PushedSHA, cp.Summary, nonNil(cp.FilesChanged), cp.PRNumber, cp.PRLink, c.JobID, c.Seq, c.Worker, c.Attempts)
	if err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return leaseLost(c)
	}
	return nil
}
