package storetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

func analyticsCases() []testCase {
	return []testCase{
		{"Analytics/ConversationFilters", testConversationFilters},
		{"Analytics/ConversationPages", testConversationPages},
		{"Analytics/DomainTurns", testDomainTurns},
		{"Analytics/InsightsAndGaps", testInsightsAndGaps},
		{"Analytics/GapJobs", testGapJobs},
		{"Analytics/GapLifecycles", testGapLifecycles},
		{"Analytics/DomainSpend", testDomainSpend},
		{"Analytics/PageFeedback", testPageFeedback},
	}
}

// convo adds a thread of domain started at at, with one turn per question;
// status and rating apply to the turn of the same index ("" for none).
type convo struct {
	id, domain string
	at         time.Time
	questions  []string
	statuses   []string
	ratings    []string
	pages      [][]string
}

func addConvo(t *testing.T, s Store, c convo) {
	t.Helper()
	ctx := t.Context()
	must(t, s.CreateThread(ctx, assistant.Thread{ID: c.id, Domain: c.domain, OrgID: "acme", FP: "anonymous", CreatedAt: c.at, UpdatedAt: c.at}), "CreateThread "+c.id)
	for i, q := range c.questions {
		status := assistant.TurnAnswered
		if i < len(c.statuses) && c.statuses[i] != "" {
			status = c.statuses[i]
		}
		var srcs []assistant.TurnSource
		if i < len(c.pages) {
			for j, p := range c.pages[i] {
				srcs = append(srcs, assistant.TurnSource{ID: fmt.Sprintf("src_%d", j+1), URL: "https://docs.example/" + p, Title: p, Path: p, Score: 0.9 - 0.1*float64(j)})
			}
		}
		at := c.at.Add(time.Duration(i) * time.Second)
		msgID := fmt.Sprintf("%s_msg_%d", c.id, i+1)
		var note string
		var missing []string
		if status == assistant.TurnPartial {
			note, missing = "The docs don't mention Datadog.", []string{"Datadog"}
		}
		_, err := s.AddTurn(ctx, assistant.Turn{
			ThreadID: c.id, MessageID: msgID, FP: "anonymous", Question: q, Answer: "answer to " + q,
			Sources: srcs, Model: "extractive", Status: status, StatusNote: note, Missing: missing, CreatedAt: at,
		})
		must(t, err, "AddTurn "+c.id)
		if i < len(c.ratings) && c.ratings[i] != "" {
			must(t, s.RateTurn(ctx, assistant.Feedback{ThreadID: c.id, MessageID: msgID, Rating: c.ratings[i], Comment: "comment on " + q, CreatedAt: at.Add(time.Minute)}), "RateTurn")
		}
	}
}

func threadIDs(ts []assistant.Thread) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func testConversationFilters(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	nc := assistant.TurnNotCovered
	for _, c := range []convo{
		{id: "thr_a", domain: "docs", at: t0, questions: []string{"a1", "a2"}, ratings: []string{"up", "down"}},
		{id: "thr_b", domain: "docs", at: t0.Add(time.Hour), questions: []string{"b1"}, statuses: []string{nc}},
		{id: "thr_e", domain: "docs", at: t0.Add(30 * time.Minute), questions: []string{"e1", "e2"}, statuses: []string{"", assistant.TurnPartial}},
		{id: "thr_c", domain: "docs", at: t0.Add(2 * time.Hour), questions: []string{"c1", "c2"}, statuses: []string{"", nc}, ratings: []string{"up"}},
		{id: "thr_d", domain: "docs", at: t0.Add(3 * time.Hour), questions: []string{"d1"}},
		{id: "thr_x", domain: "other", at: t0.Add(time.Hour), questions: []string{"x1"}, statuses: []string{nc}, ratings: []string{"down"}},
	} {
		addConvo(t, s, c)
	}
	cases := []struct {
		name string
		q    analytics.ThreadQuery
		want []string
	}{
		{"all", analytics.ThreadQuery{}, []string{"thr_d", "thr_c", "thr_b", "thr_e", "thr_a"}},
		{"not covered", analytics.ThreadQuery{Status: analytics.StatusNotCovered}, []string{"thr_c", "thr_b"}},
		{"partial", analytics.ThreadQuery{Status: analytics.StatusPartial}, []string{"thr_e"}},
		{"answered", analytics.ThreadQuery{Status: analytics.StatusAnswered}, []string{"thr_d", "thr_a"}},
		{"down", analytics.ThreadQuery{Feedback: analytics.RatingDown}, []string{"thr_a"}},
		{"up without down", analytics.ThreadQuery{Feedback: analytics.RatingUp}, []string{"thr_c"}},
		{"no feedback", analytics.ThreadQuery{Feedback: analytics.FeedbackNone}, []string{"thr_d", "thr_b", "thr_e"}},
		{"not covered and up", analytics.ThreadQuery{Status: analytics.StatusNotCovered, Feedback: analytics.RatingUp}, []string{"thr_c"}},
		{"from", analytics.ThreadQuery{From: t0.Add(time.Hour)}, []string{"thr_d", "thr_c", "thr_b"}},
		{"to is exclusive", analytics.ThreadQuery{To: t0.Add(2 * time.Hour)}, []string{"thr_b", "thr_e", "thr_a"}},
		{"from and to", analytics.ThreadQuery{From: t0.Add(time.Hour), To: t0.Add(3 * time.Hour)}, []string{"thr_c", "thr_b"}},
	}
	for _, c := range cases {
		c.q.Domain, c.q.Limit = "docs", 10
		got, err := s.ListThreads(ctx, c.q)
		must(t, err, "ListThreads "+c.name)
		if ids := threadIDs(got); !reflect.DeepEqual(ids, c.want) {
			t.Errorf("%s: threads %v, want %v", c.name, ids, c.want)
		}
	}
	got, err := s.ListThreads(ctx, analytics.ThreadQuery{Domain: "nope", Limit: 10})
	must(t, err, "ListThreads unknown domain")
	if len(got) != 0 {
		t.Errorf("unknown domain: %v", threadIDs(got))
	}

	partial, err := s.ThreadTurns(ctx, []string{"thr_e"})
	must(t, err, "ThreadTurns of a partial answer")
	if len(partial) != 2 || partial[1].Status != assistant.TurnPartial || partial[1].Note != "The docs don't mention Datadog." ||
		!reflect.DeepEqual(partial[1].Missing, []string{"Datadog"}) || len(partial[0].Missing) != 0 {
		t.Errorf("turns of a partial answer = %+v", partial)
	}

	turns, err := s.ThreadTurns(ctx, []string{"thr_c", "thr_a"})
	must(t, err, "ThreadTurns")
	var keys []string
	for _, tr := range turns {
		keys = append(keys, fmt.Sprintf("%s/%d/%s/%s", tr.ThreadID, tr.Seq, tr.Status, tr.Rating))
	}
	want := []string{"thr_a/1/answered/up", "thr_a/2/answered/down", "thr_c/1/answered/up", "thr_c/2/not_covered/"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("ThreadTurns = %v, want %v", keys, want)
	}
	if turns[0].Comment != "comment on a1" || turns[0].FeedbackAt == nil {
		t.Errorf("feedback of thr_a/1 = %q at %v", turns[0].Comment, turns[0].FeedbackAt)
	} else {
		sameTime(t, "feedback", *turns[0].FeedbackAt, t0.Add(time.Minute))
	}
	if turns[3].FeedbackAt != nil {
		t.Errorf("unrated turn has feedback time %v", turns[3].FeedbackAt)
	}
	none, err := s.ThreadTurns(ctx, nil)
	must(t, err, "ThreadTurns of none")
	if len(none) != 0 {
		t.Errorf("ThreadTurns of none = %v", none)
	}

	// A second rating replaces the first.
	must(t, s.RateTurn(ctx, assistant.Feedback{ThreadID: "thr_a", MessageID: "thr_a_msg_2", Rating: analytics.RatingUp, Comment: "", CreatedAt: t0.Add(time.Hour)}), "RateTurn again")
	got, err = s.ListThreads(ctx, analytics.ThreadQuery{Domain: "docs", Feedback: analytics.RatingUp, Limit: 10})
	must(t, err, "ListThreads up")
	if ids := threadIDs(got); !reflect.DeepEqual(ids, []string{"thr_c", "thr_a"}) {
		t.Errorf("up after re-rating: %v", ids)
	}
}

func testConversationPages(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	var want []string
	for i := range 7 {
		id := fmt.Sprintf("thr_%02d", i)
		// Two threads share each start time: the id breaks the tie.
		addConvo(t, s, convo{id: id, domain: "docs", at: t0.Add(time.Duration(i/2) * time.Minute), questions: []string{"q"}})
		want = append([]string{id}, want...)
	}
	// Ties: newer first by time, then by id descending.
	var got []string
	var after *analytics.Cursor
	for range 10 {
		page, err := s.ListThreads(ctx, analytics.ThreadQuery{Domain: "docs", Limit: 3, After: after})
		must(t, err, "ListThreads page")
		got = append(got, threadIDs(page)...)
		if len(page) < 3 {
			break
		}
		last := page[len(page)-1]
		after = &analytics.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
}

func testDomainTurns(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	addConvo(t, s, convo{id: "thr_a", domain: "docs", at: t0, questions: []string{"a1", "a2", "a3"}, ratings: []string{"", "down"}, pages: [][]string{{"x", "y"}}})
	addConvo(t, s, convo{id: "thr_b", domain: "docs", at: t0.Add(time.Millisecond), questions: []string{"b1"}})
	addConvo(t, s, convo{id: "thr_o", domain: "other", at: t0, questions: []string{"o1"}})
	key := func(ts []analytics.TurnRecord) []string {
		out := []string{}
		for _, tr := range ts {
			out = append(out, tr.Question)
		}
		return out
	}
	cases := []struct {
		name     string
		from, to time.Time
		limit    int
		want     []string
	}{
		{"all", time.Time{}, time.Time{}, 100, []string{"a1", "b1", "a2", "a3"}},
		{"newest two", time.Time{}, time.Time{}, 2, []string{"a2", "a3"}},
		{"from", t0.Add(time.Second), time.Time{}, 100, []string{"a2", "a3"}},
		{"to", time.Time{}, t0.Add(time.Second), 100, []string{"a1", "b1"}},
	}
	for _, c := range cases {
		got, err := s.DomainTurns(ctx, "docs", c.from, c.to, c.limit)
		must(t, err, "DomainTurns "+c.name)
		if k := key(got); !reflect.DeepEqual(k, c.want) {
			t.Errorf("%s: %v, want %v", c.name, k, c.want)
		}
	}
	got, err := s.DomainTurns(ctx, "docs", time.Time{}, time.Time{}, 1)
	must(t, err, "DomainTurns")
	if len(got) != 1 || got[0].Question != "a3" {
		t.Fatalf("newest turn = %+v", got)
	}
	all, err := s.DomainTurns(ctx, "docs", time.Time{}, time.Time{}, 100)
	must(t, err, "DomainTurns")
	first := all[0]
	if len(first.Sources) != 2 || first.TopPage() != "x" || first.TopScore() != 0.9 {
		t.Errorf("sources of a1 = %+v", first.Sources)
	}
	if all[2].Rating != analytics.RatingDown || all[2].MessageID != "thr_a_msg_2" {
		t.Errorf("a2 = %+v", all[2])
	}
}

// testInsightsAndGaps runs the analytics service over the store: the
// figures must come out the same on every store.
func testInsightsAndGaps(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 3, 10, 23, 0, 0, 0, time.UTC)
	nc := assistant.TurnNotCovered
	for _, c := range []convo{
		{id: "thr_1", domain: "docs", at: t0, questions: []string{"How do I rotate webhook secrets?"}, statuses: []string{nc}},
		{id: "thr_2", domain: "docs", at: t0.Add(2 * time.Hour), questions: []string{"Rotating the secret of a webhook", "How do I log in?"}, statuses: []string{nc}, pages: [][]string{nil, {"auth/login"}}, ratings: []string{"", "up"}},
		{id: "thr_3", domain: "docs", at: t0.Add(3 * time.Hour), questions: []string{"how do i log in"}, pages: [][]string{{"auth/login", "auth/sso"}}, ratings: []string{"down"}},
		{id: "thr_4", domain: "docs", at: t0.Add(4 * time.Hour), questions: []string{"Is there a Terraform provider?"}, statuses: []string{nc}},
		{id: "thr_5", domain: "docs", at: t0.Add(5 * time.Hour), questions: []string{"Can I send audit events to Datadog?"}, statuses: []string{assistant.TurnPartial}, pages: [][]string{{"audit"}}},
		{id: "thr_o", domain: "other", at: t0, questions: []string{"webhook secrets rotation"}, statuses: []string{nc}},
	} {
		addConvo(t, s, c)
	}
	svc := analytics.NewService(s)
	in, err := svc.Insights(ctx, "docs", analytics.Range{})
	must(t, err, "Insights")
	wantIn := analytics.Insights{
		Questions: 6, Answered: 2, Partial: 1, NotCovered: 3, NotCoveredShare: 0.5, FeedbackUp: 1, FeedbackDown: 1,
		PerDay:   []analytics.DayCount{{Day: "2026-03-10", Questions: 1, NotCovered: 1}, {Day: "2026-03-11", Questions: 5, Partial: 1, NotCovered: 2}},
		TopPages: []analytics.Count{{Value: "auth/login", Count: 2}, {Value: "audit", Count: 1}, {Value: "auth/sso", Count: 1}},
		TopQuestions: []analytics.Count{
			{Value: "How do I log in?", Count: 2}, {Value: "Can I send audit events to Datadog?", Count: 1}, {Value: "How do I rotate webhook secrets?", Count: 1},
			{Value: "Is there a Terraform provider?", Count: 1}, {Value: "Rotating the secret of a webhook", Count: 1},
		},
	}
	if !reflect.DeepEqual(in, wantIn) {
		t.Errorf("Insights =\n%+v\nwant\n%+v", in, wantIn)
	}

	gaps, err := svc.Gaps(ctx, "docs", analytics.Range{})
	must(t, err, "Gaps")
	var got []string
	for _, g := range gaps {
		got = append(got, fmt.Sprintf("%s n=%d nc=%d partial=%d down=%d top=%s", g.Key, g.Count, g.NotCovered, g.Partial, g.Downvoted, g.TopPage))
	}
	want := []string{
		"rotate+secret+webhook n=2 nc=2 partial=0 down=0 top=",
		"audit+datadog+event n=1 nc=0 partial=1 down=0 top=audit", // asked last
		"provider+terraform n=1 nc=1 partial=0 down=0 top=",
		"log n=1 nc=0 partial=0 down=1 top=auth/login",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Gaps =\n%v\nwant\n%v", got, want)
	}

	fb, err := svc.Feedback(ctx, "docs", analytics.FeedbackFilter{Range: analytics.Range{From: t0.Add(time.Hour)}})
	must(t, err, "Feedback")
	if len(fb) != 2 || fb[0].ThreadID != "thr_3" || fb[0].Rating != "down" || fb[1].ThreadID != "thr_2" || fb[1].Seq != 2 {
		t.Errorf("Feedback = %+v", fb)
	}
}

func testGapJobs(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	links := []analytics.GapJob{
		{Domain: "docs", GapKey: "secret+webhook", ProjectID: "p", JobID: "job_2", CreatedAt: t0.Add(time.Second)},
		{Domain: "docs", GapKey: "log", ProjectID: "p", JobID: "job_1", CreatedAt: t0},
		{Domain: "other", GapKey: "log", ProjectID: "q", JobID: "job_3", CreatedAt: t0},
	}
	for _, l := range links {
		must(t, s.LinkGapJob(ctx, l), "LinkGapJob")
	}
	wantCode(t, s.LinkGapJob(ctx, links[0]), apperr.Conflict, "LinkGapJob twice")
	got, err := s.GapJobs(ctx, "docs")
	must(t, err, "GapJobs")
	if len(got) != 2 || got[0].JobID != "job_1" || got[1].JobID != "job_2" || got[1].GapKey != "secret+webhook" || got[1].ProjectID != "p" {
		t.Fatalf("GapJobs = %+v", got)
	}
	sameTime(t, "gap job", got[0].CreatedAt, t0)
}

// testDomainSpend checks that a domain's spend counts the turns of its
// threads since the given time that went to a paid model, with their
// tokens, and nothing else.
func testDomainSpend(t *testing.T, s Store) {
	ctx := t.Context()
	day := baseTime().Truncate(24 * time.Hour)
	must(t, s.CreateThread(ctx, assistant.Thread{ID: "th_old", Domain: "tern", OrgID: "acme", FP: "anonymous", CreatedAt: day.Add(-time.Hour), UpdatedAt: day.Add(-time.Hour)}), "CreateThread")
	must(t, s.CreateThread(ctx, assistant.Thread{ID: "th_other", Domain: "other", OrgID: "acme", FP: "anonymous", CreatedAt: day, UpdatedAt: day}), "CreateThread")
	turns := []struct {
		thread, model, status string
		at                    time.Time
		in, out               int
	}{
		{"th_old", "openai/gpt-4o-mini", assistant.TurnAnswered, day.Add(-time.Minute), 1000, 100}, // yesterday
		{"th_old", "openai/gpt-4o-mini", assistant.TurnAnswered, day.Add(time.Minute), 2000, 200},  // today, thread from yesterday
		{"th_old", "openai/gpt-4o-mini", assistant.TurnFailed, day.Add(2 * time.Minute), 300, 0},
		{"th_old", "openai/gpt-4o-mini", assistant.TurnNotCovered, day.Add(3 * time.Minute), 0, 0},
		{"th_old", "extractive", assistant.TurnAnswered, day.Add(4 * time.Minute), 0, 0},
		{"th_other", "openai/gpt-4o-mini", assistant.TurnAnswered, day.Add(5 * time.Minute), 5000, 500},
	}
	for i, tt := range turns {
		_, err := s.AddTurn(ctx, assistant.Turn{ThreadID: tt.thread, MessageID: fmt.Sprintf("msg_%d", i), FP: "anonymous", Question: "q", Answer: "a",
			Model: tt.model, Status: tt.status, InputTokens: tt.in, OutputTokens: tt.out, CreatedAt: tt.at})
		must(t, err, "AddTurn")
	}
	got, err := s.DomainSpend(ctx, "tern", day, []string{"", "extractive", "builtin"})
	must(t, err, "DomainSpend")
	if want := (assistant.Spend{Answers: 2, InputTokens: 2300, OutputTokens: 200}); got != want {
		t.Fatalf("DomainSpend(tern) = %+v, want %+v", got, want)
	}
	got, err = s.DomainSpend(ctx, "nobody", day, []string{"extractive"})
	must(t, err, "DomainSpend")
	if got != (assistant.Spend{}) {
		t.Fatalf("DomainSpend(nobody) = %+v, want nothing", got)
	}
}

// testPageFeedback checks that agents' feedback on pages is kept per
// domain, read back newest first within a range, and listed beside the
// readers' ratings of answers with its source.
func testPageFeedback(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	for i, f := range []assistant.PageFeedback{
		{Domain: "docs", OrgID: "acme", Path: "guides/setup", Rating: assistant.RatingUp, Source: assistant.FeedbackFromMCP, CreatedAt: t0},
		{Domain: "docs", OrgID: "acme", Path: "api/tokens", Rating: assistant.RatingDown, Comment: "no example of rotating a token", Source: assistant.FeedbackFromMCP, CreatedAt: t0.Add(time.Hour)},
		{Domain: "other", OrgID: "globex", Path: "guides/setup", Rating: assistant.RatingDown, Source: assistant.FeedbackFromMCP, CreatedAt: t0.Add(time.Hour)},
		{Domain: "docs", OrgID: "acme", Path: "guides/late", Rating: assistant.RatingUp, Source: assistant.FeedbackFromMCP, CreatedAt: t0.Add(3 * time.Hour)},
	} {
		must(t, s.AddPageFeedback(ctx, f), fmt.Sprintf("AddPageFeedback %d", i))
	}
	got, err := s.DomainPageFeedback(ctx, "docs", t0, t0.Add(2*time.Hour), 10)
	must(t, err, "DomainPageFeedback")
	if len(got) != 2 || got[0].Path != "api/tokens" || got[0].Comment != "no example of rotating a token" || got[0].Rating != "down" ||
		got[0].Source != "mcp" || got[0].OrgID != "acme" || got[1].Path != "guides/setup" {
		t.Fatalf("DomainPageFeedback = %+v", got)
	}
	sameTime(t, "page feedback", got[0].CreatedAt, t0.Add(time.Hour))
	if got, err := s.DomainPageFeedback(ctx, "docs", time.Time{}, time.Time{}, 1); err != nil || len(got) != 1 || got[0].Path != "guides/late" {
		t.Errorf("DomainPageFeedback limit 1 = %+v, %v", got, err)
	}

	addConvo(t, s, convo{id: "thr_pf", domain: "docs", at: t0.Add(30 * time.Minute), questions: []string{"How do I set up?"},
		statuses: []string{assistant.TurnAnswered}, ratings: []string{analytics.RatingUp}, pages: [][]string{{"guides/setup"}}})
	svc := analytics.NewService(s)
	rng := analytics.Range{From: t0, To: t0.Add(2 * time.Hour)}
	fb, err := svc.Feedback(ctx, "docs", analytics.FeedbackFilter{Range: rng})
	must(t, err, "Feedback")
	var rows []string
	for _, it := range fb {
		rows = append(rows, fmt.Sprintf("%s %s %s %v", it.Source, it.ThreadID, it.Rating, it.Pages))
	}
	want := []string{"mcp  down [api/tokens]", "assistant thr_pf up [guides/setup]", "mcp  up [guides/setup]"}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("Feedback =\n%q\nwant\n%q", rows, want)
	}
	for _, c := range []struct {
		f    analytics.FeedbackFilter
		want int
	}{
		{analytics.FeedbackFilter{Range: rng, Source: analytics.SourceMCP}, 2},
		{analytics.FeedbackFilter{Range: rng, Source: analytics.SourceAssistant}, 1},
		{analytics.FeedbackFilter{Range: rng, Rating: analytics.RatingDown}, 1},
		{analytics.FeedbackFilter{Range: rng, Status: analytics.StatusAnswered}, 1},
	} {
		if fb, err := svc.Feedback(ctx, "docs", c.f); err != nil || len(fb) != c.want {
			t.Errorf("Feedback(%+v) = %d items, %v; want %d", c.f, len(fb), err, c.want)
		}
	}
	if _, err := svc.Feedback(ctx, "docs", analytics.FeedbackFilter{Source: "email"}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("an unknown source: %v", err)
	}
}
