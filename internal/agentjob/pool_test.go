package agentjob_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// waitFor bounds every wait. It is generous because the suite runs under
// -race on shared machines; passing runs take a fraction of it.
const waitFor = 30 * time.Second

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// step is what the runner does for one call with a given prompt.
type step func(ctx context.Context, turn agentjob.Turn, progress agentjob.Progress) (agentjob.TurnOutcome, error)

type call struct {
	JobID   string
	Seq     int
	Prompt  string
	Attempt int
}

// scriptRunner is a Runner whose behaviour per prompt the test scripts: the
// n-th call with a prompt runs the n-th step given for it (the last step
// repeats); a prompt without steps succeeds at once. It records every call
// and notices if two turns of one job ever run at the same time.
type scriptRunner struct {
	mu       sync.Mutex
	steps    map[string][]step
	calls    []call
	returned []call
	active   map[string]int
	overlap  []string
}

func newRunner() *scriptRunner {
	return &scriptRunner{steps: make(map[string][]step), active: make(map[string]int)}
}

func (r *scriptRunner) on(prompt string, steps ...step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps[prompt] = append(r.steps[prompt], steps...)
}

func (r *scriptRunner) RunTurn(ctx context.Context, turn agentjob.Turn, progress agentjob.Progress) (agentjob.TurnOutcome, error) {
	c := call{JobID: turn.Job.ID, Seq: turn.Message.Seq, Prompt: turn.Message.Prompt, Attempt: turn.Attempt}
	r.mu.Lock()
	n := 0
	for _, prev := range r.calls {
		if prev.Prompt == c.Prompt {
			n++
		}
	}
	r.calls = append(r.calls, c)
	r.active[c.JobID]++
	if r.active[c.JobID] > 1 {
		r.overlap = append(r.overlap, fmt.Sprintf("job %s: seq %d started while another turn ran", c.JobID, c.Seq))
	}
	var s step
	if steps := r.steps[c.Prompt]; len(steps) > 0 {
		s = steps[min(n, len(steps)-1)]
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.active[c.JobID]--
		r.returned = append(r.returned, c)
		r.mu.Unlock()
	}()
	if s == nil {
		return agentjob.TurnOutcome{Summary: "did: " + c.Prompt}, nil
	}
	return s(ctx, turn, progress)
}

// started is how many calls with prompt have begun.
func (r *scriptRunner) started(prompt string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.Prompt == prompt {
			n++
		}
	}
	return n
}

// finished is how many calls with prompt have returned.
func (r *scriptRunner) finished(prompt string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.returned {
		if c.Prompt == prompt {
			n++
		}
	}
	return n
}

func (r *scriptRunner) callLog() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *scriptRunner) checkNoOverlap(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.overlap {
		t.Errorf("turns overlapped: %s", o)
	}
}

func succeed(out agentjob.TurnOutcome) step {
	return func(context.Context, agentjob.Turn, agentjob.Progress) (agentjob.TurnOutcome, error) {
		return out, nil
	}
}

func fail(err error) step {
	return func(context.Context, agentjob.Turn, agentjob.Progress) (agentjob.TurnOutcome, error) {
		return agentjob.TurnOutcome{}, err
	}
}

// blockUntil waits for release and then succeeds with out; a canceled
// context ends it early with the context's error.
func blockUntil(release <-chan struct{}, out agentjob.TurnOutcome) step {
	return func(ctx context.Context, _ agentjob.Turn, _ agentjob.Progress) (agentjob.TurnOutcome, error) {
		select {
		case <-release:
			return out, nil
		case <-ctx.Done():
			return agentjob.TurnOutcome{}, ctx.Err()
		}
	}
}

// untilCanceled waits for its context to end, then closes ended (if not
// nil, and only the first time) and returns the context's error.
func untilCanceled(ended chan<- struct{}) step {
	var once sync.Once
	return func(ctx context.Context, _ agentjob.Turn, _ agentjob.Progress) (agentjob.TurnOutcome, error) {
		<-ctx.Done()
		if ended != nil {
			once.Do(func() { close(ended) })
		}
		return agentjob.TurnOutcome{}, ctx.Err()
	}
}

type env struct {
	t       *testing.T
	store   *sqlite.Store
	hub     *agentjob.Hub
	svc     *agentjob.Service
	project tenant.Project
	runner  *scriptRunner
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	tenants := tenant.NewService(store, time.Now)
	if _, err := tenants.CreateOrg(ctx, "acme"); err != nil {
		t.Fatalf("create org: %v", err)
	}
	project, err := tenants.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "https://example.com/acme/docs.git"})
	if err != nil {
		t.Fatalf("create project: %v", err)
	}
	hub := agentjob.NewHub()
	return &env{
		t:       t,
		store:   store,
		hub:     hub,
		svc:     agentjob.NewService(store, hub, time.Now),
		project: project,
		runner:  newRunner(),
	}
}

// baseConfig is the pools' configuration. The lease is longer than the other
// durations on purpose: under -race on a busy machine one store call can
// stall for seconds, and a live turn whose renewal stalls past the lease is
// taken back and run again, which would make every test flaky. No
// test waits for a pool's own lease to run out: the crash tests give their
// dead workers short leases of their own, and TestPoolRenewsLease sets a
// shorter one to check renewal.
func baseConfig() agentjob.PoolConfig {
	return agentjob.PoolConfig{
		WorkerID:      "worker-1",
		Workers:       2,
		Lease:         5 * time.Second,
		Poll:          20 * time.Millisecond,
		MaxAttempts:   2,
		TurnTimeout:   30 * time.Second,
		ShutdownGrace: 200 * time.Millisecond,
	}
}

// startPool runs a Pool until the returned stop is called (or the test
// ends); stop returns once Run has returned.
func (e *env) startPool(cfg agentjob.PoolConfig) (stop func()) {
	e.t.Helper()
	return e.startPoolWith(cfg, e.store, time.Now)
}

// startPoolWith is startPool with the store the pool uses and its clock.
func (e *env) startPoolWith(cfg agentjob.PoolConfig, store agentjob.Store, now func() time.Time) (stop func()) {
	e.t.Helper()
	log := slog.New(slog.NewTextHandler(e.t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	pool := agentjob.NewPool(cfg, store, e.store, e.runner, e.hub, log.With("worker", cfg.WorkerID), now)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pool.Run(ctx)
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitFor):
			e.t.Errorf("Pool.Run did not return within %s of its context ending", waitFor)
			<-done
		}
	})
	e.t.Cleanup(stop)
	return stop
}

func (e *env) create(prompt string) agentjob.Job {
	e.t.Helper()
	job, replayed, err := e.svc.Create(context.Background(), e.project, prompt, "")
	if err != nil {
		e.t.Fatalf("create job: %v", err)
	}
	if replayed {
		e.t.Fatal("create without a key replayed")
	}
	return job
}

func (e *env) message(jobID, prompt string) agentjob.Job {
	e.t.Helper()
	job, _, err := e.svc.Message(context.Background(), e.project.ID, jobID, prompt, "")
	if err != nil {
		e.t.Fatalf("message job %s: %v", jobID, err)
	}
	return job
}

func (e *env) get(jobID string) agentjob.Job {
	e.t.Helper()
	job, err := e.svc.Get(context.Background(), e.project.ID, jobID)
	if err != nil {
		e.t.Fatalf("get job %s: %v", jobID, err)
	}
	return job
}

// waitStatus waits until the job is in status and every turn has left the
// queue, then returns it.
func (e *env) waitStatus(jobID string, status agentjob.Status) agentjob.Job {
	e.t.Helper()
	var job agentjob.Job
	eventually(e.t, waitFor, fmt.Sprintf("job %s to be %s", jobID, status), func() bool {
		job = e.get(jobID)
		if job.Status != status {
			return false
		}
		for _, m := range job.Messages {
			if m.State == agentjob.TurnQueued || m.State == agentjob.TurnRunning {
				return false
			}
		}
		return true
	})
	return job
}

func (e *env) events(jobID string) []agentjob.JobEvent {
	e.t.Helper()
	evs, err := e.svc.Events(context.Background(), jobID, 0, 1000)
	if err != nil {
		e.t.Fatalf("events of job %s: %v", jobID, err)
	}
	return evs
}

func eventTypes(evs []agentjob.JobEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}

// statusEvents returns the status named by each status event, in order.
func statusEvents(t *testing.T, evs []agentjob.JobEvent) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if ev.Type != agentjob.EventStatus {
			continue
		}
		var d struct{ Status string }
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatalf("status event %s: %v", ev.Data, err)
		}
		out = append(out, d.Status)
	}
	return out
}

func messageStates(job agentjob.Job) []agentjob.TurnState {
	out := make([]agentjob.TurnState, len(job.Messages))
	for i, m := range job.Messages {
		out[i] = m.State
	}
	return out
}

func TestPoolTurnCompletesWithPullRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runner.on("Fix the typo in the intro", func(ctx context.Context, turn agentjob.Turn, progress agentjob.Progress) (agentjob.TurnOutcome, error) {
		progress.Emit(ctx, "agent.step", map[string]any{"tool": "edit", "path": "docs/intro.md"})
		return agentjob.TurnOutcome{
			Summary:      "Fixed the typo in docs/intro.md",
			PRLink:       "https://example.com/acme/docs/pull/7",
			PRNumber:     7,
			FilesChanged: []string{"docs/intro.md"},
		}, nil
	})
	job := e.create("Fix the typo in the intro")
	if job.Status != agentjob.Active || len(job.Messages) != 1 || job.Messages[0].State != agentjob.TurnQueued {
		t.Fatalf("new job = status %s messages %+v, want active with one queued message", job.Status, job.Messages)
	}
	if !strings.HasPrefix(job.Branch, "docsmith/") || job.Repository != e.project.RepoURL || job.BaseRef != "main" {
		t.Fatalf("new job branch %q repository %q base %q", job.Branch, job.Repository, job.BaseRef)
	}
	changed, unsubscribe := e.svc.Subscribe(job.ID)
	defer unsubscribe()

	e.startPool(baseConfig())
	done := e.waitStatus(job.ID, agentjob.Completed)

	if done.PRLink != "https://example.com/acme/docs/pull/7" || done.PRNumber != 7 {
		t.Errorf("PR = %q #%d", done.PRLink, done.PRNumber)
	}
	if done.Summary != "Fixed the typo in docs/intro.md" {
		t.Errorf("summary = %q", done.Summary)
	}
	if !slices.Equal(done.FilesChanged, []string{"docs/intro.md"}) {
		t.Errorf("files changed = %q", done.FilesChanged)
	}
	if done.Error != "" || done.CompletedAt == nil {
		t.Errorf("error = %q, completedAt = %v", done.Error, done.CompletedAt)
	}
	m := done.Messages[0]
	if m.State != agentjob.TurnDone || m.Attempts != 1 || m.Summary != done.Summary || m.StartedAt == nil || m.FinishedAt == nil {
		t.Errorf("message = %+v", m)
	}
	select {
	case <-changed:
	default:
		t.Error("subscriber was not signalled")
	}

	evs := e.events(job.ID)
	want := []string{agentjob.EventStatus, agentjob.EventMessageQueued, agentjob.EventTurnStarted, "agent.step", agentjob.EventTurnFinished, agentjob.EventStatus}
	if got := eventTypes(evs); !slices.Equal(got, want) {
		t.Fatalf("event types = %q, want %q", got, want)
	}
	if got := statusEvents(t, evs); !slices.Equal(got, []string{"active", "completed"}) {
		t.Errorf("statuses = %q", got)
	}
	var last struct{ Status, PRLink, Summary string }
	if err := json.Unmarshal(evs[len(evs)-1].Data, &last); err != nil {
		t.Fatal(err)
	}
	if last.PRLink != done.PRLink || last.Summary != done.Summary {
		t.Errorf("final status event = %s", evs[len(evs)-1].Data)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].ID <= evs[i-1].ID {
			t.Errorf("event ids not increasing: %d then %d", evs[i-1].ID, evs[i].ID)
		}
	}
	// Resuming after an id returns only later events.
	if rest, err := e.svc.Events(context.Background(), job.ID, evs[2].ID, 100); err != nil || len(rest) != len(evs)-3 {
		t.Errorf("events after %d = %d events, %v; want %d", evs[2].ID, len(rest), err, len(evs)-3)
	}
	e.runner.checkNoOverlap(t)
}

func TestPoolTurnWithoutChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runner.on("Is the intro up to date?", succeed(agentjob.TurnOutcome{Summary: "Nothing to change: the intro is current."}))
	e.startPool(baseConfig())
	job := e.create("Is the intro up to date?")
	done := e.waitStatus(job.ID, agentjob.Completed)
	if done.PRLink != "" || done.PRNumber != 0 {
		t.Errorf("PR = %q #%d, want none", done.PRLink, done.PRNumber)
	}
	if done.Summary != "Nothing to change: the intro is current." {
		t.Errorf("summary = %q", done.Summary)
	}
	if len(done.FilesChanged) != 0 {
		t.Errorf("files changed = %q", done.FilesChanged)
	}
	if got := statusEvents(t, e.events(job.ID)); !slices.Equal(got, []string{"active", "completed"}) {
		t.Errorf("statuses = %q", got)
	}
}

func TestPoolRunnerError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const text = "the repository could not be cloned: authentication failed; check the project's token"
	e.runner.on("Rewrite the guide", fail(errors.New(text)))
	e.startPool(baseConfig())
	job := e.create("Rewrite the guide")
	done := e.waitStatus(job.ID, agentjob.Failed)
	if done.Error != text {
		t.Errorf("job error = %q, want %q", done.Error, text)
	}
	if m := done.Messages[0]; m.State != agentjob.TurnFailed || m.Error != text || m.Attempts != 1 {
		t.Errorf("message = %+v", m)
	}
	if done.CompletedAt != nil {
		t.Errorf("failed job has completedAt %v", done.CompletedAt)
	}
	if n := e.runner.started("Rewrite the guide"); n != 1 {
		t.Errorf("runner called %d times, want 1 (a runner error is not retried)", n)
	}
	evs := e.events(job.ID)
	if got := statusEvents(t, evs); !slices.Equal(got, []string{"active", "failed"}) {
		t.Errorf("statuses = %q", got)
	}
	var last struct{ Status, Error string }
	if err := json.Unmarshal(evs[len(evs)-1].Data, &last); err != nil || last.Status != "failed" || last.Error != text {
		t.Errorf("final event = %s (%v)", evs[len(evs)-1].Data, err)
	}
}

// TestPoolTypedOutcomes: a runner's error says how the turn ends. A retry
// runs the turn again after its delay, counted against the attempts; one
// that keeps failing gives up with the error; a cancel ends the turn at once.
func TestPoolTypedOutcomes(t *testing.T) {
	t.Parallel()
	transient := errors.New("github: 502 from POST /repos/acme/docs/pulls: the forge failed: try again later")
	tests := []struct {
		name      string
		steps     []step
		status    agentjob.Status
		turn      agentjob.TurnState
		attempts  int
		jobError  string
		minPassed time.Duration
	}{
		{
			name:      "retry then succeed",
			steps:     []step{fail(agentjob.RetryAfter(150*time.Millisecond, transient)), succeed(agentjob.TurnOutcome{Summary: "done"})},
			status:    agentjob.Completed,
			turn:      agentjob.TurnDone,
			attempts:  2,
			minPassed: 150 * time.Millisecond,
		},
		{
			name:     "retry until the attempts are used up",
			steps:    []step{fail(agentjob.RetryAfter(time.Millisecond, transient))},
			status:   agentjob.Failed,
			turn:     agentjob.TurnFailed,
			attempts: 2,
			jobError: transient.Error() + " (gave up after 2 attempts)",
		},
		{
			name:     "cancel",
			steps:    []step{fail(agentjob.Cancel(errors.New("the instruction asks for something this project forbids")))},
			status:   agentjob.Failed,
			turn:     agentjob.TurnCanceled,
			attempts: 1,
			jobError: "the instruction asks for something this project forbids",
		},
		{
			name:     "plain error fails at once",
			steps:    []step{fail(errors.New("the edits do not validate")), succeed(agentjob.TurnOutcome{})},
			status:   agentjob.Failed,
			turn:     agentjob.TurnFailed,
			attempts: 1,
			jobError: "the edits do not validate",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.runner.on("edit", tc.steps...)
			e.startPool(baseConfig())
			start := time.Now()
			job := e.create("edit")
			done := e.waitStatus(job.ID, tc.status)
			m := done.Messages[0]
			if m.State != tc.turn || m.Attempts != tc.attempts || done.Error != tc.jobError {
				t.Errorf("job %s error %q, turn %s after %d attempts; want %s %q, %s after %d",
					done.Status, done.Error, m.State, m.Attempts, tc.status, tc.jobError, tc.turn, tc.attempts)
			}
			if n := e.runner.started("edit"); n != tc.attempts {
				t.Errorf("runner called %d times, want %d", n, tc.attempts)
			}
			if passed := time.Since(start); passed < tc.minPassed {
				t.Errorf("the retry ran after %s, before its delay of %s", passed, tc.minPassed)
			}
		})
	}
}

func TestPoolFollowUpsRunInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	e.runner.on("turn 1", blockUntil(release, agentjob.TurnOutcome{Summary: "one", PRLink: "https://example.com/pr/1", PRNumber: 1, FilesChanged: []string{"a.md"}}))
	slow := func(ctx context.Context, turn agentjob.Turn, _ agentjob.Progress) (agentjob.TurnOutcome, error) {
		// Long enough that an idle worker would get the next turn if the
		// queue let it.
		select {
		case <-time.After(30 * time.Millisecond):
		case <-ctx.Done():
			return agentjob.TurnOutcome{}, ctx.Err()
		}
		return agentjob.TurnOutcome{Summary: "did " + turn.Message.Prompt, FilesChanged: []string{"b.md", "a.md"}}, nil
	}
	e.runner.on("turn 2", slow)
	e.runner.on("turn 3", slow)
	e.runner.on("turn 4", slow)
	e.startPool(baseConfig())

	job := e.create("turn 1")
	eventually(t, waitFor, "turn 1 to start", func() bool { return e.runner.started("turn 1") == 1 })
	for i := 2; i <= 4; i++ {
		got := e.message(job.ID, fmt.Sprintf("turn %d", i))
		if got.Status != agentjob.Active || len(got.Messages) != i || got.Messages[i-1].Seq != i || got.Messages[i-1].State != agentjob.TurnQueued {
			t.Fatalf("after message %d: status %s messages %+v", i, got.Status, got.Messages)
		}
	}
	// While turn 1 runs, nothing else of the job starts.
	if n := len(e.runner.callLog()); n != 1 {
		t.Fatalf("%d turns started while turn 1 was blocked", n)
	}
	close(release)

	done := e.waitStatus(job.ID, agentjob.Completed)
	var order []string
	for _, c := range e.runner.callLog() {
		order = append(order, c.Prompt)
		if c.Attempt != 1 || c.JobID != job.ID {
			t.Errorf("call %+v", c)
		}
	}
	if want := []string{"turn 1", "turn 2", "turn 3", "turn 4"}; !slices.Equal(order, want) {
		t.Errorf("turns ran in order %q, want %q", order, want)
	}
	e.runner.checkNoOverlap(t)
	if len(done.Messages) != 4 {
		t.Fatalf("job has %d messages, want 4", len(done.Messages))
	}
	for i, m := range done.Messages {
		if m.Seq != i+1 || m.State != agentjob.TurnDone {
			t.Errorf("message %d = seq %d state %s", i+1, m.Seq, m.State)
		}
	}
	if done.Summary != "did turn 4" || done.PRLink != "https://example.com/pr/1" {
		t.Errorf("summary %q, PR %q", done.Summary, done.PRLink)
	}
	if !slices.Equal(done.FilesChanged, []string{"a.md", "b.md"}) {
		t.Errorf("files changed = %q, want the union in first-seen order", done.FilesChanged)
	}
	// The job stayed active between turns: one completion, at the end.
	evs := e.events(job.ID)
	if got := statusEvents(t, evs); !slices.Equal(got, []string{"active", "completed"}) {
		t.Errorf("statuses = %q", got)
	}
	count := map[string]int{}
	for _, ev := range evs {
		count[ev.Type]++
	}
	if count[agentjob.EventMessageQueued] != 4 || count[agentjob.EventTurnStarted] != 4 || count[agentjob.EventTurnFinished] != 4 {
		t.Errorf("event counts = %v", count)
	}
}

func TestPoolFollowUpAfterCompletionAndArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runner.on("first", succeed(agentjob.TurnOutcome{Summary: "first done", PRLink: "https://example.com/pr/3", PRNumber: 3, FilesChanged: []string{"x.md"}}))
	e.runner.on("second", succeed(agentjob.TurnOutcome{Summary: "second done", FilesChanged: []string{"y.md"}}))
	e.startPool(baseConfig())
	ctx := context.Background()

	job := e.create("first")
	e.waitStatus(job.ID, agentjob.Completed)

	again := e.message(job.ID, "second")
	if again.Status != agentjob.Active || again.CompletedAt != nil {
		t.Fatalf("after follow-up: status %s completedAt %v, want active", again.Status, again.CompletedAt)
	}
	done := e.waitStatus(job.ID, agentjob.Completed)
	if len(done.Messages) != 2 || done.Messages[1].State != agentjob.TurnDone {
		t.Fatalf("messages = %+v", done.Messages)
	}
	if done.Summary != "second done" || done.PRLink != "https://example.com/pr/3" {
		t.Errorf("summary %q PR %q: the PR link must be kept", done.Summary, done.PRLink)
	}
	if !slices.Equal(done.FilesChanged, []string{"x.md", "y.md"}) {
		t.Errorf("files changed = %q", done.FilesChanged)
	}
	if got := statusEvents(t, e.events(job.ID)); !slices.Equal(got, []string{"active", "completed", "active", "completed"}) {
		t.Errorf("statuses = %q", got)
	}

	archived, err := e.svc.Archive(ctx, e.project.ID, job.ID)
	if err != nil || archived.Status != agentjob.Archived || archived.ArchivedAt == nil {
		t.Fatalf("archive = %s %v, %v", archived.Status, archived.ArchivedAt, err)
	}
	if again, err := e.svc.Archive(ctx, e.project.ID, job.ID); err != nil || again.Status != agentjob.Archived {
		t.Errorf("archiving again = %s, %v; want archived, nil", again.Status, err)
	}
	_, _, err = e.svc.Message(ctx, e.project.ID, job.ID, "third", "")
	if !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("follow-up on archived job: err = %v, want Conflict", err)
	}
	if _, err := e.svc.Cancel(ctx, e.project.ID, job.ID); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("cancel archived job: err = %v, want Conflict", err)
	}
	if got := e.get(job.ID); got.Status != agentjob.Archived || len(got.Messages) != 2 {
		t.Errorf("archived job = %s with %d messages", got.Status, len(got.Messages))
	}
	if n := e.runner.started("third"); n != 0 {
		t.Errorf("refused follow-up ran %d times", n)
	}
}

func TestPoolCancelRunningTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ended := make(chan struct{})
	e.runner.on("long edit", untilCanceled(ended))
	e.startPool(baseConfig())
	ctx := context.Background()

	job := e.create("long edit")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("long edit") == 1 })
	e.message(job.ID, "queued 1")
	e.message(job.ID, "queued 2")

	canceled, err := e.svc.Cancel(ctx, e.project.ID, job.ID)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if canceled.Status != agentjob.Failed || canceled.Error != "canceled by request" {
		t.Errorf("cancel returned status %s error %q", canceled.Status, canceled.Error)
	}
	// Well inside the lease, so this is the in-process signal, not polling.
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the runner's context was not canceled within 2s of the cancel")
	}

	done := e.waitStatus(job.ID, agentjob.Failed)
	if done.Error != "canceled by request" {
		t.Errorf("job error = %q", done.Error)
	}
	if got, want := messageStates(done), []agentjob.TurnState{agentjob.TurnCanceled, agentjob.TurnCanceled, agentjob.TurnCanceled}; !slices.Equal(got, want) {
		t.Errorf("message states = %q, want %q", got, want)
	}
	if n := e.runner.started("queued 1") + e.runner.started("queued 2"); n != 0 {
		t.Errorf("canceled follow-ups ran %d times", n)
	}
	if _, err := e.svc.Cancel(ctx, e.project.ID, job.ID); !apperr.Is(err, apperr.Conflict) {
		t.Errorf("canceling a failed job: err = %v, want Conflict", err)
	}

	again := e.message(job.ID, "try again")
	if again.Status != agentjob.Active || again.Error != "" {
		t.Errorf("after follow-up: status %s error %q, want active with no error", again.Status, again.Error)
	}
	done = e.waitStatus(job.ID, agentjob.Completed)
	if len(done.Messages) != 4 || done.Messages[3].State != agentjob.TurnDone || done.Error != "" {
		t.Errorf("job = status %s error %q messages %q", done.Status, done.Error, messageStates(done))
	}
	if done.Summary != "did: try again" {
		t.Errorf("summary = %q", done.Summary)
	}
	if got := statusEvents(t, e.events(job.ID)); !slices.Equal(got, []string{"active", "failed", "active", "completed"}) {
		t.Errorf("statuses = %q", got)
	}
	e.runner.checkNoOverlap(t)
}

func TestPoolArchiveStopsRunningTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ended := make(chan struct{})
	e.runner.on("archive me", untilCanceled(ended))
	e.startPool(baseConfig())

	job := e.create("archive me")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("archive me") == 1 })
	e.message(job.ID, "never runs")
	if _, err := e.svc.Archive(context.Background(), e.project.ID, job.ID); err != nil {
		t.Fatalf("archive: %v", err)
	}
	select {
	case <-ended:
	case <-time.After(2 * time.Second):
		t.Fatal("the runner's context was not canceled within 2s of archiving")
	}
	done := e.waitStatus(job.ID, agentjob.Archived)
	if got := messageStates(done); !slices.Equal(got, []agentjob.TurnState{agentjob.TurnCanceled, agentjob.TurnCanceled}) {
		t.Errorf("message states = %q", got)
	}
	if n := e.runner.started("never runs"); n != 0 {
		t.Errorf("follow-up of an archived job ran %d times", n)
	}
}

func TestPoolTurnTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runner.on("endless", untilCanceled(nil))
	cfg := baseConfig()
	cfg.TurnTimeout = 250 * time.Millisecond
	e.startPool(cfg)

	job := e.create("endless")
	done := e.waitStatus(job.ID, agentjob.Failed)
	if !strings.Contains(done.Error, "wall-time budget") || !strings.Contains(done.Error, "250ms") {
		t.Errorf("job error = %q, want it to name the wall-time budget of 250ms", done.Error)
	}
	if m := done.Messages[0]; m.State != agentjob.TurnFailed || m.Error != done.Error || m.Attempts != 1 {
		t.Errorf("message = %+v", m)
	}
	if n := e.runner.started("endless"); n != 1 {
		t.Errorf("runner called %d times, want 1 (a timeout is not retried)", n)
	}
}

func TestPoolShutdownHandsTurnBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The first run waits for its context (the hard stop after the grace);
	// the run on the next pool succeeds.
	e.runner.on("survive a restart", untilCanceled(nil), succeed(agentjob.TurnOutcome{Summary: "done after restart"}))
	cfg := baseConfig()
	stop := e.startPool(cfg)

	job := e.create("survive a restart")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("survive a restart") == 1 })

	began := time.Now()
	stop()
	if took := time.Since(began); took < cfg.ShutdownGrace {
		t.Errorf("Run returned after %s, before the shutdown grace of %s", took, cfg.ShutdownGrace)
	}
	if n := e.runner.finished("survive a restart"); n != 1 {
		t.Fatalf("runner returned %d times after shutdown, want 1", n)
	}
	handed := e.get(job.ID)
	if handed.Status != agentjob.Active {
		t.Errorf("job status after shutdown = %s, want active", handed.Status)
	}
	if m := handed.Messages[0]; m.State != agentjob.TurnQueued || m.Attempts != 0 {
		t.Fatalf("message after shutdown = state %s attempts %d, want queued with no attempt used", m.State, m.Attempts)
	}
	for _, ev := range e.events(job.ID) {
		if ev.Type == agentjob.EventTurnFinished {
			t.Errorf("a handed-back turn recorded %s: %s", ev.Type, ev.Data)
		}
	}

	cfg.WorkerID = "worker-2"
	e.startPool(cfg)
	done := e.waitStatus(job.ID, agentjob.Completed)
	if m := done.Messages[0]; m.State != agentjob.TurnDone || m.Attempts != 1 || done.Summary != "done after restart" {
		t.Errorf("after restart: message %+v summary %q", m, done.Summary)
	}
	log := e.runner.callLog()
	if len(log) != 2 || log[1].Attempt != 1 {
		t.Errorf("calls = %+v, want two, the second with attempt 1", log)
	}
}

func TestPoolShutdownLetsShortTurnFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	e.runner.on("nearly done", blockUntil(release, agentjob.TurnOutcome{Summary: "finished during shutdown"}))
	cfg := baseConfig()
	cfg.ShutdownGrace = 5 * time.Second
	stop := e.startPool(cfg)

	job := e.create("nearly done")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("nearly done") == 1 })
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		stop()
	}()
	// Shutdown waits for the running turn; it is released afterwards.
	select {
	case <-stopped:
		t.Fatal("Run returned while a turn was still running inside the grace")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-stopped
	done := e.get(job.ID)
	if done.Status != agentjob.Completed || done.Summary != "finished during shutdown" || done.Messages[0].State != agentjob.TurnDone {
		t.Errorf("job = status %s summary %q message %s", done.Status, done.Summary, done.Messages[0].State)
	}
}

func TestPoolRecoversExpiredLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	job := e.create("orphaned")

	// A worker claims the turn and dies without renewing its lease.
	now := time.Now()
	claim, ok, err := e.store.ClaimTurn(ctx, "dead-worker", now, now.Add(300*time.Millisecond))
	if err != nil || !ok {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	if claim.JobID != job.ID || claim.Seq != 1 || claim.Attempts != 1 {
		t.Fatalf("claim = %+v", claim)
	}
	if _, ok, err := e.store.ClaimTurn(ctx, "other", now, now.Add(time.Second)); ok || err != nil {
		t.Fatalf("second claim of the same job = %v, %v; want none", ok, err)
	}

	e.startPool(baseConfig())
	done := e.waitStatus(job.ID, agentjob.Completed)
	if m := done.Messages[0]; m.State != agentjob.TurnDone || m.Attempts != 2 {
		t.Errorf("message = state %s attempts %d, want done after 2 attempts", m.State, m.Attempts)
	}
	log := e.runner.callLog()
	if len(log) != 1 || log[0].Attempt != 2 {
		t.Errorf("calls = %+v, want one with attempt 2", log)
	}
}

func TestPoolGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	job := e.create("keeps crashing")

	// A pool without workers only takes back expired turns, so the dead
	// workers below get every run.
	cfg := baseConfig()
	cfg.Workers = 0
	e.startPool(cfg)

	for attempt := 1; attempt <= cfg.MaxAttempts; attempt++ {
		var claim agentjob.Claim
		eventually(t, waitFor, fmt.Sprintf("dead worker %d to claim the turn", attempt), func() bool {
			now := time.Now()
			c, ok, err := e.store.ClaimTurn(ctx, fmt.Sprintf("dead-%d", attempt), now, now.Add(100*time.Millisecond))
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			claim = c
			return ok
		})
		if claim.Attempts != attempt {
			t.Fatalf("claim %d has attempts %d", attempt, claim.Attempts)
		}
	}

	done := e.waitStatus(job.ID, agentjob.Failed)
	if !strings.Contains(done.Error, "interrupted") {
		t.Errorf("job error = %q, want it to say the turn was interrupted", done.Error)
	}
	if m := done.Messages[0]; m.State != agentjob.TurnFailed || m.Attempts != cfg.MaxAttempts || m.Error != done.Error {
		t.Errorf("message = %+v", m)
	}
	if n := len(e.runner.callLog()); n != 0 {
		t.Errorf("runner called %d times", n)
	}
	if got := statusEvents(t, e.events(job.ID)); !slices.Equal(got, []string{"active", "failed"}) {
		t.Errorf("statuses = %q", got)
	}
}

func TestPoolMaxAttemptsWithWorkers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	job := e.create("crashed once")
	now := time.Now()
	if _, ok, err := e.store.ClaimTurn(ctx, "dead-worker", now, now.Add(100*time.Millisecond)); !ok || err != nil {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	cfg := baseConfig()
	cfg.MaxAttempts = 1
	e.startPool(cfg)
	done := e.waitStatus(job.ID, agentjob.Failed)
	if !strings.Contains(done.Error, "interrupted 1 times") {
		t.Errorf("job error = %q", done.Error)
	}
	if n := len(e.runner.callLog()); n != 0 {
		t.Errorf("runner called %d times for a turn out of attempts", n)
	}
}

func TestServiceIdempotency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.startPool(baseConfig())

	first, replayed, err := e.svc.Create(ctx, e.project, "Add a FAQ", "key-1")
	if err != nil || replayed {
		t.Fatalf("create = replayed %v, %v", replayed, err)
	}
	again, replayed, err := e.svc.Create(ctx, e.project, "Add a FAQ", "key-1")
	if err != nil || !replayed || again.ID != first.ID {
		t.Fatalf("retry = job %s replayed %v, %v; want job %s replayed", again.ID, replayed, err, first.ID)
	}
	_, _, err = e.svc.Create(ctx, e.project, "Add a changelog", "key-1")
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("same key, other prompt: err = %v, want Invalid", err)
	}
	other, replayed, err := e.svc.Create(ctx, e.project, "Add a FAQ", "key-2")
	if err != nil || replayed || other.ID == first.ID {
		t.Fatalf("new key = job %s replayed %v, %v; want a new job", other.ID, replayed, err)
	}

	e.waitStatus(first.ID, agentjob.Completed)
	e.waitStatus(other.ID, agentjob.Completed)
	// A replay after the job moved on still returns it and queues nothing.
	late, replayed, err := e.svc.Create(ctx, e.project, "Add a FAQ", "key-1")
	if err != nil || !replayed || late.ID != first.ID || late.Status != agentjob.Completed {
		t.Fatalf("late retry = job %s %s replayed %v, %v", late.ID, late.Status, replayed, err)
	}

	msg, replayed, err := e.svc.Message(ctx, e.project.ID, first.ID, "Also link it from the index", "msg-1")
	if err != nil || replayed || len(msg.Messages) != 2 {
		t.Fatalf("message = %d messages replayed %v, %v", len(msg.Messages), replayed, err)
	}
	msgAgain, replayed, err := e.svc.Message(ctx, e.project.ID, first.ID, "Also link it from the index", "msg-1")
	if err != nil || !replayed || msgAgain.ID != first.ID || len(msgAgain.Messages) != 2 {
		t.Fatalf("message retry = %d messages replayed %v, %v", len(msgAgain.Messages), replayed, err)
	}
	_, _, err = e.svc.Message(ctx, e.project.ID, first.ID, "Something else", "msg-1")
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("message with same key, other prompt: err = %v, want Invalid", err)
	}
	// Keys are scoped: a create key does not collide with a message key.
	if _, replayed, err := e.svc.Message(ctx, e.project.ID, first.ID, "Add a FAQ", "key-1"); err != nil || replayed {
		t.Fatalf("message reusing a create key = replayed %v, %v; want a new message", replayed, err)
	}

	done := e.waitStatus(first.ID, agentjob.Completed)
	if len(done.Messages) != 3 {
		t.Errorf("job has %d messages, want 3", len(done.Messages))
	}
	if n := e.runner.started("Add a FAQ"); n != 3 {
		// one for each job's create, one for the follow-up reusing key-1
		t.Errorf("'Add a FAQ' ran %d times, want 3", n)
	}
	if n := e.runner.started("Also link it from the index"); n != 1 {
		t.Errorf("the replayed follow-up ran %d times, want 1", n)
	}
	if n := e.runner.started("Add a changelog") + e.runner.started("Something else"); n != 0 {
		t.Errorf("refused requests ran %d turns", n)
	}
	count := 0
	for _, ev := range e.events(first.ID) {
		if ev.Type == agentjob.EventMessageQueued {
			count++
		}
	}
	if count != 3 {
		t.Errorf("%d message.queued events, want 3", count)
	}
	jobs, err := e.svc.List(ctx, e.project.ID, agentjob.ListQuery{Limit: 10})
	if err != nil || len(jobs) != 2 {
		t.Errorf("list = %d jobs, %v; want 2", len(jobs), err)
	}
}

func TestServiceValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, _, err := e.svc.Create(ctx, e.project, "   ", ""); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("blank create: %v", err)
	}
	job := e.create("valid")
	if _, _, err := e.svc.Message(ctx, e.project.ID, job.ID, strings.Repeat("x", agentjob.MaxPromptBytes+1), ""); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("oversized message: %v", err)
	}
	if _, _, err := e.svc.Message(ctx, e.project.ID, "no-such-job", "hi", ""); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("message to unknown job: %v", err)
	}
	if _, err := e.svc.Get(ctx, "other-project", job.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("job through another project: %v", err)
	}
	if _, err := e.svc.Cancel(ctx, e.project.ID, "no-such-job"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("cancel unknown job: %v", err)
	}
	// No pool runs: canceling a job whose turn is queued drops the turn.
	canceled, err := e.svc.Cancel(ctx, e.project.ID, job.ID)
	if err != nil || canceled.Status != agentjob.Failed || canceled.Messages[0].State != agentjob.TurnCanceled {
		t.Errorf("cancel queued job = %s %q, %v", canceled.Status, messageStates(canceled), err)
	}
}

// TestPoolCancelWhileWorkerDead: a job canceled while the worker running
// its turn is dead. When the lease runs out, the turn must end canceled, not
// go back to the queue, where it would run again ahead of the next message.
func TestPoolCancelWhileWorkerDead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	job := e.create("canceled while orphaned")
	now := time.Now()
	if _, ok, err := e.store.ClaimTurn(ctx, "dead-worker", now, now.Add(300*time.Millisecond)); !ok || err != nil {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	if _, err := e.svc.Cancel(ctx, e.project.ID, job.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	// A corrected instruction follows before the dead worker's lease runs out.
	e.message(job.ID, "corrected instruction")
	e.startPool(baseConfig())

	done := e.waitStatus(job.ID, agentjob.Completed)
	if got := messageStates(done); !slices.Equal(got, []agentjob.TurnState{agentjob.TurnCanceled, agentjob.TurnDone}) {
		t.Errorf("message states = %q, want the canceled turn to stay canceled", got)
	}
	if n := e.runner.started("canceled while orphaned"); n != 0 {
		t.Errorf("the canceled turn ran %d times after recovery", n)
	}
}

// TestPoolCancelWhileWorkerDeadNoFollowUp: without a follow-up, the taken
// back turn must not stay queued on a failed job.
func TestPoolCancelWhileWorkerDeadNoFollowUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	job := e.create("canceled while orphaned")
	now := time.Now()
	if _, ok, err := e.store.ClaimTurn(ctx, "dead-worker", now, now.Add(100*time.Millisecond)); !ok || err != nil {
		t.Fatalf("claim = %v, %v", ok, err)
	}
	if _, err := e.svc.Cancel(ctx, e.project.ID, job.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	e.startPool(baseConfig())
	done := e.waitStatus(job.ID, agentjob.Failed)
	if done.Error != "canceled by request" || done.Messages[0].State != agentjob.TurnCanceled {
		t.Errorf("job error %q message %+v", done.Error, done.Messages[0])
	}
}

// fakeClock is a pool's clock that moves only when the test says so.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// renewWatcher remembers the lease end of the latest successful renewal,
// and fails renewals while paused.
type renewWatcher struct {
	agentjob.Store
	until  atomic.Int64 // UnixNano
	paused atomic.Bool
}

func (s *renewWatcher) RenewLease(ctx context.Context, c agentjob.Claim, until time.Time) (bool, error) {
	if s.paused.Load() {
		return false, errors.New("renewals paused by the test")
	}
	canceled, err := s.Store.RenewLease(ctx, c, until)
	if err == nil {
		s.until.Store(until.UnixNano())
	}
	return canceled, err
}

// TestPoolRenewsLease runs a turn for many leases on a clock the test moves:
// once the worker has renewed the lease to a full lease past the clock's
// now, the clock moves by less than a lease, so the lease runs out only if
// renewal does not work. It does not depend on how fast the machine is.
func TestPoolRenewsLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	e.runner.on("longer than the lease", blockUntil(release, agentjob.TurnOutcome{Summary: "took a while"}))
	cfg := baseConfig()
	cfg.Lease = 300 * time.Millisecond // renewed every 100ms of real time
	clock := &fakeClock{t: time.Now()}
	store := &renewWatcher{Store: e.store}
	e.startPoolWith(cfg, store, clock.Now)

	job := e.create("longer than the lease")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("longer than the lease") == 1 })
	for i := range 10 { // 10 × 200ms: over six leases
		// A renewal computes its lease end before it waits for the store,
		// so wait for one made after the clock last moved.
		want := clock.Now().Add(cfg.Lease).UnixNano()
		eventually(t, waitFor, fmt.Sprintf("renewal %d", i+1), func() bool { return store.until.Load() >= want })
		clock.Advance(2 * cfg.Lease / 3)
		if m := e.get(job.ID).Messages[0]; m.State != agentjob.TurnRunning || m.Attempts != 1 {
			t.Fatalf("after %s: message state %s attempts %d, want running on attempt 1", time.Duration(i+1)*2*cfg.Lease/3, m.State, m.Attempts)
		}
	}
	close(release)
	done := e.waitStatus(job.ID, agentjob.Completed)
	if m := done.Messages[0]; m.State != agentjob.TurnDone || m.Attempts != 1 {
		t.Errorf("message = state %s attempts %d", m.State, m.Attempts)
	}
	if n := e.runner.started("longer than the lease"); n != 1 {
		t.Errorf("turn ran %d times, want 1", n)
	}

	// The control: when renewals fail and the clock passes the lease, the
	// pool still running the turn keeps it (it never runs it twice), while
	// a pool of another worker takes it back and runs it again.
	stuck := make(chan struct{})
	e.runner.on("renewals stop", blockUntil(stuck, agentjob.TurnOutcome{}))
	other := e.create("renewals stop")
	eventually(t, waitFor, "the second turn to start", func() bool { return e.runner.started("renewals stop") == 1 })
	store.paused.Store(true)
	clock.Advance(time.Hour)
	cfg2 := cfg
	cfg2.WorkerID = "worker-2"
	e.startPoolWith(cfg2, e.store, clock.Now)
	eventually(t, waitFor, "another worker to take the turn back", func() bool { return e.runner.started("renewals stop") == 2 })
	store.paused.Store(false)
	close(stuck)
	done = e.waitStatus(other.ID, agentjob.Completed)
	if m := done.Messages[0]; m.Attempts != 2 {
		t.Errorf("taken-back turn finished on attempt %d, want 2", m.Attempts)
	}
	if n := e.runner.started("renewals stop"); n != 2 {
		t.Errorf("turn ran %d times, want 2 (once per worker)", n)
	}
}

func TestPoolCancelFromAnotherProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ended := make(chan struct{})
	e.runner.on("stop me from elsewhere", untilCanceled(ended))
	cfg := baseConfig()
	e.startPool(cfg)

	job := e.create("stop me from elsewhere")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("stop me from elsewhere") == 1 })
	// Another process shares the store but not the hub: the worker hears of
	// the cancel only when it next renews the lease.
	other := agentjob.NewService(e.store, agentjob.NewHub(), time.Now)
	if _, err := other.Cancel(context.Background(), e.project.ID, job.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	select {
	case <-ended:
	case <-time.After(waitFor):
		t.Fatalf("the runner was not canceled within %s (lease renewal every %s)", waitFor, cfg.Lease/3)
	}
	done := e.waitStatus(job.ID, agentjob.Failed)
	if done.Error != "canceled by request" || done.Messages[0].State != agentjob.TurnCanceled {
		t.Errorf("job error %q message state %s", done.Error, done.Messages[0].State)
	}
}

// fence is a runner step that stands for an agent turn: it "edits" until
// editDone is closed (or its context ends), then checks its lease as the
// real runner does right before it pushes, and counts a push only if the
// check passes.
type fence struct {
	editDone chan struct{}
	pushes   atomic.Int64
	checkErr atomic.Value // error of the last failed check
	stopped  atomic.Int64 // UnixNano when the turn's context ended
}

func (f *fence) step(ctx context.Context, turn agentjob.Turn, _ agentjob.Progress) (agentjob.TurnOutcome, error) {
	select {
	case <-f.editDone:
	case <-ctx.Done():
		f.stopped.Store(time.Now().UnixNano())
		return agentjob.TurnOutcome{}, ctx.Err()
	}
	if err := turn.Lease.Check(ctx); err != nil {
		f.checkErr.Store(err)
		return agentjob.TurnOutcome{}, err
	}
	f.pushes.Add(1)
	return agentjob.TurnOutcome{Summary: "pushed"}, nil
}

// TestPoolCutOffFromStoreStopsBeforePush: the store stops answering
// renewals (the database is unreachable from this worker) for longer than
// the lease. The worker must stop its turn before the lease could pass to
// another worker, and so never push; once the store answers again, the turn
// is taken back and run again.
func TestPoolCutOffFromStoreStopsBeforePush(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := &fence{editDone: make(chan struct{})}
	e.runner.on("edit and push", f.step, succeed(agentjob.TurnOutcome{Summary: "second run"}))
	store := &renewWatcher{Store: e.store}
	store.paused.Store(true)
	cfg := baseConfig()
	cfg.Lease = 600 * time.Millisecond
	e.startPoolWith(cfg, store, time.Now)

	job := e.create("edit and push")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("edit and push") == 1 })
	started := time.Now()
	eventually(t, waitFor, "the turn to stop", func() bool { return f.stopped.Load() != 0 })
	if took := time.Unix(0, f.stopped.Load()).Sub(started); took >= cfg.Lease {
		t.Errorf("the turn stopped %s after it started, not before its lease of %s ran out", took, cfg.Lease)
	}
	close(f.editDone) // too late: the turn was stopped
	if n := f.pushes.Load(); n != 0 {
		t.Fatalf("the cut-off worker pushed %d times", n)
	}

	store.paused.Store(false)
	done := e.waitStatus(job.ID, agentjob.Completed)
	if m := done.Messages[0]; m.State != agentjob.TurnDone || m.Attempts != 2 || m.Summary != "second run" {
		t.Errorf("message = %+v, want done on attempt 2 by the second run", m)
	}
}

// TestPoolStaleAttemptFenceFails: while a worker runs attempt 1, its turn is
// taken back and claimed again (attempt 2) by another worker, as after a
// long pause of the first. The first worker's check right before its push
// must fail (its attempt number is a stale fencing token), so it pushes
// nothing and records nothing.
func TestPoolStaleAttemptFenceFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	f := &fence{editDone: make(chan struct{})}
	e.runner.on("edit and push", f.step)
	cfg := baseConfig()
	cfg.Lease = 30 * time.Second // no renewal happens during the test
	cfg.Workers = 1
	e.startPool(cfg)

	job := e.create("edit and push")
	eventually(t, waitFor, "the turn to start", func() bool { return e.runner.started("edit and push") == 1 })
	// What recovery on another replica does once the lease looks expired:
	// take the turn back, then claim it again.
	stale := agentjob.Claim{JobID: job.ID, ProjectID: e.project.ID, Seq: 1, Attempts: 1, Worker: cfg.WorkerID}
	cur := e.get(job.ID)
	p, evs, err := agentjob.Reduce(cur, agentjob.Input{Kind: agentjob.InTurnEnd, At: time.Now(), Turn: agentjob.TurnEnd{Claim: stale, Outcome: agentjob.OutcomeInterrupted, MaxAttempts: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.store.Apply(ctx, e.project.ID, job.ID, p, nil, evs); err != nil {
		t.Fatalf("take the turn back: %v", err)
	}
	c2, ok, err := e.store.ClaimTurn(ctx, "worker-2", time.Now(), time.Now().Add(time.Hour))
	if err != nil || !ok || c2.Attempts != 2 {
		t.Fatalf("claim by worker-2 = %+v, %v, %v; want attempt 2", c2, ok, err)
	}

	close(f.editDone)
	eventually(t, waitFor, "the stale attempt to end", func() bool { return e.runner.finished("edit and push") == 1 })
	if n := f.pushes.Load(); n != 0 {
		t.Fatalf("the stale attempt pushed %d times", n)
	}
	err, _ = f.checkErr.Load().(error)
	if !errors.Is(err, agentjob.ErrLeaseLost) {
		t.Errorf("the stale attempt's fence check = %v, want ErrLeaseLost", err)
	}
	if m := e.get(job.ID).Messages[0]; m.State != agentjob.TurnRunning || m.Attempts != 2 {
		t.Errorf("message = %+v, want still running as worker-2's attempt 2", m)
	}
}

// flakyJobLoads fails the first GetJob of the pool, as a database that
// answered nothing for a moment.
type flakyJobLoads struct {
	agentjob.Store
	failed atomic.Bool
}

func (s *flakyJobLoads) GetJob(ctx context.Context, projectID, id string) (agentjob.Job, error) {
	if s.failed.CompareAndSwap(false, true) {
		return agentjob.Job{}, errors.New("database is locked")
	}
	return s.Store.GetJob(ctx, projectID, id)
}

// TestPoolJobLoadFailureRetries: a turn whose job could not be read for a
// moment runs again, rather than failing the job for good.
func TestPoolJobLoadFailureRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runner.on("edit", succeed(agentjob.TurnOutcome{Summary: "done"}))
	e.startPoolWith(baseConfig(), &flakyJobLoads{Store: e.store}, time.Now)
	job := e.create("edit")
	done := e.waitStatus(job.ID, agentjob.Completed)
	if m := done.Messages[0]; m.State != agentjob.TurnDone || m.Attempts != 2 {
		t.Errorf("message = %+v, want done on attempt 2", m)
	}
}
