package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/giteatest"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

// The code change the test merges, and the docs edit the scripted model
// makes from it after reading it through the context tools.
const (
	watchSource = "package cmd\n\n// Watch rebuilds pages when a file changes (flag --watch).\nfunc Watch() {}\n"
	openRow     = "| `--open` | Open the site in the default browser | off |"
	watchRow    = "| `--watch` | Rebuild pages when a file changes | off |"
)

const updateDocsWorkflow = `---
name: Update docs from code
on:
  push:
    repo: docsmith/api
    branch: main
context:
  - repo: docsmith/api
---
Read the code change and document any new command-line flag in the reference.
`

// TestRealGiteaWebhookRunsWorkflow is the whole "when code merges, update
// the docs" path against a real Gitea: a docs repository holding a push
// workflow, a code repository with a real Gitea webhook pointing at
// docsmith, a pushed code change, the signed delivery starting the
// workflow's job, the model reading the changed file through the context
// tools, and a pull request on the docs repository. The workflow runs only
// once the operator allows the repository it reads. The same delivery sent
// again starts nothing, and one signed with another secret is refused.
func TestRealGiteaWebhookRunsWorkflow(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	docsURL := srv.CreateRepo(t, "docs")
	apiURL := srv.CreateRepo(t, "api")
	giteaE2EPush(t, docsURL, srv.User, srv.Token)
	giteaCommit(t, docsURL, srv.User, srv.Token, map[string]string{".mintlify/workflows/update-docs.md": updateDocsWorkflow}, "Add the update-docs workflow")

	model := llmtest.NewOpenAIServer(t,
		llmtest.ToolCalls(llmtest.ToolCall{Name: "read_context_file", Arguments: `{"repo":"docsmith/api","path":"cmd/watch.go"}`}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "str_replace", Arguments: mustJSON(t, map[string]string{"path": "reference/serve.mdx", "old_str": openRow, "new_str": openRow + "\n" + watchRow})}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "finish", Arguments: `{"summary":"Documented the new --watch flag of quill serve."}`}),
	)

	const secret = "hook-secret-0123456789"
	dir := t.TempDir()
	giteaE2ECLI(t, dir, "org", "create", "acme")
	giteaE2ECLI(t, dir, "project", "create", "--org", "acme", "--id", "docs", "--repo", docsURL,
		"--forge", "gitea", "--forge-url", srv.URL, "--token-env", "DOCS_FORGE_TOKEN",
		"--model", "openai/test-model", "--webhook-secret-env", "DOCS_HOOK_SECRET", "--check=false")
	key := strings.TrimSpace(giteaE2ECLI(t, dir, "key", "create", "--org", "acme", "--kind", "admin"))

	env := map[string]string{
		"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false",
		"DOCSMITH_GIT_ALLOW_HTTP": "true", "DOCSMITH_QUEUE_POLL": "100ms",
		"DOCSMITH_OPENAI_BASE_URL": model.URL, "DOCSMITH_OPENAI_API_KEY": "test-key",
		// One tick, at the start: the demo docs' own scheduled workflow
		// must not run in the middle of the test.
		"DOCSMITH_WORKFLOW_TICK": "1h",
	}
	cfg, err := config.Bind(flag.NewFlagSet("test", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), LookupEnv: func(k string) (string, bool) {
		switch k {
		case "DOCS_FORGE_TOKEN":
			return srv.Token, true
		case "DOCS_HOOK_SECRET":
			return secret, true
		}
		return "", false
	}}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(t.Context()) })
	base := "http://" + m.Addr()

	// The workflows are read from the docs repository's base branch.
	type listing struct {
		Workflows []struct {
			ID      string  `json:"id"`
			Refused *string `json:"refused"`
		} `json:"workflows"`
	}
	var synced listing
	apiCall(t, key, http.MethodPost, base+"/v2/agent/docs/workflows/sync", "", http.StatusOK, &synced)
	// The sample docs bring a scheduled workflow of their own.
	if len(synced.Workflows) != 2 || synced.Workflows[1].ID != "update-docs" {
		t.Fatalf("synced workflows = %+v", synced.Workflows)
	}
	// The workflow reads docsmith/api, which the operator has not allowed:
	// it is refused with the command that allows it, and does not run.
	const why = `workflow "update-docs" reads context repository docsmith/api, which project docs does not allow; ` +
		"an operator allows it with: docsmith project update --id docs --context-repo docsmith/api"
	if r := synced.Workflows[1].Refused; r == nil || !strings.Contains(*r, why) {
		t.Fatalf("update-docs refused: %v, want it to say %q", r, why)
	}
	var refusedRun struct {
		Error string `json:"error"`
	}
	apiCall(t, key, http.MethodPost, base+"/v2/agent/docs/workflows/update-docs/run", "", http.StatusConflict, &refusedRun)
	if !strings.Contains(refusedRun.Error, why) {
		t.Fatalf("a manual run of update-docs: %+v", refusedRun)
	}
	giteaE2ECLI(t, dir, "project", "update", "--id", "docs", "--context-repo", "docsmith/api")
	var allowed listing
	apiCall(t, key, http.MethodGet, base+"/v2/agent/docs/workflows", "", http.StatusOK, &allowed)
	if len(allowed.Workflows) != 2 || allowed.Workflows[1].Refused != nil {
		t.Fatalf("after project update --context-repo: %+v", allowed.Workflows)
	}

	// Gitea delivers to a recording proxy in front of docsmith, so that
	// the test can send the very same delivery again.
	rec := newDeliveryRecorder(t, base)
	hook := map[string]any{
		"type": "gitea", "active": true, "events": []string{"push"}, "branch_filter": "*",
		"config": map[string]string{"url": rec.URL + "/v2/hooks/docs", "content_type": "json", "secret": secret},
	}
	srv.API(t, http.MethodPost, "/repos/"+srv.User+"/api/hooks", mustJSONBytes(t, hook), http.StatusCreated, nil)

	giteaCommit(t, apiURL, srv.User, srv.Token, map[string]string{"cmd/watch.go": watchSource}, "Add the --watch flag")

	delivery := rec.wait(t)
	if delivery.status != http.StatusOK {
		t.Fatalf("docsmith answered Gitea's delivery with %d: %s", delivery.status, delivery.reply)
	}
	var result struct {
		Runs []struct {
			Workflow string `json:"workflow"`
			JobID    string `json:"jobId"`
			Start    string `json:"start"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(delivery.reply, &result); err != nil || len(result.Runs) != 1 || result.Runs[0].Start != "created" {
		t.Fatalf("delivery result %s (%v)", delivery.reply, err)
	}
	jobURL := base + "/v2/agent/docs/job/" + result.Runs[0].JobID
	job := giteaE2EWait(t, key, jobURL)
	if job.Status != "completed" || job.PRLink == nil {
		t.Fatalf("the workflow's job = %+v", job)
	}
	var full struct {
		Trigger  string `json:"trigger"`
		Workflow string `json:"workflow"`
	}
	apiCall(t, key, http.MethodGet, jobURL, "", http.StatusOK, &full)
	if full.Trigger != "push" || full.Workflow != "update-docs" {
		t.Fatalf("job trigger %q workflow %q", full.Trigger, full.Workflow)
	}

	// The model was given the push and read the changed file through the
	// context tools.
	reqs := model.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[0].Raw), "cmd/watch.go") || !strings.Contains(string(reqs[0].Raw), "read_context_file") {
		t.Fatalf("the first model request does not carry the push and the context tools")
	}
	if !strings.Contains(string(reqs[1].Raw), "rebuilds pages when a file changes") {
		t.Fatalf("the changed code file did not reach the model through read_context_file: %s", reqs[1].Raw)
	}

	// A pull request on the docs repository holds the edit.
	var pr struct {
		HTMLURL string `json:"html_url"`
		Base    struct {
			Ref string `json:"ref"`
		} `json:"base"`
	}
	srv.API(t, http.MethodGet, "/repos/"+srv.User+"/docs/pulls/1", nil, http.StatusOK, &pr)
	if *job.PRLink != pr.HTMLURL || pr.Base.Ref != "main" {
		t.Fatalf("prLink %s, pull request %s onto %s", *job.PRLink, pr.HTMLURL, pr.Base.Ref)
	}
	diff := giteaRaw(t, srv, "/repos/"+srv.User+"/docs/pulls/1.diff")
	if !strings.Contains(diff, "+"+watchRow) {
		t.Fatalf("the pull request's diff lacks the new row:\n%s", diff)
	}

	// The same delivery again: docsmith recognises it and starts nothing.
	again := rec.replay(t, delivery, nil)
	if again.status != http.StatusOK || !bytes.Contains(again.reply, []byte(`"replayed":true`)) {
		t.Fatalf("redelivery: %d %s", again.status, again.reply)
	}
	// Signed with another secret: refused.
	forged := rec.replay(t, delivery, func(h http.Header) { h.Set("X-Gitea-Signature", strings.Repeat("ab", 32)) })
	if forged.status != http.StatusUnauthorized {
		t.Fatalf("a delivery with a wrong signature: %d %s", forged.status, forged.reply)
	}
	var jobs struct {
		Jobs []any `json:"jobs"`
	}
	apiCall(t, key, http.MethodGet, base+"/v2/agent/docs/jobs", "", http.StatusOK, &jobs)
	if len(jobs.Jobs) != 1 {
		t.Fatalf("%d jobs after a redelivery and a forged one, want 1", len(jobs.Jobs))
	}
}

// delivery is one webhook request as Gitea sent it, and docsmith's reply.
type delivery struct {
	// arrived is when the recorder began to receive it.
	arrived time.Time
	header  http.Header
	body    []byte
	status  int
	reply   []byte
}

// deliveryRecorder is a reverse proxy to docsmith that keeps each webhook
// delivery it passes on.
type deliveryRecorder struct {
	URL    string
	target string
	mu     sync.Mutex
	got    []delivery
	seen   chan struct{}
}

func newDeliveryRecorder(t testing.TB, target string) *deliveryRecorder {
	t.Helper()
	r := &deliveryRecorder{target: target, seen: make(chan struct{}, 16)}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(resp *http.Response) error {
		reply, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(reply))
		body, _ := resp.Request.Context().Value(bodyKey{}).([]byte)
		arrived, _ := resp.Request.Context().Value(arrivedKey{}).(time.Time)
		r.mu.Lock()
		r.got = append(r.got, delivery{arrived: arrived, header: resp.Request.Header.Clone(), body: body, status: resp.StatusCode, reply: reply})
		r.mu.Unlock()
		r.seen <- struct{}{}
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		arrived := time.Now()
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		ctx := context.WithValue(context.WithValue(req.Context(), bodyKey{}, body), arrivedKey{}, arrived)
		proxy.ServeHTTP(w, req.WithContext(ctx))
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() { _ = s.Close() })
	r.URL = "http://" + ln.Addr().String()
	return r
}

type bodyKey struct{}

type arrivedKey struct{}

// holding waits up to a minute for a delivery whose body holds text and
// returns it.
func (r *deliveryRecorder) holding(t testing.TB, text string) delivery {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		r.mu.Lock()
		for _, d := range r.got {
			if bytes.Contains(d.body, []byte(text)) {
				r.mu.Unlock()
				return d
			}
		}
		r.mu.Unlock()
		select {
		case <-r.seen:
		case <-deadline:
			t.Fatalf("Gitea delivered no webhook holding %q within a minute", text)
		}
	}
}

// wait returns the first delivery, waiting up to a minute for Gitea.
func (r *deliveryRecorder) wait(t *testing.T) delivery {
	t.Helper()
	select {
	case <-r.seen:
	case <-time.After(time.Minute):
		t.Fatal("Gitea delivered no webhook within a minute")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[0]
}

// replay sends a recorded delivery to docsmith again, with its headers
// changed by edit.
func (r *deliveryRecorder) replay(t *testing.T, d delivery, edit func(http.Header)) delivery {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, r.target+"/v2/hooks/docs", bytes.NewReader(d.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = d.header.Clone()
	if edit != nil {
		edit(req.Header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	return delivery{status: resp.StatusCode, reply: reply}
}

// giteaCommit commits files to the repository's main branch and pushes.
func giteaCommit(t *testing.T, cloneURL, user, token string, files map[string]string, message string) {
	t.Helper()
	u, err := url.Parse(cloneURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, token)
	work := filepath.Join(t.TempDir(), "work")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
			"GIT_AUTHOR_NAME=Developer", "GIT_AUTHOR_EMAIL=dev@example.invalid", "GIT_COMMITTER_NAME=Developer", "GIT_COMMITTER_EMAIL=dev@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(t.TempDir(), "clone", u.String(), work)
	for name, text := range files {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(work, "add", "-A")
	run(work, "commit", "-m", message)
	run(work, "push", "origin", "main")
}

func giteaRaw(t *testing.T, srv *giteatest.Server, path string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/v1"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+srv.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d: %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// apiCall calls docsmith's API with an admin key and decodes the reply.
func apiCall(t *testing.T, key, method, url, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, url, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, url, err, raw)
		}
	}
}

func mustJSON(t *testing.T, v any) string { return string(mustJSONBytes(t, v)) }

func mustJSONBytes(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(fmt.Errorf("marshal: %w", err))
	}
	return b
}
