package agentrun

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// recorder collects progress events.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Emit(_ context.Context, eventType string, data any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType)
}

func (r *recorder) has(t string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e == t {
			return true
		}
	}
	return false
}

// git runs the real git in dir for test set-up and inspection.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=Human", "GIT_AUTHOR_EMAIL=human@example.invalid", "GIT_COMMITTER_NAME=Human", "GIT_COMMITTER_EMAIL=human@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newRemote makes a bare repository whose main branch holds the fixture site.
func newRemote(t *testing.T) string {
	t.Helper()
	return newRemoteFrom(t, "testdata/site")
}

// newRemoteFrom makes a bare repository whose main branch holds the files of
// the directory site.
func newRemoteFrom(t *testing.T, site string) string {
	t.Helper()
	dir := t.TempDir()
	remote := filepath.Join(dir, "remote.git")
	git(t, dir, "init", "--bare", "--initial-branch=main", remote)
	seed := filepath.Join(dir, "seed")
	git(t, dir, "clone", remote, seed)
	if err := os.CopyFS(seed, os.DirFS(site)); err != nil {
		t.Fatal(err)
	}
	git(t, seed, "checkout", "-b", "main")
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-m", "docs")
	git(t, seed, "push", "origin", "main")
	return remote
}

type bundle struct {
	runner *Runner
	remote string
	turn   agentjob.Turn
	prog   *recorder
	models map[string]llm.Model
}

func setup(t *testing.T, model string) *bundle {
	t.Helper()
	return setupSite(t, model, "testdata/site")
}

// setupSite is setup with the fixture site in the directory site.
func setupSite(t *testing.T, model, site string) *bundle {
	t.Helper()
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{remote: newRemoteFrom(t, site), prog: &recorder{}, models: map[string]llm.Model{}}
	b.runner = New(Config{
		WorkDir:   t.TempDir(),
		Git:       g,
		OpenModel: func(name string) (llm.Model, error) { return b.models[name], nil },
		LookupEnv: func(string) (string, bool) { return "", false },
		Budgets:   Budgets{MaxSteps: 6},
		Log:       slog.New(slog.DiscardHandler),
	})
	id := "3f2a9c1e-0000-4000-8000-000000000001"
	b.turn = agentjob.Turn{
		Job:     agentjob.Job{ID: id, Branch: agentjob.BranchName(id, "edit"), Model: model},
		Project: tenant.Project{ID: "docs", RepoURL: b.remote, BaseRef: "main", ForgeKind: tenant.ForgeLocal, DocsRoot: "."},
	}
	return b
}

func (b *bundle) run(t *testing.T, seq int, prompt string) (agentjob.TurnOutcome, error) {
	t.Helper()
	turn := b.turn
	turn.Message = agentjob.Message{Seq: seq, Prompt: prompt}
	for i := 1; i <= seq; i++ {
		turn.Job.Messages = append(turn.Job.Messages, agentjob.Message{Seq: i, Prompt: prompt})
	}
	return b.runner.RunTurn(t.Context(), turn, b.prog)
}

// branchFile reads a file on the job branch of the remote.
func (b *bundle) branchFile(t *testing.T, path string) string {
	t.Helper()
	return git(t, b.remote, "show", b.turn.Job.Branch+":"+path)
}

func TestBuiltinReplaceCommitsAndPushes(t *testing.T) {
	t.Parallel()
	b := setup(t, "builtin")
	out, err := b.run(t, 1, `replace "Keep reading as the file grows" with "Keep reading as lines are appended" in guides/flags`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.FilesChanged) != 1 || out.FilesChanged[0] != "guides/flags.mdx" || out.PRLink != "" || !strings.Contains(out.Summary, "Pushed to branch") {
		t.Fatalf("outcome = %+v", out)
	}
	if !strings.Contains(b.branchFile(t, "guides/flags.mdx"), "Keep reading as lines are appended") {
		t.Fatal("the change is not on the branch")
	}
	log := git(t, b.remote, "log", "-1", "--format=%an <%ae>%n%B", b.turn.Job.Branch)
	if !strings.Contains(log, "docsmith <docsmith@localhost>") || !strings.Contains(log, "Docsmith-Job: "+b.turn.Job.ID) || !strings.Contains(log, "Replaced 1 occurrence") {
		t.Fatalf("commit:\n%s", log)
	}
	for _, e := range []string{"checkout", "tool", "validation", "commit"} {
		if !b.prog.has(e) {
			t.Errorf("no %s event in %v", e, b.prog.events)
		}
	}

	// A follow-up lands on the same branch, on top of the first commit.
	if _, err := b.run(t, 2, `set description to "Every flag lantern takes." in guides/flags.mdx`); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(git(t, b.remote, "log", "--format=%s", b.turn.Job.Branch), "\n"); n != 3 {
		t.Fatalf("branch has %d commits, want 3 (seed + two turns)", n)
	}
	if !strings.Contains(b.branchFile(t, "guides/flags.mdx"), `description: "Every flag lantern takes."`) {
		t.Fatal("front matter not set")
	}
}

func TestBuiltinAddMoveDeletePages(t *testing.T) {
	t.Parallel()
	b := setup(t, "builtin")
	_, err := b.run(t, 1, strings.Join([]string{
		`add page guides/themes titled "Themes" to group "usage"`,
		`move guides/install to guides/setup`,
		`fix link "/guides/flags" to "/guides/options" everywhere`,
		`move guides/flags to guides/options`,
		`delete page guides/usage`,
	}, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	nav := b.branchFile(t, "docs.json")
	for _, want := range []string{`"guides/setup"`, `"guides/options", "guides/themes"`} {
		if !strings.Contains(nav, want) {
			t.Errorf("docs.json lacks %s:\n%s", want, nav)
		}
	}
	if strings.Contains(nav, "guides/usage") || !strings.Contains(nav, "\"name\": \"Lantern\",\n  \"navigation\"") {
		t.Errorf("docs.json not edited in place:\n%s", nav)
	}
	if !strings.Contains(b.branchFile(t, "index.mdx"), "(/guides/setup)") {
		t.Error("link to the moved page not updated")
	}
	if !strings.Contains(b.branchFile(t, "guides/themes.mdx"), `title: "Themes"`) {
		t.Error("new page missing")
	}
}

func TestBuiltinRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prompt, want string
	}{
		{"Document the new --watch flag", `replace "OLD" with "NEW" in PATH`},
		{`add page guides/x titled "X" to group "Nope"`, `"Basics", "Usage"`},
		{`replace "</Note>" with "" in guides/install`, "do not validate"},
		{`delete page guides/missing`, "there is no page guides/missing"},
	}
	for _, tc := range tests {
		b := setup(t, "builtin")
		_, err := b.run(t, 1, tc.prompt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to mention %q", tc.prompt, err, tc.want)
		}
		if strings.Contains(git(t, b.remote, "branch", "--list"), "docsmith/") {
			t.Errorf("%q: a branch was pushed although the turn failed", tc.prompt)
		}
	}
}

// TestBuiltinReplaceOfAbsentTextCompletes: an instruction that needs no
// change is carried out by changing nothing, as SPEC §3 has it: no commit,
// no branch, no pull request, and a summary that says why.
func TestBuiltinReplaceOfAbsentTextCompletes(t *testing.T) {
	t.Parallel()
	for _, prompt := range []string{
		`replace "no such text" with "x" in guides/flags`,
		`replace "no such text" with "x" everywhere`,
		`fix link "/guides/nowhere" to "/guides/flags" everywhere`,
	} {
		b := setup(t, "builtin")
		out, err := b.run(t, 1, prompt)
		if err != nil {
			t.Errorf("%q: %v, want the turn to complete", prompt, err)
			continue
		}
		if len(out.FilesChanged) != 0 || out.PRLink != "" || !strings.HasPrefix(out.Summary, "Nothing changed: ") {
			t.Errorf("%q: outcome = %+v, want no files, no PR and a summary that says nothing changed", prompt, out)
		}
		if strings.Contains(git(t, b.remote, "branch", "--list"), "docsmith/") {
			t.Errorf("%q: a branch was pushed although nothing changed", prompt)
		}
	}
}

// TestTurnRunAgainAfterPushResumes: a turn whose push landed but was never
// recorded runs again, as a repeated attempt (after a crash) and as a first
// attempt again (handed back on shutdown, which uses no attempt). Neither
// edits again: the branch keeps one commit of the turn, and the outcome is
// the pushed commit's.
func TestTurnRunAgainAfterPushResumes(t *testing.T) {
	t.Parallel()
	for _, attempt := range []int{1, 2} {
		b := setup(t, "builtin")
		prompt := `replace "Keep reading as the file grows" with "Keep reading as the file grows, and beyond" in guides/flags`
		first, err := b.run(t, 1, prompt)
		if err != nil {
			t.Fatal(err)
		}
		turn := b.turn
		turn.Message = agentjob.Message{Seq: 1, Prompt: prompt}
		turn.Job.Messages = []agentjob.Message{turn.Message}
		turn.Attempt = attempt
		again, err := b.runner.RunTurn(t.Context(), turn, b.prog)
		if err != nil {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		if again.Summary != first.Summary || len(again.FilesChanged) != 1 || again.FilesChanged[0] != "guides/flags.mdx" {
			t.Errorf("attempt %d: outcome %+v, want the first run's %+v", attempt, again, first)
		}
		commits := git(t, b.remote, "log", "--format=%(trailers:key=Docsmith-Turn,valueonly)", b.turn.Job.Branch)
		if n := strings.Count(commits, b.turn.Job.ID+"/1"); n != 1 {
			t.Errorf("attempt %d: the branch has %d commits of the turn, want 1", attempt, n)
		}
		if n := strings.Count(b.branchFile(t, "guides/flags.mdx"), "and beyond"); n != 1 {
			t.Errorf("attempt %d: the edit is applied %d times, want once", attempt, n)
		}
		if !b.prog.has("resume") {
			t.Errorf("attempt %d: no resume event", attempt)
		}
	}
}

// TestModelLoopOpenAIProtocol drives the loop with a local server speaking
// the OpenAI Chat Completions streaming protocol through the official SDK.
func TestModelLoopOpenAIProtocol(t *testing.T) {
	t.Parallel()
	read := llmtest.ToolCalls(llmtest.ToolCall{Name: "read_file", Arguments: `{"path":"guides/flags.mdx"}`, Chunks: 3})
	read.Usage = llmtest.Usage{InputTokens: 900, OutputTokens: 40}
	srv := llmtest.NewOpenAIServer(t,
		read,
		// A str_replace that breaks the MDX, then finish: validation sends it back.
		llmtest.ToolCalls(llmtest.ToolCall{Name: "str_replace", Arguments: `{"path":"guides/flags.mdx","old_str":"| ` + "`--follow`" + ` | Keep reading as the file grows |","new_str":"| ` + "`--follow`" + ` | Keep reading as the file grows |\n| ` + "`--watch`" + ` | Re-read on change |\n<Warning>"}`, Chunks: 4}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "finish", Arguments: `{"summary":"Documented --watch."}`}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "str_replace", Arguments: `{"path":"guides/flags.mdx","old_str":"\n<Warning>","new_str":""}`}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "finish", Arguments: `{"summary":"Documented the --watch flag in the flags table."}`}),
	)
	b := setup(t, "openai/test-model")
	model, err := llm.Open("openai/test-model", llm.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: "test-key", RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b.models["openai/test-model"] = model
	out, err := b.run(t, 1, "Document the new --watch flag")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Summary, "Documented the --watch flag in the flags table.") || out.Usage.InputTokens != 900 || out.Usage.OutputTokens != 40 {
		t.Fatalf("summary = %q, usage = %+v", out.Summary, out.Usage)
	}
	if !strings.Contains(b.branchFile(t, "guides/flags.mdx"), "`--watch` | Re-read on change |") {
		t.Fatal("edit not pushed")
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	first := string(reqs[0].Raw)
	for _, want := range []string{"Write flags in backticks", "guides/flags: Flags", `"name":"finish"`, `"name":"str_replace"`, "Document the new --watch flag"} {
		if !strings.Contains(first, want) {
			t.Errorf("first request lacks %q", want)
		}
	}
	if !strings.Contains(string(reqs[3].Raw), "do not validate yet") {
		t.Error("the validation problems were not sent back to the model")
	}
}

func TestModelThatNeverFinishes(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewOpenAIServer(t, llmtest.Forever(llmtest.Text("Still thinking.")))
	b := setup(t, "openai/test-model")
	model, err := llm.Open("openai/test-model", llm.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	b.models["openai/test-model"] = model
	_, err = b.run(t, 1, "Do something")
	if err == nil || !strings.Contains(err.Error(), "budget of 6 steps") {
		t.Fatalf("err = %v", err)
	}
}

// TestFirstTurnRunAgainBeforeAnyPush: a first turn that runs again (its
// process died before the push, or the remote could not be reached) finds
// no branch on the remote yet, and edits as a first run would.
func TestFirstTurnRunAgainBeforeAnyPush(t *testing.T) {
	t.Parallel()
	b := setup(t, "builtin")
	b.turn.Attempt = 2
	out, err := b.run(t, 1, `replace "Keep reading as the file grows" with "Keep reading as lines are appended" in guides/flags`)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.FilesChanged) != 1 || !strings.Contains(b.branchFile(t, "guides/flags.mdx"), "Keep reading as lines are appended") {
		t.Fatalf("outcome = %+v", out)
	}
}
