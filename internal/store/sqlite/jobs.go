package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/nulljson"
	"github.com/docsmith/docsmith/internal/store/sqltext"
)

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// FindIdempotent returns the job an earlier request with the same key made.
func (s *Store) FindIdempotent(ctx context.Context, idem agentjob.Idempotency) (string, bool, error) {
	return findIdempotent(ctx, s.read, &idem)
}

func findIdempotent(ctx context.Context, q querier, idem *agentjob.Idempotency) (string, bool, error) {
	var jobID string
	var hash []byte
	err := q.QueryRowContext(ctx, `SELECT job_id, request_hash FROM idempotency_keys WHERE scope = ? AND key = ? AND created_at >= ?`,
		idem.Scope, idem.Key, toMicros(idem.NotBefore)).Scan(&jobID, &hash)
	if errors.Is(err, sql.ErrNoRows) {
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

func rememberIdempotent(ctx context.Context, tx *wtx, idem *agentjob.Idempotency, jobID string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < ?`, toMicros(idem.NotBefore)); err != nil {
		return fmt.Errorf("expire idempotency keys: %w", err)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, job_id, created_at) VALUES (?, ?, ?, ?, ?)`,
		idem.Scope, idem.Key, idem.RequestHash, jobID, toMicros(now))
	if err != nil {
		return fmt.Errorf("remember idempotency key: %w", err)
	}
	return nil
}

// CreateJob stores a job with its first queued turn and events. With an
// idempotency key already used, it returns that job instead.
func (s *Store) CreateJob(ctx context.Context, job agentjob.Job, idem *agentjob.Idempotency, events []agentjob.NewEvent) (agentjob.Job, bool, error) {
	return s.CreateJobChecked(ctx, job, idem, events, nil)
}

// CreateJobChecked is CreateJob that makes c (when not nil) in the same
// transaction, unless it replays an earlier request; see
// agentjob.CheckingStore.
func (s *Store) CreateJobChecked(ctx context.Context, job agentjob.Job, idem *agentjob.Idempotency, events []agentjob.NewEvent, c *ratelimit.Check) (agentjob.Job, bool, error) {
	replayID := ""
	var stored agentjob.Job
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		replayID, stored = "", agentjob.Job{}
		if idem != nil {
			id, found, err := findIdempotent(ctx, tx, idem)
			if err != nil {
				return err
			}
			if found {
				replayID = id
				return nil
			}
		}
		if err := check(ctx, tx, c); err != nil {
			return err
		}
		if idem != nil {
			if err := rememberIdempotent(ctx, tx, idem, job.ID, job.CreatedAt); err != nil {
				return err
			}
		}
		files, err := json.Marshal(nonNil(job.FilesChanged))
		if err != nil {
			return fmt.Errorf("encode files: %w", err)
		}
		run, err := nulljson.Encode(job.Run)
		if err != nil {
			return fmt.Errorf("encode run spec: %w", err)
		}
		// The job as stored comes back from the inserts themselves, read
		// as GetJob reads it: no read after the commit.
		stored, err = scanJob(tx.QueryRowContext(ctx, `INSERT INTO jobs (id, project_id, status, repository, branch, base_ref, model, files_changed, created_at, updated_at, trigger, workflow, run) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+jobColumns,
			job.ID, job.ProjectID, string(job.Status), job.Repository, job.Branch, job.BaseRef, job.Model, string(files), toMicros(job.CreatedAt), toMicros(job.UpdatedAt),
			triggerOf(job), job.Workflow, run))
		if err != nil {
			return fmt.Errorf("insert job: %w", err)
		}
		for _, m := range job.Messages {
			msg, err := insertTurnReturning(ctx, tx, job.ID, m)
			if err != nil {
				return err
			}
			stored.Messages = append(stored.Messages, msg)
		}
		return appendEvents(ctx, tx, job.ID, job.CreatedAt, events)
	})
	if err != nil {
		return agentjob.Job{}, false, err
	}
	if replayID != "" {
		j, err := s.GetJob(ctx, job.ProjectID, replayID)
		return j, true, err
	}
	return stored, false, nil
}

func insertTurn(ctx context.Context, tx *wtx, jobID string, m agentjob.Message) error {
	push, err := nulljson.Encode(m.Push)
	if err != nil {
		return fmt.Errorf("encode push of turn %d: %w", m.Seq, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO job_turns (job_id, seq, prompt, state, created_at, push) VALUES (?, ?, ?, ?, ?, ?)`,
		jobID, m.Seq, m.Prompt, string(m.State), toMicros(m.CreatedAt), push)
	if err != nil {
		return fmt.Errorf("insert turn: %w", err)
	}
	return nil
}

// insertTurnReturning is insertTurn that returns the message as stored, as
// loadMessages reads it.
func insertTurnReturning(ctx context.Context, tx *wtx, jobID string, m agentjob.Message) (agentjob.Message, error) {
	push, err := nulljson.Encode(m.Push)
	if err != nil {
		return agentjob.Message{}, fmt.Errorf("encode push of turn %d: %w", m.Seq, err)
	}
	stored, err := scanMessage(tx.QueryRowContext(ctx, `INSERT INTO job_turns (job_id, seq, prompt, state, created_at, push) VALUES (?, ?, ?, ?, ?, ?) RETURNING `+turnColumns,
		jobID, m.Seq, m.Prompt, string(m.State), toMicros(m.CreatedAt), push))
	if err != nil {
		return agentjob.Message{}, fmt.Errorf("insert turn: %w", err)
	}
	return stored, nil
}

func appendEvents(ctx context.Context, tx *wtx, jobID string, at time.Time, events []agentjob.NewEvent) error {
	for _, e := range events {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("encode %s event: %w", e.Type, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO job_events (job_id, type, data, created_at) VALUES (?, ?, ?, ?)`, jobID, e.Type, string(data), toMicros(at)); err != nil {
			return fmt.Errorf("insert %s event: %w", e.Type, err)
		}
	}
	return nil
}

const jobColumns = `id, project_id, version, status, repository, branch, base_ref, model, pr_link, pr_number, summary, error, files_changed, input_tokens, output_tokens, created_at, updated_at, completed_at, archived_at, trigger, workflow, run`

// triggerOf is what the jobs row says started job: a job that does not say
// is an API job, as every job from before workflows is.
func triggerOf(job agentjob.Job) string {
	if job.Trigger == "" {
		return agentjob.TriggerAPI
	}
	return job.Trigger
}

func scanJob(row scanner) (agentjob.Job, error) {
	var r jobRow
	if err := row.Scan(r.dest()...); err != nil {
		return r.j, err
	}
	return r.job()
}

// jobRow holds the columns of jobColumns as scanned, until job makes the
// job of them.
type jobRow struct {
	j                  agentjob.Job
	status, files      string
	created, updatedAt int64
	completed          sql.NullInt64
	archived           sql.NullInt64
	run                []byte
}

// dest are the scan destinations of jobColumns, in order.
func (r *jobRow) dest() []any {
	j := &r.j
	return []any{&j.ID, &j.ProjectID, &j.Version, &r.status, &j.Repository, &j.Branch, &j.BaseRef, &j.Model, &j.PRLink, &j.PRNumber, &j.Summary, &j.Error, &r.files, &j.Usage.InputTokens, &j.Usage.OutputTokens, &r.created, &r.updatedAt, &r.completed, &r.archived,
		&j.Trigger, &j.Workflow, &r.run}
}

func (r *jobRow) job() (agentjob.Job, error) {
	j := r.j
	var err error
	if j.Run, err = nulljson.Decode[agentjob.RunSpec](r.run); err != nil {
		return j, fmt.Errorf("decode run spec of job %s: %w", j.ID, err)
	}
	j.Status = agentjob.Status(r.status)
	j.CreatedAt, j.UpdatedAt = fromMicros(r.created), fromMicros(r.updatedAt)
	j.CompletedAt, j.ArchivedAt = timePtr(r.completed), timePtr(r.archived)
	if err := json.Unmarshal([]byte(r.files), &j.FilesChanged); err != nil {
		return j, fmt.Errorf("decode files of job %s: %w", j.ID, err)
	}
	return j, nil
}

// GetJob returns a job of the project with its messages.
func (s *Store) GetJob(ctx context.Context, projectID, id string) (agentjob.Job, error) {
	return getJob(ctx, s.read, projectID, id)
}

// getJob reads a job with its messages in one query: the job's row beside
// each of its turns', in turn order. Every job has a turn, its first, from
// the moment it is created, and turns are never deleted: no row means no
// such job in the project.
func getJob(ctx context.Context, q querier, projectID, id string) (agentjob.Job, error) {
	rows, err := q.QueryContext(ctx, getJobSQL, id, projectID)
	if err != nil {
		return agentjob.Job{}, fmt.Errorf("read job %s: %w", id, err)
	}
	defer rows.Close()
	var job agentjob.Job
	for rows.Next() {
		var jr jobRow
		var tr turnRow
		if err := rows.Scan(append(jr.dest(), tr.dest()...)...); err != nil {
			return agentjob.Job{}, fmt.Errorf("read job %s: %w", id, err)
		}
		if job.ID == "" {
			if job, err = jr.job(); err != nil {
				return agentjob.Job{}, err
			}
		}
		m, err := tr.message()
		if err != nil {
			return agentjob.Job{}, err
		}
		job.Messages = append(job.Messages, m)
	}
	if err := rows.Err(); err != nil {
		return agentjob.Job{}, fmt.Errorf("read job %s: %w", id, err)
	}
	if job.ID == "" {
		return agentjob.Job{}, apperr.New(apperr.NotFound, "job %q not found", id)
	}
	return job, nil
}

// getJobSQL is getJob's query.
var getJobSQL = `SELECT ` + sqltext.Qualified("j", jobColumns) + `, ` + sqltext.Qualified("t", turnColumns) + `
FROM jobs j JOIN job_turns t ON t.job_id = j.id
WHERE j.id = ? AND j.project_id = ?
ORDER BY t.seq`

func loadMessages(ctx context.Context, q querier, jobIDs []string) (map[string][]agentjob.Message, error) {
	out := make(map[string][]agentjob.Message, len(jobIDs))
	if len(jobIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(jobIDs))
	for i, id := range jobIDs {
		args[i] = id
	}
	rows, err := q.QueryContext(ctx, `SELECT job_id, `+turnColumns+` FROM job_turns WHERE job_id IN (`+placeholders(len(jobIDs))+`) ORDER BY job_id, seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var jobID string
		m, err := scanMessage(prefixed{rows, &jobID})
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", jobID, err)
		}
		out[jobID] = append(out[jobID], m)
	}
	return out, rows.Err()
}

// turnColumns are what scanMessage reads.
const turnColumns = `seq, prompt, state, attempts, summary, error, created_at, started_at, finished_at, run_after, pushed_sha, pushed_summary, pushed_files, pr_number, pr_link, push`

// prefixed scans a row whose first column is read into first, the rest as
// a scanner of the remaining columns would.
type prefixed struct {
	row   scanner
	first any
}

func (p prefixed) Scan(dest ...any) error { return p.row.Scan(append([]any{p.first}, dest...)...) }

// scanMessage reads turnColumns.
func scanMessage(row scanner) (agentjob.Message, error) {
	var r turnRow
	if err := row.Scan(r.dest()...); err != nil {
		return r.m, fmt.Errorf("scan message: %w", err)
	}
	return r.message()
}

// turnRow holds the columns of turnColumns as scanned, until message makes
// the message of them.
type turnRow struct {
	m                  agentjob.Message
	state, pushedFiles string
	created, runAfter  int64
	started, finished  sql.NullInt64
	push               []byte
}

// dest are the scan destinations of turnColumns, in order.
func (r *turnRow) dest() []any {
	m, cp := &r.m, &r.m.Checkpoint
	return []any{&m.Seq, &m.Prompt, &r.state, &m.Attempts, &m.Summary, &m.Error, &r.created, &r.started, &r.finished, &r.runAfter, &cp.PushedSHA, &cp.Summary, &r.pushedFiles, &cp.PRNumber, &cp.PRLink, &r.push}
}

func (r *turnRow) message() (agentjob.Message, error) {
	m := r.m
	var err error
	if m.Push, err = nulljson.Decode[agentjob.PushRange](r.push); err != nil {
		return m, fmt.Errorf("decode push of turn %d: %w", m.Seq, err)
	}
	m.State = agentjob.TurnState(r.state)
	m.CreatedAt, m.StartedAt, m.FinishedAt = fromMicros(r.created), timePtr(r.started), timePtr(r.finished)
	if r.runAfter > 0 {
		t := fromMicros(r.runAfter)
		m.RunAfter = &t
	}
	if err := json.Unmarshal([]byte(r.pushedFiles), &m.Checkpoint.FilesChanged); err != nil {
		return m, fmt.Errorf("decode checkpoint files of turn %d: %w", m.Seq, err)
	}
	return m, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// ListJobs returns a page of the project's jobs, newest first.
func (s *Store) ListJobs(ctx context.Context, projectID string, q agentjob.ListQuery) ([]agentjob.Job, error) {
	query := `SELECT ` + jobColumns + ` FROM jobs WHERE project_id = ?`
	args := []any{projectID}
	if q.Status != "" {
		query += ` AND status = ?`
		args = append(args, string(q.Status))
	}
	if q.After != nil {
		query += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		at := toMicros(q.After.CreatedAt)
		args = append(args, at, at, q.After.ID)
	}
	query += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, q.Limit)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	var jobs []agentjob.Job
	var ids []string
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("scan job: %w", err)
		}
		jobs = append(jobs, j)
		ids = append(ids, j.ID)
	}
	_ = rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	msgs, err := loadMessages(ctx, s.read, ids)
	if err != nil {
		return nil, err
	}
	for i := range jobs {
		jobs[i].Messages = msgs[jobs[i].ID]
	}
	return jobs, nil
}

// Apply writes a patch decided by agentjob.Reduce, with its events, in one
// transaction: only while the job is still at the patch's version, and each
// fenced turn change only while its claim still holds the turn.
// A job's trigger, workflow and run spec are fixed when it is created, as
// its branch is: the update leaves them as they are.
func (s *Store) Apply(ctx context.Context, projectID, jobID string, p agentjob.Patch, idem *agentjob.Idempotency, events []agentjob.NewEvent) (agentjob.Job, bool, error) {
	return s.ApplyChecked(ctx, projectID, jobID, p, idem, events, nil)
}

// ApplyChecked is Apply that makes c (when not nil) in the same
// transaction, unless it replays an earlier request; see
// agentjob.CheckingStore.
func (s *Store) ApplyChecked(ctx context.Context, projectID, jobID string, p agentjob.Patch, idem *agentjob.Idempotency, events []agentjob.NewEvent, c *ratelimit.Check) (agentjob.Job, bool, error) {
	replayed := false
	var job agentjob.Job
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		replayed = false
		if idem != nil {
			_, found, err := findIdempotent(ctx, tx, idem)
			if err != nil {
				return err
			}
			if found {
				replayed = true
				return nil
			}
		}
		if err := check(ctx, tx, c); err != nil {
			return err
		}
		if idem != nil {
			if err := rememberIdempotent(ctx, tx, idem, jobID, p.Job.UpdatedAt); err != nil {
				return err
			}
		}
		j := p.Job
		files, err := json.Marshal(nonNil(j.FilesChanged))
		if err != nil {
			return fmt.Errorf("encode files: %w", err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE jobs SET version = version + 1, status = ?, pr_link = ?, pr_number = ?, summary = ?, error = ?, files_changed = ?, input_tokens = ?, output_tokens = ?, updated_at = ?, completed_at = ?, archived_at = ? WHERE id = ? AND project_id = ? AND version = ?`,
			string(j.Status), j.PRLink, j.PRNumber, j.Summary, j.Error, string(files), j.Usage.InputTokens, j.Usage.OutputTokens, toMicros(j.UpdatedAt), nullMicros(j.CompletedAt), nullMicros(j.ArchivedAt), jobID, projectID, p.Version)
		if err != nil {
			return fmt.Errorf("update job: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if _, err := getJob(ctx, tx, projectID, jobID); err != nil {
				return err
			}
			return agentjob.StaleError(jobID)
		}
		for _, tc := range p.Turns {
			if err := applyTurn(ctx, tx, jobID, tc); err != nil {
				return err
			}
		}
		if err := appendEvents(ctx, tx, jobID, j.UpdatedAt, events); err != nil {
			return err
		}
		job, err = getJob(ctx, tx, projectID, jobID)
		return err
	})
	if err != nil {
		return agentjob.Job{}, false, err
	}
	if replayed {
		job, err = s.GetJob(ctx, projectID, jobID)
	}
	return job, replayed, err
}

func applyTurn(ctx context.Context, tx *wtx, jobID string, tc agentjob.TurnChange) error {
	var res sql.Result
	var err error
	fenced := false
	switch tc.Op {
	case agentjob.OpInsert:
		if err := insertTurn(ctx, tx, jobID, tc.Message); err != nil {
			if isUniqueViolation(err) {
				return agentjob.StaleError(jobID)
			}
			return err
		}
		return nil
	case agentjob.OpEnd:
		fenced = true
		res, err = tx.ExecContext(ctx, `UPDATE job_turns SET state = ?, summary = ?, error = ?, finished_at = ?, lease_owner = '', lease_until = 0 WHERE job_id = ? AND seq = ? AND state = 'running' AND lease_owner = ? AND attempts = ?`,
			string(tc.State), tc.Summary, tc.Error, toMicros(tc.At), jobID, tc.Seq, tc.Lease.Worker, tc.Lease.Attempts)
	case agentjob.OpRetry:
		fenced = true
		res, err = tx.ExecContext(ctx, `UPDATE job_turns SET state = 'queued', error = ?, run_after = ?, lease_owner = '', lease_until = 0 WHERE job_id = ? AND seq = ? AND state = 'running' AND lease_owner = ? AND attempts = ?`,
			tc.Error, toMicros(tc.RunAfter), jobID, tc.Seq, tc.Lease.Worker, tc.Lease.Attempts)
	case agentjob.OpCancelQueued:
		_, err = tx.ExecContext(ctx, `UPDATE job_turns SET state = 'canceled', error = ?, finished_at = ? WHERE job_id = ? AND state = 'queued'`, tc.Error, toMicros(tc.At), jobID)
	case agentjob.OpStopRunning:
		_, err = tx.ExecContext(ctx, `UPDATE job_turns SET cancel_requested = 1 WHERE job_id = ? AND state = 'running'`, jobID)
	default:
		return fmt.Errorf("apply turn change: unknown op %q", tc.Op)
	}
	if err != nil {
		return fmt.Errorf("apply %s to turn %d: %w", tc.Op, tc.Seq, err)
	}
	if fenced {
		if n, _ := res.RowsAffected(); n == 0 {
			return agentjob.LeaseLostError(*tc.Lease)
		}
	}
	return nil
}

// AppendEvents adds events to a job's stream.
func (s *Store) AppendEvents(ctx context.Context, jobID string, at time.Time, events []agentjob.NewEvent) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error { return appendEvents(ctx, tx, jobID, at, events) })
}

// ListEvents returns up to limit events of a job after afterID, oldest first.
func (s *Store) ListEvents(ctx context.Context, jobID string, afterID int64, limit int) ([]agentjob.JobEvent, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, type, data, created_at FROM job_events WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?`, jobID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []agentjob.JobEvent
	for rows.Next() {
		e := agentjob.JobEvent{JobID: jobID}
		var data string
		var created int64
		if err := rows.Scan(&e.ID, &e.Type, &data, &created); err != nil {
			return nil, fmt.Errorf("scan event: %w", err)
		}
		e.Data, e.CreatedAt = json.RawMessage(data), fromMicros(created)
		out = append(out, e)
	}
	return out, rows.Err()
}
