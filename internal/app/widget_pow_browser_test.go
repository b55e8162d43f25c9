package app_test

// The chat widget in Debian's chromium on a domain that asks for proof of
// work (clients/browser/widget-pow.mjs): the reader still gets answers,
// and the server saw each answer refused once, a challenge fetched, and the
// answer asked again with its solution.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/browsertest"
)

// powRecorder forwards to docsmith and notes each discovery request: when
// it came, and whether it carried a solution.
type powRecorder struct {
	mu       sync.Mutex
	requests []powRequest
}

type powRequest struct {
	Method, Path string
	Solution     bool
	At           time.Time
	Number       int // the solution's number: how many hashes the browser tried
}

func (p *powRecorder) handler(t *testing.T, target string) http.Handler {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/discovery/") && r.Method != http.MethodOptions {
			p.mu.Lock()
			req := powRequest{Method: r.Method, Path: r.URL.Path, Solution: r.Header.Get("X-Docsmith-Pow") != "", At: time.Now()}
			var solution struct{ Number int }
			if raw, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Docsmith-Pow")); err == nil && json.Unmarshal(raw, &solution) == nil {
				req.Number = solution.Number
			}
			p.requests = append(p.requests, req)
			p.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	})
}

type powAnswer struct {
	Text, Error string
	Ms          float64
}

func TestWidgetProofOfWorkInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "widget-pow")

	// The default complexity, so that the test measures what readers pay.
	s := assistantSetup(t)
	rec := &powRecorder{}
	api := httptest.NewServer(rec.handler(t, s.base))
	t.Cleanup(api.Close)
	host := hostServer(t, api.URL+"/widget.js", map[string]string{"valid": s.assistantA})
	s.cli("domain", "create", "--org", orgA, "--domain", "widget", "--project", "tern",
		"--site-url", "https://tern.example/docs", "--allowed-origin", host.URL, "--proof-of-work")
	s.cli("index", "widget")

	// Without a solution the domain refuses to answer.
	if r := s.post("/discovery/v2/assistant/widget/message", s.assistantA, askBody("How do I exclude files from a sync?", "")); r.status != http.StatusForbidden {
		t.Fatalf("an answer without proof of work: %s", r)
	}

	const cpuSlowdown = 4 // roughly a mid-range phone against this machine
	var run struct {
		Failure     string
		Console     []string
		First, Slow powAnswer
		Screenshot  string
	}
	browser.Run(t, "widget-pow.mjs", map[string]any{
		"artifacts":    artifacts,
		"page":         host.URL + "/docs/guides/schedules",
		"question":     "How do I exclude files from a sync?",
		"slowQuestion": "How do I limit the bandwidth?",
		"cpuSlowdown":  cpuSlowdown,
	}, &run)
	if run.Failure != "" {
		t.Fatalf("browser: %s\nconsole: %q", run.Failure, run.Console)
	}
	if run.First.Error != "" || !strings.Contains(run.First.Text, ".ternignore") {
		t.Errorf("first answer on the proof-of-work domain: %+v", run.First)
	}
	if run.Slow.Error != "" || run.Slow.Text == "" {
		t.Errorf("second answer, on a slowed CPU: %+v", run.Slow)
	}

	// Each question: refused without a solution, a challenge, the same
	// question with one.
	rec.mu.Lock()
	requests := append([]powRequest(nil), rec.requests...)
	rec.mu.Unlock()
	const message, challenge = "/discovery/v2/assistant/widget/message", "/discovery/v1/challenge/widget"
	want := []powRequest{{Method: "POST", Path: message}, {Method: "GET", Path: challenge}, {Method: "POST", Path: message, Solution: true}}
	want = append(want, want...)
	if len(requests) != len(want) {
		t.Fatalf("the widget sent %+v; want refused question, challenge, solved question, twice", requests)
	}
	for i, w := range want {
		if got := requests[i]; got.Method != w.Method || got.Path != w.Path || got.Solution != w.Solution {
			t.Errorf("request %d: %+v, want %+v", i, got, w)
		}
	}
	// The time between the challenge and the solved question is the
	// browser's work; the solution's number is how many hashes it took.
	// The widget page (docs/assistant/widget.mdx) quotes the rates.
	for _, w := range []struct {
		name  string
		solve int
	}{{"full speed", 2}, {fmt.Sprintf("CPU slowed %dx", cpuSlowdown), 5}} {
		took := requests[w.solve].At.Sub(requests[w.solve-1].At)
		t.Logf("%s: %d hashes in %v, %.0f hashes/s", w.name, requests[w.solve].Number, took.Round(time.Millisecond), float64(requests[w.solve].Number)/took.Seconds())
	}
	t.Logf("answers finished in %.0f ms and %.0f ms", run.First.Ms, run.Slow.Ms)

	if st, err := os.Stat(run.Screenshot); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v", run.Screenshot, err)
	}
}
