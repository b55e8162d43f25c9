package app_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/gitcli"
)

// blockingRemote is a git remote served over smart HTTP (git http-backend)
// whose post-receive hook, while the file block exists, touches hit and
// waits: the push has landed (post-receive runs after the refs moved) but
// the pusher has not heard back.
type blockingRemote struct {
	url   string
	bare  string
	block string
	hit   string
}

func newBlockingRemote(t *testing.T) *blockingRemote {
	t.Helper()
	root := t.TempDir()
	r := &blockingRemote{bare: filepath.Join(root, "docs.git"), block: filepath.Join(root, "block"), hit: filepath.Join(root, "hit")}
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SeedBare(t.Context(), r.bare, "main", os.DirFS(assistantFixture), gitcli.CommitOptions{Message: "docs", AuthorName: "t", AuthorEmail: "t@example.com"}); err != nil {
		t.Fatal(err)
	}
	hook := "#!/bin/sh\ncat >/dev/null\nif [ -e '" + r.block + "' ]; then\n  touch '" + r.hit + "'\n  while [ -e '" + r.block + "' ]; do sleep 0.05; done\nfi\n"
	hooks := filepath.Join(r.bare, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "post-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.block, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Whatever happens, let a waiting hook go before the server closes.
	t.Cleanup(func() { _ = os.Remove(r.block) })
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&cgi.Handler{
		Path: gitPath,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER=docsmith", // enables receive-pack (push)
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + t.TempDir(),
		},
		Stderr: io.Discard,
	})
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/docs.git"
	return r
}

func (r *blockingRemote) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.bare
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestCrashBetweenPushAndRecord kills the process while the remote's
// post-receive hook runs: the turn's push has landed, but the turn was not
// recorded. The edit is one that applies again to its own result. The
// next process runs the turn again; it must find its own
// commit on the branch (by its Docsmith-Turn trailer) and resume after the
// push, so the branch holds exactly one commit of the turn, the edit is
// applied once, and the job completes.
func TestCrashBetweenPushAndRecord(t *testing.T) {
	t.Parallel()
	remote := newBlockingRemote(t)
	dir := t.TempDir()
	var key string
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", crashProject, "--repo", remote.url},
		{"key", "create", "--org", "acme", "--kind", "admin"},
	} {
		var stdout, stderr bytes.Buffer
		// The blocking remote serves plain http, as the server below allows.
		env := cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, LookupEnv: func(k string) (string, bool) {
			return "true", k == "DOCSMITH_GIT_ALLOW_HTTP"
		}}
		if code := cli.Run(context.Background(), append(args, "--data", dir), env); code != 0 {
			t.Fatalf("docsmith %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		key = strings.TrimSpace(stdout.String())
	}
	opts := map[string]string{"DOCSMITH_TURN_MAX_ATTEMPTS": "3", "DOCSMITH_GIT_ALLOW_HTTP": "true", "DOCSMITH_WORKERS": "1"}
	api := &crashAPI{t: t, key: key, client: &http.Client{Timeout: 10 * time.Second}}

	first := crashStart(t, dir, crashModeReal, opts)
	api.base = first.base
	job := api.create(`replace "with no daemon to configure" with "with no daemon to configure, ever" in index`)
	crashWait(t, 60*time.Second, "the push to reach the remote's post-receive hook", func() (bool, string) {
		_, err := os.Stat(remote.hit)
		return err == nil, crashDescribe(api.get(job.ID))
	})
	var branch struct {
		Source struct{ Ref string } `json:"source"`
	}
	api.do(http.MethodGet, "/v2/agent/"+crashProject+"/job/"+job.ID, nil, http.StatusOK, &branch)
	if branch.Source.Ref == "" {
		t.Fatal("the job names no branch")
	}
	first.kill()
	if err := os.Remove(remote.block); err != nil {
		t.Fatal(err)
	}
	identity := job.ID + "/1"
	if n := strings.Count(remote.git(t, "log", "--format=%(trailers:key=Docsmith-Turn,valueonly)", branch.Source.Ref), identity); n != 1 {
		t.Fatalf("before the restart the branch has %d commits of the turn, want the 1 the killed process pushed", n)
	}

	second := crashStart(t, dir, crashModeReal, opts)
	api.base = second.base
	var done crashJob
	crashWait(t, 60*time.Second, "the job to finish after the restart", func() (bool, string) {
		done = api.get(job.ID)
		return done.Status != "active", crashDescribe(done)
	})
	var full struct {
		Status  string   `json:"status"`
		Summary *string  `json:"summary"`
		PRLink  *string  `json:"prLink"`
		Files   []string `json:"filesChanged"`
	}
	api.do(http.MethodGet, "/v2/agent/"+crashProject+"/job/"+job.ID, nil, http.StatusOK, &full)
	if done.Status != "completed" || len(done.Messages) != 1 || done.Messages[0].Status != "done" || done.Messages[0].Attempts != 2 {
		t.Errorf("%s: want completed, its one message done on attempt 2", crashDescribe(done))
	}
	if full.Summary == nil || !strings.Contains(*full.Summary, "Replaced 1 occurrence") || full.PRLink != nil {
		t.Errorf("summary %v prLink %v: want the pushed commit's summary and no pull request (local forge)", full.Summary, full.PRLink)
	}
	if len(full.Files) != 1 || full.Files[0] != "index.mdx" {
		t.Errorf("filesChanged = %v, want [index.mdx]", full.Files)
	}
	if n := strings.Count(remote.git(t, "log", "--format=%(trailers:key=Docsmith-Turn,valueonly)", branch.Source.Ref), identity); n != 1 {
		t.Errorf("the branch has %d commits of the turn, want exactly 1", n)
	}
	page := remote.git(t, "show", branch.Source.Ref+":index.mdx")
	if n := strings.Count(page, ", ever"); n != 1 {
		t.Errorf("the edit is applied %d times, want once:\n%s", n, page)
	}
	if t.Failed() {
		t.Logf("second child's log:\n%s", second.log())
	}
}
