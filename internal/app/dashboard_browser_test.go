package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/examples"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

var (
	demoAdminKey     = regexp.MustCompile(`admin key \(agent endpoints\):\s+(svc_\S+)`)
	demoAssistantKey = regexp.MustCompile(`assistant key \(assistant endpoints\):\s+(svc_dsc_\S+)`)
)

type dashboardRun struct {
	Failure       string
	Console       []string
	Steps         []string
	BadKeyMessage string
	Cookie        map[string]any
	JobURL        string
	SawLive       bool
	Timeline      []string
	Files         []string
	Messages      []string
	Conversations []string
	Transcript    string
	Insights      string
	Feedback      []string
	Draft         string
	GapJobURL     string
	GapJob        string
	GapJobHref    string
	Statuses      map[string]int
	OtherLanding  string
	OtherSettings string
	AfterSignOut  string
}

// TestDashboardInBrowser is the dashboard's promise in chromium, on make
// run's demo with the real agent (builtin model): sign in with the printed
// admin key, start a job and watch it finish, follow up, read a reader's
// conversation that the docs did not cover and that the reader rated down,
// find it among the gaps, turn it into a job and see the job linked; a form
// without its CSRF token is refused, another organization's key sees none
// of it, and signing out ends the session.
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "dashboard")
	dir := t.TempDir()
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
	m := &app.Main{Config: cfg, Log: cfg.Logger(io.Discard), Out: &out, DemoDocs: examples.DemoDocs()} // the real agent
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	base := "http://" + m.Addr()
	admin, assistantKey := demoAdminKey.FindStringSubmatch(out.String()), demoAssistantKey.FindStringSubmatch(out.String())
	if admin == nil || assistantKey == nil || !strings.Contains(out.String(), "the dashboard is at "+base+"/ui/") {
		t.Fatalf("the first start printed:\n%s", out.String())
	}

	// A reader asks what the docs do not cover, and rates the answer down.
	const question = "Can I deploy the site with Terraform on Kubernetes?"
	body, _ := json.Marshal(askBody(question, ""))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/discovery/v2/assistant/demo/message", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+assistantKey[1])
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(res.Body)
	res.Body.Close()
	threadID := res.Header.Get("X-Thread-Id")
	var messageID string
	for _, c := range uiChunks(t, stream) {
		if c["type"] == "start" {
			messageID, _ = c["messageId"].(string)
		}
	}
	if res.StatusCode != http.StatusOK || threadID == "" || messageID == "" {
		t.Fatalf("ask: %d thread %q message %q\n%s", res.StatusCode, threadID, messageID, stream)
	}
	fb, _ := json.Marshal(map[string]string{"threadId": threadID, "messageId": messageID, "rating": "down", "comment": "Nothing about Terraform"})
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/discovery/v1/assistant/demo/feedback", bytes.NewReader(fb))
	req.Header.Set("Authorization", "Bearer "+assistantKey[1])
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode >= 300 {
		t.Fatalf("feedback: %d", res.StatusCode)
	}

	// An agent says over MCP that a page did not help.
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_feedback","arguments":` +
		`{"path":"reference/serve","helpful":false,"comment":"The port flag has no example."}}}`
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/discovery/v1/mcp/demo", strings.NewReader(call))
	req.Header.Set("Authorization", "Bearer "+assistantKey[1])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	mcpReply, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(mcpReply), `"recorded":true`) {
		t.Fatalf("submit_feedback: %d %s", res.StatusCode, mcpReply)
	}

	// Another organization with a project and an admin key of its own.
	other, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	tenants := tenant.NewService(other, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) })
	if _, err := tenants.CreateOrg(t.Context(), "globex"); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.CreateProject(t.Context(), tenant.Project{ID: "globex-docs", OrgID: "globex", RepoURL: filepath.Join(dir, "none")}); err != nil {
		t.Fatal(err)
	}
	_, otherKey, err := tenants.CreateKey(t.Context(), "globex", apikey.Admin, "globex")
	if err != nil {
		t.Fatal(err)
	}
	_ = other.Close()

	var run dashboardRun
	browser.Run(t, "dashboard.mjs", map[string]any{
		"base": base, "adminKey": admin[1], "otherKey": otherKey, "threadId": threadID, "question": question,
		"jobPrompt": `replace "4000" with "4321" in reference/serve`,
		"followUp":  `replace "4321" with "4322" in reference/serve`,
		// The gap's draft is started as it is: on the demo's builtin model
		// it is a command that runs.
		"gapPrompt": "",
		"artifacts": artifacts,
	}, &run)
	if run.Failure != "" {
		t.Fatalf("browser, after steps %q: %s\nconsole: %q", run.Steps, run.Failure, run.Console)
	}
	// The wrong key (401) and the two forged forms (403) are the only
	// failed loads the console may show.
	want := []string{"401 (Unauthorized)", "403 (Forbidden)", "403 (Forbidden)"}
	if len(run.Console) != len(want) {
		t.Errorf("console: %q", run.Console)
	} else {
		for i, w := range want {
			if !strings.Contains(run.Console[i], w) {
				t.Errorf("console: %q", run.Console)
			}
		}
	}
	if !strings.Contains(run.BadKeyMessage, "not valid") {
		t.Errorf("a wrong key says %q", run.BadKeyMessage)
	}
	if run.Cookie["httpOnly"] != true || run.Cookie["sameSite"] != "Strict" || run.Cookie["path"] != "/ui" {
		t.Errorf("session cookie %v", run.Cookie)
	}
	timeline := strings.Join(run.Timeline, "\n")
	for _, want := range []string{"Tool ", "Validation passed", "Committed ", "Status: completed"} {
		if !strings.Contains(timeline, want) {
			t.Errorf("the timeline lacks %q:\n%s", want, timeline)
		}
	}
	if len(run.Files) != 1 || !strings.Contains(run.Files[0], "reference/serve.mdx") {
		t.Errorf("files %q", run.Files)
	}
	if len(run.Messages) != 2 {
		t.Errorf("messages %q", run.Messages)
	}
	if len(run.Conversations) != 1 || !strings.Contains(run.Conversations[0], question) || !strings.Contains(run.Conversations[0], "not covered") || !strings.Contains(run.Conversations[0], "↓ down") {
		t.Errorf("conversations %q", run.Conversations)
	}
	if !strings.Contains(run.Transcript, "Nothing about Terraform") || !strings.Contains(run.Insights, "1 questions") && !strings.Contains(run.Insights, "1\n") {
		t.Logf("transcript %q insights %q", run.Transcript, run.Insights)
	}
	feedback := strings.Join(run.Feedback, "\n")
	if len(run.Feedback) != 2 || !strings.Contains(run.Feedback[0], "agent · MCP") || !strings.Contains(run.Feedback[0], "reference/serve") ||
		!strings.Contains(run.Feedback[0], "The port flag has no example.") || !strings.Contains(run.Feedback[1], "reader") || !strings.Contains(run.Feedback[1], question) {
		t.Errorf("feedback rows:\n%s", feedback)
	}
	if !strings.Contains(run.Draft, "- "+question) || !strings.Contains(run.Draft, "Nothing about Terraform") {
		t.Errorf("the drafted prompt:\n%s", run.Draft)
	}
	if run.GapJobHref == "" || !strings.HasSuffix(run.GapJobURL, run.GapJobHref) || !strings.Contains(run.GapJob, "completed") {
		t.Errorf("the gap's job %q (%s), made %s", run.GapJob, run.GapJobHref, run.GapJobURL)
	}
	if run.Statuses["noCSRF"] != 403 || run.Statuses["wrongCSRF"] != 403 {
		t.Errorf("forged forms: %v", run.Statuses)
	}
	for k, v := range run.Statuses {
		if strings.HasPrefix(k, "other ") && v != 404 {
			t.Errorf("%s: %d", k, v)
		}
	}
	if strings.Contains(run.OtherSettings, "demo") && strings.Contains(run.OtherSettings, "/ui/projects/demo/") {
		t.Error("another organization's settings list the demo project")
	}
	if run.AfterSignOut != "/ui/login" {
		t.Errorf("after sign-out the old cookie opened %s", run.AfterSignOut)
	}
}
