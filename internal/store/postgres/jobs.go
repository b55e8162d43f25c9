package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// FindIdempotent returns the job id an earlier request with the same key made.
func (s *Store) FindIdempotent(ctx context.Context, idem agentjob.Idempotency) (string, bool, error) {
	return findIdempotent(ctx, s.pool, &idem)
}

func findIdempotent(ctx context.Context, q querier, idem *agentjob.Idempotency) (string, bool, error) {
	var jobID string
	var hash []byte
	err := q.QueryRow(ctx, `SELECT job_id, request_hash FROM idempotency_keys WHERE scope = $1 AND key = $2 AND created_at >= $3`,
		idem.Scope, idem.Key, idem.NotBefore).Scan(&jobID, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("look up idempotency key: %w", err)
	}
	if !bytes.Equal(hash, idem.RequestHash) {
		return "", false, apperr.New(apperr.Invalid, "Idempotency-Key %q was already used with a different prompt; use a new key for a new request", idem.Key)
	}
	return jobID, true, nil
}

// claimIdempotent serializes the requests that carry one key (they would
// both miss it, then collide on insert), and returns the job of an earlier
// one. When there is none it remembers this request's job.
func claimIdempotent(ctx context.Context, tx pgx.Tx, idem *agentjob.Idempotency, jobID string, now time.Time) (string, bool, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockIdempotency, idem.Scope+" "+idem.Key); err != nil {
		return "", false, fmt.Errorf("lock idempotency key: %w", err)
	}
	id, found, err := findIdempotent(ctx, tx, idem)
	if err != nil || found {
		return id, found, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, idem.NotBefore); err != nil {
		return "", false, fmt.Errorf("expire idempotency keys: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, job_id, created_at) VALUES ($1, $2, $3, $4, $5)`,
		idem.Scope, idem.Key, idem.RequestHash, jobID, now)
	if err != nil {
		return "", false, fmt.Errorf("remember idempotency key: %w", err)
	}
	return "", false, nil
}

// CreateJob stores a job with its first queued turn and events. With an
// idempotency key already used, it returns that job instead.
func (s *Store) CreateJob(ctx context.Context, job agentjob.Job, idem *agentjob.Idempotency, events []agentjob.NewEvent) (agentjob.Job, bool, error) {
	var replayID string
	err := s.tx(ctx, func(tx pgx.Tx) error {
		replayID = ""
		if idem != nil {
			id, found, err := claimIdempotent(ctx, tx, idem, job.ID, job.CreatedAt)
			if err != nil {
				return err
			}
			if found {
				replayID = id
				return nil
			}
		}
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO jobs (id, project_id, status, repository, branch, base_ref, model, files_changed, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			job.ID, job.ProjectID, string(job.Status), job.Repository, job.Branch, job.BaseRef, job.Model, nonNil(job.FilesChanged), job.CreatedAt, job.UpdatedAt)
		for _, m := range job.Messages {
			queueTurn(b, job.ID, m)
		}
		if err := queueEvents(b, job.ID, job.CreatedAt, events); err != nil {
			return err
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("insert job: %w", err)
		}
		return nil
	})
	if err != nil {
		return agentjob.Job{}, false, err
	}
	if replayID != "" {
		j, err := s.GetJob(ctx, job.ProjectID, replayID)
		return j, true, err
	}
	j, err := s.GetJob(ctx, job.ProjectID, job.ID)
	return j, false, err
}

func queueTurn(b *pgx.Batch, jobID string, m agentjob.Message) {
	b.Queue(`INSERT INTO job_turns (job_id, seq, prompt, state, created_at) VALUES ($1, $2, $3, $4, $5)`,
		jobID, m.Seq, m.Prompt, string(m.State), m.CreatedAt)
}

// queueEvents adds inserts of events to b. The caller holds the job's row
// lock (or created the job), so the job's event ids commit in order.
func queueEvents(b *pgx.Batch, jobID string, at time.Time, events []agentjob.NewEvent) error {
	for _, e := range events {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("encode %s event: %w", e.Type, err)
		}
		b.Queue(`INSERT INTO job_events (job_id, type, data, created_at) VALUES ($1, $2, $3, $4)`, jobID, e.Type, string(data), at)
	}
	return nil
}

func appendEvents(ctx context.Context, tx pgx.Tx, jobID string, at time.Time, events []agentjob.NewEvent) error {
	if len(events) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	if err := queueEvents(b, jobID, at, events); err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	return nil
}

const jobColumns = `id, project_id, status, repository, branch, base_ref, model, pr_link, pr_number, summary, error, files_changed, input_tokens, output_tokens, created_at, updated_at, completed_at, archived_at`

func scanJob(row pgx.Row) (agentjob.Job, error) {
	var j agentjob.Job
	var status string
	var in, out int64
	err := row.Scan(&j.ID, &j.ProjectID, &status, &j.Repository, &j.Branch, &j.BaseRef, &j.Model, &j.PRLink, &j.PRNumber, &j.Summary, &j.Error, &j.FilesChanged, &in, &out, &j.CreatedAt, &j.UpdatedAt, &j.CompletedAt, &j.ArchivedAt)
	if err != nil {
		return j, err
	}
	j.Status = agentjob.Status(status)
	j.Usage = agentjob.Usage{InputTokens: int(in), OutputTokens: int(out)}
	j.CreatedAt, j.UpdatedAt = utc(j.CreatedAt), utc(j.UpdatedAt)
	j.CompletedAt, j.ArchivedAt = utcPtr(j.CompletedAt), utcPtr(j.ArchivedAt)
	return j, nil
}

// GetJob returns a job of the project with its messages.
func (s *Store) GetJob(ctx context.Context, projectID, id string) (agentjob.Job, error) {
	return getJob(ctx, s.pool, projectID, id, "")
}

// getJob reads a job and its messages; lock, if given, is a locking clause
// for the job's row (FOR NO KEY UPDATE), taken before the messages are read.
func getJob(ctx context.Context, q querier, projectID, id, lock string) (agentjob.Job, error) {
	j, err := scanJob(q.QueryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1 AND project_id = $2 `+lock, id, projectID))
	if err != nil {
		return agentjob.Job{}, notFoundOr(err, "job", id)
	}
	msgs, err := loadMessages(ctx, q, []string{id})
	if err != nil {
		return agentjob.Job{}, err
	}
	j.Messages = msgs[id]
	return j, nil
}

func loadMessages(ctx context.Context, q querier, jobIDs []string) (map[string][]agentjob.Message, error) {
	out := make(map[string][]agentjob.Message, len(jobIDs))
	if len(jobIDs) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT job_id, seq, prompt, state, attempts, summary, error, created_at, started_at, finished_at FROM job_turns WHERE job_id = ANY($1) ORDER BY job_id, seq`, jobIDs)
	if err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var jobID, state string
		var m agentjob.Message
		if err := rows.Scan(&jobID, &m.Seq, &m.Prompt, &state, &m.Attempts, &m.Summary, &m.Error, &m.CreatedAt, &m.StartedAt, &m.FinishedAt); err != nil {
			return nil, fmt.Errorf("scan message: %w", err)
		}
		m.State = agentjob.TurnState(state)
		m.CreatedAt, m.StartedAt, m.FinishedAt = utc(m.CreatedAt), utcPtr(m.StartedAt), utcPtr(m.FinishedAt)
		out[jobID] = append(out[jobID], m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	return out, nil
}

// ListJobs returns a page of the project's jobs, newest first.
func (s *Store) ListJobs(ctx context.Context, projectID string, q agentjob.ListQuery) ([]agentjob.Job, error) {
	query := `SELECT ` + jobColumns + ` FROM jobs WHERE project_id = $1`
	args := []any{projectID}
	if q.Status != "" {
		args = append(args, string(q.Status))
		query += fmt.Sprintf(` AND status = $%d`, len(args))
	}
	if q.After != nil {
		args = append(args, q.After.CreatedAt, q.After.ID)
		query += fmt.Sprintf(` AND (created_at, id) < ($%d, $%d)`, len(args)-1, len(args))
	}
	args = append(args, q.Limit)
	query += fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args))
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentjob.Job, error) { return scanJob(row) })
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	msgs, err := loadMessages(ctx, s.pool, ids)
	if err != nil {
		return nil, err
	}
	for i := range jobs {
		jobs[i].Messages = msgs[jobs[i].ID]
	}
	return jobs, nil
}

// AddMessage queues a follow-up turn and moves the job from one status to
// another, only while the job is still in from.
func (s *Store) AddMessage(ctx context.Context, projectID, jobID string, from, to agentjob.Status, msg agentjob.Message, idem *agentjob.Idempotency, events []agentjob.NewEvent) (agentjob.Job, bool, error) {
	var replayed bool
	err := s.tx(ctx, func(tx pgx.Tx) error {
		replayed = false
		if idem != nil {
			_, found, err := claimIdempotent(ctx, tx, idem, jobID, msg.CreatedAt)
			if err != nil {
				return err
			}
			if found {
				replayed = true
				return nil
			}
		}
		// The update locks the job's row first; the next message number is
		// read after it, so two follow-ups cannot both take it.
		tag, err := tx.Exec(ctx, `UPDATE jobs SET status = $1, updated_at = $2, error = CASE WHEN $1 = 'active' THEN '' ELSE error END, completed_at = CASE WHEN $1 = 'active' THEN NULL ELSE completed_at END WHERE id = $3 AND project_id = $4 AND status = $5`,
			string(to), msg.CreatedAt, jobID, projectID, string(from))
		if err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return apperr.New(apperr.Conflict, "job %s changed while the message was added", jobID)
		}
		var seq int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM job_turns WHERE job_id = $1`, jobID).Scan(&seq); err != nil {
			return fmt.Errorf("next message number: %w", err)
		}
		if seq != msg.Seq {
			return apperr.New(apperr.Conflict, "job %s changed while the message was added", jobID)
		}
		b := &pgx.Batch{}
		queueTurn(b, jobID, msg)
		if err := queueEvents(b, jobID, msg.CreatedAt, events); err != nil {
			return err
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			if isUniqueViolation(err) {
				return apperr.New(apperr.Conflict, "job %s changed while the message was added", jobID)
			}
			return fmt.Errorf("insert message: %w", err)
		}
		return nil
	})
	if err != nil {
		return agentjob.Job{}, false, err
	}
	j, err := s.GetJob(ctx, projectID, jobID)
	return j, replayed, err
}

// ChangeStatus applies an archive or cancel: it moves the job, drops its
// queued turns and asks its running turn to stop, in one transaction.
func (s *Store) ChangeStatus(ctx context.Context, projectID, jobID string, c agentjob.StatusChange) (agentjob.Job, error) {
	var job agentjob.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE jobs SET status = $1, updated_at = $2, archived_at = COALESCE($3, archived_at), error = CASE WHEN $4 <> '' THEN $4 ELSE error END WHERE id = $5 AND project_id = $6 AND status = $7`,
			string(c.To), c.At, c.ArchivedAt, c.Error, jobID, projectID, string(c.From))
		if err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return apperr.New(apperr.Conflict, "job %s changed while its status was being set", jobID)
		}
		if c.From == agentjob.Active {
			reason := c.Error
			if reason == "" {
				reason = "the job was " + string(c.To)
			}
			if _, err := tx.Exec(ctx, `UPDATE job_turns SET state = 'canceled', error = $1, finished_at = $2 WHERE job_id = $3 AND state = 'queued'`, reason, c.At, jobID); err != nil {
				return fmt.Errorf("cancel queued turns: %w", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE job_turns SET cancel_requested = true WHERE job_id = $1 AND state = 'running'`, jobID); err != nil {
				return fmt.Errorf("cancel running turn: %w", err)
			}
		}
		job, err = getJob(ctx, tx, projectID, jobID, "")
		if err != nil {
			return err
		}
		events := slices.Concat(c.Events, []agentjob.NewEvent{{Type: agentjob.EventStatus, Data: agentjob.StatusEventData(job)}})
		return appendEvents(ctx, tx, jobID, c.At, events)
	})
	return job, err
}

// AppendEvents adds events to a job's stream.
func (s *Store) AppendEvents(ctx context.Context, jobID string, at time.Time, events []agentjob.NewEvent) error {
	if len(events) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		// Hold the job's row while the ids are drawn, so a stream that
		// resumes after the highest id it saw cannot skip one committed late.
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR NO KEY UPDATE`, jobID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return apperr.New(apperr.NotFound, "job %q not found", jobID)
		}
		if err != nil {
			return fmt.Errorf("lock job: %w", err)
		}
		return appendEvents(ctx, tx, jobID, at, events)
	})
}

// ListEvents returns up to limit events of a job after afterID, oldest first.
func (s *Store) ListEvents(ctx context.Context, jobID string, afterID int64, limit int) ([]agentjob.JobEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, type, data::text, created_at FROM job_events WHERE job_id = $1 AND id > $2 ORDER BY id LIMIT $3`, jobID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentjob.JobEvent, error) {
		e := agentjob.JobEvent{JobID: jobID}
		var data string
		err := row.Scan(&e.ID, &e.Type, &data, &e.CreatedAt)
		e.Data, e.CreatedAt = json.RawMessage(data), utc(e.CreatedAt)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	return out, nil
}
