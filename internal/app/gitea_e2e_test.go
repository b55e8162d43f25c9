package app_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/examples"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/giteatest"
)

// TestRealGiteaJobOpensPullRequest drives the product end to end against a
// real Gitea: a project set up with the CLI, a job created over HTTP with
// the builtin model, the real agent opening a pull request whose URL
// becomes prLink, and a follow-up adding a commit to the same pull request.
func TestRealGiteaJobOpensPullRequest(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	cloneURL := srv.CreateRepo(t, "docs")
	giteaE2EPush(t, cloneURL, srv.User, srv.Token)

	dir := t.TempDir()
	giteaE2ECLI(t, dir, "org", "create", "acme")
	giteaE2ECLI(t, dir, "project", "create", "--org", "acme", "--id", "docs", "--repo", cloneURL,
		"--forge", "gitea", "--forge-url", srv.URL, "--token-env", "DOCS_FORGE_TOKEN")
	key := strings.TrimSpace(giteaE2ECLI(t, dir, "key", "create", "--org", "acme", "--kind", "admin"))

	env := map[string]string{
		"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false",
		"DOCSMITH_GIT_ALLOW_HTTP": "true", "DOCSMITH_QUEUE_POLL": "100ms",
	}
	cfg, err := config.Bind(flag.NewFlagSet("test", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), LookupEnv: func(k string) (string, bool) {
		return srv.Token, k == "DOCS_FORGE_TOKEN"
	}}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(t.Context()) })
	base := "http://" + m.Addr() + "/v2/agent/docs"

	job := giteaE2EDo(t, key, http.MethodPost, base+"/job", `{"prompt": "replace \"4000\" with \"4321\" in reference/serve"}`, http.StatusCreated)
	job = giteaE2EWait(t, key, base+"/job/"+job.ID)
	if job.Status != "completed" || job.PRLink == nil {
		t.Fatalf("job = %+v", job)
	}
	var pr struct {
		HTMLURL string `json:"html_url"`
		Number  int    `json:"number"`
	}
	srv.API(t, http.MethodGet, "/repos/"+srv.User+"/docs/pulls/1", nil, http.StatusOK, &pr)
	if *job.PRLink != pr.HTMLURL || job.PRNumber == nil || *job.PRNumber != pr.Number {
		t.Fatalf("prLink %s / prNumber %v, but the pull request is %s #%d", *job.PRLink, job.PRNumber, pr.HTMLURL, pr.Number)
	}

	followUp := giteaE2EDo(t, key, http.MethodPost, base+"/job/"+job.ID+"/message", `{"prompt": "set description to \"Preview the site locally.\" in reference/serve"}`, http.StatusOK)
	if followUp.Status != "active" {
		t.Fatalf("after the follow-up the job is %s", followUp.Status)
	}
	job = giteaE2EWait(t, key, base+"/job/"+job.ID)
	if job.Status != "completed" || job.PRLink == nil || *job.PRLink != pr.HTMLURL {
		t.Fatalf("after the follow-up: %+v", job)
	}
	var commits []any
	srv.API(t, http.MethodGet, "/repos/"+srv.User+"/docs/pulls/1/commits", nil, http.StatusOK, &commits)
	var open []any
	srv.API(t, http.MethodGet, "/repos/"+srv.User+"/docs/pulls?state=open", nil, http.StatusOK, &open)
	if len(commits) != 2 || len(open) != 1 {
		t.Fatalf("the pull request has %d commits and there are %d open pull requests; want 2 and 1", len(commits), len(open))
	}
}

type giteaE2EJob struct {
	ID       string  `json:"id"`
	Status   string  `json:"status"`
	PRLink   *string `json:"prLink"`
	PRNumber *int    `json:"prNumber"`
	Error    *string `json:"error"`
}

func giteaE2EDo(t *testing.T, key, method, url, body string, want int) giteaE2EJob {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d: %s", method, url, resp.StatusCode, raw.String())
	}
	var job giteaE2EJob
	if err := json.Unmarshal(raw.Bytes(), &job); err != nil {
		t.Fatal(err)
	}
	return job
}

func giteaE2EWait(t *testing.T, key, url string) giteaE2EJob {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		job := giteaE2EDo(t, key, http.MethodGet, url, "", http.StatusOK)
		if job.Status != "active" {
			if job.Error != nil {
				t.Logf("job error: %s", *job.Error)
			}
			return job
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still active after 90s: %+v", job)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func giteaE2ECLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	// The test Gitea serves plain http on the loopback: the operator
	// allows it, as the server started beside it does.
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
		switch k {
		case "DOCSMITH_DATA_DIR":
			return dir, true
		case "DOCSMITH_GIT_ALLOW_HTTP":
			return "true", true
		}
		return "", false
	}}
	if code := cli.Run(t.Context(), args, env); code != 0 {
		t.Fatalf("docsmith %s: %d %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// giteaE2EPush puts the sample docs on the repository's main branch.
func giteaE2EPush(t testing.TB, cloneURL, user, token string) {
	t.Helper()
	u, err := url.Parse(cloneURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, token)
	work := filepath.Join(t.TempDir(), "seed")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
			"GIT_AUTHOR_NAME=Maintainer", "GIT_AUTHOR_EMAIL=m@example.invalid", "GIT_COMMITTER_NAME=Maintainer", "GIT_COMMITTER_EMAIL=m@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(t.TempDir(), "clone", u.String(), work)
	if err := os.CopyFS(work, examples.DemoDocs()); err != nil {
		t.Fatal(err)
	}
	run(work, "add", "-A")
	run(work, "commit", "-m", "Sample docs")
	run(work, "push", "origin", "main")
}
