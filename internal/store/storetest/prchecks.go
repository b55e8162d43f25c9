package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/prcheck"
)

func prCheckCases() []testCase {
	return []testCase{
		{"PRCheck/EnqueueOncePerHead", testPRCheckEnqueueOnce},
		{"PRCheck/ClaimLeaseAndFence", testPRCheckClaimLease},
		{"PRCheck/RetryAndRuns", testPRCheckRetryAndRuns},
		{"Concurrency/ClaimPRCheck", testConcurrentPRCheckClaims},
	}
}

func (e *env) prCheck(projectID string, number int, head string, at time.Time) prcheck.Check {
	return prcheck.Check{
		Request: prcheck.Request{
			Number: number, HeadSHA: head, HeadRef: "feature/«restore»", BaseRef: "main",
			PullRef: fmt.Sprintf("refs/pull/%d/head", number), Fork: number%2 == 1,
			Link: fmt.Sprintf("https://forge.example.com/acme/docs/pulls/%d", number), Source: prcheck.SourceWebhook,
		},
		ID: uuid.NewString(), ProjectID: projectID, State: prcheck.StateQueued,
		RunAfter: at, CreatedAt: at, UpdatedAt: at,
	}
}

func (e *env) enqueuePR(c prcheck.Check) (prcheck.Check, bool) {
	e.t.Helper()
	got, created, err := e.s.EnqueuePRCheck(e.ctx, c)
	if err != nil {
		e.t.Fatalf("EnqueuePRCheck: %v", err)
	}
	return got, created
}

func (e *env) claimPR(worker string, now time.Time) (prcheck.Check, bool) {
	e.t.Helper()
	c, ok, err := e.s.ClaimPRCheck(e.ctx, worker, now, now.Add(lease))
	if err != nil {
		e.t.Fatalf("ClaimPRCheck: %v", err)
	}
	return c, ok
}

var (
	headA = strings.Repeat("a1", 20)
	headB = strings.Repeat("b2", 20)
)

func testPRCheckEnqueueOnce(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("handbook")
	first := e.prCheck(e.proj.ID, 7, headA, e.t0)
	got, created := e.enqueuePR(first)
	if !created || got.ID != first.ID || got.State != prcheck.StateQueued || got.Attempts != 0 || len(got.Runs) != 0 {
		t.Fatalf("first enqueue = %+v, created %v", got, created)
	}
	if !reflect.DeepEqual(got.Request, first.Request) || got.ProjectID != e.proj.ID {
		t.Fatalf("stored request\n got  %+v\n want %+v", got.Request, first.Request)
	}
	sameTime(t, "CreatedAt", got.CreatedAt, e.t0)
	sameTime(t, "RunAfter", got.RunAfter, e.t0)

	// The same head again, under another id and later: nothing changes.
	again := e.prCheck(e.proj.ID, 7, headA, e.t0.Add(time.Minute))
	got, created = e.enqueuePR(again)
	if created || got.ID != first.ID {
		t.Fatalf("the same head again = %s (created %v), want the first check %s", got.ID, created, first.ID)
	}
	// A new head of the same pull request, and the same number in another
	// project, are checks of their own.
	if _, created := e.enqueuePR(e.prCheck(e.proj.ID, 7, headB, e.t0.Add(2*time.Minute))); !created {
		t.Fatal("a new head was not queued")
	}
	if _, created := e.enqueuePR(e.prCheck(other.ID, 7, headA, e.t0)); !created {
		t.Fatal("the same number and head in another project was not queued")
	}
	list, err := s.PRChecks(e.ctx, e.proj.ID, 7)
	must(t, err, "PRChecks")
	if len(list) != 2 || list[0].HeadSHA != headB || list[1].HeadSHA != headA {
		t.Fatalf("PRChecks = %+v, want the two heads newest first", list)
	}
	if none, err := s.PRChecks(e.ctx, e.proj.ID, 8); err != nil || len(none) != 0 {
		t.Fatalf("PRChecks of another number = %v, %v", none, err)
	}
	_, _, err = s.EnqueuePRCheck(e.ctx, e.prCheck("no-such-project", 1, headA, e.t0))
	wantCode(t, err, apperr.NotFound, "enqueue for an unknown project")
}

func testPRCheckClaimLease(t *testing.T, s Store) {
	e := setup(t, s)
	if _, ok := e.claimPR("w1", e.t0); ok {
		t.Fatal("claimed from an empty queue")
	}
	older := e.prCheck(e.proj.ID, 1, headA, e.t0)
	newer := e.prCheck(e.proj.ID, 2, headA, e.t0.Add(time.Second))
	later := e.prCheck(e.proj.ID, 3, headA, e.t0)
	later.RunAfter = e.t0.Add(time.Hour)
	e.enqueuePR(newer)
	e.enqueuePR(older)
	e.enqueuePR(later)

	c, ok := e.claimPR("w1", e.t0.Add(2*time.Second))
	if !ok || c.ID != older.ID || c.State != prcheck.StateRunning || c.Attempts != 1 || c.Worker != "w1" {
		t.Fatalf("first claim = %+v, want the oldest check, running, attempt 1", c)
	}
	sameTime(t, "LeaseUntil", c.LeaseUntil, e.t0.Add(2*time.Second+lease))
	c2, ok := e.claimPR("w2", e.t0.Add(2*time.Second))
	if !ok || c2.ID != newer.ID {
		t.Fatalf("second claim = %+v, want the next check", c2)
	}
	if c3, ok := e.claimPR("w2", e.t0.Add(2*time.Second)); ok {
		t.Fatalf("claimed %+v: running checks and one not due yet must wait", c3)
	}
	must(t, s.FinishPRCheck(e.ctx, c2, prcheck.StateDone, "", time.Time{}), "finish the second")

	// w1 stops renewing; once its lease has passed, w2 takes the check
	// back, and w1's late writes are refused.
	past := e.t0.Add(2*time.Second + lease + time.Second)
	back, ok := e.claimPR("w2", past)
	if !ok || back.ID != older.ID || back.Attempts != 2 || back.Worker != "w2" {
		t.Fatalf("claim after the lease = %+v, want %s taken back on attempt 2", back, older.ID)
	}
	if err := s.RenewPRCheck(e.ctx, c, past.Add(lease), nil); !errors.Is(err, prcheck.ErrLeaseLost) {
		t.Fatalf("renewal by the worker that lost the lease: %v", err)
	}
	if err := s.FinishPRCheck(e.ctx, c, prcheck.StateDone, "", time.Time{}); !errors.Is(err, prcheck.ErrLeaseLost) {
		t.Fatalf("finish by the worker that lost the lease: %v", err)
	}
	must(t, s.RenewPRCheck(e.ctx, back, past.Add(lease), nil), "renewal by the holder")
	must(t, s.FinishPRCheck(e.ctx, back, prcheck.StateDone, "success: 1 reader question now answered, 0 regressed", time.Time{}), "finish")
	if err := s.FinishPRCheck(e.ctx, back, prcheck.StateDone, "", time.Time{}); !errors.Is(err, prcheck.ErrLeaseLost) {
		t.Fatalf("a second finish of the same claim: %v", err)
	}
	list, err := s.PRChecks(e.ctx, e.proj.ID, 1)
	must(t, err, "PRChecks")
	if len(list) != 1 || list[0].State != prcheck.StateDone || list[0].Worker != "" || list[0].Error != "success: 1 reader question now answered, 0 regressed" {
		t.Fatalf("finished check = %+v", list)
	}
	// Done is done; the check not due yet comes when it is.
	if c, ok := e.claimPR("w3", e.t0.Add(time.Hour-time.Second)); ok {
		t.Fatalf("claimed %+v before its time", c)
	}
	if c, ok := e.claimPR("w3", e.t0.Add(time.Hour)); !ok || c.ID != later.ID {
		t.Fatalf("claim at the check's time = %+v, %v", c, ok)
	}
}

func testPRCheckRetryAndRuns(t *testing.T, s Store) {
	e := setup(t, s)
	e.enqueuePR(e.prCheck(e.proj.ID, 4, headA, e.t0))
	c, ok := e.claimPR("w1", e.t0)
	if !ok {
		t.Fatal("nothing claimed")
	}
	runs := []prcheck.RunRef{{Domain: "docs.acme.test", ID: "run-1"}, {Domain: "api.acme.test", ID: "run-2"}}
	must(t, s.RenewPRCheck(e.ctx, c, e.t0.Add(lease), runs), "record runs")
	must(t, s.RenewPRCheck(e.ctx, c, e.t0.Add(2*lease), nil), "renew keeping the runs")
	retryAt := e.t0.Add(30 * time.Second)
	must(t, s.FinishPRCheck(e.ctx, c, prcheck.StateQueued, "github: 502 from POST /repos/acme/docs/statuses", retryAt), "queue again")
	if c, ok := e.claimPR("w1", retryAt.Add(-time.Microsecond)); ok {
		t.Fatalf("claimed %+v before its retry time", c)
	}
	again, ok := e.claimPR("w2", retryAt)
	if !ok || again.ID != c.ID || again.Attempts != 2 || !reflect.DeepEqual(again.Runs, runs) || !strings.Contains(again.Error, "502") {
		t.Fatalf("retried claim = %+v, want attempt 2 with its runs and last error", again)
	}
	must(t, s.FinishPRCheck(e.ctx, again, prcheck.StateFailed, "gave up", time.Time{}), "fail")
	if c, ok := e.claimPR("w2", retryAt.Add(time.Hour)); ok {
		t.Fatalf("claimed a failed check: %+v", c)
	}
}

// Workers of several processes claim at once: each check goes to one.
func testConcurrentPRCheckClaims(t *testing.T, s Store) {
	e := setup(t, s)
	const checks, workers = 12, 6
	for i := range checks {
		e.enqueuePR(e.prCheck(e.proj.ID, i+1, headA, e.t0.Add(time.Duration(i)*time.Millisecond)))
	}
	var mu sync.Mutex
	claimed := map[string]string{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			worker := fmt.Sprintf("w%d", w)
			for {
				c, ok, err := s.ClaimPRCheck(e.ctx, worker, e.t0.Add(time.Second), e.t0.Add(time.Second+lease))
				if err != nil {
					t.Errorf("ClaimPRCheck: %v", err)
					return
				}
				if !ok {
					return
				}
				mu.Lock()
				if prev, dup := claimed[c.ID]; dup {
					t.Errorf("check %s claimed by %s and %s", c.ID, prev, worker)
				}
				claimed[c.ID] = worker
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(claimed) != checks {
		t.Fatalf("%d checks claimed, want %d", len(claimed), checks)
	}
}
