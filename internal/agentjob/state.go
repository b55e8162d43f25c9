package agentjob

import (
	"fmt"

	"github.com/docsmith/docsmith/internal/apperr"
)

// Status is a job's state, as the seed names them.
type Status string

const (
	Active    Status = "active"
	Completed Status = "completed"
	Archived  Status = "archived"
	Failed    Status = "failed"
)

// ParseStatus checks a status given by a client.
func ParseStatus(s string) (Status, error) {
	switch Status(s) {
	case Active, Completed, Archived, Failed:
		return Status(s), nil
	}
	return "", apperr.New(apperr.Invalid, "status %q must be one of active, completed, archived, failed", s)
}

// Event is something that happens to a job.
type Event string

const (
	EvCreate   Event = "create"
	EvFinished Event = "finish"   // the agent finished its turn (with or without a PR)
	EvFailed   Event = "fail"     // unrecoverable error or timeout
	EvCancel   Event = "cancel"   // a caller canceled the job
	EvFollowUp Event = "followup" // a caller sent another message
	EvArchive  Event = "archive"
)

// transitions is SPEC §3's state table, and the only place it lives. Archiving
// an archived job is an idempotent no-op rather than a conflict.
var transitions = map[Status]map[Event]Status{
	"": {EvCreate: Active},
	Active: {
		EvFinished: Completed,
		EvFailed:   Failed,
		EvCancel:   Failed,
		EvFollowUp: Active,
		EvArchive:  Archived,
	},
	Completed: {EvFollowUp: Active, EvArchive: Archived},
	Failed:    {EvFollowUp: Active, EvArchive: Archived},
	Archived:  {EvArchive: Archived},
}

// Transition returns the state a job in from moves to on ev, or a Conflict
// error that tells the caller why the action is refused.
func Transition(from Status, ev Event) (Status, error) {
	if to, ok := transitions[from][ev]; ok {
		return to, nil
	}
	return "", apperr.New(apperr.Conflict, "%s", refusal(from, ev))
}

func refusal(from Status, ev Event) string {
	switch {
	case from == Archived && ev == EvFollowUp:
		return "the job is archived and takes no more messages; create a new job"
	case from == Archived && ev == EvCancel:
		return "the job is archived; there is nothing to cancel"
	case ev == EvCancel:
		return fmt.Sprintf("only an active job can be canceled; this job is %s", from)
	default:
		return fmt.Sprintf("a %s job cannot take the %q action", from, ev)
	}
}
