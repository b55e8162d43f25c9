package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// runWith is run with more environment variables than the data directory.
func runWith(t *testing.T, dir string, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
		if k == "DOCSMITH_DATA_DIR" {
			return dir, true
		}
		v, ok := vars[k]
		return v, ok
	}}
	code := Run(t.Context(), args, env)
	return result{code, out.String(), errOut.String()}
}

const listingJSON = `{"baseSha":"0123456789abcdef0123456789abcdef01234567","syncedAt":"2026-03-02T09:01:00.000Z","workflows":[` +
	`{"id":"from-api","name":"Docs from the API","path":".docsmith/workflows/from-api.md","overrides":null,` +
	`"trigger":{"push":[{"repo":"acme/api","branch":"main"},{"repo":"acme/sdk","branch":null}]},"context":[],"automerge":false,` +
	`"instruction":"Update the reference.","firstSeen":"2026-03-02T09:00:00.000Z","lastRunSlot":null,"nextRun":null,"refused":null},` +
	`{"id":"weekly","name":"Weekly","path":".mintlify/workflows/weekly.md","overrides":null,"trigger":{"cron":"0 9 * * 1"},"context":[],` +
	`"automerge":true,"instruction":"Fix typos.","firstSeen":"2026-03-02T09:00:00.000Z","lastRunSlot":"2026-03-02T09:00:00.000Z",` +
	`"nextRun":"2026-03-09T09:00:00.000Z","refused":"automerge is not allowed for project docs"}],` +
	`"problems":[{"file":".mintlify/workflows/bad.md","line":3,"key":"on.cron","message":"has 4 fields; a cron expression has 5"},` +
	`{"file":".mintlify/workflows/empty.md","line":null,"key":null,"message":"is not valid UTF-8"}]}`

const runJobJSON = `{"id":"job-1","status":"%s","source":{"repository":"r","ref":"docsmith/job1-weekly"},"model":"builtin","prLink":null,` +
	`"createdAt":"2026-03-02T09:00:00.000Z","archivedAt":null,"summary":null,"error":null,"messages":[%s]}`

// fakeAPI answers the workflow endpoints as a docsmith server would, and
// records the requests.
type fakeAPI struct {
	mu       sync.Mutex
	requests []string
	active   bool // a run is queued on the active run (200)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	active := f.active
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.Method + " " + r.URL.Path {
	case "GET /v2/agent/docs/workflows", "POST /v2/agent/docs/workflows/sync":
		fmt.Fprint(w, listingJSON)
	case "GET /v2/agent/new/workflows":
		fmt.Fprint(w, `{"baseSha":null,"syncedAt":null,"workflows":[],"problems":[]}`)
	case "POST /v2/agent/docs/workflows/weekly/run":
		if active {
			fmt.Fprintf(w, runJobJSON, "active", `{"seq":1,"prompt":"Fix typos.","status":"running"},{"seq":2,"prompt":"Fix typos.","status":"queued"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, runJobJSON, "active", `{"seq":1,"prompt":"Fix typos.","status":"queued"}`)
	case "GET /v2/agent/docs/job/job-1/events":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": at 2026-03-02T09:00:00Z\nid: 1\nevent: status\ndata: {\"status\":\"active\"}\n\n")
		fmt.Fprint(w, ": at 2026-03-02T09:00:05Z\nid: 2\nevent: status\ndata: {\"status\":\"completed\",\"summary\":\"Fixed 3 typos.\"}\n\n")
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":"workflow \"nope\" not found in project \"docs\""}`)
	}
}

// TestWorkflowCommands checks workflow list, sync and run against a fake
// server: the requests they send with the job commands' connection
// settings, and what they print.
func TestWorkflowCommands(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	vars := map[string]string{"DOCSMITH_URL": srv.URL, "DOCSMITH_API_KEY": "svc_test", "DOCSMITH_PROJECT": "docs"}
	dir := t.TempDir()

	r := runWith(t, dir, vars, "workflow", "list")
	if r.code != 0 {
		t.Fatalf("workflow list = %+v", r)
	}
	for _, want := range []string{
		"WORKFLOW", "NEXT RUN", "AUTOMERGE",
		"from-api", "push acme/api@main, acme/sdk",
		"weekly", "cron 0 9 * * 1", "2026-03-09T09:00:00.000Z", "refused: automerge is not allowed for project docs",
		"read at 0123456789ab on 2026-03-02T09:01:00.000Z",
		"  .mintlify/workflows/bad.md:3: on.cron: has 4 fields; a cron expression has 5\n",
		"  .mintlify/workflows/empty.md: is not valid UTF-8\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("workflow list lacks %q:\n%s", want, r.stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^weekly\s+Weekly\s+cron 0 9 \* \* 1\s+2026-03-09T09:00:00.000Z\s+2026-03-02T09:00:00.000Z\s+yes\s+refused: `).MatchString(r.stdout) {
		t.Errorf("the weekly row is not a table row:\n%s", r.stdout)
	}

	r = runWith(t, dir, vars, "workflow", "list", "--project", "new")
	if r.code != 0 || !strings.Contains(r.stderr, "have not been read yet; run: docsmith workflow sync new") {
		t.Errorf("workflow list of a project never synced = %+v", r)
	}

	if r := runWith(t, dir, map[string]string{"DOCSMITH_URL": srv.URL, "DOCSMITH_API_KEY": "svc_test"}, "workflow", "sync", "docs"); r.code != 0 || !strings.Contains(r.stdout, "weekly") {
		t.Errorf("workflow sync docs = %+v", r)
	}
	if r := runWith(t, dir, vars, "workflow", "sync", "other", "--project", "docs"); r.code != 1 || !strings.Contains(r.stderr, "two projects given") {
		t.Errorf("workflow sync with two projects = %+v", r)
	}

	r = runWith(t, dir, vars, "workflow", "run", "weekly")
	if r.code != 0 || !strings.Contains(r.stdout, "workflow weekly started job job-1 on branch docsmith/job1-weekly\n") || !strings.Contains(r.stdout, "status   active") {
		t.Errorf("workflow run = %+v", r)
	}
	r = runWith(t, dir, vars, "workflow", "run", "--watch", "weekly")
	if r.code != 0 || !strings.Contains(r.stdout, "status completed: Fixed 3 typos.") {
		t.Errorf("workflow run --watch = %+v", r)
	}
	api.mu.Lock()
	api.active = true
	api.mu.Unlock()
	r = runWith(t, dir, vars, "workflow", "run", "weekly")
	if r.code != 0 || !strings.Contains(r.stdout, "workflow weekly is still running as job job-1: this run was queued on it as message #2") {
		t.Errorf("workflow run on an active run = %+v", r)
	}
	r = runWith(t, dir, vars, "workflow", "run", "nope")
	if r.code != 1 || !strings.Contains(r.stderr, `workflow "nope" not found in project "docs" (HTTP 404)`) {
		t.Errorf("workflow run nope = %+v", r)
	}

	api.mu.Lock()
	defer api.mu.Unlock()
	want := []string{
		"GET /v2/agent/docs/workflows Bearer svc_test",
		"GET /v2/agent/new/workflows Bearer svc_test",
		"POST /v2/agent/docs/workflows/sync Bearer svc_test",
		"POST /v2/agent/docs/workflows/weekly/run Bearer svc_test",
		"POST /v2/agent/docs/workflows/weekly/run Bearer svc_test",
		"GET /v2/agent/docs/job/job-1/events Bearer svc_test",
		"POST /v2/agent/docs/workflows/weekly/run Bearer svc_test",
		"POST /v2/agent/docs/workflows/nope/run Bearer svc_test",
	}
	if strings.Join(api.requests, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests\n%s\nwant\n%s", strings.Join(api.requests, "\n"), strings.Join(want, "\n"))
	}
}

// TestWorkflowCommandErrors checks the usage errors, which need no server.
func TestWorkflowCommandErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"DOCSMITH_URL": "http://127.0.0.1:1", "DOCSMITH_API_KEY": "svc_test"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "list"}, "a project is needed: --project or DOCSMITH_PROJECT"},
		{[]string{"workflow", "sync"}, "a project is needed"},
		{[]string{"workflow", "run", "--project", "docs"}, "usage: docsmith workflow run"},
		{[]string{"workflow", "list", "--project", "docs", "extra"}, "usage: docsmith workflow list"},
		{[]string{"workflow", "sync", "a", "b"}, "usage: docsmith workflow sync"},
		{[]string{"workflow", "list", "--project", "docs"}, "cannot reach docsmith at http://127.0.0.1:1 (set the server address with --url or DOCSMITH_URL)"},
	}
	for _, tc := range tests {
		if r := runWith(t, dir, vars, tc.args...); r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("docsmith %s = %+v; want %q", strings.Join(tc.args, " "), r, tc.want)
		}
	}
	if r := runWith(t, dir, nil, "workflow", "list", "--project", "docs"); r.code != 1 || !strings.Contains(r.stderr, "an admin key is needed") {
		t.Errorf("workflow list without a key = %+v", r)
	}
	if r := run(t, dir, "help"); !strings.Contains(r.stdout, "docsmith workflow list --project P | workflow run --project P NAME [--watch] | workflow sync [PROJECT]") {
		t.Errorf("usage does not list the workflow commands:\n%s", r.stdout)
	}
}
