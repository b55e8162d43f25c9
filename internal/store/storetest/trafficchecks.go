package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/trafficcheck"
)

func trafficCheckCases() []testCase {
	return []testCase{
		{"TrafficChecks/RoundTrip", testTrafficCheckRoundTrip},
		{"TrafficChecks/HarvestIsIdempotent", testTrafficCheckHarvestIdempotent},
		{"TrafficChecks/KeepsNewestUnlessPinnedOrEdited", testTrafficCheckKeep},
		{"TrafficChecks/DroppedNeverHarvestedAgain", testTrafficCheckDropped},
		{"TrafficChecks/DomainsApart", testTrafficCheckDomainsApart},
		{"Concurrency/HarvestTrafficChecks", testTrafficCheckConcurrentHarvest},
	}
}

// trafficCheck is a check as a harvest finds it, every field set.
func trafficCheck(domain, origin, question string, asked time.Time) trafficcheck.Check {
	c := trafficcheck.Check{
		ID: fmt.Sprintf("%s-%s-%d", domain, origin, asked.UnixMicro()), Domain: domain, HarvestKey: trafficcheck.HarvestKey(question),
		Name: "reader-" + question, Question: question, Origin: origin, ThreadID: "thr_" + question, Seq: 2,
		AskedAt: asked, CreatedAt: asked.Add(time.Hour), UpdatedAt: asked.Add(time.Hour),
	}
	if origin == answercheck.OriginGap {
		c.Answered, c.GapKey = true, "snapshot+restore"
	} else {
		c.Cite, c.Contains = []string{"guides/backups", "guides/«restore»"}, []string{"restore"}
	}
	return c
}

func (e *env) harvest(domain string, found []trafficcheck.Check, keep int) int {
	e.t.Helper()
	n, err := e.s.HarvestTrafficChecks(e.ctx, domain, found, keep)
	if err != nil {
		e.t.Fatalf("HarvestTrafficChecks: %v", err)
	}
	return n
}

func (e *env) trafficChecks(domain string) []trafficcheck.Check {
	e.t.Helper()
	cs, err := e.s.TrafficChecks(e.ctx, domain, 100)
	if err != nil {
		e.t.Fatalf("TrafficChecks: %v", err)
	}
	return cs
}

func sameTrafficCheck(t *testing.T, what string, got, want trafficcheck.Check) {
	t.Helper()
	sameTime(t, what+" AskedAt", got.AskedAt, want.AskedAt)
	sameTime(t, what+" CreatedAt", got.CreatedAt, want.CreatedAt)
	sameTime(t, what+" UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	got.AskedAt, got.CreatedAt, got.UpdatedAt = want.AskedAt, want.CreatedAt, want.UpdatedAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s\n got  %+v\n want %+v", what, got, want)
	}
}

func questionsOf(cs []trafficcheck.Check) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Question)
	}
	return out
}

func testTrafficCheckRoundTrip(t *testing.T, s Store) {
	e := setup(t, s)
	up := trafficCheck("tern", answercheck.OriginUpvote, "How do I restore a snapshot? «ü»", e.t0)
	gap := trafficCheck("tern", answercheck.OriginGap, "Can I deploy with Helm?", e.t0.Add(time.Minute))
	if n := e.harvest("tern", []trafficcheck.Check{up, gap}, 10); n != 2 {
		t.Fatalf("added %d, want 2", n)
	}
	got, err := s.GetTrafficCheck(e.ctx, "tern", up.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameTrafficCheck(t, "upvote check", got, up)
	got, _ = s.GetTrafficCheck(e.ctx, "tern", gap.ID)
	sameTrafficCheck(t, "gap check", got, gap)

	// What the team changes is kept; the rest stays.
	edited := up
	edited.Name, edited.Question, edited.Cite, edited.Contains = "reader-edited", "How do I restore?", nil, nil
	edited.NotCovered, edited.Pinned, edited.Edited, edited.UpdatedAt = true, true, true, e.t0.Add(2*time.Hour)
	if err := s.UpdateTrafficCheck(e.ctx, edited); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetTrafficCheck(e.ctx, "tern", up.ID)
	sameTrafficCheck(t, "edited check", got, edited)

	// Pinned first, then the newest asked; dropped last.
	if got := questionsOf(e.trafficChecks("tern")); !reflect.DeepEqual(got, []string{"How do I restore?", "Can I deploy with Helm?"}) {
		t.Errorf("order = %q", got)
	}
	gap.Dropped = true
	if err := s.UpdateTrafficCheck(e.ctx, gap); err != nil {
		t.Fatal(err)
	}
	edited.Pinned = false
	_ = s.UpdateTrafficCheck(e.ctx, edited)
	if got := e.trafficChecks("tern"); len(got) != 2 || got[0].ID != up.ID || !got[1].Dropped {
		t.Errorf("a dropped check is not last: %q", questionsOf(got))
	}

	if _, err := s.GetTrafficCheck(e.ctx, "tern", "nope"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("an unknown check: %v", err)
	}
	missing := up
	missing.ID = "nope"
	if err := s.UpdateTrafficCheck(e.ctx, missing); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("updating an unknown check: %v", err)
	}
	if cs, err := s.TrafficChecks(e.ctx, "tern", 1); err != nil || len(cs) != 1 {
		t.Errorf("limit 1: %d checks, %v", len(cs), err)
	}
}

func testTrafficCheckHarvestIdempotent(t *testing.T, s Store) {
	e := setup(t, s)
	found := []trafficcheck.Check{
		trafficCheck("tern", answercheck.OriginUpvote, "How do I restore a snapshot?", e.t0),
		trafficCheck("tern", answercheck.OriginGap, "Can I deploy with Helm?", e.t0.Add(time.Minute)),
	}
	e.harvest("tern", found, 10)
	before := e.trafficChecks("tern")
	// The same questions found again, under new ids and times, change
	// nothing.
	again := make([]trafficcheck.Check, len(found))
	for i, c := range found {
		c.ID, c.CreatedAt, c.Name = c.ID+"-again", c.CreatedAt.Add(time.Hour), c.Name+"-again"
		again[i] = c
	}
	if n := e.harvest("tern", again, 10); n != 0 {
		t.Errorf("harvesting the same questions again added %d", n)
	}
	after := e.trafficChecks("tern")
	if len(after) != len(before) {
		t.Fatalf("%d checks, then %d", len(before), len(after))
	}
	for i := range after {
		sameTrafficCheck(t, "check after a second harvest", after[i], before[i])
	}
}

func testTrafficCheckKeep(t *testing.T, s Store) {
	e := setup(t, s)
	var found []trafficcheck.Check
	for i := range 5 {
		found = append(found, trafficCheck("tern", answercheck.OriginUpvote, fmt.Sprintf("upvoted question %d", i), e.t0.Add(time.Duration(i)*time.Minute)))
	}
	gap := trafficCheck("tern", answercheck.OriginGap, "an old gap question", e.t0.Add(-time.Hour))
	e.harvest("tern", append(found[:2:2], gap), 3)
	// The oldest upvote is pinned, the next edited: both stay however
	// many newer ones come.
	pinned, edited := found[0], found[1]
	pinned.Pinned, edited.Edited = true, true
	for _, c := range []trafficcheck.Check{pinned, edited} {
		if err := s.UpdateTrafficCheck(e.ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.harvest("tern", found[2:], 2); n != 3 {
		t.Errorf("added %d, want 3", n)
	}
	// Of the three new upvotes, the two newest stay; the gap's check, of
	// another origin, stays too.
	want := []string{"upvoted question 0", "upvoted question 4", "upvoted question 3", "upvoted question 1", "an old gap question"}
	if got := questionsOf(e.trafficChecks("tern")); !reflect.DeepEqual(got, want) {
		t.Errorf("kept %q\nwant %q", got, want)
	}
}

func testTrafficCheckDropped(t *testing.T, s Store) {
	e := setup(t, s)
	c := trafficCheck("tern", answercheck.OriginGap, "Can I deploy with Helm?", e.t0)
	e.harvest("tern", []trafficcheck.Check{c}, 1)
	c.Dropped = true
	if err := s.UpdateTrafficCheck(e.ctx, c); err != nil {
		t.Fatal(err)
	}
	// Found again, newer, and with room for only one: the dropped check
	// stays dropped, is not let go, and no second one comes.
	again := trafficCheck("tern", answercheck.OriginGap, "can I deploy with   HELM", e.t0.Add(time.Hour))
	newer := trafficCheck("tern", answercheck.OriginGap, "Where are the logs?", e.t0.Add(2*time.Hour))
	if n := e.harvest("tern", []trafficcheck.Check{again, newer}, 1); n != 1 {
		t.Errorf("added %d, want 1", n)
	}
	cs := e.trafficChecks("tern")
	if len(cs) != 2 || cs[0].Question != "Where are the logs?" || cs[1].ID != c.ID || !cs[1].Dropped {
		t.Errorf("checks = %+v", cs)
	}
}

func testTrafficCheckDomainsApart(t *testing.T, s Store) {
	e := setup(t, s)
	q := "How do I restore a snapshot?"
	a := trafficCheck("tern", answercheck.OriginUpvote, q, e.t0)
	b := trafficCheck("heron", answercheck.OriginUpvote, q, e.t0)
	e.harvest("tern", []trafficcheck.Check{a}, 10)
	if n := e.harvest("heron", []trafficcheck.Check{b}, 10); n != 1 {
		t.Errorf("the same question on another domain: added %d", n)
	}
	if _, err := s.GetTrafficCheck(e.ctx, "heron", a.ID); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("a check read through another domain: %v", err)
	}
	other := a
	other.Domain, other.Pinned = "heron", true
	if err := s.UpdateTrafficCheck(e.ctx, other); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("a check changed through another domain: %v", err)
	}
	if cs := e.trafficChecks("tern"); len(cs) != 1 || cs[0].Pinned {
		t.Errorf("tern's checks = %+v", cs)
	}
}

func testTrafficCheckConcurrentHarvest(t *testing.T, s Store) {
	e := setup(t, s)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			var found []trafficcheck.Check
			for i := range 10 {
				c := trafficCheck("tern", answercheck.OriginUpvote, fmt.Sprintf("question %d", i), e.t0.Add(time.Duration(i)*time.Minute))
				c.ID = fmt.Sprintf("w%d-%d", w, i)
				found = append(found, c)
			}
			if _, err := s.HarvestTrafficChecks(e.ctx, "tern", found, 5); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a concurrent harvest: %v", err)
	}
	want := []string{"question 9", "question 8", "question 7", "question 6", "question 5"}
	if got := questionsOf(e.trafficChecks("tern")); !reflect.DeepEqual(got, want) {
		t.Errorf("after concurrent harvests: %q", got)
	}
}
