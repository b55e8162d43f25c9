package agentjob_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// countingLimits is a ratelimit.Store that counts the Takes made through it
// before handing them to the real store.
type countingLimits struct {
	ratelimit.Store
	mu    sync.Mutex
	takes int
}

func (c *countingLimits) Take(ctx context.Context, now time.Time, token string, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	c.mu.Lock()
	c.takes++
	c.mu.Unlock()
	return c.Store.Take(ctx, now, token, rules)
}

// TestCreateLimited: creates and follow-ups count against the limit once
// each, retries are not counted, and a refused request stores nothing, both
// when the job store keeps the limits (checked in the transaction that
// writes the job) and when they live elsewhere (checked first).
func TestCreateLimited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		inStore bool
	}{{"limits in the job store", true}, {"limits in another store", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ctx := t.Context()
			var limits ratelimit.Store = e.store
			counter := &countingLimits{}
			if !tc.inStore {
				other, err := sqlite.Open(ctx, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { other.Close() })
				counter.Store = other
				limits = counter
			}
			limiter := ratelimit.New(limits, time.Now)
			rule := ratelimit.Rule{Name: "agent requests per project", Key: "agent:project:docs", Limit: 3, Window: time.Hour}

			job, replayed, d, err := e.svc.CreateLimited(ctx, e.project, "first", "key-1", limiter, "create docs key-1", rule)
			if err != nil || replayed || !d.Allowed || d.Binding.Remaining != 2 {
				t.Fatalf("first create: replayed %v, decision %+v, err %v", replayed, d, err)
			}
			// A retry replays, uncounted and without limit headers.
			again, replayed, d, err := e.svc.CreateLimited(ctx, e.project, "first", "key-1", limiter, "create docs key-1", rule)
			if err != nil || !replayed || again.ID != job.ID || !d.Allowed || d.Binding.Rule.Limit != 0 {
				t.Fatalf("retry: job %s replayed %v, decision %+v, err %v", again.ID, replayed, d, err)
			}
			if _, _, d, err := e.svc.MessageLimited(ctx, "docs", job.ID, "second", "", limiter, "", rule); err != nil || !d.Allowed || d.Binding.Remaining != 1 {
				t.Fatalf("follow-up: decision %+v, err %v", d, err)
			}
			if _, _, d, err := e.svc.CreateLimited(ctx, e.project, "third", "", limiter, "", rule); err != nil || !d.Allowed || d.Binding.Remaining != 0 {
				t.Fatalf("third request: decision %+v, err %v", d, err)
			}
			refused, _, d, err := e.svc.CreateLimited(ctx, e.project, "fourth", "key-4", limiter, "create docs key-4", rule)
			if err != nil || d.Allowed || refused.ID != "" || d.Binding.ResetIn <= 0 {
				t.Fatalf("fourth request: job %q, decision %+v, err %v; want refused", refused.ID, d, err)
			}
			if _, _, d, err := e.svc.MessageLimited(ctx, "docs", job.ID, "fifth", "", limiter, "", rule); err != nil || d.Allowed {
				t.Fatalf("a follow-up over the limit: decision %+v, err %v; want refused", d, err)
			}
			jobs, err := e.svc.List(ctx, "docs", agentjob.ListQuery{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 2 {
				t.Errorf("%d jobs stored, want 2", len(jobs))
			}
			if got, err := e.svc.Get(ctx, "docs", job.ID); err != nil || len(got.Messages) != 2 {
				t.Errorf("first job: %d messages, err %v; want 2", len(got.Messages), err)
			}
			// The refused create's key is free: it was not remembered.
			if _, replayed, err := e.svc.ReplayCreate(ctx, "docs", "fourth", "key-4"); err != nil || replayed {
				t.Errorf("the refused create's key replays (%v, %v)", replayed, err)
			}
			counter.mu.Lock()
			defer counter.mu.Unlock()
			if !tc.inStore && counter.takes != 5 {
				t.Errorf("the limiter's store checked %d requests, want the 5 that were not replays", counter.takes)
			}
		})
	}
}
