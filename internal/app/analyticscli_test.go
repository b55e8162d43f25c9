package app_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// TestAnalyticsCLI drives docsmith analytics and docsmith ui login against
// the real server, in each format.
func TestAnalyticsCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(env map[string]string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		}})
		return code, out.String(), errOut.String()
	}
	local := map[string]string{"DOCSMITH_DATA_DIR": dir}
	run(local, "org", "create", "acme")
	run(local, "project", "create", "--org", "acme", "--id", "docs", "--repo", "/srv/docs", "--check=false")
	run(local, "domain", "create", "--org", "acme", "--domain", "site", "--project", "docs", "--index=false")
	_, key, _ := run(local, "key", "create", "--org", "acme", "--kind", "admin")
	_, assistantKey, _ := run(local, "key", "create", "--org", "acme", "--kind", "assistant")

	// Two conversations, written as the assistant writes them.
	s, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for i, q := range []string{"How do I rotate webhook secrets?", "=HYPERLINK(\"x\") webhook secrets rotation"} {
		id := []string{"thr_a", "thr_b"}[i]
		if err := s.CreateThread(t.Context(), assistant.Thread{ID: id, Domain: "site", OrgID: "acme", FP: "anonymous", CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddTurn(t.Context(), assistant.Turn{ThreadID: id, MessageID: id + "_m", FP: "anonymous", Question: q, Model: "extractive", Status: assistant.TurnNotCovered, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Hour)
	}
	if err := s.RateTurn(t.Context(), assistant.Feedback{ThreadID: "thr_b", MessageID: "thr_b_m", Rating: "down", Comment: "no", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPageFeedback(t.Context(), assistant.PageFeedback{Domain: "site", OrgID: "acme", Path: "guides/webhooks", Rating: "up",
		Comment: "had the rotation steps", Source: assistant.FeedbackFromMCP, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()

	cfg, err := config.Bind(flag.NewFlagSet("t", flag.ContinueOnError), true).Load(func(k string) (string, bool) {
		v, ok := map[string]string{"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), Runner: jobCLIRunner{}}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	remote := map[string]string{"DOCSMITH_URL": "http://" + m.Addr(), "DOCSMITH_API_KEY": strings.TrimSpace(key)}

	code, out, errOut := run(remote, "analytics", "stats", "--domain", "site", "--from", "2026-03-01", "--to", "2026-03-02")
	if code != 0 || !strings.Contains(out, "questions     2") || !strings.Contains(out, "not covered   2 (100.0%)") || !strings.Contains(out, "1 down") {
		t.Errorf("stats = %d %s:\n%s", code, errOut, out)
	}
	code, out, _ = run(remote, "analytics", "conversations", "--domain", "site", "--format", "json")
	var convs []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &convs) != nil || len(convs) != 2 || convs[0]["threadId"] != "thr_b" {
		t.Errorf("conversations json = %d:\n%s", code, out)
	}
	code, out, _ = run(remote, "analytics", "conversations", "--domain", "site", "--feedback", "down", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(rows) != 2 || rows[1][0] != "thr_b" || !strings.HasPrefix(rows[1][5], "'=HYPERLINK") {
		t.Errorf("conversations csv = %d %v:\n%s", code, err, out)
	}
	code, out, _ = run(remote, "analytics", "gaps", "--domain", "site")
	if code != 0 || !strings.Contains(out, "+secret+webhook  2") || strings.Count(out, "\n") != 2 {
		t.Errorf("gaps table = %d:\n%s", code, out)
	}
	code, out, _ = run(remote, "analytics", "feedback", "--domain", "site", "--format", "csv")
	if code != 0 || !strings.Contains(out, "assistant,thr_b,1,down") || !strings.Contains(out, "mcp,,,up,") || !strings.Contains(out, "had the rotation steps,guides/webhooks") {
		t.Errorf("feedback csv = %d:\n%s", code, out)
	}
	code, out, _ = run(remote, "analytics", "feedback", "--domain", "site", "--source", "mcp", "--format", "csv")
	if rows, err := csv.NewReader(strings.NewReader(out)).ReadAll(); code != 0 || err != nil || len(rows) != 2 || rows[1][0] != "mcp" {
		t.Errorf("feedback --source mcp csv = %d %v:\n%s", code, err, out)
	}
	for _, c := range []struct {
		env  map[string]string
		args []string
		says string
	}{
		{map[string]string{}, []string{"analytics", "stats", "--domain", "site"}, "DOCSMITH_API_KEY"},
		{remote, []string{"analytics", "stats"}, "--domain is required"},
		{remote, []string{"analytics", "gaps", "--domain", "site", "--format", "xml"}, "--format"},
		{remote, []string{"analytics", "stats", "--domain", "site", "--from", "soon"}, "must be a date"},
		{remote, []string{"analytics", "stats", "--domain", "other"}, "not found (HTTP 404)"},
		{map[string]string{"DOCSMITH_URL": remote["DOCSMITH_URL"], "DOCSMITH_API_KEY": strings.TrimSpace(assistantKey)}, []string{"analytics", "stats", "--domain", "site"}, "admin key"},
	} {
		if code, _, errOut := run(c.env, c.args...); code == 0 || !strings.Contains(errOut, c.says) {
			t.Errorf("%v = %d: %s", c.args, code, errOut)
		}
	}

	// Every analytics answer matches openapi.json.
	spec := mustSpec(t)
	for _, c := range []struct {
		path, key string
		status    int
	}{
		{"/v2/analytics/site/conversations?limit=1", key, 200},
		{"/v2/analytics/site/conversations/thr_b", key, 200},
		{"/v2/analytics/site/insights?from=2026-03-01", key, 200},
		{"/v2/analytics/site/gaps", key, 200},
		{"/v2/analytics/site/feedback?rating=down", key, 200},
		{"/v2/analytics/site/feedback?source=mcp", key, 200},
		{"/v2/analytics/site/feedback?source=email", key, 400},
		{"/v2/analytics/site/conversations?status=maybe", key, 400},
		{"/v2/analytics/site/gaps", "", 401},
		{"/v2/analytics/site/insights", assistantKey, 403},
		{"/v2/analytics/nope/feedback", key, 404},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, remote["DOCSMITH_URL"]+c.path, nil)
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(c.key))
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := spec.check(req, res); err != nil || res.StatusCode != c.status {
			t.Errorf("GET %s: %d (want %d), against openapi.json: %v", c.path, res.StatusCode, c.status, err)
		}
		res.Body.Close()
	}

	// docsmith ui login prints a link that opens a sign-in page.
	code, out, errOut = run(remote, "ui", "login")
	link := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(link, remote["DOCSMITH_URL"]+"/ui/login?token=") || !strings.Contains(errOut, "works once") {
		t.Fatalf("ui login = %d %q %s", code, out, errOut)
	}
	res, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("the link answers %d", res.StatusCode)
	}
}
