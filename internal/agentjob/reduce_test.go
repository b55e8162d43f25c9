package agentjob_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
)

var reduceT0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// reduceJob is a job at version 7 whose turns are in the given states, in
// order; the running one (if any) is leased by claim.
func reduceJob(status agentjob.Status, jobErr string, turns ...agentjob.TurnState) agentjob.Job {
	j := agentjob.Job{ID: "j1", ProjectID: "p1", Version: 7, Status: status, Error: jobErr, CreatedAt: reduceT0, UpdatedAt: reduceT0,
		Summary: "earlier summary", FilesChanged: []string{"a.mdx"}, Usage: agentjob.Usage{InputTokens: 10, OutputTokens: 1}}
	if status == agentjob.Completed {
		at := reduceT0
		j.CompletedAt = &at
	}
	if status == agentjob.Archived {
		at := reduceT0
		j.ArchivedAt = &at
	}
	for i, st := range turns {
		j.Messages = append(j.Messages, agentjob.Message{Seq: i + 1, Prompt: fmt.Sprintf("m%d", i+1), State: st})
	}
	return j
}

var reduceClaim = agentjob.Claim{JobID: "j1", ProjectID: "p1", Seq: 1, Attempts: 1, Worker: "w1"}

func turnEnd(outcome agentjob.Outcome, mut ...func(*agentjob.TurnEnd)) agentjob.Input {
	te := agentjob.TurnEnd{Claim: reduceClaim, Outcome: outcome, MaxAttempts: 3}
	switch outcome {
	case agentjob.OutcomeDone:
		te.Summary, te.PRLink, te.PRNumber, te.FilesChanged = "did it", "https://forge.example/pr/4", 4, []string{"b.mdx", "a.mdx"}
	case agentjob.OutcomeFailed, agentjob.OutcomeCanceled, agentjob.OutcomeRetry:
		te.Error = "boom"
	}
	te.Usage = agentjob.Usage{InputTokens: 5, OutputTokens: 2}
	for _, m := range mut {
		m(&te)
	}
	return agentjob.Input{Kind: agentjob.InTurnEnd, At: reduceT0.Add(time.Hour), Turn: te}
}

// opsOf lists a patch's turn changes as "op seq state" strings.
func opsOf(p agentjob.Patch) []string {
	var out []string
	for _, tc := range p.Turns {
		s := string(tc.Op)
		if tc.Seq != 0 {
			s += fmt.Sprintf(" %d", tc.Seq)
		}
		if tc.State != "" {
			s += " " + string(tc.State)
		}
		out = append(out, s)
	}
	return out
}

func typesOf(evs []agentjob.NewEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// TestReduce is the job state machine's whole table: every input in every
// state it can meet, with what the job, its turns and its stream become.
func TestReduce(t *testing.T) {
	t.Parallel()
	const (
		R = agentjob.TurnRunning
		Q = agentjob.TurnQueued
		D = agentjob.TurnDone
		F = agentjob.TurnFailed
	)
	followUp := agentjob.Input{Kind: agentjob.InFollowUp, At: reduceT0.Add(time.Hour), Prompt: "more"}
	archive := agentjob.Input{Kind: agentjob.InArchive, At: reduceT0.Add(time.Hour)}
	cancel := agentjob.Input{Kind: agentjob.InCancel, At: reduceT0.Add(time.Hour), Reason: "canceled by request"}
	create := agentjob.Input{Kind: agentjob.InCreate, At: reduceT0.Add(time.Hour), Prompt: "first"}
	cases := []struct {
		name        string
		job         agentjob.Job
		in          agentjob.Input
		refused     bool // apperr Conflict
		noop        bool
		status      agentjob.Status
		jobError    string
		summary     string // "" = unchanged
		ops         []string
		events      []string
		completedAt bool
	}{
		// Create.
		{name: "create", job: reduceJob("", ""), in: create,
			status: agentjob.Active, ops: []string{"insert 1"}, events: []string{"status", "message.queued"}},
		{name: "create on an existing job", job: reduceJob(agentjob.Completed, "", D), in: create, refused: true},

		// Follow-ups.
		{name: "follow-up on active", job: reduceJob(agentjob.Active, "", R), in: followUp,
			status: agentjob.Active, ops: []string{"insert 2"}, events: []string{"message.queued"}},
		{name: "follow-up on active keeps the failures so far", job: reduceJob(agentjob.Active, "message 1 failed: x", F, R), in: followUp,
			status: agentjob.Active, jobError: "message 1 failed: x", ops: []string{"insert 3"}, events: []string{"message.queued"}},
		{name: "follow-up on completed", job: reduceJob(agentjob.Completed, "", D), in: followUp,
			status: agentjob.Active, ops: []string{"insert 2"}, events: []string{"message.queued", "status"}},
		{name: "follow-up on failed clears the error", job: reduceJob(agentjob.Failed, "boom", F), in: followUp,
			status: agentjob.Active, ops: []string{"insert 2"}, events: []string{"message.queued", "status"}},
		{name: "follow-up on archived", job: reduceJob(agentjob.Archived, "", D), in: followUp, refused: true},

		// Archive and cancel.
		{name: "archive active", job: reduceJob(agentjob.Active, "", R, Q), in: archive,
			status: agentjob.Archived, ops: []string{"cancel-queued", "stop-running"}, events: []string{"status"}},
		{name: "archive completed", job: reduceJob(agentjob.Completed, "", D), in: archive,
			status: agentjob.Archived, events: []string{"status"}, completedAt: true},
		{name: "archive failed keeps the error", job: reduceJob(agentjob.Failed, "boom", F), in: archive,
			status: agentjob.Archived, jobError: "boom", events: []string{"status"}},
		{name: "archive archived", job: reduceJob(agentjob.Archived, "", D), in: archive, noop: true},
		{name: "cancel active", job: reduceJob(agentjob.Active, "", R, Q), in: cancel,
			status: agentjob.Failed, jobError: "canceled by request", ops: []string{"cancel-queued", "stop-running"}, events: []string{"status"}},
		{name: "cancel completed", job: reduceJob(agentjob.Completed, "", D), in: cancel, refused: true},
		{name: "cancel failed", job: reduceJob(agentjob.Failed, "boom", F), in: cancel, refused: true},
		{name: "cancel archived", job: reduceJob(agentjob.Archived, "", D), in: cancel, refused: true},

		// A turn ends, nothing waits behind it.
		{name: "done", job: reduceJob(agentjob.Active, "", R), in: turnEnd(agentjob.OutcomeDone),
			status: agentjob.Completed, summary: "did it", ops: []string{"end 1 done"}, events: []string{"turn.finished", "status"}, completedAt: true},
		{name: "failed", job: reduceJob(agentjob.Active, "", R), in: turnEnd(agentjob.OutcomeFailed),
			status: agentjob.Failed, jobError: "boom", ops: []string{"end 1 failed"}, events: []string{"turn.finished", "status"}},
		{name: "canceled by the runner", job: reduceJob(agentjob.Active, "", R), in: turnEnd(agentjob.OutcomeCanceled),
			status: agentjob.Failed, jobError: "boom", ops: []string{"end 1 canceled"}, events: []string{"turn.finished", "status"}},
		{name: "retry with attempts left", job: reduceJob(agentjob.Active, "", R), in: turnEnd(agentjob.OutcomeRetry),
			status: agentjob.Active, ops: []string{"retry 1"}, events: []string{"turn.retrying"}},
		{name: "retry on the last attempt fails", job: reduceJob(agentjob.Active, "", R),
			in:     turnEnd(agentjob.OutcomeRetry, func(te *agentjob.TurnEnd) { te.Claim.Attempts = 3 }),
			status: agentjob.Failed, jobError: "boom (gave up after 3 attempts)", ops: []string{"end 1 failed"}, events: []string{"turn.finished", "status"}},
		{name: "interrupted with attempts left", job: reduceJob(agentjob.Active, "", R), in: turnEnd(agentjob.OutcomeInterrupted),
			status: agentjob.Active, ops: []string{"retry 1"}, events: []string{"turn.retrying"}},
		{name: "interrupted on the last attempt fails", job: reduceJob(agentjob.Active, "", R),
			in:     turnEnd(agentjob.OutcomeInterrupted, func(te *agentjob.TurnEnd) { te.Claim.Attempts = 3 }),
			status: agentjob.Failed, jobError: "the turn was interrupted 3 times before it could finish (the worker running it stopped); giving up",
			ops: []string{"end 1 failed"}, events: []string{"turn.finished", "status"}},

		// A turn ends with another message waiting behind it.
		{name: "done, next waits", job: reduceJob(agentjob.Active, "", R, Q), in: turnEnd(agentjob.OutcomeDone),
			status: agentjob.Active, summary: "did it", ops: []string{"end 1 done"}, events: []string{"turn.finished"}},
		{name: "failed, next waits: the job remembers", job: reduceJob(agentjob.Active, "", R, Q), in: turnEnd(agentjob.OutcomeFailed),
			status: agentjob.Active, jobError: "message 1 failed: boom", ops: []string{"end 1 failed"}, events: []string{"turn.finished"}},
		{name: "retry, next waits behind it", job: reduceJob(agentjob.Active, "", R, Q), in: turnEnd(agentjob.OutcomeRetry),
			status: agentjob.Active, ops: []string{"retry 1"}, events: []string{"turn.retrying"}},

		// An earlier message failed while this one waited (decided: the job
		// settles on its last turn, and says what was not carried out).
		{name: "done after an earlier failure completes and says so", job: reduceJob(agentjob.Active, "message 1 failed: x", F, R),
			in:     turnEnd(agentjob.OutcomeDone, func(te *agentjob.TurnEnd) { te.Claim.Seq = 2 }),
			status: agentjob.Completed, summary: "Not every message was carried out: message 1 failed: x. did it",
			ops: []string{"end 2 done"}, events: []string{"turn.finished", "status"}, completedAt: true},
		{name: "failed after an earlier failure lists both", job: reduceJob(agentjob.Active, "message 1 failed: x", F, R),
			in:     turnEnd(agentjob.OutcomeFailed, func(te *agentjob.TurnEnd) { te.Claim.Seq = 2 }),
			status: agentjob.Failed, jobError: "message 1 failed: x\nmessage 2 failed: boom",
			ops: []string{"end 2 failed"}, events: []string{"turn.finished", "status"}},

		// Canceled or archived while the turn ran.
		{name: "cancel requested, caught by the worker", job: reduceJob(agentjob.Failed, "canceled by request", R),
			in:     turnEnd(agentjob.OutcomeCanceled, func(te *agentjob.TurnEnd) { te.Error, te.Requested = "canceled by request", true }),
			status: agentjob.Failed, jobError: "canceled by request", ops: []string{"end 1 canceled"}, events: []string{"turn.finished"}},
		{name: "failed on a canceled job ends canceled", job: reduceJob(agentjob.Failed, "canceled by request", R), in: turnEnd(agentjob.OutcomeFailed),
			status: agentjob.Failed, jobError: "canceled by request", ops: []string{"end 1 canceled"}, events: []string{"turn.finished"}},
		{name: "retry on a canceled job does not run again", job: reduceJob(agentjob.Failed, "canceled by request", R), in: turnEnd(agentjob.OutcomeRetry),
			status: agentjob.Failed, jobError: "canceled by request", ops: []string{"end 1 canceled"}, events: []string{"turn.finished"}},
		{name: "interrupted on an archived job", job: reduceJob(agentjob.Archived, "", R), in: turnEnd(agentjob.OutcomeInterrupted),
			status: agentjob.Archived, ops: []string{"end 1 canceled"}, events: []string{"turn.finished"}},
		{name: "done on an archived job keeps its PR", job: reduceJob(agentjob.Archived, "", R), in: turnEnd(agentjob.OutcomeDone),
			status: agentjob.Archived, summary: "did it", ops: []string{"end 1 done"}, events: []string{"turn.finished"}},
		{name: "interrupted, cancel requested, follow-up since: canceled, not a failure", job: reduceJob(agentjob.Active, "", R, Q),
			in:     turnEnd(agentjob.OutcomeInterrupted, func(te *agentjob.TurnEnd) { te.Claim.CancelRequested = true }),
			status: agentjob.Active, ops: []string{"end 1 canceled"}, events: []string{"turn.finished"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := tc.job
			p, evs, err := agentjob.Reduce(tc.job, tc.in)
			if tc.refused {
				if !apperr.Is(err, apperr.Conflict) {
					t.Fatalf("Reduce = %v, want a Conflict", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Reduce: %v", err)
			}
			if p.Version != before.Version {
				t.Errorf("patch version %d, want the job's %d", p.Version, before.Version)
			}
			if tc.noop {
				if !p.Noop || len(p.Turns) != 0 || len(evs) != 0 {
					t.Errorf("patch = %+v, events %v; want a no-op", p, evs)
				}
				return
			}
			j := p.Job
			if j.Status != tc.status || j.Error != tc.jobError {
				t.Errorf("job status %s error %q, want %s %q", j.Status, j.Error, tc.status, tc.jobError)
			}
			wantSummary := tc.summary
			if wantSummary == "" {
				wantSummary = before.Summary
			}
			if j.Summary != wantSummary {
				t.Errorf("summary %q, want %q", j.Summary, wantSummary)
			}
			if got := opsOf(p); !slices.Equal(got, tc.ops) {
				t.Errorf("turn changes %q, want %q", got, tc.ops)
			}
			if got := typesOf(evs); !slices.Equal(got, tc.events) {
				t.Errorf("events %q, want %q", got, tc.events)
			}
			if (j.CompletedAt != nil) != tc.completedAt {
				t.Errorf("completedAt %v, want set=%v", j.CompletedAt, tc.completedAt)
			}
			if j.Status == agentjob.Archived && j.ArchivedAt == nil {
				t.Errorf("an archived job without archivedAt")
			}
			if !j.UpdatedAt.Equal(tc.in.At) {
				t.Errorf("updatedAt %s, want %s", j.UpdatedAt, tc.in.At)
			}
			if j.Status != before.Status {
				found := false
				for _, ev := range evs {
					if d, _ := ev.Data.(map[string]any); ev.Type == agentjob.EventStatus && d["status"] == j.Status {
						found = true
					}
				}
				if !found {
					t.Errorf("events %v, want a status event with status %s", evs, j.Status)
				}
			}
			for _, ch := range p.Turns {
				if (ch.Op == agentjob.OpEnd || ch.Op == agentjob.OpRetry) && (ch.Lease == nil || *ch.Lease != tc.in.Turn.Claim) {
					t.Errorf("%s without the input's claim as its fence: %+v", ch.Op, ch.Lease)
				}
			}
			// The input job is not changed.
			if before.Version != tc.job.Version || len(before.FilesChanged) != 1 {
				t.Errorf("Reduce changed its input")
			}
		})
	}
}

// TestReduceTurnOutcomeFields: what a turn achieved is kept whatever its
// outcome, and a pull request once set is never replaced.
func TestReduceTurnOutcomeFields(t *testing.T) {
	t.Parallel()
	job := reduceJob(agentjob.Active, "", agentjob.TurnRunning)
	p, _, err := agentjob.Reduce(job, turnEnd(agentjob.OutcomeDone))
	if err != nil {
		t.Fatal(err)
	}
	j := p.Job
	if j.PRLink != "https://forge.example/pr/4" || j.PRNumber != 4 {
		t.Errorf("PR %q #%d", j.PRLink, j.PRNumber)
	}
	if !slices.Equal(j.FilesChanged, []string{"a.mdx", "b.mdx"}) {
		t.Errorf("files %v, want a.mdx b.mdx, each once", j.FilesChanged)
	}
	if j.Usage != (agentjob.Usage{InputTokens: 15, OutputTokens: 3}) {
		t.Errorf("usage %+v, want summed", j.Usage)
	}
	job.PRLink, job.PRNumber = "https://forge.example/pr/1", 1
	p, _, err = agentjob.Reduce(job, turnEnd(agentjob.OutcomeDone))
	if err != nil {
		t.Fatal(err)
	}
	if p.Job.PRLink != "https://forge.example/pr/1" || p.Job.PRNumber != 1 {
		t.Errorf("PR replaced: %q #%d", p.Job.PRLink, p.Job.PRNumber)
	}
	retry := turnEnd(agentjob.OutcomeRetry, func(te *agentjob.TurnEnd) { te.RetryAt = reduceT0.Add(2 * time.Hour) })
	p, evs, err := agentjob.Reduce(reduceJob(agentjob.Active, "", agentjob.TurnRunning), retry)
	if err != nil {
		t.Fatal(err)
	}
	if tc := p.Turns[0]; !tc.RunAfter.Equal(reduceT0.Add(2*time.Hour)) || tc.Error != "boom" {
		t.Errorf("retry change = %+v, want run after the delay with the error", tc)
	}
	if d, _ := evs[0].Data.(map[string]any); !strings.Contains(fmt.Sprint(d["error"]), "boom") {
		t.Errorf("retry event = %v, want the error", d)
	}
}

// TestReduceAgreesWithTransitions: for the caller's actions, the reducer
// refuses exactly what the state table refuses.
func TestReduceAgreesWithTransitions(t *testing.T) {
	t.Parallel()
	kinds := map[agentjob.InputKind]agentjob.Event{agentjob.InFollowUp: agentjob.EvFollowUp, agentjob.InArchive: agentjob.EvArchive, agentjob.InCancel: agentjob.EvCancel}
	for _, st := range []agentjob.Status{agentjob.Active, agentjob.Completed, agentjob.Failed, agentjob.Archived} {
		for kind, ev := range kinds {
			_, _, err := agentjob.Reduce(reduceJob(st, ""), agentjob.Input{Kind: kind, At: reduceT0})
			to, terr := agentjob.Transition(st, ev)
			if (err == nil) != (terr == nil) {
				t.Errorf("%s on %s: Reduce error %v, Transition error %v", kind, st, err, terr)
			}
			if err == nil {
				p, _, _ := agentjob.Reduce(reduceJob(st, ""), agentjob.Input{Kind: kind, At: reduceT0})
				if p.Job.Status != to {
					t.Errorf("%s on %s: Reduce gives %s, the table %s", kind, st, p.Job.Status, to)
				}
			}
		}
	}
}
