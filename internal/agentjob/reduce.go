package agentjob

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
)

// This file is the one place a job's state is decided. Reduce takes a job as
// read from the store and something that happens to it, and returns the
// patch to write and the events to append; it does no I/O. The store writes
// the patch only if the job's version is still the one it was computed from,
// so a decision made on a stale read is refused and made again.

// ErrStale marks a patch refused because the job changed after it was read.
// The caller reads the job again and reduces again.
var ErrStale = errors.New("the job changed while the change was being decided")

// ErrLeaseLost marks a write refused because the turn is no longer leased by
// the claim that made it: another worker took it back, or it already ended.
var ErrLeaseLost = errors.New("the turn is no longer leased by this worker")

// InputKind says what happened to a job.
type InputKind string

const (
	InCreate   InputKind = "create"   // a caller created the job with its first message
	InFollowUp InputKind = "followup" // a caller sent another message
	InArchive  InputKind = "archive"  // a caller archived the job
	InCancel   InputKind = "cancel"   // a caller canceled the job
	InTurnEnd  InputKind = "turn.end" // a running turn ended (see TurnEnd.Outcome)
)

// Outcome is how a turn's run ended.
type Outcome string

const (
	OutcomeDone        Outcome = "done"        // the agent finished
	OutcomeFailed      Outcome = "failed"      // an error that running again would not fix
	OutcomeCanceled    Outcome = "canceled"    // stopped by a cancel or archive
	OutcomeRetry       Outcome = "retry"       // an error that may pass: run again after a delay
	OutcomeInterrupted Outcome = "interrupted" // its worker stopped renewing the lease
)

// Input is something that happens to a job.
type Input struct {
	Kind InputKind
	At   time.Time
	// Prompt is the instruction of a create or follow-up.
	Prompt string
	// Push is the push a workflow run's create or follow-up was sent for.
	Push *PushRange
	// Reason is the error a cancel leaves on the job.
	Reason string
	// Turn is how a turn ended, for InTurnEnd.
	Turn TurnEnd
}

// TurnEnd is a turn's run as its worker (or the recovery of an expired
// lease) reports it.
type TurnEnd struct {
	Claim        Claim
	Outcome      Outcome
	Summary      string
	Error        string
	PRLink       string
	PRNumber     int
	FilesChanged []string
	Usage        Usage
	// RetryAt is when a retried turn may run again.
	RetryAt time.Time
	// MaxAttempts bounds the runs of one turn; a retry or interruption on
	// the last attempt fails the turn instead.
	MaxAttempts int
	// Requested says a caller's cancel or archive stopped the turn (so did
	// the claim's CancelRequested): it ends canceled, and is no failure of
	// the job's instructions.
	Requested bool
}

// TurnOp is one change to a job's turns.
type TurnOp string

const (
	OpInsert       TurnOp = "insert"        // queue Message as a new turn
	OpEnd          TurnOp = "end"           // the leased running turn Seq ends in State
	OpRetry        TurnOp = "retry"         // the leased running turn Seq is queued again until RunAfter
	OpCancelQueued TurnOp = "cancel-queued" // every queued turn ends canceled with Error
	OpStopRunning  TurnOp = "stop-running"  // the running turn, if any, is asked to stop
)

// TurnChange is one change to a job's turns, part of a Patch.
type TurnChange struct {
	Op       TurnOp
	Seq      int
	Message  Message   // OpInsert
	State    TurnState // OpEnd
	Summary  string    // OpEnd
	Error    string    // OpEnd, OpRetry (the error of the run), OpCancelQueued
	At       time.Time // when it ended (OpEnd, OpCancelQueued)
	RunAfter time.Time // OpRetry
	// Lease fences OpEnd and OpRetry: they apply only while this claim
	// still holds the turn (running, same worker, same attempt).
	Lease *Claim
}

// Patch is what Reduce decided: the job's fields after the change and the
// changes to its turns, to be written in one transaction only while the
// job's version is still Version.
type Patch struct {
	Version int64
	// Job holds every field of the jobs row after the change; its Messages
	// are not written (Turns says what changes in them).
	Job   Job
	Turns []TurnChange
	// Noop is set when nothing changes (archiving an archived job).
	Noop bool
}

// Reduce decides what in does to job. It returns the patch to write and the
// events to append with it, or an apperr Conflict that says why in is
// refused in the job's state.
func Reduce(job Job, in Input) (Patch, []NewEvent, error) {
	next := job
	next.Messages = nil
	next.FilesChanged = slices.Clone(job.FilesChanged)
	next.UpdatedAt = in.At
	p := Patch{Version: job.Version}
	var events []NewEvent

	switch in.Kind {
	case InCreate:
		// job is the new job's fields, with no status yet.
		to, err := Transition(job.Status, EvCreate)
		if err != nil {
			return Patch{}, nil, err
		}
		next.Status = to
		msg := Message{Seq: 1, Prompt: in.Prompt, State: TurnQueued, CreatedAt: in.At, Push: in.Push}
		p.Turns = append(p.Turns, TurnChange{Op: OpInsert, Seq: 1, Message: msg})
		events = append(events,
			NewEvent{Type: EventStatus, Data: map[string]any{"status": to}},
			NewEvent{Type: EventMessageQueued, Data: map[string]any{"seq": 1}})
		p.Job = next
		return p, events, nil

	case InFollowUp:
		to, err := Transition(job.Status, EvFollowUp)
		if err != nil {
			return Patch{}, nil, err
		}
		seq := len(job.Messages) + 1
		msg := Message{Seq: seq, Prompt: in.Prompt, State: TurnQueued, CreatedAt: in.At, Push: in.Push}
		p.Turns = append(p.Turns, TurnChange{Op: OpInsert, Seq: seq, Message: msg})
		events = append(events, NewEvent{Type: EventMessageQueued, Data: map[string]any{"seq": seq}})
		if to != job.Status {
			// Back to work: what the job showed when it settled no longer holds.
			next.Status, next.Error, next.CompletedAt = to, "", nil
		}

	case InArchive, InCancel:
		ev := EvArchive
		if in.Kind == InCancel {
			ev = EvCancel
		}
		to, err := Transition(job.Status, ev)
		if err != nil {
			return Patch{}, nil, err
		}
		if to == job.Status {
			return Patch{Version: job.Version, Job: job, Noop: true}, nil, nil
		}
		next.Status = to
		if to == Archived {
			at := in.At
			next.ArchivedAt = &at
		}
		if in.Reason != "" {
			next.Error = in.Reason
		}
		if job.Status == Active {
			reason := in.Reason
			if reason == "" {
				reason = "the job was " + string(to)
			}
			p.Turns = append(p.Turns,
				TurnChange{Op: OpCancelQueued, Error: reason, At: in.At},
				TurnChange{Op: OpStopRunning})
		}

	case InTurnEnd:
		events = reduceTurnEnd(job, &next, &p, in)

	default:
		return Patch{}, nil, fmt.Errorf("reduce: unknown input %q", in.Kind)
	}

	if next.Status != job.Status {
		events = append(events, NewEvent{Type: EventStatus, Data: StatusEventData(next)})
	}
	p.Job = next
	return p, events, nil
}

// reduceTurnEnd decides the end of a running turn: what the turn becomes and,
// if no other turn waits behind it, what the job settles on.
func reduceTurnEnd(job Job, next *Job, p *Patch, in Input) []NewEvent {
	te := in.Turn
	claim := te.Claim
	outcome := te.Outcome

	// What the run achieved is kept whatever becomes of the job: a pull
	// request that was opened is never forgotten.
	if next.PRLink == "" && te.PRLink != "" {
		next.PRLink, next.PRNumber = te.PRLink, te.PRNumber
	}
	for _, f := range te.FilesChanged {
		if !slices.Contains(next.FilesChanged, f) {
			next.FilesChanged = append(next.FilesChanged, f)
		}
	}
	next.Usage.InputTokens += te.Usage.InputTokens
	next.Usage.OutputTokens += te.Usage.OutputTokens

	errText := te.Error
	requested := te.Requested || claim.CancelRequested
	if requested && outcome != OutcomeDone {
		outcome = OutcomeCanceled
		if errText == "" || te.Outcome == OutcomeInterrupted {
			errText = "canceled by request"
		}
	}
	if job.Status != Active && outcome != OutcomeDone {
		requested = true
		// The job was canceled or archived while the turn ran: it does not
		// run again, whatever stopped it.
		outcome = OutcomeCanceled
		if errText == "" || te.Outcome == OutcomeRetry || te.Outcome == OutcomeInterrupted {
			errText = "canceled by request"
			if job.Status == Archived {
				errText = "the job was archived"
			}
		}
	}
	if outcome == OutcomeRetry || outcome == OutcomeInterrupted {
		if claim.Attempts < te.MaxAttempts {
			runAfter := te.RetryAt
			if runAfter.IsZero() {
				runAfter = in.At
			}
			p.Turns = append(p.Turns, TurnChange{Op: OpRetry, Seq: claim.Seq, Error: errText, RunAfter: runAfter, Lease: &claim})
			data := map[string]any{"seq": claim.Seq, "attempt": claim.Attempts, "runAfter": runAfter}
			if errText != "" {
				data["error"] = errText
			}
			return []NewEvent{{Type: EventTurnRetrying, Data: data}}
		}
		if outcome == OutcomeInterrupted {
			errText = fmt.Sprintf("the turn was interrupted %d times before it could finish (the worker running it stopped); giving up", claim.Attempts)
		} else {
			errText = fmt.Sprintf("%s (gave up after %d attempts)", errText, claim.Attempts)
		}
		outcome = OutcomeFailed
	}

	state := map[Outcome]TurnState{OutcomeDone: TurnDone, OutcomeFailed: TurnFailed, OutcomeCanceled: TurnCanceled}[outcome]
	summary := ""
	if state == TurnDone {
		summary, errText = te.Summary, ""
	}
	p.Turns = append(p.Turns, TurnChange{Op: OpEnd, Seq: claim.Seq, State: state, Summary: summary, Error: errText, At: in.At, Lease: &claim})
	data := map[string]any{"seq": claim.Seq, "state": state}
	if summary != "" {
		data["summary"] = summary
	}
	if errText != "" {
		data["error"] = errText
	}
	events := []NewEvent{{Type: EventTurnFinished, Data: data}}

	if state == TurnDone && summary != "" {
		next.Summary = summary
	}
	if job.Status != Active {
		return events
	}
	waiting := slices.ContainsFunc(job.Messages, func(m Message) bool {
		return m.Seq != claim.Seq && m.State == TurnQueued
	})
	if waiting {
		// The next message runs; a failure is remembered so that the job
		// does not settle as if it never happened.
		if state != TurnDone && !requested {
			next.Error = joinFailure(next.Error, claim.Seq, errText)
		}
		return events
	}
	if state == TurnDone {
		next.Status = mustTransition(Active, EvFinished)
		at := in.At
		next.CompletedAt = &at
		next.Summary = settledSummary(job.Error, next.Summary)
		next.Error = ""
		return events
	}
	ev := EvFailed
	if state == TurnCanceled {
		ev = EvCancel
	}
	next.Status = mustTransition(Active, ev)
	next.Error = joinFailure(job.Error, claim.Seq, errText)
	if job.Error == "" {
		next.Error = errText
	}
	return events
}

// joinFailure adds a failed turn to the failures the job has seen since it
// last settled.
func joinFailure(prev string, seq int, errText string) string {
	line := fmt.Sprintf("message %d failed: %s", seq, errText)
	if prev == "" {
		return line
	}
	return prev + "\n" + line
}

// settledSummary is the summary of a job that completes: the last turn's,
// after any failure of a message that ran before it since the job last
// settled, so that a completed job never hides an instruction that was not
// carried out.
func settledSummary(failures, summary string) string {
	if failures == "" {
		return summary
	}
	note := "Not every message was carried out: " + strings.ReplaceAll(failures, "\n", "; ") + "."
	if summary == "" {
		return note
	}
	return note + " " + summary
}

// mustTransition reads the state table for a pair that is in it.
func mustTransition(from Status, ev Event) Status {
	to, err := Transition(from, ev)
	if err != nil {
		panic(err)
	}
	return to
}

// StaleError is what a store returns for a patch whose version is gone.
func StaleError(jobID string) error {
	return apperr.Wrap(ErrStale, apperr.Conflict, "job %s changed while the change was being written; try again", jobID)
}

// LeaseLostError is what a store returns for a fenced write whose claim no
// longer holds the turn.
func LeaseLostError(c Claim) error {
	return apperr.Wrap(ErrLeaseLost, apperr.Conflict, "turn %d of job %s is no longer leased by %s (attempt %d)", c.Seq, c.JobID, c.Worker, c.Attempts)
}
