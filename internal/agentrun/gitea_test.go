package agentrun

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/giteatest"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestRealGiteaPullRequest runs turns against a real Gitea server: the first
// opens a pull request, a human pushes to the branch, a follow-up is rebased
// over that push and lands on the same pull request, and a retried turn
// opens no second one.
func TestRealGiteaPullRequest(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	cloneURL := srv.CreateRepo(t, "docs")

	// Put the fixture site on main, as a maintainer would.
	authURL := withUser(t, cloneURL, srv.User, srv.Token)
	seed := filepath.Join(t.TempDir(), "seed")
	git(t, t.TempDir(), "clone", authURL, seed)
	if err := os.CopyFS(seed, os.DirFS("testdata/site")); err != nil {
		t.Fatal(err)
	}
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-m", "docs")
	git(t, seed, "push", "origin", "main")

	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir(), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	// Each pushed head of the job's pull request is told, to be checked.
	var told []PushedPullRequest
	runner := New(Config{
		WorkDir:   t.TempDir(),
		Git:       g,
		OpenModel: func(string) (llm.Model, error) { return nil, fmt.Errorf("no model in this test") },
		LookupEnv: func(k string) (string, bool) { return srv.Token, k == "DOCS_GITEA_TOKEN" },
		PullRequestPushed: func(_ context.Context, _ tenant.Project, pr PushedPullRequest) {
			told = append(told, pr)
		},
		Log: slog.New(slog.DiscardHandler),
	})
	id := "5b1e2d3c-0000-4000-8000-000000000002"
	job := agentjob.Job{ID: id, Branch: agentjob.BranchName(id, "Document the follow flag"), Model: "builtin"}
	project := tenant.Project{ID: "docs", RepoURL: cloneURL, BaseRef: "main", ForgeKind: tenant.ForgeGitea, ForgeURL: srv.URL, TokenEnv: "DOCS_GITEA_TOKEN", DocsRoot: "."}
	run := func(seq int, prompt string) agentjob.TurnOutcome {
		t.Helper()
		job.Messages = append(job.Messages[:seq-1], agentjob.Message{Seq: seq, Prompt: prompt})
		out, err := runner.RunTurn(t.Context(), agentjob.Turn{Job: job, Project: project, Message: job.Messages[seq-1]}, &recorder{})
		if err != nil {
			t.Fatalf("turn %d: %v", seq, err)
		}
		job.PRLink, job.PRNumber = out.PRLink, out.PRNumber
		return out
	}

	first := run(1, `replace "Keep reading as the file grows" with "Follow the file as it grows" in guides/flags`)
	var pr struct {
		Number  int    `json:"number"`
		HTMLURL string `json:"html_url"`
		Title   string `json:"title"`
		Body    string `json:"body"`
		Head    struct {
			Ref string `json:"ref"`
		} `json:"head"`
	}
	srv.API(t, http.MethodGet, fmt.Sprintf("/repos/%s/docs/pulls/%d", srv.User, first.PRNumber), nil, http.StatusOK, &pr)
	if first.PRLink == "" || first.PRLink != pr.HTMLURL || pr.Head.Ref != job.Branch || !strings.HasPrefix(pr.Title, "replace ") || !strings.Contains(pr.Body, "guides/flags.mdx") {
		t.Fatalf("outcome %+v, pull request %+v", first, pr)
	}
	headOf := func() string {
		return strings.TrimSpace(git(t, t.TempDir(), "ls-remote", authURL, "refs/heads/"+job.Branch)[:40])
	}
	if want := (PushedPullRequest{Number: first.PRNumber, URL: first.PRLink, Branch: job.Branch, Base: "main", SHA: headOf()}); len(told) != 1 || told[0] != want {
		t.Fatalf("PullRequestPushed was told %+v, want %+v", told, want)
	}

	// A human pushes to the job's branch before the follow-up.
	human := filepath.Join(t.TempDir(), "human")
	git(t, t.TempDir(), "clone", "--branch", job.Branch, authURL, human)
	if err := os.WriteFile(filepath.Join(human, "guides", "faq.mdx"), []byte("---\ntitle: \"FAQ\"\n---\n\nAsk away.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, human, "add", "-A")
	git(t, human, "commit", "-m", "Add an FAQ draft")
	git(t, human, "push", "origin", job.Branch)

	second := run(2, `set description to "Every flag, with its meaning." in guides/flags`)
	if second.PRLink != first.PRLink || second.PRNumber != first.PRNumber {
		t.Fatalf("the follow-up went to another pull request: %+v vs %+v", second, first)
	}
	if len(told) != 2 || told[1].Number != first.PRNumber || told[1].SHA != headOf() || told[1].SHA == told[0].SHA {
		t.Fatalf("after the follow-up, PullRequestPushed was told %+v", told)
	}
	git(t, human, "fetch", "origin")
	log := git(t, human, "log", "--format=%s", "origin/"+job.Branch)
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "set description") || lines[1] != "Add an FAQ draft" || !strings.HasPrefix(lines[2], "replace ") {
		t.Fatalf("branch history is not ours-over-human-over-ours:\n%s", log)
	}

	// The same turn retried (e.g. after a crash) opens no second PR and does
	// not repeat its section of the body.
	job.Messages = job.Messages[:1]
	retry := run(2, `set description to "Every flag and what it does." in guides/flags`)
	var open []struct {
		Number int    `json:"number"`
		Body   string `json:"body"`
	}
	srv.API(t, http.MethodGet, fmt.Sprintf("/repos/%s/docs/pulls?state=open", srv.User), nil, http.StatusOK, &open)
	if len(open) != 1 || retry.PRNumber != first.PRNumber {
		t.Fatalf("%d open pull requests after the retry, want 1", len(open))
	}
	if n := strings.Count(open[0].Body, turnMarker(2)); n != 1 {
		t.Fatalf("turn 2 appears %d times in the body:\n%s", n, open[0].Body)
	}
}

func withUser(t *testing.T, raw, user, password string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}
