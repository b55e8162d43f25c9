package storetest

import (
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/tenant"
)

func indexStateCases() []testCase {
	return []testCase{
		{"IndexState/BuildsHeadsAndFailures", testIndexStates},
		{"IndexState/HeadOrder", testIndexHeadOrder},
		{"IndexState/UnknownDomain", testIndexStateUnknownDomain},
	}
}

// indexDomain creates a domain of the env's project.
func (e *env) indexDomain(id string) {
	e.t.Helper()
	must(e.t, e.s.CreateDomain(e.ctx, tenant.Domain{ID: id, OrgID: e.org.ID, ProjectID: e.proj.ID, Model: "extractive", AllowedOrigins: []string{}, CreatedAt: e.t0}), "CreateDomain "+id)
}

func (e *env) indexState(id string) freshness.State {
	e.t.Helper()
	st, err := e.s.IndexState(e.ctx, id)
	must(e.t, err, "IndexState "+id)
	return st
}

func checkIndexState(t *testing.T, what string, got, want freshness.State) {
	t.Helper()
	sameTime(t, what+" IndexedAt", got.IndexedAt, want.IndexedAt)
	sameTime(t, what+" HeadSeenAt", got.HeadSeenAt, want.HeadSeenAt)
	sameTime(t, what+" HeadCheckedAt", got.HeadCheckedAt, want.HeadCheckedAt)
	sameTime(t, what+" LastErrorAt", got.LastErrorAt, want.LastErrorAt)
	got.IndexedAt, got.HeadSeenAt, got.HeadCheckedAt, got.LastErrorAt = want.IndexedAt, want.HeadSeenAt, want.HeadCheckedAt, want.LastErrorAt
	if got != want {
		t.Errorf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

// testIndexStates: a domain never built reads as empty; a head seen, a
// build, a failure and a build again each leave what they should.
func testIndexStates(t *testing.T, s Store) {
	e := setup(t, s)
	e.indexDomain("help")
	e.indexDomain("beta")
	t0 := e.t0
	checkIndexState(t, "never built", e.indexState("help"), freshness.State{Domain: "help"})

	must(t, s.SeeHead(e.ctx, "help", "c1", t0), "SeeHead c1")
	must(t, s.SeeHead(e.ctx, "help", "c1", t0.Add(time.Second)), "SeeHead c1 again")
	want := freshness.State{Domain: "help", Head: "c1", HeadSeenAt: t0, HeadCheckedAt: t0.Add(time.Second)}
	checkIndexState(t, "head seen twice", e.indexState("help"), want)

	built := freshness.Built{Commit: "c1", Pages: 12, Passages: 345, Started: t0.Add(2 * time.Second), At: t0.Add(3 * time.Second), Duration: 1234567 * time.Microsecond}
	must(t, s.RecordBuilt(e.ctx, "help", built), "RecordBuilt c1")
	want = freshness.State{Domain: "help", Commit: "c1", IndexedAt: built.At, Head: "c1", HeadSeenAt: t0, HeadCheckedAt: built.Started,
		Pages: 12, Passages: 345, Duration: built.Duration}
	checkIndexState(t, "built at the head", e.indexState("help"), want)
	if lag := e.indexState("help").Lag(t0.Add(time.Hour)); lag != 0 {
		t.Errorf("lag at the head = %s", lag)
	}

	// The branch moves; two attempts fail.
	must(t, s.SeeHead(e.ctx, "help", "c2", t0.Add(10*time.Second)), "SeeHead c2")
	must(t, s.RecordFailure(e.ctx, "help", "could not read main «of» docs", t0.Add(11*time.Second), 2*time.Second), "RecordFailure")
	must(t, s.RecordFailure(e.ctx, "help", "still down", t0.Add(12*time.Second), time.Second), "RecordFailure again")
	want.Head, want.HeadSeenAt, want.HeadCheckedAt = "c2", t0.Add(10*time.Second), t0.Add(10*time.Second)
	want.LastError, want.LastErrorAt, want.Duration, want.Failures = "still down", t0.Add(12*time.Second), time.Second, 2
	checkIndexState(t, "behind, failing", e.indexState("help"), want)
	if lag := e.indexState("help").Lag(t0.Add(40 * time.Second)); lag != 30*time.Second {
		t.Errorf("lag behind = %s, want 30s", lag)
	}

	// A build of a newer commit than the head seen clears the failure and
	// is the head from when it began.
	built = freshness.Built{Commit: "c3", Pages: 13, Passages: 350, Started: t0.Add(20 * time.Second), At: t0.Add(21 * time.Second), Duration: time.Second}
	must(t, s.RecordBuilt(e.ctx, "help", built), "RecordBuilt c3")
	want = freshness.State{Domain: "help", Commit: "c3", IndexedAt: built.At, Head: "c3", HeadSeenAt: built.Started, HeadCheckedAt: built.Started,
		Pages: 13, Passages: 350, Duration: time.Second}
	checkIndexState(t, "built past the head", e.indexState("help"), want)

	// A failure of a domain never built, and a build from a plain folder
	// (no commit), which leaves the head alone.
	must(t, s.RecordFailure(e.ctx, "beta", "no such branch", t0, 0), "RecordFailure beta")
	checkIndexState(t, "beta failed", e.indexState("beta"), freshness.State{Domain: "beta", LastError: "no such branch", LastErrorAt: t0, Failures: 1})
	must(t, s.RecordBuilt(e.ctx, "beta", freshness.Built{Pages: 1, Passages: 2, Started: t0, At: t0.Add(time.Second)}), "RecordBuilt beta")
	checkIndexState(t, "beta built", e.indexState("beta"), freshness.State{Domain: "beta", IndexedAt: t0.Add(time.Second), Pages: 1, Passages: 2})

	all, err := s.IndexStates(e.ctx)
	must(t, err, "IndexStates")
	if len(all) != 2 || all[0].Domain != "beta" || all[1].Domain != "help" || all[1].Commit != "c3" {
		t.Errorf("IndexStates = %+v", all)
	}
}

// testIndexHeadOrder: a head reported with an older time than the last
// recorded (a slow poll after a build) changes nothing.
func testIndexHeadOrder(t *testing.T, s Store) {
	e := setup(t, s)
	e.indexDomain("help")
	t0 := e.t0
	must(t, s.RecordBuilt(e.ctx, "help", freshness.Built{Commit: "c2", Started: t0.Add(5 * time.Second), At: t0.Add(6 * time.Second)}), "RecordBuilt c2")
	must(t, s.SeeHead(e.ctx, "help", "c1", t0.Add(time.Second)), "SeeHead c1 late")
	st := e.indexState("help")
	if st.Head != "c2" || !st.HeadSeenAt.Equal(t0.Add(5*time.Second)) || st.Lag(t0.Add(time.Minute)) != 0 {
		t.Errorf("after an older report: %+v", st)
	}
	// A build that began before the head was seen does not move it back.
	must(t, s.SeeHead(e.ctx, "help", "c3", t0.Add(10*time.Second)), "SeeHead c3")
	must(t, s.RecordBuilt(e.ctx, "help", freshness.Built{Commit: "c2", Started: t0.Add(9 * time.Second), At: t0.Add(11 * time.Second)}), "RecordBuilt c2 again")
	st = e.indexState("help")
	if st.Head != "c3" || st.Commit != "c2" || st.Lag(t0.Add(15*time.Second)) != 5*time.Second {
		t.Errorf("after a build older than the head: %+v", st)
	}
}

func testIndexStateUnknownDomain(t *testing.T, s Store) {
	e := setup(t, s)
	wantCode(t, s.SeeHead(e.ctx, "nope", "c1", e.t0), apperr.NotFound, "SeeHead unknown")
	wantCode(t, s.RecordBuilt(e.ctx, "nope", freshness.Built{Commit: "c1", At: e.t0}), apperr.NotFound, "RecordBuilt unknown")
	wantCode(t, s.RecordFailure(e.ctx, "nope", "x", e.t0, 0), apperr.NotFound, "RecordFailure unknown")
}
