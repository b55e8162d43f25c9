package dashboard

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/agentrun/builtin"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/assistant"
)

// addQuestions gives domain tern a covered question, and two not covered
// that are one need in different words, one rated down with a comment.
func addQuestions(t *testing.T, f *fixture) {
	t.Helper()
	ctx := t.Context()
	at := f.now()
	add := func(thread, q, status string, rating, comment string) {
		if err := f.store.CreateThread(ctx, assistant.Thread{ID: thread, Domain: "tern", OrgID: "acme", FP: "anonymous", CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		var src []assistant.TurnSource
		if status == assistant.TurnAnswered {
			src = []assistant.TurnSource{{ID: "src_1", URL: "https://tern.example/docs/sync", Title: "Sync folders", Path: "sync", Score: 0.9}}
		}
		if _, err := f.store.AddTurn(ctx, assistant.Turn{ThreadID: thread, MessageID: thread + "_m1", FP: "anonymous", Question: q, Answer: "the answer to " + q,
			Sources: src, Model: "extractive", Status: status, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if rating != "" {
			if err := f.store.RateTurn(ctx, assistant.Feedback{ThreadID: thread, MessageID: thread + "_m1", Rating: rating, Comment: comment, CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
		}
		at = at.Add(time.Minute)
	}
	add("thr_sync", "How do I sync a folder?", assistant.TurnAnswered, analytics.RatingUp, "")
	add("thr_hook1", "How do I rotate webhook secrets?", assistant.TurnNotCovered, "", "")
	add("thr_hook2", "=webhook secret rotation", assistant.TurnNotCovered, analytics.RatingDown, "nothing about rotation")
}

func TestAssistantPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	b := f.browser()
	b.signIn(f.acmeKey)
	cases := []struct {
		path string
		has  []string
	}{
		{"/ui/domains/tern/conversations", []string{"How do I sync a folder?", "not covered", "↓ down", "<code>sync</code>", "Export CSV"}},
		{"/ui/domains/tern/conversations?status=not_covered", []string{"rotate webhook secrets"}},
		{"/ui/domains/tern/conversations?feedback=up", []string{"sync a folder"}},
		{"/ui/domains/tern/conversations/thr_hook2", []string{"=webhook secret rotation", "rated down", "nothing about rotation", "No sources."}},
		{"/ui/domains/tern/conversations/thr_sync", []string{"Sources this turn used", "Sync folders", "score 0.90"}},
		{"/ui/domains/tern/insights", []string{">3</span> questions", "67%", "secret, webhook"}},
		{"/ui/domains/tern/gaps", []string{"2 question(s)", "2 not covered", "1 rated down", "Gap → job", "nothing about rotation"}},
	}
	for _, c := range cases {
		p := b.get(c.path)
		if p.status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", c.path, p.status, p.body)
			continue
		}
		for _, want := range c.has {
			if !strings.Contains(p.body, want) {
				t.Errorf("GET %s lacks %q", c.path, want)
			}
		}
	}
	for path, lacks := range map[string]string{
		"/ui/domains/tern/conversations?status=not_covered": "sync a folder",
		"/ui/domains/tern/conversations?feedback=down":      "sync a folder",
		"/ui/domains/tern/conversations?to=2026-02-01":      "webhook",
	} {
		if p := b.get(path); strings.Contains(p.body, lacks) {
			t.Errorf("GET %s shows %q", path, lacks)
		}
	}
	if p := b.get("/ui/domains/tern/conversations?from=soon"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "must be a date") {
		t.Errorf("a bad date: %d", p.status)
	}
}

func TestExportCSV(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	b := f.browser()
	b.signIn(f.acmeKey)
	p := b.get("/ui/domains/tern/export.csv?kind=conversations&from=2026-03-01&to=2026-03-01")
	if p.status != 200 || p.header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.Contains(p.header.Get("Content-Disposition"), "tern-conversations.csv") {
		t.Fatalf("export: %d %v", p.status, p.header)
	}
	rows, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != "thread_id" {
		t.Fatalf("rows = %v, %v", rows, err)
	}
	if rows[3][5] != "'=webhook secret rotation" {
		t.Errorf("a formula-like question is not defused: %q", rows[3][5])
	}
	p = b.get("/ui/domains/tern/export.csv?kind=feedback")
	rows, _ = csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if len(rows) != 3 || rows[0][0] != "source" || rows[1][0] != "assistant" || rows[1][5] != "down" || rows[1][9] != "nothing about rotation" {
		t.Errorf("feedback rows = %v", rows)
	}
	if p := b.get("/ui/domains/tern/export.csv?to=2026-02-01"); strings.Count(p.body, "\n") != 1 {
		t.Errorf("an empty range has rows: %q", p.body)
	}
}

var exportLink = regexp.MustCompile(`href="(/ui/domains/tern/export\.csv\?[^"]+)">(Export[^<]*)<`)

// TestExportLinksKeepFilters follows the conversation page's export links:
// each downloads the rows of the page's range and filters, and only those.
func TestExportLinksKeepFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	if err := f.store.AddPageFeedback(t.Context(), assistant.PageFeedback{Domain: "tern", OrgID: "acme", Path: "sync", Rating: analytics.RatingDown,
		Comment: "the flags are not listed", Source: assistant.FeedbackFromMCP, CreatedAt: f.now()}); err != nil {
		t.Fatal(err)
	}
	b := f.browser()
	b.signIn(f.acmeKey)
	day := f.now().Format(time.DateOnly)
	download := func(filters string) map[string][][]string {
		t.Helper()
		p := b.get("/ui/domains/tern/conversations?" + filters)
		links := exportLink.FindAllStringSubmatch(p.body, -1)
		if p.status != http.StatusOK || len(links) != 2 {
			t.Fatalf("conversations?%s: %d, export links %q", filters, p.status, links)
		}
		got := map[string][][]string{}
		for _, l := range links {
			csvPage := b.get(html.UnescapeString(l[1]))
			rows, err := csv.NewReader(strings.NewReader(csvPage.body)).ReadAll()
			if csvPage.status != http.StatusOK || err != nil {
				t.Fatalf("%s (%s): %d %v\n%s", l[2], l[1], csvPage.status, err, csvPage.body)
			}
			got[l[2]] = rows[1:]
		}
		return got
	}
	threads := func(rows [][]string, col int) []string {
		var ids []string
		for _, r := range rows {
			ids = append(ids, r[col])
		}
		return ids
	}

	// Not covered and rated down: one conversation, one rating.
	got := download("from=" + day + "&to=" + day + "&status=not_covered&feedback=down")
	if ids := threads(got["Export CSV"], 0); !slices.Equal(ids, []string{"thr_hook2"}) {
		t.Errorf("conversations export of not covered, rated down: %q", ids)
	}
	if ids := threads(got["Export feedback CSV"], 1); !slices.Equal(ids, []string{"thr_hook2"}) {
		t.Errorf("feedback export of not covered, rated down: %q", got["Export feedback CSV"])
	}
	// Rated down from any source: the agent's rating of a page too.
	got = download("feedback=down")
	if fb := got["Export feedback CSV"]; len(fb) != 2 || fb[0][0] != "assistant" || fb[1][0] != "mcp" || fb[1][10] != "sync" || fb[1][9] != "the flags are not listed" {
		t.Errorf("feedback export of rated down: %q", fb)
	}
	// A range before anything was asked: headers only.
	got = download("to=2026-02-01")
	if len(got["Export CSV"]) != 0 || len(got["Export feedback CSV"]) != 0 {
		t.Errorf("exports of an empty range: %q", got)
	}
}

// TestFeedbackPage: the feedback page lists readers' ratings of answers
// and agents' ratings of pages over MCP, each marked so, and filters them
// by rating and source.
func TestFeedbackPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	if err := f.store.AddPageFeedback(t.Context(), assistant.PageFeedback{Domain: "tern", OrgID: "acme", Path: "guides/schedules", Rating: analytics.RatingDown,
		Comment: "no weekly schedule example", Source: assistant.FeedbackFromMCP, CreatedAt: f.now().Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	b := f.browser()
	b.signIn(f.acmeKey)
	p := b.get("/ui/domains/tern/feedback")
	if p.status != http.StatusOK {
		t.Fatalf("feedback page: %d %s", p.status, p.body)
	}
	for _, want := range []string{"agent · MCP", "<code>guides/schedules</code>", "no weekly schedule example", ">reader<", "nothing about rotation",
		`href="/ui/domains/tern/conversations/thr_hook2"`, `href="/ui/domains/tern/export.csv?kind=feedback"`, `aria-current="page">Feedback<`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("feedback page lacks %q", want)
		}
	}
	// The agent's rating is the newest: first.
	if i, j := strings.Index(p.body, "agent · MCP"), strings.Index(p.body, ">reader<"); i < 0 || j < 0 || i > j {
		t.Errorf("the agent's rating is not listed first")
	}
	for query, c := range map[string]struct{ has, lacks string }{
		"source=mcp":       {"no weekly schedule example", "nothing about rotation"},
		"source=assistant": {"nothing about rotation", "no weekly schedule example"},
		"feedback=up":      {"How do I sync a folder?", "no weekly schedule example"},
	} {
		p := b.get("/ui/domains/tern/feedback?" + query)
		if !strings.Contains(p.body, c.has) || strings.Contains(p.body, c.lacks) {
			t.Errorf("feedback?%s: has %q %v, lacks %q %v", query, c.has, strings.Contains(p.body, c.has), c.lacks, !strings.Contains(p.body, c.lacks))
		}
	}
	if p := b.get("/ui/domains/tern/feedback?source=email"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "source") {
		t.Errorf("an unknown source: %d", p.status)
	}
}

var gapLink = regexp.MustCompile(`href="(/ui/projects/acme-docs/jobs\?[^"]+)"`)

// TestGapToJob: the gap's button opens the new-job form with a drafted
// prompt; starting it links the job to the gap, which then shows it, in
// progress.
func TestGapToJob(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	writingModel(t, f, "acme-docs")
	addQuestions(t, f)
	b := f.browser()
	b.signIn(f.acmeKey)
	gaps := b.get("/ui/domains/tern/gaps")
	m := gapLink.FindStringSubmatch(gaps.body)
	if m == nil {
		t.Fatalf("no Gap → job link:\n%s", gaps.body)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	form := b.get(link)
	if form.status != 200 || !strings.Contains(form.body, "- How do I rotate webhook secrets?") || !strings.Contains(form.body, "(reader&#39;s comment: nothing about rotation)") ||
		!strings.Contains(form.body, `id="model-draft"`) || strings.Contains(form.body, `id="builtin-draft"`) {
		t.Fatalf("the new-job form is not drafted: %d\n%s", form.status, form.body)
	}
	hidden := regexp.MustCompile(`name="(domain|gap|idem)" value="([^"]*)"`).FindAllStringSubmatch(form.body, -1)
	vals := url.Values{"csrf": {csrfOf(t, form)}, "prompt": {"Write a page on rotating webhook secrets."}}
	for _, h := range hidden {
		vals.Set(h[1], html.UnescapeString(h[2]))
	}
	if vals.Get("gap") == "" || vals.Get("domain") != "tern" {
		t.Fatalf("hidden fields = %v", vals)
	}
	created := b.post("/ui/projects/acme-docs/jobs", vals)
	if created.status != http.StatusSeeOther || !strings.HasPrefix(created.header.Get("Location"), "/ui/projects/acme-docs/jobs/") {
		t.Fatalf("create: %d %s\n%s", created.status, created.header.Get("Location"), created.body)
	}
	// A double submit (same idempotency token) makes no second job or link.
	if again := b.post("/ui/projects/acme-docs/jobs", vals); again.header.Get("Location") != created.header.Get("Location") {
		t.Errorf("a double submit made another job: %s", again.header.Get("Location"))
	}
	jobID := strings.TrimPrefix(created.header.Get("Location"), "/ui/projects/acme-docs/jobs/")
	job := b.get(created.header.Get("Location"))
	if job.status != 200 || !strings.Contains(job.body, "rotating webhook secrets") || !strings.Contains(job.body, "Message 1 queued") {
		t.Errorf("job page: %d", job.status)
	}
	links, err := f.store.GapJobs(t.Context(), "tern")
	if err != nil || len(links) != 1 || links[0].JobID != jobID || links[0].GapKey != vals.Get("gap") {
		t.Fatalf("gap links = %+v, %v", links, err)
	}
	ls, err := f.store.GapLifecycles(t.Context(), "tern")
	if err != nil || len(ls) != 1 || ls[0].JobID != jobID || ls[0].Key != vals.Get("gap") || ls[0].State != analytics.GapInProgress ||
		!slices.Contains(ls[0].Questions, "How do I rotate webhook secrets?") {
		t.Fatalf("gap lifecycles = %+v, %v", ls, err)
	}
	gaps = b.get("/ui/domains/tern/gaps")
	if !strings.Contains(gaps.body, "/ui/projects/acme-docs/jobs/"+jobID) || !strings.Contains(gaps.body, `badge s-active">active`) ||
		!strings.Contains(gaps.body, `badge g-in_progress">in progress`) {
		t.Errorf("the gap does not show its job:\n%s", gaps.body)
	}
	// A gap of a domain over another project is refused.
	if p := b.get("/ui/projects/acme-docs/jobs?domain=tern&gap=no+such+gap"); p.status != http.StatusNotFound {
		t.Errorf("an unknown gap: %d", p.status)
	}
}

// writingModel gives the project a model that writes.
func writingModel(t *testing.T, f *fixture, project string) {
	t.Helper()
	p, err := f.store.GetProject(t.Context(), project)
	if err != nil {
		t.Fatal(err)
	}
	p.Model = "openai/gpt-test"
	if err := f.store.UpdateProject(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

// TestGapToJobForBuiltin: on a project whose model is builtin, Gap → job
// says the model cannot write the answer and drafts a builtin command it
// can run (a page for a writer), the readers' questions in a comment.
func TestGapToJobForBuiltin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	b := f.browser()
	b.signIn(f.acmeKey)
	m := gapLink.FindStringSubmatch(b.get("/ui/domains/tern/gaps").body)
	if m == nil {
		t.Fatal("no Gap → job link")
	}
	form := b.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	if form.status != http.StatusOK || !strings.Contains(form.body, `id="builtin-draft"`) || !strings.Contains(form.body, "cannot write the documentation") ||
		!strings.Contains(form.body, "docsmith project update --id acme-docs --model openai/MODEL") {
		t.Fatalf("the builtin form does not say what it drafts: %d\n%s", form.status, form.body)
	}
	draft := regexp.MustCompile(`(?s)<textarea[^>]*>(.*?)</textarea>`).FindStringSubmatch(form.body)
	if draft == nil {
		t.Fatal("no draft")
	}
	cmds, err := builtin.Parse(html.UnescapeString(draft[1]))
	if err != nil || len(cmds) != 1 || cmds[0].Kind != builtin.AddPage || cmds[0].Path == "" {
		t.Fatalf("the builtin draft does not parse as one add-page command: %v %+v\n%s", err, cmds, draft[1])
	}
	if !strings.Contains(draft[1], "- How do I rotate webhook secrets?") {
		t.Errorf("the draft's comment lacks the readers' questions:\n%s", draft[1])
	}
}

// TestGapToJobOverARange: on a gaps page filtered by date, where a gap's
// key differs from the one it has over all time, Gap → job drafts the job
// from the gap shown and starting the job links it to that gap.
func TestGapToJobOverARange(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := t.Context()
	// Three days before, the same need asked about expiry: over all time
	// the gap is named by "expiry", over today by "rotate".
	old := f.now().Add(-72 * time.Hour)
	for _, id := range []string{"thr_exp1", "thr_exp2", "thr_exp3"} {
		if err := f.store.CreateThread(ctx, assistant.Thread{ID: id, Domain: "tern", OrgID: "acme", FP: "anonymous", CreatedAt: old, UpdatedAt: old}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.store.AddTurn(ctx, assistant.Turn{ThreadID: id, MessageID: id + "_m1", FP: "anonymous", Question: "Do webhook secrets have an expiry?",
			Answer: "not covered", Model: "extractive", Status: assistant.TurnNotCovered, CreatedAt: old}); err != nil {
			t.Fatal(err)
		}
	}
	addQuestions(t, f)
	b := f.browser()
	b.signIn(f.acmeKey)
	if all := b.get("/ui/domains/tern/gaps"); !strings.Contains(all.body, "gap=expiry%2bsecret%2bwebhook") && !strings.Contains(all.body, "gap=expiry%2Bsecret%2Bwebhook") {
		t.Fatalf("over all time the gap is not named by expiry:\n%s", all.body)
	}
	day := f.now().Format(time.DateOnly)
	gaps := b.get("/ui/domains/tern/gaps?from=" + day)
	m := gapLink.FindStringSubmatch(gaps.body)
	if m == nil {
		t.Fatalf("no Gap → job link:\n%s", gaps.body)
	}
	link := strings.ReplaceAll(m[1], "&amp;", "&")
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Query().Get("gap"); got != "rotate+secret+webhook" {
		t.Fatalf("the gap over %s is %q, want rotate+secret+webhook", day, got)
	}
	form := b.get(link)
	if form.status != http.StatusOK || !strings.Contains(form.body, "- How do I rotate webhook secrets?") || strings.Contains(form.body, "expiry?") {
		t.Fatalf("the new-job form is not drafted from the gap shown: %d\n%s", form.status, form.body)
	}
	hidden := regexp.MustCompile(`name="(domain|gap|idem)" value="([^"]*)"`).FindAllStringSubmatch(form.body, -1)
	vals := url.Values{"csrf": {csrfOf(t, form)}, "prompt": {"Write a page on rotating webhook secrets."}}
	for _, h := range hidden {
		vals.Set(h[1], html.UnescapeString(h[2]))
	}
	created := b.post("/ui/projects/acme-docs/jobs", vals)
	if created.status != http.StatusSeeOther {
		t.Fatalf("create: %d\n%s", created.status, created.body)
	}
	jobID := strings.TrimPrefix(created.header.Get("Location"), "/ui/projects/acme-docs/jobs/")
	links, err := f.store.GapJobs(ctx, "tern")
	if err != nil || len(links) != 1 || links[0].JobID != jobID || links[0].GapKey != "rotate+secret+webhook" {
		t.Fatalf("gap links = %+v, %v", links, err)
	}
	if again := b.get("/ui/domains/tern/gaps?from=" + day); !strings.Contains(again.body, "/ui/projects/acme-docs/jobs/"+jobID) {
		t.Errorf("the gap does not show its job over the range:\n%s", again.body)
	}
	// A range the gap is not in is a clear 404, a malformed one a 400.
	if p := b.get("/ui/projects/acme-docs/jobs?domain=tern&gap=rotate%2Bsecret%2Bwebhook&to=" + old.Format(time.DateOnly)); p.status != http.StatusNotFound {
		t.Errorf("a gap outside the range: %d", p.status)
	}
	if p := b.get("/ui/projects/acme-docs/jobs?domain=tern&gap=rotate%2Bsecret%2Bwebhook&from=yesterday"); p.status != http.StatusBadRequest {
		t.Errorf("a malformed from: %d", p.status)
	}
}

func TestJobPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	b := f.browser()
	b.signIn(f.acmeKey)
	list := b.get("/ui/projects/acme-docs/jobs")
	if list.status != 200 || !strings.Contains(list.body, "No jobs yet") {
		t.Fatalf("empty list: %d", list.status)
	}
	csrf := csrfOf(t, list)
	for _, prompt := range []string{"Add a page about webhooks", "Fix the typo in quickstart", "Webhook retries section"} {
		p := b.post("/ui/projects/acme-docs/jobs", url.Values{"csrf": {csrf}, "prompt": {prompt}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("create %q: %d %s", prompt, p.status, p.body)
		}
		f.advance(time.Second)
	}
	if p := b.post("/ui/projects/acme-docs/jobs", url.Values{"csrf": {csrf}, "prompt": {"   "}}); p.status != http.StatusBadRequest || !strings.Contains(p.body, "non-space") {
		t.Errorf("blank prompt: %d", p.status)
	}
	search := b.get("/ui/projects/acme-docs/jobs?q=WEBHOOK")
	if !strings.Contains(search.body, "Add a page about webhooks") || !strings.Contains(search.body, "Webhook retries") || strings.Contains(search.body, "Fix the typo") {
		t.Errorf("search by prompt:\n%s", search.body)
	}
	jobs, _ := f.jobs.List(t.Context(), "acme-docs", agentjob.ListQuery{Limit: 10})
	id := jobs[0].ID
	path := "/ui/projects/acme-docs/jobs/" + id
	if p := b.post(path+"/message", url.Values{"csrf": {csrf}, "prompt": {"Also an example"}}); p.status != http.StatusSeeOther {
		t.Fatalf("follow-up: %d %s", p.status, p.body)
	}
	if p := b.post(path+"/cancel", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther {
		t.Fatalf("cancel: %d %s", p.status, p.body)
	}
	page := b.get(path)
	for _, want := range []string{"Also an example", "Status: failed", "Message 2 queued", "Archive"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("job page lacks %q", want)
		}
	}
	if strings.Contains(page.body, "Cancel job") {
		t.Error("a canceled job offers cancel")
	}
	if p := b.get("/ui/projects/acme-docs/jobs?status=failed"); !strings.Contains(p.body, path) || strings.Contains(p.body, jobs[1].ID) {
		t.Errorf("status filter")
	}
	if p := b.get("/ui/projects/acme-docs/jobs?status=bogus"); p.status != http.StatusBadRequest {
		t.Errorf("bad status: %d", p.status)
	}
	// The event stream of a settled job sends its timeline and ends.
	ev := b.get(path + "/events")
	if ev.status != 200 || ev.header.Get("Content-Type") != "text/event-stream" || !strings.Contains(ev.body, "event: timeline") || !strings.Contains(ev.body, "event: settled") {
		t.Errorf("events: %d %q", ev.status, ev.body)
	}
	if p := b.post(path+"/archive", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther {
		t.Fatalf("archive: %d %s", p.status, p.body)
	}

	// A workflow's run says which workflow started it, and how.
	project, err := f.tenants.Store().GetProject(t.Context(), "acme-docs")
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := f.jobs.StartRun(t.Context(), project, agentjob.RunRequest{Trigger: agentjob.TriggerSchedule, Workflow: "weekly-links", Prompt: "fix broken links everywhere", Key: "slot-1"})
	if err != nil {
		t.Fatal(err)
	}
	if p := b.get("/ui/projects/acme-docs/jobs"); !strings.Contains(p.body, "workflow weekly-links, schedule run") {
		t.Errorf("the jobs list does not show the run's workflow")
	}
	if p := b.get("/ui/projects/acme-docs/jobs/" + run.ID); !strings.Contains(p.body, "<code>weekly-links</code>, a schedule run") {
		t.Errorf("the job page does not show the run's workflow")
	}
}

func TestLiveTimeline(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	b := f.browser()
	b.signIn(f.acmeKey)
	csrf := csrfOf(t, b.get("/ui/settings"))
	created := b.post("/ui/projects/acme-docs/jobs", url.Values{"csrf": {csrf}, "prompt": {"live"}})
	path := created.header.Get("Location")
	page := b.get(path)
	if !strings.Contains(page.body, `data-stream="`+path+`/events"`) {
		t.Fatalf("an active job's page does not stream:\n%s", page.body)
	}
	id := strings.TrimPrefix(path, "/ui/projects/acme-docs/jobs/")
	// The job settles while the stream is open: the stream sends what came
	// and ends.
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = f.jobs.Cancel(t.Context(), "acme-docs", id)
	}()
	ev := b.get(path + "/events?lastEventId=1")
	if strings.Contains(ev.body, "id: 1\n") || !strings.Contains(ev.body, "Status: failed") || !strings.HasSuffix(strings.TrimSpace(ev.body), `"settled":true}`) {
		t.Errorf("live stream:\n%s", ev.body)
	}
}

// TestLiveTimelineEndsOnShutdown: an active job's open timeline ends when
// the server begins to shut down, rather than hold the shutdown up until
// the job settles.
func TestLiveTimelineEndsOnShutdown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	b := f.browser()
	b.signIn(f.acmeKey)
	csrf := csrfOf(t, b.get("/ui/settings"))
	path := b.post("/ui/projects/acme-docs/jobs", url.Values{"csrf": {csrf}, "prompt": {"live"}}).header.Get("Location")
	go func() {
		time.Sleep(100 * time.Millisecond)
		f.handler.StopStreams()
	}()
	done := make(chan page, 1)
	go func() { done <- b.get(path + "/events") }()
	select {
	case ev := <-done:
		if ev.status != http.StatusOK || strings.Contains(ev.body, "settled") {
			t.Errorf("stream ended with %d %q, want a timeline cut short", ev.status, ev.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the timeline of an active job kept streaming after StopStreams")
	}
}

func TestSettings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	b := f.browser()
	b.signIn(f.acmeKey)
	s := b.get("/ui/settings")
	for _, want := range []string{"acme-docs", "tern", `data-domain=&#34;tern&#34;`, "/widget.js", f.acmeKeyID, "(this session)", "docsmith domain update --domain tern --mcp-public"} {
		if !strings.Contains(s.body, want) {
			t.Errorf("settings lack %q", want)
		}
	}
	csrf := csrfOf(t, s)
	made := b.post("/ui/settings/keys", url.Values{"csrf": {csrf}, "kind": {"assistant"}, "name": {"site"}})
	secret := regexp.MustCompile(`id="new-secret" readonly value="(svc_dsc_[^"]+)"`).FindStringSubmatch(made.body)
	if made.status != 200 || secret == nil {
		t.Fatalf("new key: %d\n%s", made.status, made.body)
	}
	if !strings.Contains(made.body, `data-key=&#34;`+secret[1]+`&#34;`) {
		t.Error("the snippets do not carry the new assistant key")
	}
	if again := b.get("/ui/settings"); strings.Contains(again.body, secret[1]) {
		t.Error("the secret is shown again")
	}
	if p := b.post("/ui/settings/keys", url.Values{"csrf": {csrf}, "kind": {"root"}}); p.status != http.StatusBadRequest {
		t.Errorf("bad kind: %d", p.status)
	}
	// A notice comes from a fixed list: a link cannot put words in the page.
	if p := b.get("/ui/settings?flash=Paste+your+key+at+evil.example"); strings.Contains(p.body, "evil.example") {
		t.Error("the page shows a notice written in its link")
	}
	if p := b.get("/ui/settings?flash=key-revoked"); !strings.Contains(p.body, "The key was revoked") {
		t.Error("the key-revoked notice is missing")
	}
	// Revoking the session's own key signs it out.
	if p := b.post("/ui/settings/keys/"+f.acmeKeyID+"/revoke", url.Values{"csrf": {csrf}}); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/login" {
		t.Errorf("revoke own key: %d %s", p.status, p.header.Get("Location"))
	}
	if p := b.get("/ui/settings"); p.status != http.StatusSeeOther {
		t.Errorf("still signed in with a revoked key: %d", p.status)
	}
}

func TestLoginLink(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	post := func(key string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.url+"/ui/login-links", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, _ := post(""); code != 401 {
		t.Errorf("no key: %d", code)
	}
	if code, _ := post(f.assistKey); code != 403 {
		t.Errorf("assistant key: %d", code)
	}
	code, body := post(f.acmeKey)
	m := regexp.MustCompile(`"path":"(/ui/login\?token=[^"]+)"`).FindStringSubmatch(body)
	if code != 201 || m == nil {
		t.Fatalf("login link: %d %s", code, body)
	}
	b := f.browser()
	landing := b.get(m[1])
	if landing.status != 200 || sessionSetCookie(t, landing) != nil {
		t.Fatalf("following the link signed in by itself: %d", landing.status)
	}
	token := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(landing.body)
	form := url.Values{"csrf": {csrfOf(t, landing)}, "token": {token[1]}}
	if p := b.post("/ui/login", form); p.status != http.StatusSeeOther || sessionSetCookie(t, p) == nil {
		t.Fatalf("sign in with the link: %d %s", p.status, p.body)
	}
	if p := b.get("/ui/settings"); p.status != 200 || !strings.Contains(p.body, "acme") {
		t.Errorf("signed in by link: %d", p.status)
	}
	other := f.browser()
	landing = other.get(m[1])
	form.Set("csrf", csrfOf(t, landing))
	if p := other.post("/ui/login", form); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "login link is not valid") {
		t.Errorf("a link used twice: %d", p.status)
	}
}

// TestSettingsShowSpend checks that the settings page shows each domain
// with a model its spend today against its budget, and says when the
// budget is spent; a domain without a model costs nothing and shows none.
func TestSettingsShowSpend(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	ctx := t.Context()
	b := f.browser()
	b.signIn(f.acmeKey)
	if s := b.get("/ui/settings"); strings.Contains(s.body, "Model spend today") {
		t.Fatal("a domain without a model shows a spend")
	}

	d, err := f.store.GetDomain(ctx, "tern")
	if err != nil {
		t.Fatal(err)
	}
	d.Model = "openai/gpt-4o-mini"
	thousand := 1000
	d.Settings.TokensPerDay = &thousand
	if err := f.store.UpdateDomain(ctx, d); err != nil {
		t.Fatal(err)
	}
	now := f.now()
	if err := f.store.CreateThread(ctx, assistant.Thread{ID: "thr_spend", Domain: "tern", OrgID: "acme", FP: "anonymous", CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if s := b.get("/ui/settings"); !strings.Contains(s.body, "Model spend today (UTC): 0 of 2000 answers, 0 of 1000 tokens.") {
		t.Fatalf("settings lack the spend of tern:\n%s", s.body)
	}
	for i := range 2 {
		_, err := f.store.AddTurn(ctx, assistant.Turn{ThreadID: "thr_spend", MessageID: fmt.Sprintf("msg_%d", i), FP: "anonymous", Question: "q", Answer: "a",
			Model: d.Model, Status: assistant.TurnAnswered, InputTokens: 600, OutputTokens: 100, CreatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
	}
	s := b.get("/ui/settings")
	if !strings.Contains(s.body, "Model spend today (UTC): 2 of 2000 answers, 1400 of 1000 tokens — budget spent") {
		t.Fatalf("settings lack the spent budget of tern:\n%s", s.body)
	}
}

// TestPartialAnswerPages shows an answer the docs covered in part: its
// status and note in the transcript, the conversation filter, the insights
// count and the gap it feeds.
func TestPartialAnswerPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	ctx := t.Context()
	at := f.now().Add(time.Hour)
	if err := f.store.CreateThread(ctx, assistant.Thread{ID: "thr_part", Domain: "tern", OrgID: "acme", FP: "anonymous", CreatedAt: at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.AddTurn(ctx, assistant.Turn{ThreadID: "thr_part", MessageID: "thr_part_m1", FP: "anonymous",
		Question: "Can I sync a folder to Dropbox?", Answer: "The docs don't mention Dropbox. Here is what they say about the rest of your question.",
		Sources: []assistant.TurnSource{{ID: "src_1", URL: "https://tern.example/docs/sync", Title: "Sync folders", Path: "sync", Score: 0.9}},
		Model:   "extractive", Status: assistant.TurnPartial, StatusNote: "The docs don't mention Dropbox.", Missing: []string{"Dropbox"}, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	b := f.browser()
	b.signIn(f.acmeKey)
	for path, has := range map[string][]string{
		"/ui/domains/tern/conversations/thr_part":       {`<span class="badge c-partial">partly covered</span>`, `<p class="note c-partial">The docs don&#39;t mention Dropbox.</p>`},
		"/ui/domains/tern/conversations?status=partial": {"sync a folder to Dropbox"},
		"/ui/domains/tern/insights":                     {">1</span> partly covered", ">1</span> answered"},
		"/ui/domains/tern/gaps":                         {"1 partly covered", "Dropbox"},
	} {
		p := b.get(path)
		if p.status != http.StatusOK {
			t.Errorf("GET %s: %d", path, p.status)
			continue
		}
		for _, want := range has {
			if !strings.Contains(p.body, want) {
				t.Errorf("GET %s lacks %q", path, want)
			}
		}
	}
	if p := b.get("/ui/domains/tern/conversations?status=partial"); strings.Contains(p.body, "rotate webhook secrets") {
		t.Error("the partial filter shows a conversation that was not covered")
	}
}
