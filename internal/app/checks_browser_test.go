package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/examples"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

type checksRun struct {
	Failure    string
	Console    []string
	Listed     []string
	Pinned     string
	Edited     string
	Dropped    string
	RunPage    string
	GapsAlert  string
	AlertHref  string
	ActionURLs []string
}

// TestDashboardChecksInBrowser: on make run's demo, a question a reader
// rated up and a question the docs did not cover become answer checks on
// the domain's checks page, in chromium; the team pins the first, edits
// its expectations and drops the second; a scheduled run's regression
// shows on the gaps page with a link to the run, whose page shows each
// check before and after.
func TestDashboardChecksInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "dashboard-checks")
	dir := t.TempDir()
	env := map[string]string{"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "true",
		"DOCSMITH_WORKERS": "1", "DOCSMITH_WORKFLOW_TICK": "1h", "DOCSMITH_INDEX_POLL_INTERVAL": "0"}
	cfg, err := config.Bind(flag.NewFlagSet("serve", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	m := &app.Main{Config: cfg, Log: cfg.Logger(io.Discard), Out: &out, DemoDocs: examples.DemoDocs()}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	base := "http://" + m.Addr()
	admin, assistantKey := demoAdminKey.FindStringSubmatch(out.String()), demoAssistantKey.FindStringSubmatch(out.String())
	if admin == nil || assistantKey == nil {
		t.Fatalf("the first start printed:\n%s", out.String())
	}

	// A reader asks what the docs answer and rates it up; another asks
	// what they do not cover.
	ask := func(question, rating string) {
		t.Helper()
		body, _ := json.Marshal(askBody(question, ""))
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/discovery/v2/assistant/"+app.DemoDomain+"/message", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+assistantKey[1])
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		stream, _ := io.ReadAll(res.Body)
		res.Body.Close()
		threadID, messageID := res.Header.Get("X-Thread-Id"), ""
		for _, c := range uiChunks(t, stream) {
			if c["type"] == "start" {
				messageID, _ = c["messageId"].(string)
			}
		}
		if res.StatusCode != http.StatusOK || messageID == "" {
			t.Fatalf("ask %q: %d\n%s", question, res.StatusCode, stream)
		}
		if rating == "" {
			return
		}
		fb, _ := json.Marshal(map[string]string{"threadId": threadID, "messageId": messageID, "rating": rating})
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/discovery/v1/assistant/"+app.DemoDomain+"/feedback", bytes.NewReader(fb))
		req.Header.Set("Authorization", "Bearer "+assistantKey[1])
		req.Header.Set("Content-Type", "application/json")
		res, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	ask("How do I install Quill?", "up")
	ask("Can I deploy the site with Terraform on Kubernetes?", "")

	// Turns are written behind the answers: wait until both are stored.
	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		turns, err := store.DomainTurns(t.Context(), app.DemoDomain, time.Time{}, time.Time{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		rated := len(turns) == 2 && (turns[0].Rating == "up" || turns[1].Rating == "up")
		if rated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turns were not stored: %+v", turns)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A scheduled run of the live assistant found a regression.
	install := answercheck.Check{Name: "install-quill", Question: "How do I install Quill?", Cite: []string{"installation"}, Origin: answercheck.OriginFile}
	themes := answercheck.Check{Name: "themes", Question: "How do I change the theme?", Contains: []string{"theme"}, Origin: answercheck.OriginFile}
	before := []answercheck.Result{
		answercheck.Judge(install, answercheck.Answer{Status: assistant.StatusAnswered, Text: "Download the release and run quill init.", Cited: []string{"installation"}}),
		answercheck.Judge(themes, answercheck.Answer{Status: assistant.StatusAnswered, Text: "Set theme in quill.toml.", Cited: []string{"themes"}}),
	}
	after := []answercheck.Result{
		answercheck.Judge(install, answercheck.Answer{Status: assistant.StatusNotCovered, Text: "The docs do not cover this."}),
		answercheck.Judge(themes, answercheck.Answer{Status: assistant.StatusAnswered, Text: "Set theme in quill.toml.", Cited: []string{"themes"}}),
	}
	checks, totals := answercheck.Compare(before, after)
	now := time.Now().UTC().Truncate(time.Microsecond)
	run, err := store.SaveRun(t.Context(), checkrun.Run{Domain: app.DemoDomain, Trigger: checkrun.TriggerSchedule, CreatedAt: now,
		Report: answercheck.Report{Domain: app.DemoDomain, Checks: checks, Totals: totals, StartedAt: now, AnswerDuration: 900 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}

	var got checksRun
	browser.Run(t, "checks.mjs", map[string]any{"base": base, "adminKey": admin[1], "artifacts": artifacts, "domain": app.DemoDomain}, &got)
	if got.Failure != "" || len(got.Console) != 0 {
		t.Fatalf("browser: %s\nconsole: %q", got.Failure, got.Console)
	}
	listed := strings.Join(got.Listed, "\n")
	for _, want := range []string{"How do I install Quill?", "rated up", "Can I deploy the site with Terraform on Kubernetes?", "gap"} {
		if !strings.Contains(listed, want) {
			t.Errorf("the listed checks lack %q:\n%s", want, listed)
		}
	}
	if !strings.Contains(got.Pinned, "pinned") {
		t.Errorf("after Pin: %q", got.Pinned)
	}
	if !strings.Contains(got.Edited, "contain “quill init”") {
		t.Errorf("after the edit: %q", got.Edited)
	}
	if !strings.Contains(got.Dropped, "Terraform") {
		t.Errorf("the dropped list: %q", got.Dropped)
	}
	if !strings.Contains(got.GapsAlert, "1 answer check(s) regressed in the scheduled run") || !strings.Contains(got.GapsAlert, "install-quill") ||
		!strings.HasSuffix(got.AlertHref, "/ui/domains/demo/checks/runs/"+run.ID) {
		t.Errorf("the gaps page's alert: %q, link %q", got.GapsAlert, got.AlertHref)
	}
	for _, want := range []string{"1 of 2 checks pass, 1 regressed", "pass → fail", "the answer said the docs do not cover this", "schedule"} {
		if !strings.Contains(got.RunPage, want) {
			t.Errorf("the run page lacks %q:\n%s", want, got.RunPage)
		}
	}

	// What the team did is what a run asks.
	active, err := store.TrafficChecks(t.Context(), app.DemoDomain, 10)
	if err != nil {
		t.Fatal(err)
	}
	var pinned, dropped int
	for _, c := range active {
		if c.Pinned && c.Edited && strings.Join(c.Contains, ",") == "quill init" {
			pinned++
		}
		if c.Dropped && c.Origin == answercheck.OriginGap {
			dropped++
		}
	}
	if pinned != 1 || dropped != 1 {
		t.Errorf("stored checks: %+v", active)
	}
}
