package storetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
)

func workflowJobCases() []testCase {
	return []testCase{
		{"Workflows/RunJobFields", testRunJobFields},
		{"Workflows/APIJobTrigger", testAPIJobTrigger},
		{"Workflows/Runs", testWorkflowRuns},
	}
}

// runJob is a workflow run of the env's project, as agentjob.StartRun
// makes it, with its first message sent for push.
func (e *env) runJob(workflowID string, at time.Time, push *agentjob.PushRange) agentjob.Job {
	j := e.newJob(at)
	j.Trigger, j.Workflow = agentjob.TriggerPush, workflowID
	j.Run = &agentjob.RunSpec{Automerge: true, Context: []string{"acme/api", "acme/cli"}}
	j.Messages[0].Push = push
	return j
}

// checkRunFields compares what a store read back of a job's workflow
// fields and its messages' pushes.
func checkRunFields(t *testing.T, what string, got, want agentjob.Job) {
	t.Helper()
	if got.Trigger != want.Trigger || got.Workflow != want.Workflow || !reflect.DeepEqual(got.Run, want.Run) {
		t.Errorf("%s: trigger %q, workflow %q, run %+v; want %q, %q, %+v", what, got.Trigger, got.Workflow, got.Run, want.Trigger, want.Workflow, want.Run)
	}
	if len(got.Messages) != len(want.Messages) {
		t.Fatalf("%s: %d messages, want %d", what, len(got.Messages), len(want.Messages))
	}
	for i, m := range got.Messages {
		if w := want.Messages[i].Push; !reflect.DeepEqual(m.Push, w) {
			t.Errorf("%s: message %d push %+v, want %+v", what, m.Seq, m.Push, w)
		}
	}
}

func testRunJobFields(t *testing.T, s Store) {
	e := setup(t, s)
	push := &agentjob.PushRange{Repo: "acme/api", Branch: "main", Before: "1111111", After: "2222222"}
	in := e.runJob("api-changes", e.t0, push)
	got := e.create(in)
	checkRunFields(t, "CreateJob", got, in)
	checkRunFields(t, "GetJob", e.job(in.ID), in)

	// A run whose spec asks for nothing still has one (StartRun always
	// sets it); a message sent for no push has none.
	bare := e.newJob(e.t0.Add(time.Second))
	bare.Trigger, bare.Workflow, bare.Run = agentjob.TriggerSchedule, "nightly", &agentjob.RunSpec{}
	e.create(bare)
	checkRunFields(t, "GetJob of a run with an empty spec", e.job(bare.ID), bare)

	// A follow-up sent for another push keeps its own; one sent for none
	// has none; the job's fields stay through every patch.
	next := &agentjob.PushRange{Repo: "acme/cli", Branch: "release/2.x", Before: "2222222", After: "3333333"}
	after, _, err := e.tryApply(in.ID, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "again", Push: next, At: e.t0.Add(time.Minute)}, nil)
	must(t, err, "follow-up with a push")
	want := in
	want.Messages = append(slices.Clone(in.Messages), agentjob.Message{Seq: 2, Push: next})
	checkRunFields(t, "Apply of a follow-up", after, want)
	e.addMessage(in.ID, 3, e.t0.Add(2*time.Minute))
	want.Messages = append(want.Messages, agentjob.Message{Seq: 3})
	checkRunFields(t, "GetJob after follow-ups", e.job(in.ID), want)
	e.cancel(in.ID, "stop", e.t0.Add(3*time.Minute))
	checkRunFields(t, "GetJob after a cancel", e.job(in.ID), want)

	list, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Limit: 10})
	must(t, err, "ListJobs")
	if ids, wantIDs := jobIDs(list), []string{bare.ID, in.ID}; !slices.Equal(ids, wantIDs) {
		t.Fatalf("ListJobs = %v, want %v", ids, wantIDs)
	}
	checkRunFields(t, "ListJobs run", list[0], bare)
	checkRunFields(t, "ListJobs run with pushes", list[1], want)
}

func testAPIJobTrigger(t *testing.T, s Store) {
	e := setup(t, s)
	api := e.newJob(e.t0)
	api.Trigger = agentjob.TriggerAPI
	// A job that does not say what started it is an API job, as every job
	// from before workflows is.
	unsaid := e.newJob(e.t0.Add(time.Second))
	for _, j := range []agentjob.Job{api, unsaid} {
		e.create(j)
		want := j
		want.Trigger = agentjob.TriggerAPI
		checkRunFields(t, "GetJob of an API job", e.job(j.ID), want)
	}
	list, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Limit: 10})
	must(t, err, "ListJobs")
	for _, j := range list {
		if j.Trigger != agentjob.TriggerAPI || j.Workflow != "" || j.Run != nil || j.Messages[0].Push != nil {
			t.Errorf("listed API job %s: trigger %q, workflow %q, run %+v, push %+v", j.ID, j.Trigger, j.Workflow, j.Run, j.Messages[0].Push)
		}
	}
}

func testWorkflowRuns(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("other")
	since := e.t0.Add(-24 * time.Hour)
	stats := func(projectID, workflowID string, since time.Time) agentjob.RunStats {
		t.Helper()
		st, err := s.WorkflowRuns(e.ctx, projectID, workflowID, since)
		must(t, err, "WorkflowRuns "+workflowID)
		return st
	}
	run := func(projectID, workflowID string, at time.Time, status agentjob.Status) agentjob.Job {
		t.Helper()
		j := e.newJobIn(projectID, at)
		j.Trigger, j.Workflow, j.Run, j.Status = agentjob.TriggerSchedule, workflowID, &agentjob.RunSpec{}, status
		return e.create(j)
	}

	if st := stats(e.proj.ID, "nightly", since); st != (agentjob.RunStats{}) {
		t.Errorf("WorkflowRuns with no runs = %+v, want zero", st)
	}

	run(e.proj.ID, "nightly", since.Add(-time.Microsecond), agentjob.Completed) // before since
	run(e.proj.ID, "nightly", since, agentjob.Completed)                        // at since: counted
	older := run(e.proj.ID, "nightly", e.t0.Add(-3*time.Hour), agentjob.Active)
	newest := run(e.proj.ID, "nightly", e.t0.Add(-2*time.Hour), agentjob.Active)
	canceled := run(e.proj.ID, "nightly", e.t0.Add(-time.Hour), agentjob.Active)
	e.cancel(canceled.ID, "stop", e.t0) // failed: newer, but neither active nor counted
	archived := run(e.proj.ID, "nightly", e.t0.Add(-30*time.Minute), agentjob.Active)
	if _, err := e.archive(archived.ID, e.t0); err != nil {
		t.Fatalf("archive: %v", err)
	}
	// Newer active jobs that are not the workflow's runs in this project.
	run(e.proj.ID, "weekly", e.t0, agentjob.Active)
	run(other.ID, "nightly", e.t0, agentjob.Active)
	api := e.newJob(e.t0)
	e.create(api)

	// Counted: at since, older, newest, archived.
	want := agentjob.RunStats{ActiveJobID: newest.ID, NotFailed: 4}
	if st := stats(e.proj.ID, "nightly", since); st != want {
		t.Errorf("WorkflowRuns = %+v, want %+v", st, want)
	}
	// since only bounds the count; the active run is the newest whatever it.
	want = agentjob.RunStats{ActiveJobID: newest.ID, NotFailed: 1}
	if st := stats(e.proj.ID, "nightly", e.t0.Add(-time.Hour)); st != want {
		t.Errorf("WorkflowRuns since an hour ago = %+v, want %+v", st, want)
	}
	want = agentjob.RunStats{ActiveJobID: newest.ID}
	if st := stats(e.proj.ID, "nightly", e.t0.Add(time.Hour)); st != want {
		t.Errorf("WorkflowRuns since the future = %+v, want %+v", st, want)
	}
	if st := stats(e.proj.ID, "absent", since); st != (agentjob.RunStats{}) {
		t.Errorf("WorkflowRuns of an unknown workflow = %+v, want zero", st)
	}

	// The newest settles: the older active run is the active one.
	e.cancel(newest.ID, "stop", e.t0)
	want = agentjob.RunStats{ActiveJobID: older.ID, NotFailed: 3}
	if st := stats(e.proj.ID, "nightly", since); st != want {
		t.Errorf("WorkflowRuns after the newest run failed = %+v, want %+v", st, want)
	}
	e.cancel(older.ID, "stop", e.t0)
	want = agentjob.RunStats{NotFailed: 2}
	if st := stats(e.proj.ID, "nightly", since); st != want {
		t.Errorf("WorkflowRuns with no active run = %+v, want %+v", st, want)
	}
}
