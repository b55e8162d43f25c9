package freshness_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/tenant"
)

// clock is a fake clock that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// memStore keeps states in memory, with the store's rules.
type memStore struct {
	mu     sync.Mutex
	states map[string]freshness.State
}

func newMemStore() *memStore { return &memStore{states: map[string]freshness.State{}} }

func (m *memStore) IndexState(_ context.Context, domain string) (freshness.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.states[domain]
	st.Domain = domain
	return st, nil
}

func (m *memStore) IndexStates(context.Context) ([]freshness.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []freshness.State
	for _, st := range m.states {
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out, nil
}

func (m *memStore) seeHead(st *freshness.State, head string, at time.Time) {
	if head == "" || at.Before(st.HeadCheckedAt) {
		return
	}
	if st.Head != head {
		st.Head, st.HeadSeenAt = head, at
	}
	st.HeadCheckedAt = at
}

func (m *memStore) SeeHead(_ context.Context, domain, head string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.states[domain]
	st.Domain = domain
	m.seeHead(&st, head, at)
	m.states[domain] = st
	return nil
}

func (m *memStore) RecordBuilt(_ context.Context, domain string, b freshness.Built) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.states[domain]
	st.Domain = domain
	st.Commit, st.IndexedAt, st.Pages, st.Passages, st.Duration = b.Commit, b.At, b.Pages, b.Passages, b.Duration
	st.LastError, st.LastErrorAt, st.Failures = "", time.Time{}, 0
	m.seeHead(&st, b.Commit, b.Started)
	m.states[domain] = st
	return nil
}

func (m *memStore) RecordFailure(_ context.Context, domain, why string, at time.Time, took time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.states[domain]
	st.Domain = domain
	st.LastError, st.LastErrorAt, st.Duration = why, at, took
	st.Failures++
	m.states[domain] = st
	return nil
}

// tenants is a fixed set of projects and domains.
type tenants struct {
	projects map[string]tenant.Project
	domains  []tenant.Domain
}

func (t tenants) ListDomains(_ context.Context, org string) ([]tenant.Domain, error) {
	var out []tenant.Domain
	for _, d := range t.domains {
		if org == "" || d.OrgID == org {
			out = append(out, d)
		}
	}
	return out, nil
}

func (t tenants) GetProject(_ context.Context, id string) (tenant.Project, error) {
	p, ok := t.projects[id]
	if !ok {
		return tenant.Project{}, apperr.New(apperr.NotFound, "project %q not found", id)
	}
	return p, nil
}

// heads answers with the heads a test sets, or its error.
type heads struct {
	mu    sync.Mutex
	heads map[string]string // project/ref -> commit
	errs  map[string]error
	reads []string
}

func (h *heads) Head(_ context.Context, p tenant.Project, ref string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := p.ID + "/" + ref
	h.reads = append(h.reads, key)
	if err := h.errs[key]; err != nil {
		return "", err
	}
	return h.heads[key], nil
}

func (h *heads) set(key, commit string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.heads[key], h.errs[key] = commit, err
}

func (h *heads) readCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.reads)
}

// readsOf counts the reads of one branch.
func (h *heads) readsOf(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.reads {
		if r == key {
			n++
		}
	}
	return n
}

// indexer builds at the head heads holds; a build waits for hold to be
// closed when hold is set.
type indexer struct {
	heads *heads

	mu      sync.Mutex
	builds  map[string]int
	running map[string]int
	most    int // most builds of one domain running at once
	hold    chan struct{}
	started chan string
	err     error
}

func newIndexer(h *heads) *indexer {
	return &indexer{heads: h, builds: map[string]int{}, running: map[string]int{}, started: make(chan string, 100)}
}

func (x *indexer) Index(ctx context.Context, d tenant.Domain) (freshness.Build, error) {
	x.mu.Lock()
	x.running[d.ID]++
	x.most = max(x.most, x.running[d.ID])
	hold, err := x.hold, x.err
	x.mu.Unlock()
	x.started <- d.ID
	if hold != nil {
		<-hold
	}
	x.mu.Lock()
	x.running[d.ID]--
	x.builds[d.ID]++
	x.mu.Unlock()
	if err != nil {
		return freshness.Build{}, err
	}
	p := map[string]string{"docs": "main", "other": "main"}
	ref := d.Ref
	if ref == "" {
		ref = p[d.ProjectID]
	}
	commit, _ := x.heads.Head(ctx, tenant.Project{ID: d.ProjectID}, ref)
	return freshness.Build{Commit: commit, Pages: 3, Passages: 7}, nil
}

func (x *indexer) count(domain string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.builds[domain]
}

type fixture struct {
	clock   *clock
	store   *memStore
	heads   *heads
	indexer *indexer
	svc     *freshness.Service
	built   *builtLog
}

// builtLog is what the Built hook was called with.
type builtLog struct {
	mu    sync.Mutex
	calls []string // "domain@commit"
}

func (b *builtLog) record(_ context.Context, d tenant.Domain, commit string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, d.ID+"@"+commit)
}

func (b *builtLog) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

const interval = 10 * time.Second

func setup(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: &clock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, store: newMemStore(), heads: &heads{heads: map[string]string{}, errs: map[string]error{}}, built: &builtLog{}}
	f.indexer = newIndexer(f.heads)
	ts := tenants{
		projects: map[string]tenant.Project{
			"docs":  {ID: "docs", OrgID: "acme", BaseRef: "main", RepoURL: "https://git.example/acme/docs.git"},
			"other": {ID: "other", OrgID: "acme", BaseRef: "main", RepoURL: "https://git.example/acme/other.git"},
		},
		domains: []tenant.Domain{
			{ID: "help", OrgID: "acme", ProjectID: "docs"},
			{ID: "help-main", OrgID: "acme", ProjectID: "docs", Ref: "main"},
			{ID: "beta", OrgID: "acme", ProjectID: "docs", Ref: "beta"},
			{ID: "else", OrgID: "acme", ProjectID: "other"},
		},
	}
	f.svc = freshness.New(freshness.Config{
		Tenants: ts, Heads: f.heads, Indexer: f.indexer,
		Recorder:     freshness.NewRecorder(f.store, f.clock.Now, nil),
		PollInterval: interval, MaxRetryAfter: 4 * interval,
		Built: f.built.record,
		Now:   f.clock.Now,
	})
	t.Cleanup(f.svc.Close)
	return f
}

func (f *fixture) state(t *testing.T, domain string) freshness.State {
	t.Helper()
	st, err := f.store.IndexState(t.Context(), domain)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTriggersDuringABuildMakeOneMore: a build runs; three triggers while
// it runs make exactly one more build, after it, never two at once.
func TestTriggersDuringABuildMakeOneMore(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.heads.set("docs/main", "c1", nil)
	hold := make(chan struct{})
	f.indexer.hold = hold
	d := tenant.Domain{ID: "help", OrgID: "acme", ProjectID: "docs"}
	f.svc.Trigger(d, freshness.ReasonPush)
	<-f.indexer.started
	for range 3 {
		f.svc.Trigger(d, freshness.ReasonPush)
	}
	// Another domain builds beside it.
	f.svc.Trigger(tenant.Domain{ID: "else", OrgID: "acme", ProjectID: "other"}, freshness.ReasonPush)
	<-f.indexer.started
	close(hold)
	f.svc.Wait()
	if n := f.indexer.count("help"); n != 2 {
		t.Errorf("help was built %d times, want 2 (the running build and one for the triggers during it)", n)
	}
	if n := f.indexer.count("else"); n != 1 {
		t.Errorf("else was built %d times, want 1", n)
	}
	if f.indexer.most != 1 {
		t.Errorf("%d builds of one domain ran at once, want 1", f.indexer.most)
	}
	if st := f.state(t, "help"); st.Commit != "c1" || st.Pages != 3 || st.Passages != 7 || st.Lag(f.clock.Now()) != 0 {
		t.Errorf("state after the builds: %+v", st)
	}
}

// TestPollRebuildsOnlyWhatMoved: a poll reads each branch once, rebuilds
// the domains whose index is not at its head, and leaves the others.
func TestPollRebuildsOnlyWhatMoved(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	f.heads.set("docs/main", "c1", nil)
	f.heads.set("docs/beta", "b1", nil)
	f.heads.set("other/main", "o1", nil)
	if err := f.svc.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	f.svc.Wait()
	// docs/main for two domains, docs/beta, other/main; and one read per build.
	if n := f.heads.readCount(); n != 3+4 {
		t.Errorf("%d head reads, want 3 by the poll and 4 by the builds", n)
	}
	for _, id := range []string{"help", "help-main", "beta", "else"} {
		if n := f.indexer.count(id); n != 1 {
			t.Errorf("%s built %d times by the first poll, want 1", id, n)
		}
	}
	if st := f.state(t, "beta"); st.Commit != "b1" || st.Head != "b1" {
		t.Errorf("beta: %+v", st)
	}

	// Nothing moved: nothing is built.
	f.clock.Add(interval)
	if err := f.svc.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	f.svc.Wait()
	if n := f.indexer.count("help"); n != 1 {
		t.Errorf("help built %d times after a poll that saw no move", n)
	}

	// main moves: the two domains on it are rebuilt, and until then the
	// lag counts from when the new head was first seen.
	f.clock.Add(interval)
	f.heads.set("docs/main", "c2", nil)
	hold := make(chan struct{})
	f.indexer.hold = hold
	seen := f.clock.Now()
	if err := f.svc.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	<-f.indexer.started
	<-f.indexer.started
	f.clock.Add(3 * time.Second)
	st := f.state(t, "help")
	if st.Head != "c2" || st.Commit != "c1" || !st.HeadSeenAt.Equal(seen) || st.Lag(f.clock.Now()) != 3*time.Second {
		t.Errorf("during the rebuild: %+v, lag %s", st, st.Lag(f.clock.Now()))
	}
	close(hold)
	f.svc.Wait()
	for id, want := range map[string]int{"help": 2, "help-main": 2, "beta": 1, "else": 1} {
		if n := f.indexer.count(id); n != want {
			t.Errorf("%s built %d times, want %d", id, n, want)
		}
	}
	if st := f.state(t, "help"); st.Commit != "c2" || st.Lag(f.clock.Now()) != 0 {
		t.Errorf("after the rebuild: %+v", st)
	}
}

// TestFailingRepositoryBacksOff: a repository that cannot be read keeps
// the last good index, records why, and is polled again only after a wait
// that doubles with each failure, up to the most; a push tries at once; a
// success clears the error and the wait.
func TestFailingRepositoryBacksOff(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	f.heads.set("docs/main", "c1", nil)
	f.heads.set("docs/beta", "b1", nil)
	f.heads.set("other/main", "o1", nil)
	if err := f.svc.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	f.svc.Wait()

	down := apperr.New(apperr.Conflict, "reading main of https://git.example/acme/docs.git: the repository does not answer")
	f.heads.set("docs/main", "", down)
	readsAt := func() int { return f.heads.readsOf("docs/main") }
	before := readsAt()
	if err := f.svc.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := readsAt() - before; n != 1 {
		t.Fatalf("%d reads of main on the first failing poll, want 1", n)
	}
	if st := f.state(t, "beta"); st.LastError != "" {
		t.Fatalf("beta, on a branch that did not fail: %+v", st)
	}
	st := f.state(t, "help")
	if st.Commit != "c1" || st.LastError != down.Message || !st.LastErrorAt.Equal(f.clock.Now()) || st.Failures != 1 {
		t.Fatalf("after a failure: %+v", st)
	}

	// Waits: 1, 2, 4, 4 intervals (the most is 4).
	for i, wait := range []time.Duration{interval, 2 * interval, 4 * interval, 4 * interval} {
		f.clock.Add(wait - time.Second)
		before = readsAt()
		if err := f.svc.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if n := readsAt() - before; n != 0 {
			t.Fatalf("failure %d: %d reads %s before the wait of %s ended", i+1, n, time.Second, wait)
		}
		f.clock.Add(time.Second)
		if err := f.svc.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if n := readsAt() - before; n != 1 {
			t.Fatalf("failure %d: %d reads once the wait of %s ended, want 1", i+1, n, wait)
		}
	}
	if st := f.state(t, "help"); st.Failures != 5 || st.Commit != "c1" {
		t.Fatalf("after five failures: %+v", st)
	}

	// A push does not wait.
	f.heads.set("docs/main", "c2", nil)
	ids, err := f.svc.Pushed(ctx, tenant.Project{ID: "docs", OrgID: "acme", BaseRef: "main"}, "main", "c2", freshness.ReasonPush)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"help", "help-main"}) {
		t.Fatalf("a push to main triggered %v", ids)
	}
	f.svc.Wait()
	st = f.state(t, "help")
	if st.Commit != "c2" || st.LastError != "" || st.Failures != 0 {
		t.Fatalf("after the push: %+v", st)
	}
	// And the next poll reads the branch again at once.
	before = readsAt()
	if err := f.svc.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if n := readsAt() - before; n != 1 {
		t.Fatalf("%d reads of main by the poll after a success, want 1", n)
	}
}

// TestFailedBuildKeepsTheServedCommit: a build that fails records why and
// leaves the commit, counts and time of the last good one.
func TestFailedBuildKeepsTheServedCommit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	f.heads.set("other/main", "o1", nil)
	d := tenant.Domain{ID: "else", OrgID: "acme", ProjectID: "other"}
	f.svc.Trigger(d, freshness.ReasonPush)
	f.svc.Wait()
	good := f.state(t, "else")

	f.clock.Add(time.Minute)
	f.indexer.err = errors.New("disk on fire")
	f.heads.set("other/main", "o2", nil)
	f.svc.Trigger(d, freshness.ReasonAutomerge)
	f.svc.Wait()
	st := f.state(t, "else")
	if st.Commit != "o1" || !st.IndexedAt.Equal(good.IndexedAt) || st.Pages != good.Pages || st.Passages != good.Passages {
		t.Errorf("a failed build changed the served index's record: %+v, was %+v", st, good)
	}
	// Not an error that says what to fix: the reason points at the log.
	if st.LastError != "internal error; the cause is in the server log" || st.Failures != 1 {
		t.Errorf("recorded failure: %+v", st)
	}
	// The hook heard of the good build only, with its commit.
	if got := f.built.list(); !slices.Equal(got, []string{"else@o1"}) {
		t.Errorf("Built was called with %v, want [else@o1]", got)
	}
}

// TestPushToAnotherBranchOrProject triggers nothing it does not read.
func TestPushToAnotherBranchOrProject(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ids, err := f.svc.Pushed(t.Context(), tenant.Project{ID: "docs", OrgID: "acme", BaseRef: "main"}, "feature/x", "f1", freshness.ReasonPush)
	if err != nil || len(ids) != 0 {
		t.Fatalf("a push to an unread branch triggered %v (%v)", ids, err)
	}
	ids, err = f.svc.Pushed(t.Context(), tenant.Project{ID: "docs", OrgID: "acme", BaseRef: "main"}, "beta", "b9", freshness.ReasonPush)
	f.svc.Wait()
	if err != nil || !slices.Equal(ids, []string{"beta"}) {
		t.Fatalf("a push to beta triggered %v (%v)", ids, err)
	}
}

// TestLag: zero at the head or with no head seen, else the time since the
// head was first seen.
func TestLag(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		state freshness.State
		want  time.Duration
	}{
		{"never seen", freshness.State{}, 0},
		{"at the head", freshness.State{Commit: "a", Head: "a", HeadSeenAt: now.Add(-time.Hour)}, 0},
		{"behind", freshness.State{Commit: "a", Head: "b", HeadSeenAt: now.Add(-90 * time.Second)}, 90 * time.Second},
		{"never built", freshness.State{Head: "b", HeadSeenAt: now.Add(-time.Second)}, time.Second},
		{"clock behind", freshness.State{Commit: "a", Head: "b", HeadSeenAt: now.Add(time.Second)}, 0},
	}
	for _, tc := range tests {
		if got := tc.state.Lag(now); got != tc.want {
			t.Errorf("%s: lag %s, want %s", tc.name, got, tc.want)
		}
	}
}
