package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// newAnalyticsServer is a real Server over SQLite: acme's domain "tern"
// has three conversations, globex's "globex-site" one.
func newAnalyticsServer(t *testing.T) (s *assistantServer, t0 time.Time) {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	tenants := tenant.NewService(store, now)
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	s = &assistantServer{t: t, store: store}
	key := func(org string, kind apikey.Kind) string {
		_, secret, err := tenants.CreateKey(ctx, org, kind, "test")
		check(err)
		return secret
	}
	for _, org := range []string{"acme", "globex"} {
		_, err := tenants.CreateOrg(ctx, org)
		check(err)
		_, err = tenants.CreateProject(ctx, tenant.Project{ID: org + "-docs", OrgID: org, RepoURL: "docs"})
		check(err)
	}
	_, err = tenants.CreateDomain(ctx, tenant.Domain{ID: "tern", OrgID: "acme", ProjectID: "acme-docs"})
	check(err)
	_, err = tenants.CreateDomain(ctx, tenant.Domain{ID: "globex-site", OrgID: "globex", ProjectID: "globex-docs"})
	check(err)
	s.assistant, s.admin = key("acme", apikey.Assistant), key("acme", apikey.Admin)
	s.globex, s.globexAdm = key("globex", apikey.Assistant), key("globex", apikey.Admin)

	t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	turn := func(thread, domain, q, status string, at time.Time, rating string) {
		if _, err := store.GetThread(ctx, thread); err != nil {
			check(store.CreateThread(ctx, assistant.Thread{ID: thread, Domain: domain, OrgID: "acme", FP: "anonymous", CreatedAt: at, UpdatedAt: at}))
		}
		var src []assistant.TurnSource
		if status == assistant.TurnAnswered {
			src = []assistant.TurnSource{{ID: "src_1", URL: "https://tern.example/docs/sync", Title: "Sync", Path: "sync", Score: 0.8}}
		}
		seq, err := store.AddTurn(ctx, assistant.Turn{ThreadID: thread, MessageID: thread + q[:3], FP: "anonymous", Question: q, Answer: "a",
			Sources: src, Model: "extractive", Status: status, CreatedAt: at})
		check(err)
		if rating != "" {
			check(store.RateTurn(ctx, assistant.Feedback{ThreadID: thread, MessageID: thread + q[:3], Rating: rating, Comment: "not what I needed", CreatedAt: at.Add(time.Minute)}))
		}
		_ = seq
	}
	turn("thr_1", "tern", "How do I exclude files from a sync?", assistant.TurnAnswered, t0, analytics.RatingUp)
	turn("thr_2", "tern", "Does tern support webhooks?", assistant.TurnNotCovered, t0.Add(24*time.Hour), "")
	turn("thr_2", "tern", "Webhook retries?", assistant.TurnNotCovered, t0.Add(24*time.Hour+time.Minute), analytics.RatingDown)
	turn("thr_3", "tern", "How do I sync a folder?", assistant.TurnAnswered, t0.Add(48*time.Hour), "")
	turn("thr_g", "globex-site", "Secret globex question", assistant.TurnNotCovered, t0, "")

	check(store.AddPageFeedback(ctx, assistant.PageFeedback{Domain: "tern", OrgID: "acme", Path: "guides/schedules", Rating: analytics.RatingDown,
		Comment: "no example of a weekly schedule", Source: assistant.FeedbackFromMCP, CreatedAt: t0.Add(36 * time.Hour)}))
	check(store.AddPageFeedback(ctx, assistant.PageFeedback{Domain: "globex-site", OrgID: "globex", Path: "guides/schedules", Rating: analytics.RatingDown,
		Source: assistant.FeedbackFromMCP, CreatedAt: t0.Add(36 * time.Hour)}))

	srv := New(Deps{
		Tenants:   tenants,
		Jobs:      agentjob.NewService(store, agentjob.NewHub(), now),
		Analytics: analytics.NewService(store),
		Log:       slog.New(slog.DiscardHandler),
		Ready:     store.Ping,
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s, t0
}

func TestAnalyticsAuthAndErrors(t *testing.T) {
	t.Parallel()
	s, _ := newAnalyticsServer(t)
	cases := []struct {
		name, path, key string
		status          int
		message         string
	}{
		{"no key", "/v2/analytics/tern/insights", "", 401, "Authorization header is missing"},
		{"assistant key", "/v2/analytics/tern/insights", s.assistant, 403, "admin key"},
		{"another organization's domain", "/v2/analytics/tern/conversations", s.globexAdm, 404, `domain "tern" not found`},
		{"unknown domain", "/v2/analytics/nope/gaps", s.admin, 404, `domain "nope" not found`},
		{"another domain's thread", "/v2/analytics/tern/conversations/thr_g", s.admin, 404, `conversation "thr_g" not found`},
		{"bad from", "/v2/analytics/tern/insights?from=yesterday", s.admin, 400, "from \"yesterday\" must be a date"},
		{"to before from", "/v2/analytics/tern/gaps?from=2026-03-02&to=2026-03-01", s.admin, 400, "must be after from"},
		{"bad limit", "/v2/analytics/tern/conversations?limit=0", s.admin, 400, "limit must be"},
		{"bad cursor", "/v2/analytics/tern/feedback?cursor=zz", s.admin, 400, "cursor"},
		{"bad status", "/v2/analytics/tern/conversations?status=maybe", s.admin, 400, "status \"maybe\""},
		{"bad rating", "/v2/analytics/tern/feedback?rating=meh", s.admin, 400, "rating \"meh\""},
		{"bad source", "/v2/analytics/tern/feedback?source=email", s.admin, 400, "source \"email\" must be assistant"},
		{"POST", "/v2/analytics/tern/insights", s.admin, 405, "GET"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			method := "GET"
			if c.name == "POST" {
				method = "POST"
			}
			r := s.do(method, c.path, c.key, "")
			if r.status != c.status || !strings.Contains(r.errorMessage(t), c.message) {
				t.Errorf("%s %s: %d %s, want %d with %q", method, c.path, r.status, r.body, c.status, c.message)
			}
		})
	}
}

func getJSON[T any](t *testing.T, s *assistantServer, path string) T {
	t.Helper()
	r := s.do("GET", path, s.admin, "")
	if r.status != 200 {
		t.Fatalf("GET %s: %d %s", path, r.status, r.body)
	}
	var v T
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return v
}

func TestAnalyticsEndpoints(t *testing.T) {
	t.Parallel()
	s, _ := newAnalyticsServer(t)

	type convList struct {
		Conversations []analytics.Conversation
		NextCursor    *string
	}
	all := getJSON[convList](t, s, "/v2/analytics/tern/conversations")
	var ids []string
	for _, c := range all.Conversations {
		ids = append(ids, c.ThreadID+":"+c.Status+":"+c.Feedback)
	}
	if got := strings.Join(ids, " "); got != "thr_3:answered: thr_2:not_covered:down thr_1:answered:up" || all.NextCursor != nil {
		t.Errorf("conversations = %s (next %v)", got, all.NextCursor)
	}
	if c := all.Conversations[2]; c.FirstQuestion != "How do I exclude files from a sync?" || len(c.Pages) != 1 || c.Pages[0] != "sync" {
		t.Errorf("thr_1 = %+v", c)
	}
	// Pages of one, through the cursor.
	var paged []string
	next := ""
	for range 5 {
		p := getJSON[convList](t, s, "/v2/analytics/tern/conversations?limit=1&cursor="+next)
		for _, c := range p.Conversations {
			paged = append(paged, c.ThreadID)
		}
		if p.NextCursor == nil {
			break
		}
		next = *p.NextCursor
	}
	if strings.Join(paged, " ") != "thr_3 thr_2 thr_1" {
		t.Errorf("paged = %v", paged)
	}
	for q, want := range map[string]string{
		"status=not_covered":            "thr_2",
		"feedback=up":                   "thr_1",
		"feedback=none":                 "thr_3",
		"from=2026-03-02&to=2026-03-02": "thr_2",
		"to=2026-03-01T10:00:00Z":       "",
	} {
		p := getJSON[convList](t, s, "/v2/analytics/tern/conversations?"+q)
		var got []string
		for _, c := range p.Conversations {
			got = append(got, c.ThreadID)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("?%s = %v, want %s", q, got, want)
		}
	}

	tr := getJSON[struct {
		analytics.Conversation
		Messages []struct {
			Question string
			Status   string
			Rating   *string
			Sources  []assistant.TurnSource
		}
	}](t, s, "/v2/analytics/tern/conversations/thr_2")
	if len(tr.Messages) != 2 || tr.Messages[1].Question != "Webhook retries?" || tr.Messages[1].Rating == nil || *tr.Messages[1].Rating != "down" || tr.Messages[0].Rating != nil {
		t.Errorf("transcript = %+v", tr)
	}

	in := getJSON[analytics.Insights](t, s, "/v2/analytics/tern/insights")
	if in.Questions != 4 || in.NotCovered != 2 || in.FeedbackUp != 1 || in.FeedbackDown != 1 || len(in.PerDay) != 3 || in.TopPages[0].Value != "sync" {
		t.Errorf("insights = %+v", in)
	}

	gaps := getJSON[struct {
		Gaps []struct {
			analytics.Gap
			Prompt string
		}
	}](t, s, "/v2/analytics/tern/gaps")
	if len(gaps.Gaps) != 1 || gaps.Gaps[0].Count != 2 || gaps.Gaps[0].Key != "retry+support+webhook" || !strings.Contains(gaps.Gaps[0].Prompt, "- Webhook retries? (reader's comment: not what I needed)") {
		t.Errorf("gaps = %+v", gaps)
	}

	fb := getJSON[struct{ Feedback []analytics.FeedbackItem }](t, s, "/v2/analytics/tern/feedback?rating=down&source=assistant")
	if len(fb.Feedback) != 1 || fb.Feedback[0].Question != "Webhook retries?" || fb.Feedback[0].Comment != "not what I needed" || fb.Feedback[0].Source != "assistant" {
		t.Errorf("feedback = %+v", fb)
	}
	// An agent's rating of a page over MCP, among the readers' ratings,
	// newest first; another domain's stays out.
	fb = getJSON[struct{ Feedback []analytics.FeedbackItem }](t, s, "/v2/analytics/tern/feedback")
	var rows []string
	for _, it := range fb.Feedback {
		rows = append(rows, it.Source+" "+it.ThreadID+" "+it.Rating+" "+strings.Join(it.Pages, ","))
	}
	if want := []string{"mcp  down guides/schedules", "assistant thr_2 down ", "assistant thr_1 up sync"}; !slices.Equal(rows, want) {
		t.Errorf("feedback = %q, want %q", rows, want)
	}
	fb = getJSON[struct{ Feedback []analytics.FeedbackItem }](t, s, "/v2/analytics/tern/feedback?source=mcp")
	if len(fb.Feedback) != 1 || fb.Feedback[0].Comment != "no example of a weekly schedule" || fb.Feedback[0].Question != "" {
		t.Errorf("feedback from MCP = %+v", fb)
	}
	fb = getJSON[struct{ Feedback []analytics.FeedbackItem }](t, s, "/v2/analytics/tern/feedback?limit=1")
	if len(fb.Feedback) != 1 || fb.Feedback[0].Source != "mcp" {
		t.Errorf("first page of feedback = %+v", fb)
	}
}
