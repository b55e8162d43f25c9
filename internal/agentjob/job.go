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
	ID           string
	ProjectID    string
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

// TurnResult is how a turn ended, written in one transaction with the job.
type TurnResult struct {
	State        TurnState
	Summary      string
	Error        string
	PRLink       string
	PRNumber     int
	FilesChanged []string
	Usage        Usage
	// JobStatus is the job's next state if no other turn is queued behind
	// this one and the job is still active.
	JobStatus Status
	At        time.Time
}

// StatusChange is a caller's change of a job's state (archive, cancel).
type StatusChange struct {
	From, To   Status
	Error      string
	ArchivedAt *time.Time
	At         time.Time
	Events     []NewEvent
}

// Store keeps jobs, their turns and events. Methods that take a from-status
// apply only while the job is still in it, and return apperr Conflict
// otherwise, so the state machine decides and the store applies atomically.
type Store interface {
	// FindIdempotent returns the job id an earlier request with the same
	// key made, or apperr Invalid if that request had another body.
	FindIdempotent(ctx context.Context, idem Idempotency) (string, bool, error)
	CreateJob(ctx context.Context, job Job, idem *Idempotency, events []NewEvent) (Job, bool, error)
	GetJob(ctx context.Context, projectID, id string) (Job, error)
	ListJobs(ctx context.Context, projectID string, q ListQuery) ([]Job, error)
	AddMessage(ctx context.Context, projectID, jobID string, from, to Status, msg Message, idem *Idempotency, events []NewEvent) (Job, bool, error)
	ChangeStatus(ctx context.Context, projectID, jobID string, change StatusChange) (Job, error)

	ClaimTurn(ctx context.Context, worker string, now, leaseUntil time.Time) (Claim, bool, error)
	RenewLease(ctx context.Context, c Claim, leaseUntil time.Time) (cancelRequested bool, err error)
	ExpiredTurns(ctx context.Context, now time.Time) ([]Claim, error)
	RequeueTurn(ctx context.Context, c Claim, countAttempt bool) error
	FinishTurn(ctx context.Context, c Claim, r TurnResult, events []NewEvent) (Job, error)

	AppendEvents(ctx context.Context, jobID string, at time.Time, events []NewEvent) error
	ListEvents(ctx context.Context, jobID string, afterID int64, limit int) ([]JobEvent, error)
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
