package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
)

func checkScheduleCases() []testCase {
	return []testCase{
		{"CheckSchedule/ClaimWhenDue", testCheckScheduleClaim},
		{"CheckSchedule/Retry", testCheckScheduleRetry},
		{"CheckSchedule/ConcurrentClaims", testCheckScheduleConcurrent},
		{"CheckSchedule/UnknownDomain", testCheckScheduleUnknownDomain},
	}
}

func (e *env) claimCheckRun(domain string, every time.Duration, now time.Time) bool {
	e.t.Helper()
	ok, err := e.s.ClaimCheckRun(e.ctx, domain, every, now)
	must(e.t, err, "ClaimCheckRun "+domain)
	return ok
}

// testCheckScheduleClaim: a domain never run is due; once claimed it is
// due again an interval later, or at once when its interval changes; each
// domain has its own schedule.
func testCheckScheduleClaim(t *testing.T, s Store) {
	e := setup(t, s)
	e.indexDomain("help")
	e.indexDomain("beta")
	day := 24 * time.Hour
	for _, step := range []struct {
		what   string
		domain string
		every  time.Duration
		at     time.Time
		want   bool
	}{
		{"never run", "help", day, e.t0, true},
		{"just claimed", "help", day, e.t0, false},
		{"before the interval is over", "help", day, e.t0.Add(day - time.Second), false},
		{"another domain", "beta", day, e.t0.Add(time.Second), true},
		{"the interval over", "help", day, e.t0.Add(day), true},
		{"claimed again", "help", day, e.t0.Add(day + time.Minute), false},
		{"the interval changed", "help", time.Hour, e.t0.Add(day + time.Minute), true},
		{"the new interval not over", "help", time.Hour, e.t0.Add(day + 30*time.Minute), false},
		{"the new interval over", "help", time.Hour, e.t0.Add(day + time.Hour + time.Minute), true},
	} {
		if got := e.claimCheckRun(step.domain, step.every, step.at); got != step.want {
			t.Fatalf("%s: ClaimCheckRun(%s, %s) = %v, want %v", step.what, step.domain, step.every, got, step.want)
		}
	}
}

// testCheckScheduleRetry: a failed run's domain is due again when the
// retry says, and a retry never puts the next run later.
func testCheckScheduleRetry(t *testing.T, s Store) {
	e := setup(t, s)
	e.indexDomain("help")
	day := 24 * time.Hour
	if !e.claimCheckRun("help", day, e.t0) {
		t.Fatal("first claim refused")
	}
	must(t, s.RetryCheckRun(e.ctx, "help", e.t0.Add(time.Hour)), "RetryCheckRun")
	if e.claimCheckRun("help", day, e.t0.Add(59*time.Minute)) {
		t.Fatal("claimed before the retry's time")
	}
	if !e.claimCheckRun("help", day, e.t0.Add(time.Hour)) {
		t.Fatal("not claimed at the retry's time")
	}
	must(t, s.RetryCheckRun(e.ctx, "help", e.t0.Add(3*day)), "RetryCheckRun later")
	if !e.claimCheckRun("help", day, e.t0.Add(time.Hour+day)) {
		t.Fatal("a retry later than the next run put it off")
	}
	// A domain never claimed has nothing to retry; it stays due.
	e.indexDomain("beta")
	must(t, s.RetryCheckRun(e.ctx, "beta", e.t0.Add(day)), "RetryCheckRun of a domain never run")
	if !e.claimCheckRun("beta", day, e.t0) {
		t.Fatal("a domain never run is not due after a retry")
	}
}

// testCheckScheduleConcurrent: of many processes that find a domain due
// at the same moment, one claims it.
func testCheckScheduleConcurrent(t *testing.T, s Store) {
	e := setup(t, s)
	e.indexDomain("help")
	for round, at := range []time.Time{e.t0, e.t0.Add(25 * time.Hour)} {
		var claimed atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				ok, err := s.ClaimCheckRun(e.ctx, "help", 24*time.Hour, at)
				if err != nil {
					t.Errorf("ClaimCheckRun: %v", err)
				}
				if ok {
					claimed.Add(1)
				}
			})
		}
		wg.Wait()
		if n := claimed.Load(); n != 1 {
			t.Fatalf("round %d: %d claims succeeded, want 1", round, n)
		}
	}
}

func testCheckScheduleUnknownDomain(t *testing.T, s Store) {
	e := setup(t, s)
	_, err := s.ClaimCheckRun(e.ctx, "missing", time.Hour, e.t0)
	if !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("ClaimCheckRun of an unknown domain = %v, want NotFound", err)
	}
}
