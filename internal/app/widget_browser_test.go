package app_test

// The chat widget in Debian's chromium (clients/browser/widget.mjs through
// internal/browsertest), embedded in a page of another origin than the
// running docsmith, against the extractive model so answers are
// deterministic. The browser reports what a reader saw; this test checks it
// and the server's side: the requests the widget sent and the stored turns.

import (
	"bytes"
	"encoding/json"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// recordingProxy forwards to docsmith and keeps the discovery requests'
// bodies: what the widget sent, as the server received it.
type recordingProxy struct {
	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	Path, Origin string
	Body         []byte
}

func (p *recordingProxy) handler(t *testing.T, target string) http.Handler {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/discovery/") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			p.mu.Lock()
			p.requests = append(p.requests, recorded{Path: r.URL.Path, Origin: r.Header.Get("Origin"), Body: body})
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	})
}

func (p *recordingProxy) bodies(path string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, r := range p.requests {
		if r.Path == path {
			var m map[string]any
			if err := json.Unmarshal(r.Body, &m); err == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// hostPage is a docs page of another site that embeds the widget, with
// styles that would leak into an unisolated widget (and out of one).
var hostPage = template.Must(template.New("host").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Tern docs</title>
<link rel="icon" href="data:,">
<style>
body { font: 17px/1.7 Georgia, serif; color: rgb(40, 40, 60); background: rgb(250, 248, 240); margin: 24px; }
* { letter-spacing: 0.5px; }
button { background: rgb(255, 0, 0); font-size: 30px; padding: 20px; }
pre { background: rgb(230, 230, 230); padding: 12px; }
a { color: rgb(0, 90, 0); }
div { border: 3px solid rgb(0, 0, 255); }
</style></head>
<body>
<h1>Schedules</h1>
<p id="sel">Add --at 02:00 to tern sync to copy once a day at that time instead of watching.</p>
<pre data-docsmith-ask><code id="ignore-example">*.tmp
node_modules/</code></pre>
<p><a href="#x">A link</a> <button id="own" type="button">The site's own button</button> <input id="own-input" placeholder="Search"></p>
{{if .Src}}<script async src="{{.Src}}" data-domain="widget" data-key="{{.Key}}" data-title="Tern docs" data-color="#1d4ed8"
  data-base-path="/docs" data-examples="How do I exclude files?|How do I limit bandwidth?"></script>{{end}}
</body></html>`))

func hostServer(t *testing.T, widgetSrc string, keys map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data := struct{ Src, Key string }{Src: widgetSrc, Key: keys["valid"]}
		switch r.URL.Path {
		case "/docs/guides/schedules":
		case "/bare":
			data.Src = ""
		case "/revoked":
			data.Key = keys["revoked"]
		case "/limited":
			data.Key = keys["limited"]
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = hostPage.Execute(w, data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type askResult struct {
	Text         string
	Citations    []struct{ N, Href string }
	Sources      []struct{ Href, Title string }
	Error        string
	FirstTokenMs *float64
	Lengths      []int
	StopSeen     bool
	ThreadID     string
}

type widgetRun struct {
	Failure             string
	Console             []string
	Launcher            string
	FocusOnOpen         string
	TabStops            []string
	EscapeClosed        bool
	First, FollowUp     askResult
	MessagesAfterReload int
	AfterReload         askResult
	SelectionChip       string
	Selection           askResult
	CodeChip            string
	Code                askResult
	Feedback            string
	Events              []struct {
		Name   string
		Detail map[string]any
	}
	Screenshots []struct {
		File, Scheme, Name string
		PanelBackground    string
		PanelWidth         float64
	}
	StylesBefore, StylesAfter map[string]map[string]string
	Revoked, Limited, Foreign askResult
	ForeignConsole            []string
}

func TestWidgetInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "widget")

	// A low per-key limit, which the test's own key stays under.
	s := assistantSetup(t, "DOCSMITH_LIMIT_ASSISTANT_PER_KEY_MONTH=20")
	proxy := &recordingProxy{}
	api := httptest.NewServer(proxy.handler(t, s.base))
	t.Cleanup(api.Close)

	keys := map[string]string{"valid": s.assistantA}
	host := hostServer(t, api.URL+"/widget.js", keys)
	foreign := hostServer(t, api.URL+"/widget.js", keys)
	s.cli("domain", "create", "--org", orgA, "--domain", "widget", "--project", "tern",
		"--site-url", "https://tern.example/docs", "--allowed-origin", host.URL)
	s.cli("index", "widget")
	revoked := s.newKey(orgA, "assistant")
	parsed, err := apikey.Parse(revoked)
	if err != nil {
		t.Fatal(err)
	}
	s.cli("key", "revoke", "--org", orgA, parsed.ID)
	keys["revoked"] = revoked
	limited := s.newKey(orgA, "assistant")
	for i := 0; ; i++ {
		r := s.post("/discovery/v1/search/widget", limited, map[string]any{"query": "sync"})
		if r.status == http.StatusTooManyRequests {
			break
		}
		if i == 30 {
			t.Fatalf("no 429 after %d searches: %s", i, r)
		}
	}
	keys["limited"] = limited

	var run widgetRun
	browser.Run(t, "widget.mjs", map[string]any{
		"artifacts":         artifacts,
		"page":              host.URL + "/docs/guides/schedules",
		"barePage":          host.URL + "/bare",
		"revokedPage":       host.URL + "/revoked",
		"limitedPage":       host.URL + "/limited",
		"foreignPage":       foreign.URL + "/docs/guides/schedules",
		"shortcut":          "Control+i",
		"question":          "How do I exclude files from a sync?",
		"followUp":          "And what happens on conflicts?",
		"afterReload":       "How do I limit the bandwidth?",
		"selectionQuestion": "What does this option do?",
		"codeQuestion":      "Where do I put these patterns?",
		"comment":           "It did not say where the file goes.",
	}, &run)
	if run.Failure != "" {
		t.Fatalf("browser: %s\nconsole: %q", run.Failure, run.Console)
	}
	for _, line := range run.Console {
		if strings.HasPrefix(line, "error") || strings.HasPrefix(line, "pageerror") {
			t.Errorf("console on the allowed origin: %s", line)
		}
	}

	// Keyboard-first: the shortcut opens with the focus in the question
	// box, Tab stays in the dialog (the focus is always in the widget's
	// host element), Escape closes.
	if !strings.Contains(run.Launcher, "Tern docs") || run.FocusOnOpen != "Your question" || !run.EscapeClosed {
		t.Errorf("launcher %q, focus on open %q, escape closed %v", run.Launcher, run.FocusOnOpen, run.EscapeClosed)
	}
	for _, tag := range run.TabStops {
		if tag != "docsmith-widget" {
			t.Errorf("Tab moved the focus out of the dialog: %q", run.TabStops)
			break
		}
	}

	// A streamed, cited answer: text arrived while the stop button showed,
	// and citations link to the pages of the domain's site.
	first := run.First
	if first.Error != "" || !strings.Contains(first.Text, ".ternignore") || !first.StopSeen || first.FirstTokenMs == nil {
		t.Errorf("first answer: %+v", first)
	}
	if len(first.Sources) == 0 || pageOf(first.Sources[0].Href) != "https://tern.example/docs/guides/sync" {
		t.Errorf("first answer's sources %+v", first.Sources)
	}
	if len(first.Citations) == 0 || first.Citations[0].N != "1" || first.Citations[0].Href != first.Sources[0].Href {
		t.Errorf("first answer's citation links %+v (sources %+v)", first.Citations, first.Sources)
	}
	t.Logf("time to first answer token in the browser: %.0f ms; text lengths seen while streaming: %v", *first.FirstTokenMs, first.Lengths)

	// One thread across the follow-up and the reload, on the server too.
	thread := first.ThreadID
	if !threadIDPattern.MatchString(thread) || run.FollowUp.ThreadID != thread || run.AfterReload.ThreadID != thread {
		t.Errorf("threads: first %q, follow-up %q, after reload %q", thread, run.FollowUp.ThreadID, run.AfterReload.ThreadID)
	}
	if run.MessagesAfterReload != 4 {
		t.Errorf("after the reload the dialog shows %d messages, want the 4 of the conversation", run.MessagesAfterReload)
	}
	store, err := sqlite.Open(t.Context(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	turns, err := store.RecentTurns(t.Context(), thread, 10)
	if err != nil {
		t.Fatal(err)
	}
	var questions []string
	for _, turn := range turns {
		questions = append(questions, turn.Question)
	}
	if want := []string{"How do I exclude files from a sync?", "And what happens on conflicts?", "How do I limit the bandwidth?", "What does this option do?", "Where do I put these patterns?"}; !slices.Equal(questions, want) {
		t.Errorf("the server's thread %s holds %q, want %q", thread, questions, want)
	}

	// The requests: the v2 body of SPEC §4, with the page's path (without
	// the site's base path) and the selection and code context.
	// (The sixth and seventh are the revoked and the limited key's; the
	// refused origin's never left the browser: its preflight failed.)
	msgs := proxy.bodies("/discovery/v2/assistant/widget/message")
	if len(msgs) != 7 {
		t.Fatalf("the widget sent %d questions, want 7", len(msgs))
	}
	if msgs[0]["fp"] != "anonymous" || msgs[0]["currentPath"] != "/guides/schedules" || msgs[0]["threadId"] != nil || msgs[1]["threadId"] != thread {
		t.Errorf("first bodies: %v / %v", msgs[0], msgs[1])
	}
	wantSel := []any{map[string]any{"type": "textSelection", "value": "Add --at 02:00 to tern sync to copy once a day at that time instead of watching.", "path": "/guides/schedules"}}
	if !reflect.DeepEqual(msgs[3]["context"], wantSel) || msgs[2]["context"] != nil {
		t.Errorf("selection context %v, want %v (and none before)", msgs[3]["context"], wantSel)
	}
	wantCode := []any{map[string]any{"type": "code", "value": "*.tmp\nnode_modules/", "path": "/guides/schedules", "elementId": "ignore-example"}}
	if !reflect.DeepEqual(msgs[4]["context"], wantCode) {
		t.Errorf("code context %v, want %v", msgs[4]["context"], wantCode)
	}
	if !strings.Contains(run.SelectionChip, "About this selection") || !strings.Contains(run.CodeChip, "About this code") {
		t.Errorf("context chips %q / %q", run.SelectionChip, run.CodeChip)
	}
	// The context steers retrieval: the selection is about schedules, the
	// code about ignore patterns.
	if len(run.Selection.Sources) == 0 || pageOf(run.Selection.Sources[0].Href) != "https://tern.example/docs/guides/schedules" {
		t.Errorf("selection answer sources %+v", run.Selection.Sources)
	}
	if len(run.Code.Sources) == 0 || pageOf(run.Code.Sources[0].Href) != "https://tern.example/docs/guides/sync" {
		t.Errorf("code answer sources %+v", run.Code.Sources)
	}

	// Thumbs down with a comment, sent with the turn's ids.
	fb := proxy.bodies("/discovery/v1/assistant/widget/feedback")
	if len(fb) != 1 || fb[0]["threadId"] != thread || fb[0]["rating"] != "down" || fb[0]["comment"] != "It did not say where the file goes." || fb[0]["messageId"] == "" {
		t.Errorf("feedback requests %v", fb)
	}
	if run.Feedback != "Thanks for the feedback." {
		t.Errorf("after the feedback the answer shows %q", run.Feedback)
	}
	// The JS API's events since the reload: open, then answer (on window
	// too), for each question, then the feedback.
	var names []string
	for _, e := range run.Events {
		names = append(names, e.Name)
	}
	if want := []string{"open", "answer", "window:answer", "open", "answer", "window:answer", "open", "answer", "window:answer", "feedback"}; !slices.Equal(names, want) {
		t.Errorf("events %q, want %q", names, want)
	} else if a, f := run.Events[7].Detail, run.Events[9].Detail; a["threadId"] != thread || a["question"] != "Where do I put these patterns?" || f["rating"] != "down" || f["messageId"] != a["messageId"] {
		t.Errorf("answer event %v, feedback event %v", a, f)
	}
	turns, err = store.RecentTurns(t.Context(), thread, 10)
	if err != nil {
		t.Fatal(err)
	}
	if rated := turns[len(turns)-1]; rated.Rating != "down" || rated.Comment != "It did not say where the file goes." || rated.MessageID != fb[0]["messageId"] {
		t.Errorf("the rated turn is stored as %+v", rated)
	}

	// A revoked key, a key over its limit and a refused origin end as sentences, and the console
	// says how to allow the origin.
	if !strings.Contains(run.Revoked.Error, "key is not valid") {
		t.Errorf("revoked key: %+v", run.Revoked)
	}
	t.Logf("sentences: revoked %q; limited %q; refused origin %q", run.Revoked.Error, run.Limited.Error, run.Foreign.Error)
	if !strings.HasPrefix(run.Limited.Error, "Too many questions for now. Please try again in ") {
		t.Errorf("over the limit: %+v", run.Limited)
	}
	if run.Foreign.Error != "The assistant is not enabled on this website." {
		t.Errorf("foreign origin: %+v", run.Foreign)
	}
	// The domain exists (its key is what refused the origin), so the hint
	// changes it with domain update, and names the set-up file's key as
	// docsmith apply reads it.
	if !slices.ContainsFunc(run.ForeignConsole, func(l string) bool {
		return strings.Contains(l, "docsmith domain update --domain widget --allowed-origin "+foreign.URL) &&
			strings.Contains(l, "allowed_origins") && !strings.Contains(l, "domain create") && !strings.Contains(l, "allowedOrigins")
	}) {
		t.Errorf("foreign origin console: %q", run.ForeignConsole)
	}

	// The host page's styles are the same with the widget loaded and open.
	if !reflect.DeepEqual(run.StylesBefore, run.StylesAfter) {
		t.Errorf("host styles changed:\nbefore %v\nafter  %v", run.StylesBefore, run.StylesAfter)
	}

	// Screenshots: each exists; dark is dark; the phone gets the full width.
	for _, sc := range run.Screenshots {
		if st, err := os.Stat(sc.File); err != nil || st.Size() < 10_000 {
			t.Errorf("screenshot %s: %v", sc.File, err)
		}
		dark := sc.PanelBackground == "rgb(22, 25, 29)"
		if dark != (sc.Scheme == "dark") {
			t.Errorf("%s %s: panel background %s", sc.Name, sc.Scheme, sc.PanelBackground)
		}
		if sc.Name == "phone" && sc.PanelWidth != 390 {
			t.Errorf("phone: panel %v px wide, want the screen's 390", sc.PanelWidth)
		}
	}
	if len(run.Screenshots) != 4 {
		t.Errorf("%d screenshots, want 4", len(run.Screenshots))
	}
	t.Logf("screenshots: %d in %s", len(run.Screenshots), artifacts)
}
