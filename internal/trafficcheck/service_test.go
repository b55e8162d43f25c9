package trafficcheck_test

import (
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/trafficcheck"
)

// setup is a real SQLite store, a clock the test moves, and a service over
// them that harvests on every listing.
type setup struct {
	t     *testing.T
	store *sqlite.Store
	clock atomic.Int64
	svc   *trafficcheck.Service
	n     int
}

func newSetup(t *testing.T, every time.Duration) *setup {
	t.Helper()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	s := &setup{t: t, store: store}
	s.clock.Store(time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC).UnixNano())
	s.svc = trafficcheck.New(trafficcheck.Config{Store: store, Turns: store, Gaps: analytics.NewService(store), Now: s.now, HarvestEvery: every})
	return s
}

func (s *setup) now() time.Time { return time.Unix(0, s.clock.Load()).UTC() }

// ask stores a reader's question on domain tern, its answer's status and
// pages, and the reader's rating ("" for none).
func (s *setup) ask(question, status, rating string, pages ...string) string {
	s.t.Helper()
	ctx := s.t.Context()
	s.n++
	thread := fmt.Sprintf("thr_%d", s.n)
	at := s.now()
	if err := s.store.CreateThread(ctx, assistant.Thread{ID: thread, Domain: "tern", OrgID: "acme", FP: "reader", CreatedAt: at, UpdatedAt: at}); err != nil {
		s.t.Fatal(err)
	}
	var src []assistant.TurnSource
	for _, p := range pages {
		src = append(src, assistant.TurnSource{ID: "src_" + p, URL: "https://tern.example/" + p, Title: p, Path: p, Score: 0.8})
	}
	if _, err := s.store.AddTurn(ctx, assistant.Turn{ThreadID: thread, MessageID: thread + "_m1", FP: "reader", Question: question,
		Answer: "an answer", Sources: src, Model: "extractive", Status: status, CreatedAt: at}); err != nil {
		s.t.Fatal(err)
	}
	if rating != "" {
		if err := s.store.RateTurn(ctx, assistant.Feedback{ThreadID: thread, MessageID: thread + "_m1", Rating: rating, CreatedAt: at}); err != nil {
			s.t.Fatal(err)
		}
	}
	s.clock.Add(int64(time.Minute))
	return thread
}

func (s *setup) active() []answercheck.Check {
	s.t.Helper()
	cs, err := s.svc.ActiveChecks(s.t.Context(), "tern")
	if err != nil {
		s.t.Fatal(err)
	}
	return cs
}

func TestHarvestFromTraffic(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 0)
	s.ask("how do I restore a SNAPSHOT", assistant.TurnAnswered, analytics.RatingUp, "guides/other") // the same question, asked earlier
	upThread := s.ask("How do I restore a snapshot?", assistant.TurnAnswered, analytics.RatingUp, "/guides/backups.mdx", "guides/backups", "reference/cli")
	s.ask("Where is the changelog?", assistant.TurnAnswered, analytics.RatingDown, "changelog")
	s.ask("What is docsmith?", assistant.TurnAnswered, "", "intro")
	s.ask("Can I deploy with a Helm chart?", assistant.TurnNotCovered, "")
	gapThread := s.ask("How do I deploy on Kubernetes with Helm?", assistant.TurnNotCovered, "")
	s.ask("Is the Helm chart signed?", assistant.TurnAnswered, analytics.RatingUp) // rated up, but cites nothing

	got := s.active()
	want := []answercheck.Check{
		{Name: "reader-how-do-i-restore-a-snapshot", Question: "How do I restore a snapshot?", Cite: []string{"guides/backups", "reference/cli"}, Origin: answercheck.OriginUpvote},
		{Name: "gap-how-do-i-deploy-on-kubernetes-with-helm", Question: "How do I deploy on Kubernetes with Helm?", Answered: true, Origin: answercheck.OriginGap},
	}
	// Newest asked first: the gap's question came later.
	want[0], want[1] = want[1], want[0]
	for i := range got {
		if got[i].ID == "" {
			t.Errorf("check %d has no id", i)
		}
		got[i].ID = ""
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("checks\n got  %+v\n want %+v", got, want)
	}
	listed, err := s.svc.List(t.Context(), "tern")
	if err != nil {
		t.Fatal(err)
	}
	threads := map[string]string{}
	for _, c := range listed {
		threads[c.Origin] = c.ThreadID
	}
	if threads[answercheck.OriginUpvote] != upThread || threads[answercheck.OriginGap] != gapThread {
		t.Errorf("source threads = %v, want upvote %s, gap %s", threads, upThread, gapThread)
	}

	// Harvesting the same traffic again changes nothing.
	before, _ := s.store.TrafficChecks(t.Context(), "tern", 100)
	if n, err := s.svc.Harvest(t.Context(), "tern"); err != nil || n != 0 {
		t.Errorf("a second harvest added %d, %v", n, err)
	}
	after, _ := s.store.TrafficChecks(t.Context(), "tern", 100)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("a second harvest changed the checks\n before %+v\n after  %+v", before, after)
	}
}

func TestDroppedIsNeverAskedNorHarvestedAgain(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 0)
	s.ask("Can I deploy with a Helm chart?", assistant.TurnNotCovered, "")
	cs := s.active()
	if len(cs) != 1 {
		t.Fatalf("checks = %+v", cs)
	}
	if _, err := s.svc.Drop(t.Context(), "tern", cs[0].ID, true); err != nil {
		t.Fatal(err)
	}
	// Asked again, in other words and case: still dropped.
	s.ask("can I deploy with a HELM chart", assistant.TurnNotCovered, "")
	if cs := s.active(); len(cs) != 0 {
		t.Errorf("a dropped check is asked: %+v", cs)
	}
	listed, _ := s.svc.List(t.Context(), "tern")
	if len(listed) != 1 || !listed[0].Dropped {
		t.Errorf("listed = %+v", listed)
	}
	// Taken back, it is asked again.
	if _, err := s.svc.Drop(t.Context(), "tern", cs[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if cs := s.active(); len(cs) != 1 {
		t.Errorf("a check taken back is not asked: %+v", cs)
	}
}

func TestEditPinAndKeep(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 0)
	s.ask("Can I deploy with a Helm chart?", assistant.TurnNotCovered, "")
	id := s.active()[0].ID
	c, err := s.svc.Edit(t.Context(), "tern", id, trafficcheck.Edit{
		Question: "  How do I deploy  with Helm? ", Cite: []string{"/deploy/helm.mdx", "", "deploy/helm"}, Contains: []string{" helm install ", "values.yaml"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := answercheck.Check{ID: id, Name: "gap-how-do-i-deploy-with-helm", Question: "How do I deploy with Helm?", Cite: []string{"deploy/helm"},
		Contains: []string{"helm install", "values.yaml"}, Answered: true, Origin: answercheck.OriginGap}
	if got := s.active(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("after the edit\n got  %+v\n want %+v", got, want)
	}
	if !c.Edited {
		t.Error("an edited check is not marked so")
	}
	// Expecting "not covered" drops the expectation of an answer.
	c, err = s.svc.Edit(t.Context(), "tern", id, trafficcheck.Edit{Question: "How do I deploy with Helm?", NotCovered: true})
	if err != nil || c.Answered || !c.NotCovered {
		t.Errorf("not covered: %+v, %v", c, err)
	}
	if c, err = s.svc.Pin(t.Context(), "tern", id, true); err != nil || !c.Pinned {
		t.Errorf("pin: %+v, %v", c, err)
	}

	// Another domain's check is not found.
	if _, err := s.svc.Pin(t.Context(), "heron", id, true); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("pin through another domain: %v", err)
	}
}

func TestEditRefusesWhatACheckCannotHold(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", trafficcheck.MaxQuestionRunes+1)
	many := make([]string, trafficcheck.MaxCite+1)
	for i := range many {
		many[i] = fmt.Sprintf("page-%d", i)
	}
	for _, c := range []struct {
		name string
		edit trafficcheck.Edit
		says string
	}{
		{"empty question", trafficcheck.Edit{Question: "  "}, "the question is empty"},
		{"long question", trafficcheck.Edit{Question: long}, "shorten it to at most 500"},
		{"too many pages", trafficcheck.Edit{Question: "q", Cite: many}, "cite has 11 entries; keep at most 10"},
		{"not covered with a page", trafficcheck.Edit{Question: "q", Cite: []string{"a"}, NotCovered: true}, "clear cite and contains"},
		{"control character", trafficcheck.Edit{Question: "q", Contains: []string{"a\x00b"}}, "control character"},
		{"long word", trafficcheck.Edit{Question: "q", Contains: []string{strings.Repeat("w", 201)}}, "contains:"},
	} {
		_, err := trafficcheck.CheckEdit(c.edit)
		if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.says)
		}
	}
}

func TestHarvestKeepsTheNewest(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 0)
	for i := range trafficcheck.KeepHarvested + 5 {
		s.ask(fmt.Sprintf("How do I configure option %d?", i), assistant.TurnAnswered, analytics.RatingUp, fmt.Sprintf("options/o%d", i))
		if i%trafficcheck.PerHarvest == 0 {
			s.active() // a run in between
		}
	}
	cs := s.active()
	if len(cs) != trafficcheck.KeepHarvested {
		t.Fatalf("%d checks, want %d", len(cs), trafficcheck.KeepHarvested)
	}
	if newest := fmt.Sprintf("How do I configure option %d?", trafficcheck.KeepHarvested+4); cs[0].Question != newest {
		t.Errorf("first check %q, want %q", cs[0].Question, newest)
	}
}

func TestHarvestEvery(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 10*time.Minute)
	s.ask("Can I deploy with a Helm chart?", assistant.TurnNotCovered, "")
	if cs := s.active(); len(cs) != 1 {
		t.Fatalf("first harvest: %+v", cs)
	}
	s.ask("Where are the logs kept?", assistant.TurnNotCovered, "")
	if cs := s.active(); len(cs) != 1 {
		t.Errorf("harvested again within HarvestEvery: %+v", cs)
	}
	s.clock.Add(int64(10 * time.Minute))
	if cs := s.active(); len(cs) != 2 {
		t.Errorf("not harvested after HarvestEvery: %+v", cs)
	}
}

func TestUniqueNames(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 0)
	// Two long questions whose names, cut to length, are the same.
	s.ask("How do I configure the retention period of the snapshot store for the archive tier?", assistant.TurnAnswered, analytics.RatingUp, "config")
	s.ask("How do I configure the retention period of the snapshot store for the hot tier?", assistant.TurnAnswered, analytics.RatingUp, "config")
	cs := s.active()
	if len(cs) != 2 {
		t.Fatalf("checks = %+v", cs)
	}
	if cs[0].Name == cs[1].Name || cs[1].Name != cs[0].Name+"-2" {
		t.Errorf("names %q and %q", cs[0].Name, cs[1].Name)
	}
}
