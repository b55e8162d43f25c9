package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
)

// claimTurn leases the oldest queued turn that may run now: its job is
// active, has no running turn, and no earlier queued turn. SKIP LOCKED lets
// workers in every process claim at once without waiting on each other; a
// turn whose row another claimer holds is passed over, and rechecked
// against the committed row if the lock was released meanwhile.
const claimTurn = `
WITH next AS (
	SELECT t.job_id, t.seq
	FROM job_turns t JOIN jobs j ON j.id = t.job_id
	WHERE t.state = 'queued' AND j.status = 'active'
	  AND NOT EXISTS (SELECT 1 FROM job_turns r WHERE r.job_id = t.job_id AND (r.state = 'running' OR (r.state = 'queued' AND r.seq < t.seq)))
	ORDER BY t.created_at, t.job_id, t.seq
	LIMIT 1
	FOR UPDATE OF t SKIP LOCKED
)
UPDATE job_turns t
SET state = 'running', attempts = t.attempts + 1, lease_owner = $1, lease_until = $2, started_at = $3, cancel_requested = false
FROM next, jobs j
WHERE t.job_id = next.job_id AND t.seq = next.seq AND j.id = t.job_id
RETURNING t.job_id, j.project_id, t.seq, t.attempts`

// ClaimTurn leases the oldest queued turn that may run now.
func (s *Store) ClaimTurn(ctx context.Context, worker string, now, leaseUntil time.Time) (agentjob.Claim, bool, error) {
	c := agentjob.Claim{Worker: worker}
	err := s.pool.QueryRow(ctx, claimTurn, worker, leaseUntil, now).Scan(&c.JobID, &c.ProjectID, &c.Seq, &c.Attempts)
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

func leaseLost(c agentjob.Claim) error {
	return apperr.New(apperr.Conflict, "turn %d of job %s is no longer leased by %s", c.Seq, c.JobID, c.Worker)
}

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

// RequeueTurn puts a running turn back in the queue. Without countAttempt
// (a hand-back on shutdown) the run does not use up an attempt. A turn whose
// job was canceled meanwhile is not queued again (Conflict): it stays
// expired, and recovery ends it canceled.
func (s *Store) RequeueTurn(ctx context.Context, c agentjob.Claim, countAttempt bool) error {
	attempts := c.Attempts
	if !countAttempt {
		attempts--
	}
	tag, err := s.pool.Exec(ctx, `UPDATE job_turns SET state = 'queued', attempts = $1, lease_owner = '', lease_until = NULL WHERE job_id = $2 AND seq = $3 AND state = 'running' AND lease_owner = $4 AND attempts = $5 AND NOT cancel_requested`,
		attempts, c.JobID, c.Seq, c.Worker, c.Attempts)
	if err != nil {
		return fmt.Errorf("requeue turn: %w", s.noteWrite(err))
	}
	if tag.RowsAffected() == 0 {
		return leaseLost(c)
	}
	return nil
}

// FinishTurn records a turn's outcome on the turn and the job. The job takes
// r.JobStatus only if it is still active and no turn is queued behind.
func (s *Store) FinishTurn(ctx context.Context, c agentjob.Claim, r agentjob.TurnResult, events []agentjob.NewEvent) (agentjob.Job, error) {
	var job agentjob.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		// Lock the job before the turn, as every writer does, and read its
		// messages under the lock: a follow-up that committed before we
		// got it is seen, and one that comes after waits for us.
		before, err := getJob(ctx, tx, c.ProjectID, c.JobID, "FOR NO KEY UPDATE")
		if err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return leaseLost(c)
			}
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE job_turns SET state = $1, summary = $2, error = $3, finished_at = $4, lease_owner = '', lease_until = NULL WHERE job_id = $5 AND seq = $6 AND state = 'running' AND lease_owner = $7 AND attempts = $8`,
			string(r.State), r.Summary, r.Error, r.At, c.JobID, c.Seq, c.Worker, c.Attempts)
		if err != nil {
			return fmt.Errorf("finish turn: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return leaseLost(c)
		}
		files := slices.Clone(before.FilesChanged)
		for _, f := range r.FilesChanged {
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
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
		_, err = tx.Exec(ctx, `UPDATE jobs SET status = $1, pr_link = CASE WHEN pr_link = '' THEN $2 ELSE pr_link END, pr_number = CASE WHEN pr_number = 0 THEN $3 ELSE pr_number END, summary = $4, error = $5, files_changed = $6, input_tokens = input_tokens + $7, output_tokens = output_tokens + $8, updated_at = $9, completed_at = $10 WHERE id = $11`,
			string(status), r.PRLink, r.PRNumber, summary, jobErr, nonNil(files), r.Usage.InputTokens, r.Usage.OutputTokens, r.At, completedAt, c.JobID)
		if err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		job, err = getJob(ctx, tx, c.ProjectID, c.JobID, "")
		if err != nil {
			return err
		}
		evs := events
		if job.Status != before.Status {
			evs = slices.Concat(events, []agentjob.NewEvent{{Type: agentjob.EventStatus, Data: agentjob.StatusEventData(job)}})
		}
		return appendEvents(ctx, tx, c.JobID, r.At, evs)
	})
	return job, err
}
