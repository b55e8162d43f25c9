// Package agentjob is the agent job: its model, its state machine, the
// service behind the job API, the store it needs, and the durable queue of
// turns that workers run.
package agentjob

import (
	"context"
	"encoding/json"
	"time"
)

// Job is one agent job: a branch of a project that the agent works on over
// one or more turns.
type Job struct {
	ID        string
	ProjectID string
	// Version grows with every change; a patch applies only to the version
	// it was decided on.
	Version      int64
	Status       Status
	Repository   string
	Branch       string // source.ref: the branch the agent works on
	BaseRef      string
	Model        string
	PRLink       string // empty until a pull request exists; never cleared
	PRNumber     int
	Summary      string
	Error        string
	FilesChanged []string
	Usage        Usage // summed over the job's turns
	CreatedAt    time.Time
	UpdatedAt    time.Time
	CompletedAt  *time.Time
	ArchivedAt   *time.Time
	Messages     []Message
	// Trigger is what started the job: TriggerAPI for a caller of the job
	// API, or how a workflow run was started.
	Trigger string
	// Workflow is the id of the workflow a run belongs to; "" for API jobs.
	Workflow string
	// Run is what a workflow run asks of its turns beyond their prompts;
	// nil for API jobs.
	Run *RunSpec
}

// What started a job (Job.Trigger).
const (
	TriggerAPI      = "api"      // a caller of the job API
	TriggerSchedule = "schedule" // a workflow's cron schedule
	TriggerPush     = "push"     // a forge webhook for a push a workflow watches
	TriggerManual   = "manual"   // a workflow run by hand (API or CLI)
)

// RunSpec is how a workflow run works, fixed when the run starts.
type RunSpec struct {
	// Automerge pushes each turn's commit to the base branch (the job's
	// branch is then the base ref) and opens no pull request.
	Automerge bool `json:"automerge,omitempty"`
	// Context lists repositories ("owner/name", on the project's forge)
	// cloned read-only for the agent to read.
	Context []string `json:"context,omitempty"`
}

// PushRange is the push a message of a push-triggered run was sent for: the
// turn reads its diff from the context clone of Repo.
type PushRange struct {
	Repo   string `json:"repo"`
	Branch string `json:"branch"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Usage counts model tokens.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// TurnState is the state of one message's turn in the queue.
type TurnState string

const (
	TurnQueued   TurnState = "queued"
	TurnRunning  TurnState = "running"
	TurnDone     TurnState = "done"
	TurnFailed   TurnState = "failed"
	TurnCanceled TurnState = "canceled"
)

// Message is one instruction to a job and the turn that carries it out.
type Message struct {
	Seq        int
	Prompt     string
	State      TurnState
	Attempts   int
	Summary    string
	Error      string
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
	// RunAfter is when a turn queued again after a retryable error may run.
	RunAfter *time.Time
	// Checkpoint is what the turn's earlier attempts already did.
	Checkpoint Checkpoint
	// Push is the push a workflow run's message was sent for, or nil.
	Push *PushRange
}

// JobEvent is one entry of a job's event stream. IDs grow over the whole
// store, so a client resumes with the last id it saw.
type JobEvent struct {
	ID        int64
	JobID     string
	Type      string
	Data      json.RawMessage
	CreatedAt time.Time
}

// Event types on a job's stream. The agent adds its own (tool steps, commits,
// the pull request) through Progress.
const (
	EventStatus        = "status"
	EventMessageQueued = "message.queued"
	EventTurnStarted   = "turn.started"
	EventTurnFinished  = "turn.finished"
	EventTurnRetrying  = "turn.retrying"
)

// NewEvent is an event to append.
type NewEvent struct {
	Type string
	Data any
}

// Idempotency identifies a retried request: the same Key in the same Scope
// within the retention window returns the first result.
type Idempotency struct {
	Scope       string
	Key         string
	RequestHash []byte
	// NotBefore: records older than this are expired and replaced.
	NotBefore time.Time
}

// ListQuery selects a page of a project's jobs, newest first.
type ListQuery struct {
	Status Status // empty for all
	Limit  int
	After  *Cursor
}

// Cursor is the position after the last job of a page.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// Claim is a running turn leased by one worker.
type Claim struct {
	JobID     string
	ProjectID string
	Seq       int
	Attempts  int
	Worker    string
	// CancelRequested is set on expired turns whose job was canceled or
	// archived while they ran: they end canceled instead of running again.
	CancelRequested bool
}

// Checkpoint is how far a turn's side effects got, written as each lands so
// that a turn run again resumes after them instead of repeating them.
type Checkpoint struct {
	// PushedSHA is the turn's commit on the job's branch, once pushed.
	PushedSHA    string
	Summary      string   // the summary the pushed commit carries
	FilesChanged []string // the files the pushed commit changed
	// PRNumber and PRLink are the pull request the turn opened or updated.
	PRNumber int
	PRLink   string
}

// Store keeps jobs, their turns and events. The reducer decides every
// change of a job (Reduce); the store applies its patch atomically and only
// while the job is still at the patch's version.
type Store interface {
	// FindIdempotent returns the job id an earlier request with the same
	// key made, or apperr Invalid if that request had another body.
	FindIdempotent(ctx context.Context, idem Idempotency) (string, bool, error)
	CreateJob(ctx context.Context, job Job, idem *Idempotency, events []NewEvent) (Job, bool, error)
	GetJob(ctx context.Context, projectID, id string) (Job, error)
	ListJobs(ctx context.Context, projectID string, q ListQuery) ([]Job, error)
	// Apply writes a patch and its events in one transaction. A job whose
	// version moved on is an apperr Conflict wrapping ErrStale; a fenced
	// turn change whose claim no longer holds the turn is a Conflict
	// wrapping ErrLeaseLost. With idem already used it writes nothing and
	// returns the job with true.
	Apply(ctx context.Context, projectID, jobID string, p Patch, idem *Idempotency, events []NewEvent) (Job, bool, error)

	ClaimTurn(ctx context.Context, worker string, now, leaseUntil time.Time) (Claim, bool, error)
	// RenewLease extends the claim's lease: a compare-and-swap on the
	// worker and the attempt number (the fencing token). A lease taken over
	// is a Conflict wrapping ErrLeaseLost.
	RenewLease(ctx context.Context, c Claim, leaseUntil time.Time) (cancelRequested bool, err error)
	ExpiredTurns(ctx context.Context, now time.Time) ([]Claim, error)
	// RequeueTurn hands a running turn back on shutdown, without using up
	// its attempt.
	RequeueTurn(ctx context.Context, c Claim) error
	// SaveCheckpoint records how far the claim's turn got, fenced like
	// RenewLease.
	SaveCheckpoint(ctx context.Context, c Claim, cp Checkpoint) error

	AppendEvents(ctx context.Context, jobID string, at time.Time, events []NewEvent) error
	ListEvents(ctx context.Context, jobID string, afterID int64, limit int) ([]JobEvent, error)

	// WorkflowRuns tells about a workflow's runs (jobs of the project with
	// that Workflow): the newest one still active, if any, and how many
	// were created at or after since and have not failed.
	WorkflowRuns(ctx context.Context, projectID, workflowID string, since time.Time) (RunStats, error)
}

// RunStats is what WorkflowRuns reports.
type RunStats struct {
	// ActiveJobID is the newest active run, or "".
	ActiveJobID string
	// NotFailed counts the runs created since the time asked for whose
	// status is not failed.
	NotFailed int
}

// StatusEventData is the payload of a status event, written by the store
// whenever a job's status changes.
func StatusEventData(j Job) map[string]any {
	d := map[string]any{"status": j.Status}
	if j.Error != "" && j.Status == Failed {
		d["error"] = j.Error
	}
	if j.PRLink != "" {
		d["prLink"] = j.PRLink
	}
	if j.Summary != "" && j.Status == Completed {
		d["summary"] = j.Summary
	}
	return d
}
