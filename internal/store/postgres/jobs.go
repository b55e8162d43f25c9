package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/nulljson"
	"github.com/docsmith/docsmith/internal/store/sqltext"
)

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
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
//
// Without a key the job goes with the other creates of the moment: one
// statement inserts them all (insertJobsSQL) in a transaction of their own,
// one round trip and one commit for the lot (see jobBatcher). With a key,
// the key is claimed (see claimIdempotent) and the job inserted in one
// transaction of its own.
func (s *Store) CreateJob(ctx context.Context, job agentjob.Job, idem *agentjob.Idempotency, events []agentjob.NewEvent) (agentjob.Job, bool, error) {
	if idem == nil {
		stored, err := s.jobBatch.insert(ctx, newJob{job: job, events: events})
		if err != nil {
			return agentjob.Job{}, false, s.noteWrite(err)
		}
		return stored, false, nil
	}
	return s.CreateJobChecked(ctx, job, idem, events, nil)
}

// CreateJobChecked is CreateJob that makes c (when not nil) in the
// transaction that stores the job: a refused request stores nothing (the
// transaction rolls back) and is ratelimit.ErrRefused, and a request is counted exactly
// when its job commits. A replay of an earlier request is not checked.
// It is a transaction of its own, not part of a group commit.
func (s *Store) CreateJobChecked(ctx context.Context, job agentjob.Job, idem *agentjob.Idempotency, events []agentjob.NewEvent, c *ratelimit.Check) (agentjob.Job, bool, error) {
	var replayID string
	var stored agentjob.Job
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
		inserted, err := insertJobs(ctx, tx, []newJob{{job: job, events: events}})
		if err != nil {
			return err
		}
		stored = inserted[0]
		// The check comes last: rate_take locks the limit's keys until
		// the commit, and every create of the project waits for them.
		return check(ctx, tx, c)
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

// insertJobsSQL inserts jobs, their messages and their events in one
// statement, and returns each job's row beside each of its messages', as
// GetJob reads them, jobs in id order. The inserts see each other's rows
// when the statement ends, where the foreign keys are checked; the events
// are inserted in order, so their ids are too.
var insertJobsSQL = `
WITH job AS (
	INSERT INTO jobs (id, project_id, status, repository, branch, base_ref, model, files_changed, created_at, updated_at, trigger, workflow, run)
	SELECT j.id, j.project_id, j.status, j.repository, j.branch, j.base_ref, j.model, ARRAY(SELECT json_array_elements_text(j.files::json)),
		j.created_at, j.updated_at, j.trigger, j.workflow, j.run::json
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[], $13::text[])
		AS j(id, project_id, status, repository, branch, base_ref, model, files, created_at, updated_at, trigger, workflow, run)
	RETURNING ` + jobColumns + `
), turns AS (
	INSERT INTO job_turns (job_id, seq, prompt, state, created_at, push)
	SELECT m.job_id, m.seq, m.prompt, m.state, m.created_at, m.push::json
	FROM unnest($14::text[], $15::integer[], $16::text[], $17::text[], $18::timestamptz[], $19::text[]) AS m(job_id, seq, prompt, state, created_at, push)
	RETURNING job_id, ` + turnColumns + `
), events AS (
	INSERT INTO job_events (job_id, type, data, created_at)
	SELECT e.job_id, e.type, e.data::json, e.created_at
	FROM unnest($20::text[], $21::text[], $22::text[], $23::timestamptz[]) WITH ORDINALITY AS e(job_id, type, data, created_at, n)
	ORDER BY e.n
)
SELECT job.*, ` + sqltext.Qualified("turns", turnColumns) + ` FROM job JOIN turns ON turns.job_id = job.id ORDER BY job.id, turns.seq`

// newJob is a job to insert with the events of its creation.
type newJob struct {
	job    agentjob.Job
	events []agentjob.NewEvent
}

// insertJobs inserts jobs with their messages and events, in one statement
// and so one round trip, and returns the jobs as stored, read as GetJob
// reads them, in the order given. A job starts with its first message: one
// without any is refused.
func insertJobs(ctx context.Context, q querier, jobs []newJob) ([]agentjob.Job, error) {
	var a jobArgs
	for _, nj := range jobs {
		if err := a.add(nj); err != nil {
			return nil, err
		}
	}
	rows, err := q.Query(ctx, insertJobsSQL,
		a.ids, a.projects, a.statuses, a.repositories, a.branches, a.baseRefs, a.models, a.files, a.created, a.updated, a.triggers, a.workflows, a.runs,
		a.turnJobs, a.seqs, a.prompts, a.states, a.turnCreated, a.pushes,
		a.eventJobs, a.eventTypes, a.eventData, a.eventCreated)
	if err != nil {
		return nil, fmt.Errorf("insert jobs: %w", err)
	}
	stored, err := collectJobs(rows)
	if err != nil {
		return nil, fmt.Errorf("insert jobs: %w", err)
	}
	byID := make(map[string]agentjob.Job, len(stored))
	for _, j := range stored {
		byID[j.ID] = j
	}
	out := make([]agentjob.Job, len(jobs))
	for i, nj := range jobs {
		j, ok := byID[nj.job.ID]
		if !ok {
			return nil, fmt.Errorf("insert jobs: job %s was not returned", nj.job.ID)
		}
		out[i] = j
	}
	return out, nil
}

// jobArgs are insertJobsSQL's arguments: a column each.
type jobArgs struct {
	ids, projects, statuses, repositories, branches, baseRefs, models, files []string
	created, updated                                                         []time.Time
	triggers, workflows                                                      []string
	runs                                                                     []*string

	turnJobs, prompts, states []string
	seqs                      []int32
	turnCreated               []time.Time
	pushes                    []*string

	eventJobs, eventTypes, eventData []string
	eventCreated                     []time.Time
}

func (a *jobArgs) add(nj newJob) error {
	job := nj.job
	if len(job.Messages) == 0 {
		return fmt.Errorf("insert job %s: a job starts with its first message, and it has none", job.ID)
	}
	run, err := encodeOptional(job.Run)
	if err != nil {
		return fmt.Errorf("encode run spec of job %s: %w", job.ID, err)
	}
	files, err := json.Marshal(nonNil(job.FilesChanged))
	if err != nil {
		return fmt.Errorf("encode files of job %s: %w", job.ID, err)
	}
	a.ids, a.projects, a.statuses = append(a.ids, job.ID), append(a.projects, job.ProjectID), append(a.statuses, string(job.Status))
	a.repositories, a.branches, a.baseRefs = append(a.repositories, job.Repository), append(a.branches, job.Branch), append(a.baseRefs, job.BaseRef)
	a.models, a.files = append(a.models, job.Model), append(a.files, string(files))
	a.created, a.updated = append(a.created, job.CreatedAt), append(a.updated, job.UpdatedAt)
	a.triggers, a.workflows, a.runs = append(a.triggers, triggerOf(job)), append(a.workflows, job.Workflow), append(a.runs, run)
	for _, m := range job.Messages {
		push, err := encodeOptional(m.Push)
		if err != nil {
			return fmt.Errorf("encode push of turn %d of job %s: %w", m.Seq, job.ID, err)
		}
		a.turnJobs, a.seqs, a.prompts = append(a.turnJobs, job.ID), append(a.seqs, int32(m.Seq)), append(a.prompts, m.Prompt)
		a.states, a.turnCreated, a.pushes = append(a.states, string(m.State)), append(a.turnCreated, m.CreatedAt), append(a.pushes, push)
	}
	for _, e := range nj.events {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return fmt.Errorf("encode %s event of job %s: %w", e.Type, job.ID, err)
		}
		a.eventJobs, a.eventTypes = append(a.eventJobs, job.ID), append(a.eventTypes, e.Type)
		a.eventData, a.eventCreated = append(a.eventData, string(data)), append(a.eventCreated, job.CreatedAt)
	}
	return nil
}

// encodeOptional is nulljson.Encode as an array element: nil for no value.
func encodeOptional[T any](v *T) (*string, error) {
	enc, err := nulljson.Encode(v)
	if err != nil || enc == nil {
		return nil, err
	}
	text := enc.(string)
	return &text, nil
}

const insertTurn = `INSERT INTO job_turns (job_id, seq, prompt, state, created_at, push) VALUES ($1, $2, $3, $4, $5, $6)`

// turnArgs are insertTurn's arguments for message m of job jobID.
func turnArgs(jobID string, m agentjob.Message) ([]any, error) {
	push, err := nulljson.Encode(m.Push)
	if err != nil {
		return nil, fmt.Errorf("encode push of turn %d: %w", m.Seq, err)
	}
	return []any{jobID, m.Seq, m.Prompt, string(m.State), m.CreatedAt, push}, nil
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

const jobColumns = `id, project_id, version, status, repository, branch, base_ref, model, pr_link, pr_number, summary, error, files_changed, input_tokens, output_tokens, created_at, updated_at, completed_at, archived_at, trigger, workflow, run`

// triggerOf is what the jobs row says started job: a job that does not say
// is an API job, as every job from before workflows is.
func triggerOf(job agentjob.Job) string {
	if job.Trigger == "" {
		return agentjob.TriggerAPI
	}
	return job.Trigger
}

func scanJob(row pgx.Row) (agentjob.Job, error) {
	var r jobRow
	if err := row.Scan(r.dest()...); err != nil {
		return agentjob.Job{}, err
	}
	return r.job()
}

// jobRow holds the columns of jobColumns as scanned, until job makes the
// job of them.
type jobRow struct {
	j       agentjob.Job
	status  string
	in, out int64
	run     []byte
}

// dest are the scan destinations of jobColumns, in order.
func (r *jobRow) dest() []any {
	j := &r.j
	return []any{&j.ID, &j.ProjectID, &j.Version, &r.status, &j.Repository, &j.Branch, &j.BaseRef, &j.Model, &j.PRLink, &j.PRNumber, &j.Summary, &j.Error, &j.FilesChanged, &r.in, &r.out, &j.CreatedAt, &j.UpdatedAt, &j.CompletedAt, &j.ArchivedAt,
		&j.Trigger, &j.Workflow, &r.run}
}

func (r *jobRow) job() (agentjob.Job, error) {
	j := r.j
	var err error
	if j.Run, err = nulljson.Decode[agentjob.RunSpec](r.run); err != nil {
		return j, fmt.Errorf("decode run spec of job %s: %w", j.ID, err)
	}
	j.Status = agentjob.Status(r.status)
	j.Usage = agentjob.Usage{InputTokens: int(r.in), OutputTokens: int(r.out)}
	j.CreatedAt, j.UpdatedAt = utc(j.CreatedAt), utc(j.UpdatedAt)
	j.CompletedAt, j.ArchivedAt = utcPtr(j.CompletedAt), utcPtr(j.ArchivedAt)
	return j, nil
}

// GetJob returns a job of the project with its messages.
func (s *Store) GetJob(ctx context.Context, projectID, id string) (agentjob.Job, error) {
	rows, err := s.pool.Query(ctx, getJobSQL, id)
	if err != nil {
		return agentjob.Job{}, fmt.Errorf("read job %s: %w", id, err)
	}
	return collectJob(rows, projectID, id)
}

// getJobSQL reads a job with its messages in one statement: the job's row
// beside each of its turns', in turn order. Every job has a turn, its
// first, from the moment it is created (insertJob), and turns are never
// deleted: no row means no such job.
//
// It finds the job by its id alone, and collectJob checks the project: with
// the project in the query too, a plan made while the table's statistics
// are missing or stale (a new schema, a burst of jobs before autovacuum
// analyzes) can walk the project's jobs in one of the (project_id, …, id)
// indexes instead of taking the primary key, and a get of one job then
// reads every job of its project.
var getJobSQL = `SELECT ` + sqltext.Qualified("j", jobColumns) + `, ` + sqltext.Qualified("t", turnColumns) + `
FROM jobs j JOIN job_turns t ON t.job_id = j.id
WHERE j.id = $1
ORDER BY t.seq`

// collectJob reads rows of a job's columns beside each of its turns' (as
// getJobSQL returns them) and closes them. No row, or a job of another
// project than projectID, is a NotFound error.
func collectJob(rows pgx.Rows, projectID, id string) (agentjob.Job, error) {
	jobs, err := collectJobs(rows)
	if err != nil {
		return agentjob.Job{}, fmt.Errorf("read job %s: %w", id, err)
	}
	if len(jobs) != 1 || jobs[0].ProjectID != projectID {
		return agentjob.Job{}, apperr.New(apperr.NotFound, "job %q not found", id)
	}
	return jobs[0], nil
}

// collectJobs reads rows of jobs' columns beside each of their turns', a
// job's rows one after the other (as insertJobsSQL and getJobSQL return
// them), and closes them.
func collectJobs(rows pgx.Rows) ([]agentjob.Job, error) {
	defer rows.Close()
	var jobs []agentjob.Job
	for rows.Next() {
		var jr jobRow
		var tr turnRow
		if err := rows.Scan(append(jr.dest(), tr.dest()...)...); err != nil {
			return nil, err
		}
		if len(jobs) == 0 || jobs[len(jobs)-1].ID != jr.j.ID {
			job, err := jr.job()
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, job)
		}
		m, err := tr.message()
		if err != nil {
			return nil, err
		}
		last := &jobs[len(jobs)-1]
		last.Messages = append(last.Messages, m)
	}
	return jobs, rows.Err()
}

// turnColumns are what scanMessage reads.
const turnColumns = `seq, prompt, state, attempts, summary, error, created_at, started_at, finished_at, run_after, pushed_sha, pushed_summary, pushed_files, pr_number, pr_link, push`

// scanMessage reads turnColumns.
func scanMessage(row pgx.Row) (agentjob.Message, error) {
	var r turnRow
	if err := row.Scan(r.dest()...); err != nil {
		return agentjob.Message{}, fmt.Errorf("scan message: %w", err)
	}
	return r.message()
}

// turnRow holds the columns of turnColumns as scanned, until message makes
// the message of them.
type turnRow struct {
	m     agentjob.Message
	state string
	push  []byte
}

// dest are the scan destinations of turnColumns, in order.
func (r *turnRow) dest() []any {
	m, cp := &r.m, &r.m.Checkpoint
	return []any{&m.Seq, &m.Prompt, &r.state, &m.Attempts, &m.Summary, &m.Error, &m.CreatedAt, &m.StartedAt, &m.FinishedAt, &m.RunAfter, &cp.PushedSHA, &cp.Summary, &cp.FilesChanged, &cp.PRNumber, &cp.PRLink, &r.push}
}

func (r *turnRow) message() (agentjob.Message, error) {
	m := r.m
	var err error
	if m.Push, err = nulljson.Decode[agentjob.PushRange](r.push); err != nil {
		return m, fmt.Errorf("decode push of turn %d: %w", m.Seq, err)
	}
	m.State = agentjob.TurnState(r.state)
	m.CreatedAt, m.StartedAt, m.FinishedAt, m.RunAfter = utc(m.CreatedAt), utcPtr(m.StartedAt), utcPtr(m.FinishedAt), utcPtr(m.RunAfter)
	if len(m.Checkpoint.FilesChanged) == 0 {
		m.Checkpoint.FilesChanged = nil
	}
	return m, nil
}

func loadMessages(ctx context.Context, q querier, jobIDs []string) (map[string][]agentjob.Message, error) {
	out := make(map[string][]agentjob.Message, len(jobIDs))
	if len(jobIDs) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT job_id, `+turnColumns+` FROM job_turns WHERE job_id = ANY($1) ORDER BY job_id, seq`, jobIDs)
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	return out, nil
}

// prefixed scans a row whose first column is read into first, the rest as
// a reader of the remaining columns would.
type prefixed struct {
	row   pgx.Row
	first any
}

func (p prefixed) Scan(dest ...any) error { return p.row.Scan(append([]any{p.first}, dest...)...) }

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

// Apply writes a patch decided by agentjob.Reduce, with its events, in one
// transaction: only while the job is still at the patch's version, and each
// fenced turn change only while its claim still holds the turn. The update
// of the job's row comes first and locks it, as every writer of a job does.
// A job's trigger, workflow and run spec are fixed when it is created, as
// its branch is: the update leaves them as they are.
func (s *Store) Apply(ctx context.Context, projectID, jobID string, p agentjob.Patch, idem *agentjob.Idempotency, events []agentjob.NewEvent) (agentjob.Job, bool, error) {
	return s.ApplyChecked(ctx, projectID, jobID, p, idem, events, nil)
}

// ApplyChecked is Apply that makes c (when not nil) in the transaction of
// the change, before the change: a refused request changes nothing and is
// ratelimit.ErrRefused, as with CreateJobChecked.
func (s *Store) ApplyChecked(ctx context.Context, projectID, jobID string, p agentjob.Patch, idem *agentjob.Idempotency, events []agentjob.NewEvent, c *ratelimit.Check) (agentjob.Job, bool, error) {
	var replayed, noRow bool
	var job agentjob.Job
	err := s.tx(ctx, func(tx pgx.Tx) error {
		replayed, noRow = false, false
		if idem != nil {
			_, found, err := claimIdempotent(ctx, tx, idem, jobID, p.Job.UpdatedAt)
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
		// One round trip for the change and the job as it leaves it:
		// every statement goes in one batch, each result is checked in
		// order, and any failed check rolls the whole transaction back.
		j := p.Job
		b := &pgx.Batch{}
		// By the primary key alone, as getJobSQL says why: the project is
		// checked on the row it returns, and a job of another project
		// rolls the change back.
		b.Queue(`UPDATE jobs SET version = version + 1, status = $1, pr_link = $2, pr_number = $3, summary = $4, error = $5, files_changed = $6, input_tokens = $7, output_tokens = $8, updated_at = $9, completed_at = $10, archived_at = $11 WHERE id = $12 AND version = $13 RETURNING project_id`,
			string(j.Status), j.PRLink, j.PRNumber, j.Summary, j.Error, nonNil(j.FilesChanged), j.Usage.InputTokens, j.Usage.OutputTokens, j.UpdatedAt, j.CompletedAt, j.ArchivedAt, jobID, p.Version)
		checks := make([]func(pgconn.CommandTag, error) error, 0, len(p.Turns))
		for _, tc := range p.Turns {
			check, err := queueTurnChange(b, jobID, tc)
			if err != nil {
				return err
			}
			checks = append(checks, check)
		}
		if err := queueEvents(b, jobID, j.UpdatedAt, events); err != nil {
			return err
		}
		b.Queue(getJobSQL, jobID)
		br := tx.SendBatch(ctx, b)
		defer func() { _ = br.Close() }()
		var rowProject string
		switch err := br.QueryRow().Scan(&rowProject); {
		case errors.Is(err, pgx.ErrNoRows):
			noRow = true
			return errNoJobRow
		case err != nil:
			return fmt.Errorf("update job: %w", err)
		case rowProject != projectID:
			noRow = true
			return errNoJobRow
		}
		for _, check := range checks {
			if err := check(br.Exec()); err != nil {
				return err
			}
		}
		for _, e := range events {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("insert %s event: %w", e.Type, err)
			}
		}
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("read job %s: %w", jobID, err)
		}
		if job, err = collectJob(rows, projectID, jobID); err != nil {
			return err
		}
		return br.Close()
	})
	if noRow {
		// The job moved on, or is not the project's: say which.
		if _, err := s.GetJob(ctx, projectID, jobID); err != nil {
			return agentjob.Job{}, false, err
		}
		return agentjob.Job{}, false, agentjob.StaleError(jobID)
	}
	if err != nil {
		return agentjob.Job{}, false, err
	}
	if replayed {
		job, err = s.GetJob(ctx, projectID, jobID)
	}
	return job, replayed, err
}

// errNoJobRow: Apply's update found no row at the patch's version.
var errNoJobRow = errors.New("no job row at the patch's version")

// queueTurnChange queues the statement of one turn change and returns the
// check of its result.
func queueTurnChange(b *pgx.Batch, jobID string, tc agentjob.TurnChange) (func(pgconn.CommandTag, error) error, error) {
	fenced := false
	switch tc.Op {
	case agentjob.OpInsert:
		args, err := turnArgs(jobID, tc.Message)
		if err != nil {
			return nil, err
		}
		b.Queue(insertTurn, args...)
	case agentjob.OpEnd:
		fenced = true
		b.Queue(`UPDATE job_turns SET state = $1, summary = $2, error = $3, finished_at = $4, lease_owner = '', lease_until = NULL WHERE job_id = $5 AND seq = $6 AND state = 'running' AND lease_owner = $7 AND attempts = $8`,
			string(tc.State), tc.Summary, tc.Error, tc.At, jobID, tc.Seq, tc.Lease.Worker, tc.Lease.Attempts)
	case agentjob.OpRetry:
		fenced = true
		b.Queue(`UPDATE job_turns SET state = 'queued', error = $1, run_after = $2, lease_owner = '', lease_until = NULL WHERE job_id = $3 AND seq = $4 AND state = 'running' AND lease_owner = $5 AND attempts = $6`,
			tc.Error, tc.RunAfter, jobID, tc.Seq, tc.Lease.Worker, tc.Lease.Attempts)
	case agentjob.OpCancelQueued:
		b.Queue(`UPDATE job_turns SET state = 'canceled', error = $1, finished_at = $2 WHERE job_id = $3 AND state = 'queued'`, tc.Error, tc.At, jobID)
	case agentjob.OpStopRunning:
		b.Queue(`UPDATE job_turns SET cancel_requested = true WHERE job_id = $1 AND state = 'running'`, jobID)
	default:
		return nil, fmt.Errorf("apply turn change: unknown op %q", tc.Op)
	}
	return func(tag pgconn.CommandTag, err error) error {
		if tc.Op == agentjob.OpInsert && isUniqueViolation(err) {
			return agentjob.StaleError(jobID)
		}
		if err != nil {
			return fmt.Errorf("apply %s to turn %d: %w", tc.Op, tc.Seq, err)
		}
		if fenced && tag.RowsAffected() == 0 {
			return agentjob.LeaseLostError(*tc.Lease)
		}
		return nil
	}, nil
}

// AppendEvents adds events to a job's stream.
func (s *Store) AppendEvents(ctx context.Context, jobID string, at time.Time, events []agentjob.NewEvent) error {
	if len(events) == 0 {
		return nil
	}
	// One round trip: one batch, which PostgreSQL runs as one implicit
	// transaction. It holds the job's row while the ids are drawn, so a
	// stream that resumes after the highest id it saw cannot skip one
	// committed late. Without the job, the inserts fail on its foreign key
	// and nothing is stored.
	b := &pgx.Batch{}
	b.Queue(`SELECT 1 FROM jobs WHERE id = $1 FOR NO KEY UPDATE`, jobID)
	if err := queueEvents(b, jobID, at, events); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		br := s.pool.SendBatch(ctx, b)
		var one int
		lockErr := br.QueryRow().Scan(&one)
		err := br.Close()
		switch {
		case errors.Is(lockErr, pgx.ErrNoRows):
			return apperr.New(apperr.NotFound, "job %q not found", jobID)
		case lockErr != nil:
			err = lockErr
		}
		if err == nil {
			return nil
		}
		if attempt < 3 && retryable(err) {
			s.log.Warn("postgres transaction retried", "attempt", attempt, "err", err)
			continue
		}
		return s.noteWrite(fmt.Errorf("append events: %w", err))
	}
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
