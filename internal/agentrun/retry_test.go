package agentrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

const githubToken = "ghp_RETRYTEST0123456789abcdefABCDEF"

// githubRemote is a local server that speaks git's smart HTTP protocol for
// /acme/docs.git (git http-backend) and GitHub's REST API for the pull
// requests of acme/docs under /api/v3, the way GitHub Enterprise Server
// lays them out. failCreates is how many POST .../pulls answer 502 Bad
// Gateway before one succeeds.
type githubRemote struct {
	url     string // the clone URL
	api     string // the REST root
	bare    string // the bare repository on disk
	mu      sync.Mutex
	fail    int
	creates int // POST .../pulls that opened a pull request
	posts   int // every POST .../pulls
	lists   int // every GET .../pulls
	patches int // every PATCH .../pulls/N
	prs     []map[string]any
}

func newGitHubRemote(t *testing.T, failCreates int) *githubRemote {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "acme", "docs.git")
	if err := os.MkdirAll(filepath.Dir(bare), 0o755); err != nil {
		t.Fatal(err)
	}
	seeded := newRemote(t)
	git(t, root, "clone", "--bare", seeded, bare)
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER=x-access-token", // enables receive-pack (push)
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + t.TempDir(),
		},
		Stderr: io.Discard,
	}
	g := &githubRemote{bare: bare, fail: failCreates}
	mux := http.NewServeMux()
	mux.Handle("/acme/docs.git/", backend)
	mux.HandleFunc("GET /api/v3/repos/acme/docs/pulls", g.list)
	mux.HandleFunc("POST /api/v3/repos/acme/docs/pulls", g.create)
	mux.HandleFunc("PATCH /api/v3/repos/acme/docs/pulls/{n}", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.patches++
		g.mu.Unlock()
		http.Error(w, `{"message":"not expected in this test"}`, http.StatusTeapot)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") && r.Header.Get("Authorization") != "Bearer "+githubToken {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.url, g.api = srv.URL+"/acme/docs.git", srv.URL+"/api/v3"
	return g
}

func (g *githubRemote) list(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lists++
	out := []map[string]any{}
	for _, pr := range g.prs {
		if head, _ := pr["head"].(map[string]any); head["label"] == r.URL.Query().Get("head") {
			out = append(out, pr)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (g *githubRemote) create(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.posts++
	if g.fail > 0 {
		g.fail--
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html><head><title>502 Bad Gateway</title></head></html>")
		return
	}
	var in struct{ Title, Body, Head, Base string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, `{"message":"Problems parsing JSON"}`, http.StatusBadRequest)
		return
	}
	g.creates++
	n := len(g.prs) + 1
	pr := map[string]any{
		"id": 1000 + n, "number": n, "state": "open", "title": in.Title, "body": in.Body,
		"html_url": fmt.Sprintf("https://github.example/acme/docs/pull/%d", n),
		"head":     map[string]any{"label": "acme:" + in.Head, "ref": in.Head},
		"base":     map[string]any{"label": "acme:" + in.Base, "ref": in.Base},
	}
	g.prs = append(g.prs, pr)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(pr)
}

// turnCommits counts the commits of branch that carry a turn's trailer.
func turnCommits(t *testing.T, bare, branch, identity string) int {
	t.Helper()
	out := git(t, bare, "log", "--format=%(trailers:key=Docsmith-Turn,valueonly)", branch)
	return strings.Count(out, identity)
}

// TestGitHubProtocol502AfterPushRetriesAndCompletes: the push lands, then
// GitHub (a local server speaking its REST API) answers 502 to the pull
// request. The turn is queued again after a delay; the next attempt finds
// the push in its checkpoint, does not edit again, opens the pull request,
// and the job completes.
func TestGitHubProtocol502AfterPushRetriesAndCompletes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newGitHubRemote(t, 1)
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	// The local GitHub serves plain http, which the turn's git allows too.
	tenants := tenant.NewService(store, time.Now).WithRemotePolicy(gitcli.RemotePolicy{AllowHTTP: true})
	if _, err := tenants.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	project, err := tenants.CreateProject(ctx, tenant.Project{
		ID: "docs", OrgID: "acme", RepoURL: remote.url, BaseRef: "main", ForgeKind: tenant.ForgeGitHub,
		ForgeURL: remote.api, TokenEnv: "ACME_GITHUB_TOKEN", DocsRoot: ".", Model: "builtin",
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir(), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	runner := New(Config{
		WorkDir:    t.TempDir(),
		Git:        g,
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		LookupEnv: func(k string) (string, bool) {
			return githubToken, k == "ACME_GITHUB_TOKEN"
		},
		RetryDelay: 50 * time.Millisecond,
		Log:        log,
	})
	hub := agentjob.NewHub()
	svc := agentjob.NewService(store, hub, time.Now)
	pool := agentjob.NewPool(agentjob.PoolConfig{
		WorkerID: "w1", Workers: 1, Lease: 10 * time.Second, Poll: 20 * time.Millisecond,
		MaxAttempts: 3, TurnTimeout: time.Minute, ShutdownGrace: time.Second,
	}, store, store, runner, hub, log, time.Now)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); pool.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })

	job, _, err := svc.Create(ctx, project, `replace "Keep reading as the file grows" with "Keep reading as lines are appended" in guides/flags`, "")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		job, err = svc.Get(ctx, project.ID, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if job.Status != agentjob.Active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still active: %+v", job.Messages)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if job.Status != agentjob.Completed || job.PRNumber != 1 || job.PRLink != "https://github.example/acme/docs/pull/1" || job.Error != "" {
		t.Fatalf("job = %s PR %q #%d error %q; want completed with PR #1", job.Status, job.PRLink, job.PRNumber, job.Error)
	}
	m := job.Messages[0]
	if m.State != agentjob.TurnDone || m.Attempts != 2 {
		t.Errorf("message = %s after %d attempts, want done after 2 (the 502, then the retry)", m.State, m.Attempts)
	}
	if len(job.FilesChanged) != 1 || job.FilesChanged[0] != "guides/flags.mdx" {
		t.Errorf("files changed = %v", job.FilesChanged)
	}
	remote.mu.Lock()
	posts, creates := remote.posts, remote.creates
	remote.mu.Unlock()
	if posts != 2 || creates != 1 {
		t.Errorf("POST /pulls %d times with %d opened, want 2 and 1", posts, creates)
	}
	if n := turnCommits(t, remote.bare, job.Branch, job.ID+"/1"); n != 1 {
		t.Errorf("the branch has %d commits of turn 1, want exactly 1", n)
	}
	flags := git(t, remote.bare, "show", job.Branch+":guides/flags.mdx")
	if strings.Count(flags, "Keep reading as lines are appended") != 1 {
		t.Errorf("the edit is not applied exactly once:\n%s", flags)
	}
	evs, err := svc.Events(ctx, job.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if !strings.Contains(strings.Join(types, " "), "turn.retrying") {
		t.Errorf("events %v, want a turn.retrying", types)
	}
}

// TestGitHubProtocolRepeatedPRStepAddsNothing: a turn whose earlier attempt
// pushed and opened its pull request, but died before recording it, runs
// again. It finds the open pull request with its own section and neither
// opens another nor adds a section; with the pull request recorded, it asks
// the forge nothing at all.
func TestGitHubProtocolRepeatedPRStepAddsNothing(t *testing.T) {
	t.Parallel()
	remote := newGitHubRemote(t, 0)
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir(), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	runner := New(Config{
		WorkDir: t.TempDir(), Git: g, HTTPClient: &http.Client{Timeout: 10 * time.Second},
		LookupEnv: func(k string) (string, bool) { return githubToken, k == "ACME_GITHUB_TOKEN" },
		Log:       slog.New(slog.DiscardHandler),
	})
	id := "3f2a9c1e-0000-4000-8000-000000000002"
	prompt := "Document the --watch flag"
	turn := agentjob.Turn{
		Job:     agentjob.Job{ID: id, Branch: agentjob.BranchName(id, prompt), Model: "builtin", Messages: []agentjob.Message{{Seq: 1, Prompt: prompt}}},
		Project: tenant.Project{ID: "docs", RepoURL: remote.url, BaseRef: "main", ForgeKind: tenant.ForgeGitHub, ForgeURL: remote.api, TokenEnv: "ACME_GITHUB_TOKEN", DocsRoot: "."},
		Message: agentjob.Message{Seq: 1, Prompt: prompt, Checkpoint: agentjob.Checkpoint{
			PushedSHA: "0123456789abcdef0123456789abcdef01234567", Summary: "Documented --watch.", FilesChanged: []string{"guides/flags.mdx"},
		}},
		Attempt: 2,
	}
	// What the earlier attempt opened.
	remote.prs = append(remote.prs, map[string]any{
		"id": 1001, "number": 1, "state": "open", "title": prompt,
		"body":     "Documented --watch.\n\n" + turnSection(turn.Message, "Documented --watch.", []string{"guides/flags.mdx"}, time.Now()),
		"html_url": "https://github.example/acme/docs/pull/1",
		"head":     map[string]any{"label": "acme:" + turn.Job.Branch, "ref": turn.Job.Branch},
		"base":     map[string]any{"label": "acme:main", "ref": "main"},
	})
	out, err := runner.RunTurn(t.Context(), turn, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if out.PRNumber != 1 || out.PRLink != "https://github.example/acme/docs/pull/1" || out.Summary != "Documented --watch." {
		t.Errorf("outcome = %+v, want the open pull request #1", out)
	}
	remote.mu.Lock()
	lists, posts, patches := remote.lists, remote.posts, remote.patches
	remote.mu.Unlock()
	if lists != 1 || posts != 0 || patches != 0 {
		t.Errorf("GET %d, POST %d, PATCH %d; want the one lookup and no new pull request or section", lists, posts, patches)
	}
	if strings.Contains(git(t, remote.bare, "branch", "--list"), "docsmith/") {
		t.Errorf("the repeated turn pushed a branch although its checkpoint says it had pushed")
	}

	turn.Message.Checkpoint.PRNumber, turn.Message.Checkpoint.PRLink = 1, "https://github.example/acme/docs/pull/1"
	out, err = runner.RunTurn(t.Context(), turn, &recorder{})
	if err != nil || out.PRNumber != 1 {
		t.Fatalf("with the pull request recorded: %+v, %v", out, err)
	}
	remote.mu.Lock()
	defer remote.mu.Unlock()
	if remote.lists != 1 || remote.posts != 0 || remote.patches != 0 {
		t.Errorf("with the pull request recorded the forge was asked again: GET %d, POST %d, PATCH %d", remote.lists, remote.posts, remote.patches)
	}
}

// TestUnreachableRemoteRetries: a remote that answers git with a gateway
// error (a local server standing in for a forge that is down) makes the turn
// run again later, while a repository that does not exist fails it at once.
func TestUnreachableRemoteRetries(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	t.Cleanup(down.Close)
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir(), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	runner := New(Config{
		WorkDir: t.TempDir(), Git: g, RetryDelay: time.Second,
		LookupEnv: func(string) (string, bool) { return "", false },
		Log:       slog.New(slog.DiscardHandler),
	})
	id := "3f2a9c1e-0000-4000-8000-000000000009"
	for _, tc := range []struct {
		name, repo string
		retry      bool
	}{
		{"gateway error", down.URL + "/acme/docs.git", true},
		{"no such repository", filepath.Join(t.TempDir(), "missing.git"), false},
	} {
		turn := agentjob.Turn{
			Job:     agentjob.Job{ID: id, Branch: agentjob.BranchName(id, "edit"), Model: "builtin"},
			Project: tenant.Project{ID: "docs", RepoURL: tc.repo, BaseRef: "main", ForgeKind: tenant.ForgeLocal, DocsRoot: "."},
			Message: agentjob.Message{Seq: 1, Prompt: `replace "a" with "b" everywhere`},
			Attempt: 1,
		}
		_, err := runner.RunTurn(t.Context(), turn, &recorder{})
		var retry *agentjob.RetryError
		if got := errors.As(err, &retry); got != tc.retry {
			t.Errorf("%s: err = %v, retried = %v, want %v", tc.name, err, got, tc.retry)
		}
		if tc.retry && retry.Delay != time.Second {
			t.Errorf("%s: retry after %v, want 1s", tc.name, retry.Delay)
		}
	}
}
