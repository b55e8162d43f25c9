package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// ClaimTurn leases the oldest queued turn that may run now: its job is
// active, has no running turn, and no earlier queued turn.
func (s *Store) ClaimTurn(ctx context.Context, worker string, now, leaseUntil time.Time) (agentjob.Claim, bool, error) {
	var c agentjob.Claim
	found := false
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		err := tx.QueryRowContext(ctx, `
			SELECT t.job_id, j.project_id, t.seq, t.attempts
			FROM job_turns t JOIN jobs j ON j.id = t.job_id
			WHERE t.state = 'queued' AND j.status = 'active' AND t.run_after <= ?
			  AND NOT EXISTS (SELECT 1 FROM job_turns r WHERE r.job_id = t.job_id AND (r.state = 'running' OR (r.state = 'queued' AND r.seq < t.seq)))
			ORDER BY t.created_at, t.job_id, t.seq
			LIMIT 1`, toMicros(now)).Scan(&c.JobID, &c.ProjectID, &c.Seq, &c.Attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find queued turn: %w", err)
		}
		c.Attempts++
		c.Worker = worker
		// The start is never before the end of the job's previous turn: now
		// was read before this transaction, which may run after that end.
		_, err = tx.ExecContext(ctx, `UPDATE job_turns SET state = 'running', attempts = ?3, lease_owner = ?4, lease_until = ?5, cancel_requested = 0,
				started_at = max(?6, coalesce((SELECT max(p.finished_at) FROM job_turns p WHERE p.job_id = ?1 AND p.seq < ?2), 0))
			WHERE job_id = ?1 AND seq = ?2`,
			c.JobID, c.Seq, c.Attempts, worker, toMicros(leaseUntil), toMicros(now))
		if err != nil {
			return fmt.Errorf("lease turn: %w", err)
		}
		found = true
		return nil
	})
	if err != nil {
		// found may be set even though the commit failed: nothing was leased.
		return agentjob.Claim{}, false, err
	}
	return c, found, nil
}

func leaseLost(c agentjob.Claim) error { return agentjob.LeaseLostError(c) }

// RenewLease extends a running turn's lease and reports whether a cancel
// was requested. A lease taken over by another worker is a Conflict.
func (s *Store) RenewLease(ctx context.Context, c agentjob.Claim, leaseUntil time.Time) (bool, error) {
	var canceled bool
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		err := tx.QueryRowContext(ctx, `UPDATE job_turns SET lease_until = ? WHERE job_id = ? AND seq = ? AND state = 'running' AND lease_owner = ? AND attempts = ? RETURNING cancel_requested`,
			toMicros(leaseUntil), c.JobID, c.Seq, c.Worker, c.Attempts).Scan(&canceled)
		if errors.Is(err, sql.ErrNoRows) {
			return leaseLost(c)
		}
		return err
	})
	return canceled, err
}

// ExpiredTurns lists running turns whose lease ran out.
func (s *Store) ExpiredTurns(ctx context.Context, now time.Time) ([]agentjob.Claim, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT t.job_id, j.project_id, t.seq, t.attempts, t.lease_owner, t.cancel_requested FROM job_turns t JOIN jobs j ON j.id = t.job_id WHERE t.state = 'running' AND t.lease_until < ? ORDER BY t.lease_until`, toMicros(now))
	if err != nil {
		return nil, fmt.Errorf("list expired turns: %w", err)
	}
	defer rows.Close()
	var out []agentjob.Claim
	for rows.Next() {
		var c agentjob.Claim
		if err := rows.Scan(&c.JobID, &c.ProjectID, &c.Seq, &c.Attempts, &c.Worker, &c.CancelRequested); err != nil {
			return nil, fmt.Errorf("scan expired turn: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// RequeueTurn hands a running turn back to the queue on shutdown, without
// using up its attempt. A turn whose job was canceled meanwhile is not
// queued again (lease lost): it stays expired, and recovery ends it.
func (s *Store) RequeueTurn(ctx context.Context, c agentjob.Claim) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_turns SET state = 'queued', attempts = ?, lease_owner = '', lease_until = 0 WHERE job_id = ? AND seq = ? AND state = 'running' AND lease_owner = ? AND attempts = ? AND cancel_requested = 0`,
			c.Attempts-1, c.JobID, c.Seq, c.Worker, c.Attempts)
		if err != nil {
			return fmt.Errorf("requeue turn: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return leaseLost(c)
		}
		return nil
	})
}

// SaveCheckpoint records how far the claim's turn got, only while the claim
// still holds it.
func (s *Store) SaveCheckpoint(ctx context.Context, c agentjob.Claim, cp agentjob.Checkpoint) error {
	files, err := json.Marshal(nonNil(cp.FilesChanged))
	if err != nil {
		return fmt.Errorf("encode checkpoint files: %w", err)
	}
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_turns SET pushed_sha = ?, pushed_summary = ?, pushed_files = ?, pr_number = ?, pr_link = ? WHERE job_id = ? AND seq = ? AND state = 'running' AND lease_owner = ? AND attempts = ?`,
			cp.PushedSHA, cp.Summary, string(files), cp.PRNumber, cp.PRLink, c.JobID, c.Seq, c.Worker, c.Attempts)
		if err != nil {
			return fmt.Errorf("save checkpoint: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return leaseLost(c)
		}
		return nil
	})
}
