package agentrun

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
)

const replaceFollow = `replace "Keep reading as the file grows" with "Keep reading as lines are appended" in guides/flags`

// automergeTurn makes b's job an automerge workflow run: its branch is the base branch.
func automergeTurn(b *bundle) agentjob.Turn {
	turn := b.turn
	turn.Job.Branch = "main"
	turn.Job.Workflow = "tidy"
	turn.Job.Trigger = agentjob.TriggerSchedule
	turn.Job.Run = &agentjob.RunSpec{Automerge: true}
	turn.Project.AllowAutomerge = true
	turn.Message = agentjob.Message{Seq: 1, Prompt: replaceFollow}
	turn.Job.Messages = []agentjob.Message{turn.Message}
	return turn
}

// TestAutomergePushesToBase: an automerge turn commits onto the base branch itself, creates no
// branch and opens no pull request; run again (a crash after the push), it finds its commit by
// its trailer and adds nothing.
func TestAutomergePushesToBase(t *testing.T) {
	t.Parallel()
	b := setup(t, "builtin")
	var told []string
	b.runner.cfg.BasePushed = func(_ context.Context, p tenant.Project) { told = append(told, p.ID+"@"+p.BaseRef) }
	turn := automergeTurn(b)
	before := strings.TrimSpace(git(t, b.remote, "rev-parse", "main"))
	out, err := b.runner.RunTurn(t.Context(), turn, b.prog)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever reads the base branch is told of the push.
	if len(told) != 1 || told[0] != turn.Project.ID+"@main" {
		t.Fatalf("BasePushed was told %v, want the project once", told)
	}
	if !strings.HasSuffix(out.Summary, " Pushed to main.") || out.PRLink != "" || out.PRNumber != 0 || len(out.FilesChanged) != 1 {
		t.Fatalf("outcome = %+v", out)
	}
	if parent := strings.TrimSpace(git(t, b.remote, "rev-parse", "main^")); parent != before {
		t.Fatalf("main^ = %s, want the commit main was at (%s)", parent, before)
	}
	msg := git(t, b.remote, "log", "-1", "--format=%B", "main")
	if !strings.Contains(msg, "Docsmith-Turn: "+turn.Job.ID+"/1") || !strings.Contains(git(t, b.remote, "show", "main:guides/flags.mdx"), "lines are appended") {
		t.Fatalf("main does not hold the turn's commit:\n%s", msg)
	}
	if branches := git(t, b.remote, "branch", "--list"); strings.Contains(branches, "docsmith/") {
		t.Fatalf("a branch was created: %s", branches)
	}

	// A human pushes on top; the turn then runs again, as a first attempt
	// (handed back on shutdown, which uses no attempt) and as a retried one.
	human := t.TempDir()
	git(t, human, "clone", "--quiet", b.remote, "h")
	writeTestFile(t, human+"/h/guides/faq.mdx", "---\ntitle: FAQ\n---\n\nAsk.\n")
	git(t, human+"/h", "add", "-A")
	git(t, human+"/h", "commit", "--quiet", "-m", "FAQ")
	git(t, human+"/h", "push", "--quiet", "origin", "main")
	for _, attempt := range []int{1, 2} {
		turn.Attempt = attempt
		again, err := b.runner.RunTurn(t.Context(), turn, b.prog)
		if err != nil {
			t.Fatal(err)
		}
		if again.Summary != out.Summary || !b.prog.has("resume") {
			t.Fatalf("attempt %d: %+v (events %v), want the first outcome %+v", attempt, again, b.prog.events, out)
		}
		if n := turnCommits(t, b.remote, "main", turn.Job.ID+"/1"); n != 1 {
			t.Fatalf("attempt %d: main has %d commits of the turn, want 1", attempt, n)
		}
	}
}

// TestAutomergeOpensNoPullRequest: on a forge with pull requests (GitHub's protocol), an
// automerge turn pushes to the base branch and never calls the forge's API.
func TestAutomergeOpensNoPullRequest(t *testing.T) {
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
	id := "3f2a9c1e-0000-4000-8000-000000000021"
	msg := agentjob.Message{Seq: 1, Prompt: replaceFollow}
	turn := agentjob.Turn{
		Job: agentjob.Job{ID: id, Branch: "main", Model: "builtin", Workflow: "tidy", Trigger: agentjob.TriggerManual,
			Run: &agentjob.RunSpec{Automerge: true}, Messages: []agentjob.Message{msg}},
		Project: tenant.Project{ID: "docs", RepoURL: remote.url, BaseRef: "main", ForgeKind: tenant.ForgeGitHub, ForgeURL: remote.api,
			TokenEnv: "ACME_GITHUB_TOKEN", DocsRoot: ".", AllowAutomerge: true},
		Message: msg,
		Attempt: 1,
	}
	out, err := runner.RunTurn(t.Context(), turn, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.Summary, "Pushed to main.") || out.PRLink != "" {
		t.Fatalf("outcome = %+v", out)
	}
	remote.mu.Lock()
	lists, posts := remote.lists, remote.posts
	remote.mu.Unlock()
	if lists != 0 || posts != 0 {
		t.Fatalf("the forge was asked about pull requests: GET %d, POST %d", lists, posts)
	}
	if n := turnCommits(t, remote.bare, "main", id+"/1"); n != 1 {
		t.Fatalf("main has %d commits of the turn, want 1", n)
	}
}

// TestAutomergeRefused: a project that does not allow automerge, or a run whose branch is not
// the project's base branch, fails before anything is cloned or edited, and says what to do.
func TestAutomergeRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*agentjob.Turn)
		want []string
	}{
		{
			name: "not allowed",
			edit: func(turn *agentjob.Turn) { turn.Project.AllowAutomerge = false },
			want: []string{"the workflow tidy asks for automerge, but project docs does not allow it", "docsmith project update --id docs --allow-automerge"},
		},
		{
			name: "base branch changed",
			edit: func(turn *agentjob.Turn) { turn.Project.BaseRef = "trunk" },
			want: []string{"this run works on main and project docs's base branch is now trunk"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "builtin")
			turn := automergeTurn(b)
			tc.edit(&turn)
			before := git(t, b.remote, "rev-parse", "main")
			_, err := b.runner.RunTurn(t.Context(), turn, b.prog)
			if err == nil {
				t.Fatal("the turn ran")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
			if after := git(t, b.remote, "rev-parse", "main"); after != before {
				t.Error("main moved")
			}
			if len(b.prog.events) != 0 {
				t.Errorf("the turn got as far as %v", b.prog.events)
			}
		})
	}
}
