package storetest

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

func workflowStoreCases() []testCase {
	return []testCase{
		{"WorkflowRun/SaveAndRead", testSaveWorkflows},
		{"WorkflowRun/ProjectsApart", testWorkflowsProjectsApart},
		{"WorkflowRun/AdvanceSlot", testAdvanceSlot},
		{"WorkflowRun/Deliveries", testDeliveries},
		{"WorkflowRun/PushesUnderAnyDelivery", testPushesUnderAnyDelivery},
		{"Concurrency/AdvanceSlot", testConcurrentAdvanceSlot},
	}
}

// Workflows as workflow.Load returns them, every field set somewhere.
var (
	wfNightly = workflow.Workflow{
		ID: "nightly", Path: ".docsmith/workflows/nightly.md", Overrides: ".mintlify/workflows/nightly.md",
		Name: "Nightly «typos» ✓", Cron: "0 3 * * *", Context: []string{"acme/api"},
		Instruction: "Fix typos.\n\n- one\n- two\n",
	}
	wfOnPush = workflow.Workflow{
		ID: "on-push", Path: ".mintlify/workflows/on-push.md", Name: "API changes",
		Push:      []workflow.PushTrigger{{Repo: "acme/api"}, {Repo: "acme/group/cli", Branch: "release/2.x"}},
		Context:   []string{"acme/api", "acme/group/cli"},
		Automerge: true, Instruction: "Document what the push changed.",
	}
	wfWeekly = workflow.Workflow{
		ID: "weekly", Path: ".mintlify/workflows/weekly.md", Name: "Weekly", Cron: "0 9 * * 1",
		Instruction: "Check the links.",
	}
)

// workflowsOf reads a project's workflows.
func (e *env) workflowsOf(projectID string) (workflowrun.SyncState, []workflowrun.Stored) {
	e.t.Helper()
	state, wfs, err := e.s.Workflows(e.ctx, projectID)
	if err != nil {
		e.t.Fatalf("Workflows %s: %v", projectID, err)
	}
	return state, wfs
}

func checkSyncState(t *testing.T, what string, got, want workflowrun.SyncState) {
	t.Helper()
	sameTime(t, what+" SyncedAt", got.SyncedAt, want.SyncedAt)
	if got.BaseSHA != want.BaseSHA || !reflect.DeepEqual(got.Problems, want.Problems) {
		t.Errorf("%s: base %q, problems %+v; want %q, %+v", what, got.BaseSHA, got.Problems, want.BaseSHA, want.Problems)
	}
}

// checkStored compares workflows read back, in order, to want.
func checkStored(t *testing.T, what string, got, want []workflowrun.Stored) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d workflows %+v, want %d", what, len(got), got, len(want))
	}
	for i := range got {
		w := want[i]
		if !reflect.DeepEqual(got[i].Workflow, w.Workflow) {
			t.Errorf("%s: workflow %d\n got  %+v\n want %+v", what, i, got[i].Workflow, w.Workflow)
		}
		sameTime(t, what+" "+w.Workflow.ID+" FirstSeen", got[i].FirstSeen, w.FirstSeen)
		if !got[i].LastSlot.Equal(w.LastSlot) || got[i].LastSlot.IsZero() != w.LastSlot.IsZero() {
			t.Errorf("%s %s LastSlot = %v, want %v", what, w.Workflow.ID, got[i].LastSlot, w.LastSlot)
		}
	}
}

func testSaveWorkflows(t *testing.T, s Store) {
	e := setup(t, s)

	// A project never synced, and one that does not exist, have nothing.
	for _, id := range []string{e.proj.ID, "missing"} {
		state, wfs := e.workflowsOf(id)
		if !reflect.DeepEqual(state, workflowrun.SyncState{}) || len(wfs) != 0 {
			t.Errorf("Workflows of %s before a sync = %+v, %+v; want zero", id, state, wfs)
		}
	}

	// The first sync: every workflow is new, first seen at the sync.
	t1 := e.t0.Add(time.Minute)
	first := workflowrun.SyncState{BaseSHA: "aaaa111", SyncedAt: t1, Problems: []workflow.Problem{
		{File: ".mintlify/workflows/broken.md", Line: 3, Key: "on.push[1].repo", Msg: `"x" is not owner/name`},
		{File: ".docsmith/workflows/empty.md", Msg: "has no instruction"},
	}}
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, first, []workflow.Workflow{wfOnPush, wfNightly}), "SaveWorkflows first")
	state, wfs := e.workflowsOf(e.proj.ID)
	checkSyncState(t, "first sync", state, first)
	checkStored(t, "first sync", wfs, []workflowrun.Stored{
		{Workflow: wfNightly, FirstSeen: t1}, {Workflow: wfOnPush, FirstSeen: t1},
	})

	slot := e.t0.Add(-time.Hour)
	must(t, s.AdvanceSlot(e.ctx, e.proj.ID, wfNightly.ID, slot), "AdvanceSlot")

	// The second sync drops on-push, changes nightly (kept with its first
	// sighting and last slot) and finds weekly; its problems are gone.
	t2 := e.t0.Add(2 * time.Minute)
	second := workflowrun.SyncState{BaseSHA: "bbbb222", SyncedAt: t2}
	changed := wfNightly
	changed.Cron, changed.Instruction, changed.Context = "30 4 * * *", "Fix typos and dead links.", nil
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, second, []workflow.Workflow{wfWeekly, changed}), "SaveWorkflows second")
	state, wfs = e.workflowsOf(e.proj.ID)
	checkSyncState(t, "second sync", state, second)
	checkStored(t, "second sync", wfs, []workflowrun.Stored{
		{Workflow: changed, FirstSeen: t1, LastSlot: slot}, {Workflow: wfWeekly, FirstSeen: t2},
	})

	// A workflow that comes back is new again.
	t3 := e.t0.Add(3 * time.Minute)
	third := workflowrun.SyncState{BaseSHA: "cccc333", SyncedAt: t3, Problems: []workflow.Problem{}}
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, third, []workflow.Workflow{changed, wfOnPush, wfWeekly}), "SaveWorkflows third")
	state, wfs = e.workflowsOf(e.proj.ID)
	third.Problems = nil // none, however they were given
	checkSyncState(t, "third sync", state, third)
	checkStored(t, "third sync", wfs, []workflowrun.Stored{
		{Workflow: changed, FirstSeen: t1, LastSlot: slot}, {Workflow: wfOnPush, FirstSeen: t3}, {Workflow: wfWeekly, FirstSeen: t2},
	})

	// A sync that finds none removes them all but is still a sync.
	t4 := e.t0.Add(4 * time.Minute)
	empty := workflowrun.SyncState{BaseSHA: "dddd444", SyncedAt: t4, Problems: first.Problems[:1]}
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, empty, nil), "SaveWorkflows of none")
	state, wfs = e.workflowsOf(e.proj.ID)
	checkSyncState(t, "empty sync", state, empty)
	checkStored(t, "empty sync", wfs, nil)

	err := s.SaveWorkflows(e.ctx, "missing", first, []workflow.Workflow{wfNightly})
	wantCode(t, err, apperr.NotFound, "SaveWorkflows of an unknown project")
	if state, wfs := e.workflowsOf("missing"); !reflect.DeepEqual(state, workflowrun.SyncState{}) || len(wfs) != 0 {
		t.Errorf("Workflows of an unknown project after a refused sync = %+v, %+v", state, wfs)
	}
}

func testWorkflowsProjectsApart(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("other")
	st := workflowrun.SyncState{BaseSHA: "aaaa111", SyncedAt: e.t0}
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, st, []workflow.Workflow{wfNightly, wfWeekly}), "SaveWorkflows docs")
	theirs := workflowrun.SyncState{BaseSHA: "ffff999", SyncedAt: e.t0.Add(time.Hour)}
	must(t, s.SaveWorkflows(e.ctx, other.ID, theirs, []workflow.Workflow{wfNightly}), "SaveWorkflows other")

	// One project's sync and slots leave the other's alone.
	slot := e.t0.Add(time.Minute)
	must(t, s.AdvanceSlot(e.ctx, other.ID, wfNightly.ID, slot), "AdvanceSlot other")
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, st, []workflow.Workflow{wfWeekly}), "SaveWorkflows docs again")

	state, wfs := e.workflowsOf(e.proj.ID)
	checkSyncState(t, "docs", state, st)
	checkStored(t, "docs", wfs, []workflowrun.Stored{{Workflow: wfWeekly, FirstSeen: e.t0}})
	state, wfs = e.workflowsOf(other.ID)
	checkSyncState(t, "other", state, theirs)
	checkStored(t, "other", wfs, []workflowrun.Stored{{Workflow: wfNightly, FirstSeen: theirs.SyncedAt, LastSlot: slot}})
}

func testAdvanceSlot(t *testing.T, s Store) {
	e := setup(t, s)
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, workflowrun.SyncState{BaseSHA: "a", SyncedAt: e.t0}, []workflow.Workflow{wfNightly, wfWeekly}), "SaveWorkflows")
	lastSlot := func(id string) time.Time {
		t.Helper()
		_, wfs := e.workflowsOf(e.proj.ID)
		for _, w := range wfs {
			if w.Workflow.ID == id {
				return w.LastSlot
			}
		}
		t.Fatalf("no workflow %s", id)
		return time.Time{}
	}
	s1, s2 := e.t0.Add(time.Hour), e.t0.Add(2*time.Hour)
	for _, tc := range []struct {
		at, want time.Time
	}{
		{s1, s1},
		{s2, s2},
		{s1, s2},          // back: refused
		{s2, s2},          // the same slot again
		{time.Time{}, s2}, // zero: nothing
		{s2.Add(time.Microsecond), s2.Add(time.Microsecond)},
	} {
		must(t, s.AdvanceSlot(e.ctx, e.proj.ID, wfNightly.ID, tc.at), "AdvanceSlot")
		if got := lastSlot(wfNightly.ID); !got.Equal(tc.want) {
			t.Errorf("LastSlot after AdvanceSlot(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	if got := lastSlot(wfWeekly.ID); !got.IsZero() {
		t.Errorf("another workflow's LastSlot = %v, want zero", got)
	}
	// A workflow removed meanwhile, or a project unknown, is no error.
	must(t, s.AdvanceSlot(e.ctx, e.proj.ID, "removed", s1), "AdvanceSlot of an unknown workflow")
	must(t, s.AdvanceSlot(e.ctx, "missing", wfNightly.ID, s1), "AdvanceSlot of an unknown project")
}

// testConcurrentAdvanceSlot: two replicas advance one workflow's slot at
// once, each through its own slots in its own order; the latest slot
// either tried is what stays, and no reader ever sees it go back.
func testConcurrentAdvanceSlot(t *testing.T, s Store) {
	e := setup(t, s)
	must(t, s.SaveWorkflows(e.ctx, e.proj.ID, workflowrun.SyncState{BaseSHA: "a", SyncedAt: e.t0}, []workflow.Workflow{wfNightly}), "SaveWorkflows")
	const n = 40
	slot := func(i int) time.Time { return e.t0.Add(time.Duration(i) * time.Minute) }
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for r := range 2 {
		wg.Go(func() {
			var seen time.Time
			for k := range n {
				// Replica 0 goes up through the even slots, replica 1 down
				// through the odd ones.
				i := 2 * k
				if r == 1 {
					i = 2*(n-1-k) + 1
				}
				if err := s.AdvanceSlot(e.ctx, e.proj.ID, wfNightly.ID, slot(i)); err != nil {
					errs <- fmt.Errorf("replica %d AdvanceSlot %d: %w", r, i, err)
					return
				}
				_, wfs, err := s.Workflows(e.ctx, e.proj.ID)
				if err != nil || len(wfs) != 1 {
					errs <- fmt.Errorf("replica %d Workflows: %w, %d workflows", r, err, len(wfs))
					return
				}
				got := wfs[0].LastSlot
				if got.Before(slot(i)) || got.Before(seen) {
					errs <- fmt.Errorf("replica %d: LastSlot %v after advancing to %v (had seen %v)", r, got, slot(i), seen)
				}
				seen = got
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	_, wfs := e.workflowsOf(e.proj.ID)
	if want := slot(2*n - 1); !wfs[0].LastSlot.Equal(want) {
		t.Errorf("LastSlot after the race = %v, want the latest slot %v", wfs[0].LastSlot, want)
	}
}

func testDeliveries(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("other")
	seen := func(projectID, id string) bool {
		t.Helper()
		ok, err := s.DeliverySeen(e.ctx, projectID, id, nil)
		must(t, err, "DeliverySeen "+id)
		return ok
	}
	record := func(projectID, id string, at time.Time) {
		t.Helper()
		must(t, s.RecordDelivery(e.ctx, projectID, workflowrun.Handled{ID: id, Forge: "github", At: at}), "RecordDelivery "+id)
	}

	if seen(e.proj.ID, "d-1") {
		t.Fatal("a delivery never recorded is seen")
	}
	record(e.proj.ID, "d-1", e.t0)
	record(e.proj.ID, "d-1", e.t0.Add(time.Second)) // twice: no error
	if !seen(e.proj.ID, "d-1") {
		t.Fatal("a recorded delivery is not seen")
	}
	if seen(e.proj.ID, "d-2") || seen(other.ID, "d-1") || seen("missing", "d-1") {
		t.Error("a delivery is seen under another id or project")
	}
	err := s.RecordDelivery(e.ctx, "missing", workflowrun.Handled{ID: "d-1", Forge: "github", At: e.t0})
	wantCode(t, err, apperr.NotFound, "RecordDelivery for an unknown project")

	// A delivery older than the retention is forgotten when the project
	// records another; one just inside it, and other projects', stay.
	now := e.t0.Add(time.Hour)
	old, kept := now.Add(-workflowrun.DeliveryRetention-time.Second), now.Add(-workflowrun.DeliveryRetention+time.Second)
	record(e.proj.ID, "old", old)
	record(e.proj.ID, "kept", kept)
	record(other.ID, "theirs-old", old)
	if !seen(e.proj.ID, "old") {
		t.Fatal("an old delivery is forgotten before the next one is recorded")
	}
	record(e.proj.ID, "d-3", now)
	for _, tc := range []struct {
		project, id string
		want        bool
	}{
		{e.proj.ID, "old", false},
		{e.proj.ID, "kept", true},
		{e.proj.ID, "d-1", true},
		{e.proj.ID, "d-3", true},
		{other.ID, "theirs-old", true},
	} {
		if got := seen(tc.project, tc.id); got != tc.want {
			t.Errorf("DeliverySeen(%s, %s) after the sweep = %v, want %v", tc.project, tc.id, got, tc.want)
		}
	}
}

// testPushesUnderAnyDelivery: a push recorded with its delivery is seen
// under any other delivery id, in its project only, and only as the same
// push; it outlives the delivery's retention and is forgotten after its
// own.
func testPushesUnderAnyDelivery(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("other")
	push := workflowrun.Pushed{Repo: "acme/api", Branch: "main", Before: strings.Repeat("1", 40), After: strings.Repeat("2", 40)}
	seen := func(projectID, id string, p *workflowrun.Pushed) bool {
		t.Helper()
		ok, err := s.DeliverySeen(e.ctx, projectID, id, p)
		must(t, err, "DeliverySeen "+id)
		return ok
	}
	record := func(projectID, id string, p *workflowrun.Pushed, at time.Time) {
		t.Helper()
		must(t, s.RecordDelivery(e.ctx, projectID, workflowrun.Handled{ID: id, Forge: "gitea", Push: p, At: at}), "RecordDelivery "+id)
	}
	with := func(change func(p *workflowrun.Pushed)) *workflowrun.Pushed {
		p := push
		change(&p)
		return &p
	}

	if seen(e.proj.ID, "d-1", &push) {
		t.Fatal("a push never recorded is seen")
	}
	record(e.proj.ID, "d-1", &push, e.t0)
	record(e.proj.ID, "d-1", &push, e.t0.Add(time.Second)) // twice: no error
	for _, tc := range []struct {
		name    string
		project string
		id      string
		push    *workflowrun.Pushed
		want    bool
	}{
		{"the same delivery", e.proj.ID, "d-1", &push, true},
		{"the same push under a new delivery id", e.proj.ID, "d-2", &push, true},
		{"a new delivery id without its push", e.proj.ID, "d-2", nil, false},
		{"another project", other.ID, "d-2", &push, false},
		{"another repository", e.proj.ID, "d-2", with(func(p *workflowrun.Pushed) { p.Repo = "acme/web" }), false},
		{"another branch", e.proj.ID, "d-2", with(func(p *workflowrun.Pushed) { p.Branch = "dev" }), false},
		{"another pushed commit", e.proj.ID, "d-2", with(func(p *workflowrun.Pushed) { p.After = strings.Repeat("3", 40) }), false},
		{"back to a commit from another", e.proj.ID, "d-2", with(func(p *workflowrun.Pushed) { p.Before = strings.Repeat("4", 40) }), false},
	} {
		if got := seen(tc.project, tc.id, tc.push); got != tc.want {
			t.Errorf("%s: DeliverySeen = %v, want %v", tc.name, got, tc.want)
		}
	}

	// The push outlives its delivery: a replay under a new id a while
	// later is still seen, until the push's own retention ends.
	later := e.t0.Add(workflowrun.DeliveryRetention + time.Hour)
	record(e.proj.ID, "d-3", nil, later)
	if seen(e.proj.ID, "d-1", nil) {
		t.Error("a delivery older than its retention is still seen")
	}
	if !seen(e.proj.ID, "d-4", &push) {
		t.Error("a push is forgotten with its delivery")
	}
	record(e.proj.ID, "d-5", nil, e.t0.Add(workflowrun.PushRetention+time.Hour))
	if seen(e.proj.ID, "d-6", &push) {
		t.Error("a push older than its retention is still seen")
	}
}
