package dashboard

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
)

// storedRuns keeps runs in memory as checkrun.Store does, for the pages
// that read them.
type storedRuns struct {
	mu   sync.Mutex
	runs []checkrun.Run
}

func (s *storedRuns) save(r checkrun.Run) checkrun.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.ID = fmt.Sprintf("run_%d", len(s.runs)+1)
	s.runs = append(s.runs, r)
	return r
}

func (s *storedRuns) GetRun(_ context.Context, domain, id string) (checkrun.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		if r.Domain == domain && r.ID == id {
			return r, nil
		}
	}
	return checkrun.Run{}, apperr.New(apperr.NotFound, "run %q not found", id)
}

func (s *storedRuns) ListRuns(_ context.Context, domain, trigger string, limit int) ([]checkrun.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []checkrun.Run
	for _, r := range slices.Backward(s.runs) {
		if r.Domain == domain && (trigger == "" || r.Trigger == trigger) && len(out) < limit {
			out = append(out, r)
		}
	}
	return out, nil
}

var checkIDs = regexp.MustCompile(`<article class="check card[^"]*" id="check-([^"]+)">\s*<header>\s*<p class="meta">[^<]*<span class="badge ([^"]+)">`)

// trafficCheckIDs returns the ids of the listed traffic checks by origin
// badge (f-up for a rated-up question, r-not_covered for a gap's).
func trafficCheckIDs(t *testing.T, p page) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range checkIDs.FindAllStringSubmatch(p.body, -1) {
		out[m[2]] = m[1]
	}
	return out
}

func TestChecksPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	b := f.browser()
	b.signIn(f.acmeKey)
	p := b.get("/ui/domains/tern/checks")
	if p.status != http.StatusOK {
		t.Fatalf("checks page: %d\n%s", p.status, p.body)
	}
	for _, want := range []string{
		"How do I sync a folder?", "A good answer must cite sync.", // rated up, citing sync
		"=webhook secret rotation", "A good answer must answer it wholly.", // the gap's newest question
		"No run yet.", "No run has read the checks file yet.", `aria-current="page">Checks</a>`,
	} {
		if !strings.Contains(html.UnescapeString(p.body), want) {
			t.Errorf("the checks page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "How do I rotate webhook secrets?") {
		t.Error("the gap's older question is a check too")
	}
	ids := trafficCheckIDs(t, p)
	up, gap := ids["f-up"], ids["r-not_covered"]
	if up == "" || gap == "" {
		t.Fatalf("check ids: %v", ids)
	}
	csrf := csrfOf(t, p)
	base := "/ui/domains/tern/checks/"

	// Pin, edit and drop, each back on the page with a notice.
	if r := b.post(base+up+"/pin", url.Values{"csrf": {csrf}, "pinned": {"true"}}); r.status != http.StatusSeeOther ||
		r.header.Get("Location") != "/ui/domains/tern/checks?flash=check-pinned#check-"+up {
		t.Fatalf("pin: %d %s\n%s", r.status, r.header.Get("Location"), r.body)
	}
	if p := b.get("/ui/domains/tern/checks?flash=check-pinned"); !strings.Contains(p.body, `<span class="badge pinned">pinned</span>`) || !strings.Contains(p.body, "newer traffic will not replace it") {
		t.Error("a pinned check does not say so")
	}
	edit := url.Values{"csrf": {csrf}, "question": {"How do I sync two folders?"}, "cite": {"guides/sync, /reference/sync.mdx"}, "contains": {"sync, --watch"}}
	if r := b.post(base+up+"/edit", edit); r.status != http.StatusSeeOther {
		t.Fatalf("edit: %d\n%s", r.status, r.body)
	}
	bad := url.Values{"csrf": {csrf}, "question": {"How?"}, "cite": {"guides/sync"}, "not_covered": {"true"}}
	if r := b.post(base+up+"/edit", bad); r.status != http.StatusBadRequest || !strings.Contains(r.body, "clear cite and contains") {
		t.Errorf("an edit with not covered and a page: %d", r.status)
	}
	if r := b.post(base+gap+"/drop", url.Values{"csrf": {csrf}, "dropped": {"true"}}); r.status != http.StatusSeeOther {
		t.Fatalf("drop: %d\n%s", r.status, r.body)
	}
	active, err := f.checks.ActiveChecks(t.Context(), "tern")
	if err != nil {
		t.Fatal(err)
	}
	want := []answercheck.Check{{ID: up, Name: "reader-how-do-i-sync-two-folders", Question: "How do I sync two folders?",
		Cite: []string{"guides/sync", "reference/sync"}, Contains: []string{"sync", "--watch"}, Origin: answercheck.OriginUpvote}}
	if !slices.EqualFunc(active, want, func(a, b answercheck.Check) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Errorf("a run asks %+v\nwant %+v", active, want)
	}
	p = b.get("/ui/domains/tern/checks")
	body := html.UnescapeString(p.body)
	if !strings.Contains(body, "A good answer must cite guides/sync or reference/sync; contain “sync”, “--watch”.") || !strings.Contains(body, "Dropped <small>1</small>") {
		t.Errorf("after the changes the page lacks the edit or the dropped check:\n%s", body)
	}

	// A form without its token, a bad value, another organization.
	if r := b.post(base+up+"/pin", url.Values{"pinned": {"false"}}); r.status != http.StatusForbidden {
		t.Errorf("pin without csrf: %d", r.status)
	}
	if r := b.post(base+up+"/pin", url.Values{"csrf": {csrf}, "pinned": {"yes"}}); r.status != http.StatusBadRequest {
		t.Errorf("pinned=yes: %d", r.status)
	}
	other := f.browser()
	other.signIn(f.globexKey)
	if r := other.get("/ui/domains/tern/checks"); r.status != http.StatusNotFound {
		t.Errorf("another organization reads the checks: %d", r.status)
	}
	otherCSRF := csrfOf(t, other.get("/ui/settings"))
	if r := other.post(base+up+"/drop", url.Values{"csrf": {otherCSRF}, "dropped": {"true"}}); r.status != http.StatusNotFound {
		t.Errorf("another organization drops a check: %d", r.status)
	}
	if r := b.post("/ui/domains/tern/checks/nope/pin", url.Values{"csrf": {csrf}, "pinned": {"true"}}); r.status != http.StatusNotFound {
		t.Errorf("an unknown check: %d", r.status)
	}
}

// aRun is a stored run of tern: a file check that regressed, the traffic
// check up that failed before and passes now, and one that passes on both.
func aRun(f *fixture, trigger, upID string, at time.Time) checkrun.Run {
	restore := answercheck.Check{Name: "restore-snapshot", Question: "How do I restore a snapshot?", Cite: []string{"guides/backups"}, Origin: answercheck.OriginFile}
	sync := answercheck.Check{Name: "reader-how-do-i-sync-a-folder", Question: "How do I sync a folder?", Cite: []string{"sync"}, Origin: answercheck.OriginUpvote, ID: upID}
	install := answercheck.Check{Name: "install", Question: "How do I install it?", Contains: []string{"brew"}, Origin: answercheck.OriginFile}
	before := []answercheck.Result{
		answercheck.Judge(restore, answercheck.Answer{Status: assistant.StatusAnswered, Text: "Stop the server, then restore.", Cited: []string{"guides/backups"}}),
		answercheck.Judge(sync, answercheck.Answer{Status: assistant.StatusNotCovered, Text: "The docs do not cover this."}),
		answercheck.Judge(install, answercheck.Answer{Status: assistant.StatusAnswered, Text: "brew install tern"}),
	}
	after := []answercheck.Result{
		answercheck.Judge(restore, answercheck.Answer{Status: assistant.StatusAnswered, Text: "See the operations overview.", Cited: []string{"operations/overview"}}),
		answercheck.Judge(sync, answercheck.Answer{Status: assistant.StatusAnswered, Text: "Run tern sync DIR.", Cited: []string{"sync"}}),
		answercheck.Judge(install, answercheck.Answer{Status: assistant.StatusAnswered, Text: "brew install tern"}),
	}
	checks, totals := answercheck.Compare(before, after)
	rep := answercheck.Report{Domain: "tern", Checks: checks, Totals: totals, BaseCommit: "0123456789abcdef0123", StartedAt: at, AnswerDuration: 1500 * time.Millisecond}
	run := checkrun.Run{Domain: "tern", Trigger: trigger, Report: rep, CreatedAt: at}
	if trigger == checkrun.TriggerPullRequest {
		run.PRNumber, run.PRLink = 7, "https://forge.example/acme/docs/pulls/7"
		run.Report.Ref, run.Report.Commit = "refs/pull/7/head", "fedcba9876543210fedc"
	}
	return f.runs.save(run)
}

func TestCheckRunsAndRegressions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	addQuestions(t, f)
	b := f.browser()
	b.signIn(f.acmeKey)
	up := trafficCheckIDs(t, b.get("/ui/domains/tern/checks"))["f-up"]

	pr := aRun(f, checkrun.TriggerPullRequest, up, f.now())
	// A pull request's regressions show on its run, not as an alert.
	p := b.get("/ui/domains/tern/gaps")
	if strings.Contains(p.body, `class="alert regressed"`) {
		t.Error("a pull request's regression is shown as the live assistant's")
	}
	p = b.get("/ui/domains/tern/checks")
	body := html.UnescapeString(p.body)
	for _, want := range []string{
		`href="/ui/domains/tern/checks/runs/` + pr.ID + `"`, "pull request", "#7", "<strong>2</strong> of 3 pass", "1 newly answered", "1 regressed",
		"restore-snapshot", "cite guides/backups", // a file check as last seen
		"Last run: <span class=\"badge pass\">pass</span> <span class=\"badge ch-newly_answered\">newly answered</span>", // the traffic check's
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the checks page lacks %q", want)
		}
	}
	p = b.get("/ui/domains/tern/checks/runs/" + pr.ID)
	body = html.UnescapeString(p.body)
	if p.status != http.StatusOK {
		t.Fatalf("run page: %d\n%s", p.status, p.body)
	}
	for _, want := range []string{
		"1 reader question now answered, 1 regressed", "pull request #7", "refs/pull/7/head", "fedcba987654",
		"pass → fail", "expected a citation of guides/backups; it cited operations/overview", "See the operations overview.",
		"fail → pass", "Run tern sync DIR.",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	// Regressed first, then newly answered, then the rest.
	if i, j, k := strings.Index(body, "restore-snapshot"), strings.Index(body, "reader-how-do-i-sync-a-folder"), strings.Index(body, "<code>install</code>"); i < 0 || i > j || j > k {
		t.Errorf("order of checks: regressed at %d, newly answered at %d, unchanged at %d", i, j, k)
	}

	// A scheduled run's regression stands out on every page of the domain.
	f.advance(time.Hour)
	sched := aRun(f, checkrun.TriggerSchedule, up, f.now())
	for _, path := range []string{"/ui/domains/tern/gaps", "/ui/domains/tern/insights", "/ui/domains/tern/conversations", "/ui/domains/tern/checks"} {
		p := b.get(path)
		if !strings.Contains(p.body, `class="alert regressed"`) || !strings.Contains(p.body, "1 answer check(s) regressed in the scheduled run") ||
			!strings.Contains(p.body, `href="/ui/domains/tern/checks/runs/`+sched.ID+`"`) || !strings.Contains(p.body, "restore-snapshot") {
			t.Errorf("%s does not show the scheduled run's regression", path)
		}
	}
	if p := b.get("/ui/settings"); strings.Contains(p.body, `class="alert regressed"`) {
		t.Error("the settings page shows a domain's regression")
	}
	// A later scheduled run without regressions ends the alert.
	f.advance(time.Hour)
	clean := aRun(f, checkrun.TriggerSchedule, up, f.now())
	f.runs.mu.Lock()
	for i := range f.runs.runs {
		if f.runs.runs[i].ID == clean.ID {
			f.runs.runs[i].Report.Totals.Regressed = 0
		}
	}
	f.runs.mu.Unlock()
	if p := b.get("/ui/domains/tern/gaps"); strings.Contains(p.body, `class="alert regressed"`) {
		t.Error("the alert stays after a scheduled run without regressions")
	}

	other := f.browser()
	other.signIn(f.globexKey)
	if p := other.get("/ui/domains/tern/checks/runs/" + pr.ID); p.status != http.StatusNotFound {
		t.Errorf("another organization reads a run: %d", p.status)
	}
	if p := b.get("/ui/domains/tern/checks/runs/nope"); p.status != http.StatusNotFound {
		t.Errorf("an unknown run: %d", p.status)
	}
}
