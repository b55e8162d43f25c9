package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/config"
)

// startDemo starts docsmith as make run does (the demo on) on dir.
func startDemo(t testing.TB, dir string) (*app.Main, *bytes.Buffer) {
	t.Helper()
	// One workflow tick, at the start: the demo's scheduled workflow does
	// not add jobs in the middle of a test.
	env := map[string]string{"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "true", "DOCSMITH_WORKERS": "1", "DOCSMITH_WORKFLOW_TICK": "1h"}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	loader := config.Bind(fs, true)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := loader.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	m := &app.Main{Config: cfg, Log: cfg.Logger(io.Discard), Out: &out, Runner: testRunner{}}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return m, &out
}

var demoKeyAttr = regexp.MustCompile(`data-key="(svc_dsc_[^"]+)"`)

// TestDemoPage: a first start prints the demo page's address; the page
// carries a working assistant key of the demo domain, kept across restarts.
func TestDemoPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var keys []string
	for range 2 {
		m, out := startDemo(t, dir)
		base := "http://" + m.Addr()
		if !strings.Contains(out.String(), "the demo docs site with the chat widget is at "+base+"/demo/") {
			t.Errorf("start printed:\n%s", out)
		}
		res, err := client.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/demo/" {
			t.Errorf("GET / is %d to %q", res.StatusCode, res.Header.Get("Location"))
		}
		res, err = client.Get(base + "/demo/assistant/widget")
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		key := demoKeyAttr.FindStringSubmatch(string(page))
		if res.StatusCode != http.StatusOK || key == nil || !strings.Contains(string(page), `data-domain="demo"`) {
			t.Fatalf("demo page %d:\n%s", res.StatusCode, page)
		}
		keys = append(keys, key[1])
		body, _ := json.Marshal(askBody("How do I add the widget to my site?", ""))
		req, _ := http.NewRequest(http.MethodPost, base+"/discovery/v2/assistant/demo/message", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key[1])
		req.Header.Set("Content-Type", "application/json")
		res, err = client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		stream, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(stream), `"type":"source-url"`) {
			t.Errorf("the demo page's key asks: %d %s", res.StatusCode, stream)
		}
		if err := m.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if keys[0] != keys[1] {
		t.Error("a restart changed the demo page's key")
	}
}

type demoRun struct {
	Failure         string
	Console         []string
	Examples        []string
	FirstTokenMs    []float64
	TotalMs         []float64
	Text            string
	Sources         []string
	APIQuestion     string
	APISources      []string
	FocusAfterClose string
	Overflow        []string
	MenuShown       bool
}

// TestDemoPageInBrowser is the new user's first minute: make run, open the
// printed address, ask an example question, get a streamed, cited answer
// whose links stay in the demo site.
func TestDemoPageInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "demo")
	m, _ := startDemo(t, t.TempDir())
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	base := "http://" + m.Addr()

	var run demoRun
	browser.Run(t, "demo.mjs", map[string]any{
		"page": base + "/demo/assistant/widget", "runs": 1, "artifacts": artifacts, "apiQuestion": "How do I open the widget from my own search box?",
		// docsmith's docs as the demo shows them, on a desktop and a phone:
		// tabs, steps, callouts, code groups, an API page, the generated
		// configuration reference.
		"shots": []string{base + "/demo/", base + "/demo/assistant/widget", base + "/demo/api-reference/agent/create-job", base + "/demo/reference/configuration"},
	}, &run)
	if run.Failure != "" {
		t.Fatalf("browser: %s\nconsole: %q", run.Failure, run.Console)
	}
	if len(run.Console) > 0 {
		t.Errorf("console: %q", run.Console)
	}
	if len(run.Overflow) > 0 || !run.MenuShown {
		t.Errorf("on a phone, pages wider than the screen: %q; the menu opens: %v", run.Overflow, run.MenuShown)
	}
	if !slices.Equal(run.Examples, app.DemoQuestions()) || !strings.Contains(run.Text, "script") {
		t.Errorf("examples %q, answer %q", run.Examples, run.Text)
	}
	if len(run.Sources) == 0 || pageOf(run.Sources[0]) != base+"/demo/assistant/widget" {
		t.Errorf("sources %q, want the demo site's widget page first", run.Sources)
	}
	if run.FocusAfterClose != "launcher" {
		t.Errorf("after closing, the focus is on %q, want the launcher it was opened from", run.FocusAfterClose)
	}
	// docsmith.open(question), as a site's search box would call it.
	if run.APIQuestion != "How do I open the widget from my own search box?" || len(run.APISources) == 0 || pageOf(run.APISources[0]) != base+"/demo/assistant/widget" {
		t.Errorf("docsmith.open(question): asked %q, sources %q", run.APIQuestion, run.APISources)
	}
}

// BenchmarkWidgetFirstToken measures, in chromium on the demo page, the
// time from sending a question (an example, in a new conversation each
// time) to the first answer text on screen, and to the complete answer.
func BenchmarkWidgetFirstToken(b *testing.B) {
	browser := browsertest.Find(b)
	m, _ := startDemo(b, b.TempDir())
	defer func() { _ = m.Shutdown(context.Background()) }()
	var run demoRun
	b.ResetTimer()
	browser.Run(b, "demo.mjs", map[string]any{"page": "http://" + m.Addr() + "/demo/", "runs": b.N}, &run)
	b.StopTimer()
	if run.Failure != "" || len(run.FirstTokenMs) != b.N {
		b.Fatalf("browser: %s (%d runs)", run.Failure, len(run.FirstTokenMs))
	}
	slices.Sort(run.FirstTokenMs)
	slices.Sort(run.TotalMs)
	pct := func(s []float64, p float64) float64 { return s[int(p*float64(len(s)-1))] }
	b.ReportMetric(pct(run.FirstTokenMs, 0.5), "first-token-p50-ms")
	b.ReportMetric(pct(run.FirstTokenMs, 0.95), "first-token-p95-ms")
	b.ReportMetric(pct(run.TotalMs, 0.5), "answer-p50-ms")
	b.ReportMetric(0, "ns/op")
}

// TestDemoPageUnreadableKey: a demo page that cannot get its key leaves
// the server up, without the page.
func TestDemoPageUnreadableKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "demo-widget-key"), 0o755); err != nil {
		t.Fatal(err)
	}
	m, out := startDemo(t, dir)
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	res, err := http.Get("http://" + m.Addr() + "/demo/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound || strings.Contains(out.String(), "the demo docs site") {
		t.Errorf("GET /demo/ is %d; start printed:\n%s", res.StatusCode, out)
	}
}

// TestDemoAnswersFromDocsmithDocs is a newcomer asking docsmith about
// docsmith: after a first start, the printed assistant key and question get
// an answer from docsmith's own docs that cites the widget page, and the
// printed job prompt, run by the real agent with the builtin model, edits
// the quickstart on a branch of the demo repository.
func TestDemoAnswersFromDocsmithDocs(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DOCSMITH_DATA_DIR": t.TempDir(), "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "true",
		"DOCSMITH_WORKERS": "1", "DOCSMITH_WORKFLOW_TICK": "1h", "DOCSMITH_QUEUE_POLL": "100ms"}
	cfg, err := config.Bind(flag.NewFlagSet("serve", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	m := &app.Main{Config: cfg, Log: cfg.Logger(io.Discard), Out: &out} // the real agent
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	printed := out.String()
	const question = "How do I add the widget to my site?"
	const prompt = `replace \"five minutes\" with \"a few minutes\" in quickstart`
	for _, want := range []string{question, prompt, "docsmith's own docs"} {
		if !strings.Contains(printed, want) {
			t.Fatalf("the first start does not print %q:\n%s", want, printed)
		}
	}
	assistantKey := regexp.MustCompile(`assistant key \(assistant endpoints\):\s+(svc_dsc_\S+)`).FindStringSubmatch(printed)
	adminKey := regexp.MustCompile(`admin key \(agent endpoints\):\s+(svc_\S+)`).FindStringSubmatch(printed)
	if assistantKey == nil || adminKey == nil {
		t.Fatalf("no keys in the first start's output:\n%s", printed)
	}
	base := "http://" + m.Addr()
	if i := strings.Index(printed, "The demo domain's search index"); i >= 0 {
		line, _, _ := strings.Cut(printed[i:], ".")
		t.Log(line)
	}

	body, _ := json.Marshal(askBody(question, ""))
	req, _ := http.NewRequest(http.MethodPost, base+"/discovery/v2/assistant/"+app.DemoDomain+"/message", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+assistantKey[1])
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("ask: %d %s", res.StatusCode, stream)
	}
	var sources, text []string
	for _, c := range uiChunks(t, stream) {
		switch c["type"] {
		case "source-url":
			sources = append(sources, pageOf(c["url"].(string)))
		case "text-delta":
			text = append(text, c["delta"].(string))
		}
	}
	answer := strings.Join(text, "")
	if len(sources) == 0 || !strings.HasSuffix(sources[0], "assistant/widget") || !strings.Contains(answer, "widget.js") {
		t.Fatalf("sources %q, answer %q: want the widget page cited first and its script tag quoted", sources, answer)
	}

	// The printed job prompt, as pasted.
	jobs := base + "/v2/agent/" + app.DemoProject
	var job struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	apiCall(t, adminKey[1], http.MethodPost, jobs+"/job", `{"prompt": "replace \"five minutes\" with \"a few minutes\" in quickstart"}`, http.StatusCreated, &job)
	deadline := time.Now().Add(60 * time.Second)
	for job.Status != "completed" {
		if job.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("the printed job prompt's job: %+v", job)
		}
		time.Sleep(100 * time.Millisecond)
		apiCall(t, adminKey[1], http.MethodGet, jobs+"/job/"+job.ID, "", http.StatusOK, &job)
	}
}

// TestDemoScheduledWorkflowRuns: make run's demo shows a scheduled
// workflow working. The demo repository's check-navigation workflow is read on
// the first start, and when its next ten-minute slot comes (the clock is
// moved there) the real agent runs it with the builtin model: a job with
// trigger schedule that reports on the navigation and changes nothing.
func TestDemoScheduledWorkflowRuns(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 5, 4, 12, 1, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	env := map[string]string{"DOCSMITH_DATA_DIR": t.TempDir(), "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "true",
		"DOCSMITH_WORKERS": "1", "DOCSMITH_WORKFLOW_TICK": "1s", "DOCSMITH_QUEUE_POLL": "100ms"}
	cfg, err := config.Bind(flag.NewFlagSet("serve", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	m := &app.Main{Config: cfg, Log: cfg.Logger(io.Discard), Out: &out, Now: clock}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	key := regexp.MustCompile(`svc_[A-Za-z0-9]+_[A-Za-z0-9_-]+`).FindString(out.String())
	if key == "" || strings.HasPrefix(key, "svc_dsc_") {
		t.Fatalf("no admin key in the first start's output:\n%s", out.String())
	}
	base := "http://" + m.Addr() + "/v2/agent/demo"
	var listing struct {
		Workflows []struct {
			ID      string  `json:"id"`
			NextRun *string `json:"nextRun"`
		} `json:"workflows"`
	}
	apiCall(t, key, http.MethodGet, base+"/workflows", "", http.StatusOK, &listing)
	if len(listing.Workflows) != 1 || listing.Workflows[0].ID != "check-navigation" || listing.Workflows[0].NextRun == nil || !strings.HasPrefix(*listing.Workflows[0].NextRun, "2026-05-04T12:10:00") {
		t.Fatalf("the demo's workflows = %+v (next run %s)", listing.Workflows, deref(listing.Workflows[0].NextRun))
	}

	mu.Lock()
	now = time.Date(2026, 5, 4, 12, 10, 2, 0, time.UTC)
	mu.Unlock()
	var jobs struct {
		Jobs []struct {
			ID       string  `json:"id"`
			Status   string  `json:"status"`
			Trigger  string  `json:"trigger"`
			Workflow *string `json:"workflow"`
			Summary  *string `json:"summary"`
			PRLink   *string `json:"prLink"`
		} `json:"jobs"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		apiCall(t, key, http.MethodGet, base+"/jobs", "", http.StatusOK, &jobs)
		if len(jobs.Jobs) == 1 && jobs.Jobs[0].Status != "active" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no settled scheduled run after 30s: %+v", jobs.Jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	j := jobs.Jobs[0]
	if j.Status != "completed" || j.Trigger != "schedule" || j.Workflow == nil || *j.Workflow != "check-navigation" || j.PRLink != nil ||
		j.Summary == nil || !strings.Contains(*j.Summary, "navigation") {
		t.Fatalf("the scheduled run = %+v (summary %v)", j, deref(j.Summary))
	}
	t.Logf("summary: %s", *j.Summary)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
