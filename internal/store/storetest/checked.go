package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
)

// checkedCases test a store that keeps the rate limits and checks them in
// the transaction of the job or message a request writes
// (agentjob.CheckingStore): the request is counted exactly when its write
// is stored. A store that is not one skips them.
func checkedCases() []testCase {
	return []testCase{
		{"Checked/CreateCountedWithItsJob", testCheckedCreate},
		{"Checked/ReplayNotCounted", testCheckedReplay},
		{"Checked/FailedCreateNotCounted", testCheckedFailedCreate},
		{"Checked/FollowUp", testCheckedFollowUp},
		{"Checked/ConcurrentCreatesExact", testCheckedConcurrent},
	}
}

func checkingStore(t *testing.T, s Store) agentjob.CheckingStore {
	t.Helper()
	cs, ok := s.(agentjob.CheckingStore)
	if !ok {
		t.Skip("the store does not check rate limits in its own transactions")
	}
	return cs
}

func checkedRule(key string, limit int) ratelimit.Rule {
	return ratelimit.Rule{Name: "agent requests per project", Key: key, Limit: limit, Window: time.Hour}
}

// usedOf is how many hits the rule's key holds at now: a take with no room
// (limit 0) is refused, so it counts them and records nothing.
func usedOf(t *testing.T, s Store, now time.Time, r ratelimit.Rule) int {
	t.Helper()
	probe := r
	probe.Limit = 0
	ok, usage, err := s.Take(t.Context(), now, "", []ratelimit.Rule{probe})
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	if ok {
		t.Fatalf("a take with no room was allowed")
	}
	return usage[0].Used
}

func testCheckedCreate(t *testing.T, s Store) {
	cs := checkingStore(t, s)
	e := setup(t, s)
	rule := checkedRule("agent:project:checked", 2)
	for i := range 2 {
		at := e.t0.Add(time.Duration(i) * time.Second)
		c := &ratelimit.Check{Now: at, Rules: []ratelimit.Rule{rule}}
		job := e.newJob(at)
		got, replayed, err := cs.CreateJobChecked(e.ctx, job, nil, nil, c)
		must(t, err, "CreateJobChecked")
		if replayed || got.ID != job.ID || len(got.Messages) != 1 {
			t.Fatalf("create %d = %s replayed=%v with %d messages", i+1, got.ID, replayed, len(got.Messages))
		}
		if !c.Allowed || len(c.Usage) != 1 || c.Usage[0].Used != i+1 {
			t.Fatalf("create %d: check allowed=%v usage=%+v; want allowed, used %d", i+1, c.Allowed, c.Usage, i+1)
		}
		e.job(job.ID)
	}
	// The rule is full: refused, and nothing of the create is stored.
	at := e.t0.Add(time.Minute)
	c := &ratelimit.Check{Now: at, Token: "create retry-3", Rules: []ratelimit.Rule{rule}}
	job := e.newJob(at)
	idem := agentjob.Idempotency{Scope: "create:" + e.proj.ID, Key: "retry-3", RequestHash: sha("fix the typo"), NotBefore: at.Add(-24 * time.Hour)}
	_, _, err := cs.CreateJobChecked(e.ctx, job, &idem, nil, c)
	if !errors.Is(err, ratelimit.ErrRefused) {
		t.Fatalf("a create over the limit = %v, want ErrRefused", err)
	}
	if c.Allowed || len(c.Usage) != 1 || c.Usage[0].Used != 2 || c.Usage[0].ResetIn <= 0 {
		t.Errorf("refused check: allowed=%v usage=%+v; want refused at 2 with a reset", c.Allowed, c.Usage)
	}
	_, err = s.GetJob(e.ctx, e.proj.ID, job.ID)
	wantCode(t, err, apperr.NotFound, "GetJob of a refused create")
	if _, found, err := s.FindIdempotent(e.ctx, idem); err != nil || found {
		t.Errorf("a refused create remembered its idempotency key (found=%v, err=%v)", found, err)
	}
	// The hits leave the window: a create is allowed again.
	later := e.t0.Add(time.Hour + 2*time.Second)
	c = &ratelimit.Check{Now: later, Rules: []ratelimit.Rule{rule}}
	if _, _, err := cs.CreateJobChecked(e.ctx, e.newJob(later), nil, nil, c); err != nil || !c.Allowed || c.Usage[0].Used != 1 {
		t.Fatalf("a create after the window = %v, allowed=%v usage=%+v; want allowed, used 1", err, c.Allowed, c.Usage)
	}
}

func testCheckedReplay(t *testing.T, s Store) {
	cs := checkingStore(t, s)
	e := setup(t, s)
	rule := checkedRule("agent:project:replay", 1)
	idem := agentjob.Idempotency{Scope: "create:" + e.proj.ID, Key: "once", RequestHash: sha("fix the typo"), NotBefore: e.t0.Add(-24 * time.Hour)}
	first := e.newJob(e.t0)
	c := &ratelimit.Check{Now: e.t0, Token: "create once", Rules: []ratelimit.Rule{rule}}
	if _, replayed, err := cs.CreateJobChecked(e.ctx, first, &idem, nil, c); err != nil || replayed || !c.Allowed {
		t.Fatalf("first create = replayed %v, %v, allowed %v", replayed, err, c.Allowed)
	}
	// The retry finds the first job though the rule is full, and is not
	// checked.
	c = &ratelimit.Check{Now: e.t0.Add(time.Second), Token: "create once", Rules: []ratelimit.Rule{rule}}
	got, replayed, err := cs.CreateJobChecked(e.ctx, e.newJob(e.t0.Add(time.Second)), &idem, nil, c)
	must(t, err, "retried create")
	if !replayed || got.ID != first.ID {
		t.Fatalf("retried create = %s replayed=%v, want %s replayed", got.ID, replayed, first.ID)
	}
	if c.Usage != nil {
		t.Errorf("a replay was checked: %+v", c.Usage)
	}
	// A new request is refused: the replay left the count at one.
	c = &ratelimit.Check{Now: e.t0.Add(2 * time.Second), Rules: []ratelimit.Rule{rule}}
	if _, _, err := cs.CreateJobChecked(e.ctx, e.newJob(e.t0.Add(2*time.Second)), nil, nil, c); !errors.Is(err, ratelimit.ErrRefused) || c.Usage[0].Used != 1 {
		t.Fatalf("a second request = %v, usage %+v; want refused at 1", err, c.Usage)
	}
}

// testCheckedFailedCreate: a create that fails after its check (its job id
// is taken) is not counted.
func testCheckedFailedCreate(t *testing.T, s Store) {
	cs := checkingStore(t, s)
	e := setup(t, s)
	rule := checkedRule("agent:project:failed", 5)
	job := e.create(e.newJob(e.t0))
	c := &ratelimit.Check{Now: e.t0, Rules: []ratelimit.Rule{rule}}
	dup := e.newJob(e.t0)
	dup.ID = job.ID
	if _, _, err := cs.CreateJobChecked(e.ctx, dup, nil, nil, c); err == nil {
		t.Fatal("a create with a taken job id succeeded")
	}
	if used := usedOf(t, s, e.t0, rule); used != 0 {
		t.Errorf("a failed create was counted: %d hits", used)
	}
}

func testCheckedFollowUp(t *testing.T, s Store) {
	cs := checkingStore(t, s)
	e := setup(t, s)
	rule := checkedRule("agent:project:follow-up", 1)
	j := e.create(e.newJob(e.t0))
	at := e.t0.Add(time.Second)
	read := e.job(j.ID)

	// A stale patch is refused by the version check and not counted.
	stale := read
	stale.Version--
	p, ev, err := agentjob.Reduce(stale, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "again", At: at})
	must(t, err, "Reduce")
	c := &ratelimit.Check{Now: at, Rules: []ratelimit.Rule{rule}}
	if _, _, err := cs.ApplyChecked(e.ctx, e.proj.ID, j.ID, p, nil, ev, c); !errors.Is(err, agentjob.ErrStale) {
		t.Fatalf("ApplyChecked of a stale patch = %v, want ErrStale", err)
	}
	// The current one is counted with its message.
	p, ev, err = agentjob.Reduce(read, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "again", At: at})
	must(t, err, "Reduce")
	c = &ratelimit.Check{Now: at, Rules: []ratelimit.Rule{rule}}
	got, _, err := cs.ApplyChecked(e.ctx, e.proj.ID, j.ID, p, nil, ev, c)
	must(t, err, "ApplyChecked")
	if len(got.Messages) != 2 || !c.Allowed || c.Usage[0].Used != 1 {
		t.Fatalf("follow-up: %d messages, allowed=%v usage=%+v; want 2, allowed, used 1 (the stale one not counted)", len(got.Messages), c.Allowed, c.Usage)
	}
	// The rule is full: the next follow-up is refused and not stored.
	read = e.job(j.ID)
	p, ev, err = agentjob.Reduce(read, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "once more", At: at})
	must(t, err, "Reduce")
	c = &ratelimit.Check{Now: at, Rules: []ratelimit.Rule{rule}}
	if _, _, err := cs.ApplyChecked(e.ctx, e.proj.ID, j.ID, p, nil, ev, c); !errors.Is(err, ratelimit.ErrRefused) {
		t.Fatalf("a follow-up over the limit = %v, want ErrRefused", err)
	}
	if after := e.job(j.ID); after.Version != read.Version || len(after.Messages) != 2 {
		t.Errorf("a refused follow-up changed the job: version %d → %d, %d messages", read.Version, after.Version, len(after.Messages))
	}
}

// testCheckedConcurrent: creates racing for the last places of a limit are
// stored exactly as many times as the limit allows, each with its hit.
func testCheckedConcurrent(t *testing.T, s Store) {
	cs := checkingStore(t, s)
	e := setup(t, s)
	const limit, requests = 7, 24
	rule := checkedRule("agent:project:race", limit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var stored []string
	refused := 0
	start := make(chan struct{})
	for range requests {
		wg.Go(func() {
			<-start
			job := e.newJob(e.t0)
			c := &ratelimit.Check{Now: e.t0, Rules: []ratelimit.Rule{rule}}
			_, _, err := cs.CreateJobChecked(e.ctx, job, nil, nil, c)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored = append(stored, job.ID)
			case errors.Is(err, ratelimit.ErrRefused):
				refused++
			default:
				t.Errorf("CreateJobChecked: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(stored) != limit || refused != requests-limit {
		t.Fatalf("%d stored and %d refused of %d racing creates, want %d and %d", len(stored), refused, requests, limit, requests-limit)
	}
	for _, id := range stored {
		e.job(id)
	}
	jobs, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Limit: 100})
	must(t, err, "ListJobs")
	if len(jobs) != limit {
		t.Errorf("%d jobs stored, want %d", len(jobs), limit)
	}
	if used := usedOf(t, s, e.t0, rule); used != limit {
		t.Errorf("%d hits recorded, want %d", used, limit)
	}
}
