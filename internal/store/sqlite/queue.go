package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
)

// ClaimTurn leases the oldest queued turn that may run now: its job is
// active, has no running turn, and no earlier queued turn.
func (s *Store) ClaimTurn(ctx context.Context, worker string, now, leaseUntil time.Time) (agentjob.Claim, bool, error) {
	var c agentjob.Claim
	found := false
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
			SELECT t.job_id, j.project_id, t.seq, t.attempts
			FROM job_turns t JOIN jobs j ON j.id = t.job_id
			WHERE t.state = 'queued' AND j.status = 'active'
			  AND NOT EXISTS (SELECT 1 FROM job_turns r WHERE r.job_id = t.job_id AND (r.state = 'running' OR (r.state = 'queued' AND r.seq < t.seq)))
			ORDER BY t.created_at, t.job_id, t.seq
			LIMIT 1`).Scan(&c.JobID, &c.ProjectID, &c.Seq, &c.Attempts)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find queued turn: %w", err)
		}
		c.Attempts++
		c.Worker = worker
		_, err = tx.ExecContext(ctx, `UPDATE job_turns SET state = 'running', attempts = ?, lease_owner = ?, lease_until = ?, started_at = ?, cancel_requested = 0 WHERE job_id = ? AND seq = ?`,
			c.Attempts, worker, toMicros(leaseUntil), toMicros(now), c.JobID, c.Seq)
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

func leaseLost(c agentjob.Claim) error {
	return apperr.New(apperr.Conflict, "turn %d of job %s is no longer leased by %s", c.Seq, c.JobID, c.Worker)
}

// RenewLease extends a running turn's lease and reports whether a cancel
// was requested. A lease taken over by another worker is a Conflict.
func (s *Store) RenewLease(ctx context.Context, c agentjob.Claim, leaseUntil time.Time) (bool, error) {
	var canceled bool
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
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

// RequeueTurn puts a running turn back in the queue. Without countAttempt
// (a hand-back on shutdown) the run does not use up an attempt. A turn whose
// job was canceled meanwhile is not queued again (Conflict): it stays
// expired, and recovery ends it canceled.
func (s *Store) RequeueTurn(ctx context.Context, c agentjob.Claim, countAttempt bool) error {
	attempts := c.Attempts
	if !countAttempt {
		attempts--
	}
	return s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_turns SET state = 'queued', attempts = ?, lease_owner = '', lease_until = 0 WHERE job_id = ? AND seq = ? AND state = 'running' AND lease_owner = ? AND attempts = ? AND cancel_requested = 0`,
			attempts, c.JobID, c.Seq, c.Worker, c.Attempts)
		if err != nil {
			return fmt.Errorf("requeue turn: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return leaseLost(c)
		}
		return nil
	})
}

// FinishTurn records a turn's outcome on the turn and the job. The job takes
// r.JobStatus only if it is still active and no turn is queued behind.
func (s *Store) FinishTurn(ctx context.Context, c agentjob.Claim, r agentjob.TurnResult, events []agentjob.NewEvent) (agentjob.Job, error) {
	var job agentjob.Job
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE job_turns SET state = ?, summary = ?, error = ?, finished_at = ?, lease_owner = '', lease_until = 0 WHERE job_id = ? AND seq = ? AND state = 'running' AND lease_owner = ? AND attempts = ?`,
			string(r.State), r.Summary, r.Error, toMicros(r.At), c.JobID, c.Seq, c.Worker, c.Attempts)
		if err != nil {
			return fmt.Errorf("finish turn: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return leaseLost(c)
		}
		before, err := getJob(ctx, tx, c.ProjectID, c.JobID)
		if err != nil {
			return err
		}
		files := before.FilesChanged
		for _, f := range r.FilesChanged {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
		filesJSON, err := json.Marshal(nonNil(files))
		if err != nil {
			return fmt.Errorf("encode files: %w", err)
		}
		status, completedAt, jobErr := before.Status, before.CompletedAt, before.Error
		queued := slices.ContainsFunc(before.Messages, func(m agentjob.Message) bool { return m.State == agentjob.TurnQueued })
		if before.Status == agentjob.Active && !queued {
			status = r.JobStatus
			if status == agentjob.Completed {
				completedAt, jobErr = &r.At, ""
			} else {
				jobErr = r.Error
			}
		}
		summary := before.Summary
		if r.Summary != "" {
			summary = r.Summary
		}
		_, err = tx.ExecContext(ctx, `UPDATE jobs SET status = ?, pr_link = CASE WHEN pr_link = '' THEN ? ELSE pr_link END, pr_number = CASE WHEN pr_number = 0 THEN ? ELSE pr_number END, summary = ?, error = ?, files_changed = ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, updated_at = ?, completed_at = ? WHERE id = ?`,
			string(status), r.PRLink, r.PRNumber, summary, jobErr, string(filesJSON), r.Usage.InputTokens, r.Usage.OutputTokens, toMicros(r.At), nullMicros(completedAt), c.JobID)
		if err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		job, err = getJob(ctx, tx, c.ProjectID, c.JobID)
		if err != nil {
			return err
		}
		if job.Status != before.Status {
			events = slices.Concat(events, []agentjob.NewEvent{{Type: agentjob.EventStatus, Data: agentjob.StatusEventData(job)}})
		}
		return appendEvents(ctx, tx, c.JobID, r.At, events)
	})
	return job, err
}
