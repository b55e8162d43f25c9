package agentrun

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// remoteWith makes a bare repository whose main branch holds files and
// symbolic links (name → target), committed as a person would.
func remoteWith(t *testing.T, files, links map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	remote := filepath.Join(dir, "remote.git")
	git(t, dir, "init", "--bare", "--initial-branch=main", remote)
	seed := filepath.Join(dir, "seed")
	git(t, dir, "init", "--initial-branch=main", seed)
	for name, content := range files {
		writeTestFile(t, filepath.Join(seed, filepath.FromSlash(name)), content)
	}
	for name, target := range links {
		p := filepath.Join(seed, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	git(t, seed, "add", "-A")
	git(t, seed, "commit", "-m", "docs")
	git(t, seed, "push", remote, "main")
	return remote
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// setupRemote is setup for a given remote, docs root and work directory.
func setupRemote(t *testing.T, model, remote, docsRoot, workDir string) *bundle {
	t.Helper()
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{remote: remote, prog: &recorder{}, models: map[string]llm.Model{}}
	b.runner = New(Config{
		WorkDir:   workDir,
		Git:       g,
		OpenModel: func(name string) (llm.Model, error) { return b.models[name], nil },
		LookupEnv: func(string) (string, bool) { return "", false },
		Budgets:   Budgets{MaxSteps: 6},
		Log:       slog.New(slog.DiscardHandler),
	})
	id := "3f2a9c1e-0000-4000-8000-000000000002"
	b.turn = agentjob.Turn{
		Job:     agentjob.Job{ID: id, Branch: agentjob.BranchName(id, "edit"), Model: model},
		Project: tenant.Project{ID: "docs", RepoURL: remote, BaseRef: "main", ForgeKind: tenant.ForgeLocal, DocsRoot: docsRoot},
	}
	return b
}

const (
	hostText    = "alpha from the host"
	secretTitle = "HOST-SECRET-TITLE"
)

// hostDocs writes a docs tree outside any repository: what a symbolic link
// in a hostile repository points at.
func hostDocs(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{
		"docs.json":  `{"name":"Host","navigation":{"groups":[{"group":"Host","pages":["secret"]}]}}`,
		"secret.mdx": "---\ntitle: " + secretTitle + "\n---\n\n" + hostText + "\n",
	}
	for name, content := range files {
		writeTestFile(t, filepath.Join(dir, name), content)
	}
	return files
}

func assertUntouched(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s outside the checkout is now %q (%v)", name, got, err)
		}
	}
}

// TestSymlinkedDocsRootStaysInCheckout: a repository whose docs root, or a
// directory inside it, is a symbolic link to a host directory (by absolute
// path or by a relative path out of the checkout) cannot make a turn edit,
// validate or show the model anything outside the checkout.
func TestSymlinkedDocsRootStaysInCheckout(t *testing.T) {
	t.Parallel()
	page := "---\ntitle: Home\n---\n\nalpha in the repository.\n"
	nav := `{"name":"Repo","navigation":{"groups":[{"group":"Start","pages":["index","linked/secret"]}]}}`
	tests := []struct {
		name     string
		docsRoot string
		// link is the symbolic link's name and its target; "$OUT" is the
		// host directory, "$REL" the relative path to it from the link.
		link    [2]string
		files   map[string]string
		wantErr string
	}{
		{name: "docs root absolute", docsRoot: "docs", link: [2]string{"docs", "$OUT"}, files: map[string]string{"README.md": "x\n"}, wantErr: "not a directory"},
		{name: "docs root relative", docsRoot: "docs", link: [2]string{"docs", "$REL"}, files: map[string]string{"README.md": "x\n"}, wantErr: "not a directory"},
		{name: "docs root up two", docsRoot: "docs", link: [2]string{"docs", "../.."}, files: map[string]string{"README.md": "x\n"}, wantErr: "not a directory"},
		{name: "nested absolute", docsRoot: "docs", link: [2]string{"docs/linked", "$OUT"}, files: map[string]string{"docs/docs.json": nav, "docs/index.mdx": page}},
		{name: "nested relative", docsRoot: "docs", link: [2]string{"docs/linked", "$REL"}, files: map[string]string{"docs/docs.json": nav, "docs/index.mdx": page}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			out := filepath.Join(base, "host")
			host := hostDocs(t, out)
			workDir := filepath.Join(base, "work")
			// A file of another turn's workspace, which "../.." from the
			// checkout would reach.
			other := map[string]string{"other.mdx": "---\ntitle: Other\n---\n\n" + hostText + "\n"}
			writeTestFile(t, filepath.Join(workDir, "other.mdx"), other["other.mdx"])

			target := tc.link[1]
			switch target {
			case "$OUT":
				target = out
			case "$REL":
				// From <work>/<workspace>/repo/<dir of link> up to <base>.
				depth := strings.Count(tc.link[0], "/") + 3
				target = strings.Repeat("../", depth) + "host"
			}
			remote := remoteWith(t, tc.files, map[string]string{tc.link[0]: target})

			b := setupRemote(t, "builtin", remote, tc.docsRoot, workDir)
			outcome, err := b.run(t, 1, `replace "alpha" with "beta" everywhere`)
			assertUntouched(t, out, host)
			assertUntouched(t, workDir, other)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to say %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), base) {
					t.Errorf("the error names a server path: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(outcome.FilesChanged) != 1 || outcome.FilesChanged[0] != "docs/index.mdx" {
				t.Fatalf("files changed = %v, want only docs/index.mdx", outcome.FilesChanged)
			}
			if strings.Contains(outcome.Summary, secretTitle) || strings.Contains(outcome.Summary, hostText) {
				t.Errorf("summary shows the host file: %s", outcome.Summary)
			}

			// The model's system prompt lists the navigation's pages with
			// their titles: the host page's title must not be among them.
			srv := llmtest.NewOpenAIServer(t, llmtest.ToolCalls(llmtest.ToolCall{Name: "finish", Arguments: `{"summary":"Nothing to change."}`}))
			m := setupRemote(t, "openai/test-model", remote, tc.docsRoot, workDir)
			// Another job: the same job's turn would find the builtin run's
			// commit on its branch and resume after it without the model.
			m.turn.Job.ID = "3f2a9c1e-0000-4000-8000-000000000003"
			m.turn.Job.Branch = agentjob.BranchName(m.turn.Job.ID, "look")
			model, err := llm.Open("openai/test-model", llm.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: "k", RetryBase: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			m.models["openai/test-model"] = model
			if _, err := m.run(t, 1, "Look around"); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("the model was not asked")
			}
			first := string(reqs[0].Raw)
			if strings.Contains(first, secretTitle) || strings.Contains(first, hostText) {
				t.Error("the system prompt shows a file outside the checkout")
			}
			if !strings.Contains(first, "index: Home") {
				t.Error("the system prompt lacks the repository's own page")
			}
		})
	}
}

// TestInvalidBaseBranch: problems the base branch already has are reported
// beside a turn, not blamed on it; a problem the turn adds still fails it.
func TestInvalidBaseBranch(t *testing.T) {
	t.Parallel()
	page := "---\ntitle: Home\n---\n\nSee [the guide](/guide). alpha.\n"
	guide := "---\ntitle: Guide\n---\n\n## Setup\n\nalpha again.\n\nA [broken link](/nowhere).\n"
	brokenNav := `{"name":"R","navigation":{"groups":[{"group":"G","pages":["index","guide","missing-page"]}]}}`
	tests := []struct {
		name        string
		files       map[string]string
		prompt      string
		wantErr     string
		wantSummary []string
	}{
		{
			name:        "nav to a missing page, valid edit",
			files:       map[string]string{"docs.json": brokenNav, "index.mdx": page, "guide.mdx": guide},
			prompt:      `replace "alpha" with "beta" everywhere`,
			wantSummary: []string{"base branch already has these problems", "missing-page", "/nowhere"},
		},
		{
			name:        "no docs.json, valid edit",
			files:       map[string]string{"index.mdx": page, "guide.mdx": guide},
			prompt:      `replace "alpha." with "beta." in index`,
			wantSummary: []string{"base branch already has these problems", "no docs.json"},
		},
		{
			name:    "nav to a missing page, edit adds a broken link",
			files:   map[string]string{"docs.json": brokenNav, "index.mdx": page, "guide.mdx": guide},
			prompt:  `replace "(/guide)" with "(/gone)" in index`,
			wantErr: "/gone",
		},
		{
			name:    "edit adds a second broken link to a page that has one",
			files:   map[string]string{"docs.json": brokenNav, "index.mdx": page, "guide.mdx": guide},
			prompt:  `replace "alpha again." with "See [more](/nowhere)." in guide`,
			wantErr: "do not validate",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setupRemote(t, "builtin", remoteWith(t, tc.files, nil), ".", t.TempDir())
			out, err := b.run(t, 1, tc.prompt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "do not validate") {
					t.Fatalf("err = %v, want a validation failure naming %q", err, tc.wantErr)
				}
				if strings.Contains(git(t, b.remote, "branch", "--list"), "docsmith/") {
					t.Error("a branch was pushed although the turn failed")
				}
				return
			}
			if err != nil {
				t.Fatalf("a valid edit on an invalid base failed: %v", err)
			}
			for _, want := range tc.wantSummary {
				if !strings.Contains(out.Summary, want) {
					t.Errorf("summary lacks %q: %s", want, out.Summary)
				}
			}
			if len(out.FilesChanged) == 0 {
				t.Error("nothing was committed")
			}
		})
	}
}

// TestStaleWorkspacesAreRemoved: the workspaces that killed turns left
// behind go when the next turn starts (a reclaimed turn, or any other) and
// at start-up; a turn's own workspace goes when it ends.
func TestStaleWorkspacesAreRemoved(t *testing.T) {
	t.Parallel()
	b := setup(t, "builtin")
	work := b.runner.cfg.WorkDir
	leave := func() {
		t.Helper()
		// What a turn killed during its checkout leaves, under the old
		// naming and under the current one.
		for _, d := range []string{"turn-1234567/repo/guides", "turn-" + b.turn.Job.ID + "-1-1-abcd/repo"} {
			writeTestFile(t, filepath.Join(work, filepath.FromSlash(d), "page.mdx"), "x\n")
		}
	}
	entries := func() []string {
		t.Helper()
		list, err := os.ReadDir(work)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range list {
			names = append(names, e.Name())
		}
		return names
	}

	leave()
	if _, err := b.run(t, 1, `replace "Keep reading as the file grows" with "Keep reading" in guides/flags`); err != nil {
		t.Fatal(err)
	}
	if left := entries(); len(left) != 0 {
		t.Fatalf("after a turn the work directory holds %v", left)
	}

	leave()
	if removed := b.runner.SweepWorkspaces(); len(removed) != 2 {
		t.Fatalf("start-up sweep removed %v, want both stale workspaces", removed)
	}
	if left := entries(); len(left) != 0 {
		t.Fatalf("after the sweep the work directory holds %v", left)
	}
}

// TestLinkPlaceholdersAreNotEdited: a symbolic link arrives in the checkout
// as a plain file naming its target; a turn that edits that file would
// repoint the link, so it fails and nothing is pushed.
func TestLinkPlaceholdersAreNotEdited(t *testing.T) {
	t.Parallel()
	nav := `{"name":"R","navigation":{"groups":[{"group":"G","pages":["index"]}]}}`
	remote := remoteWith(t, map[string]string{"docs.json": nav, "index.mdx": "---\ntitle: Home\n---\n\nHome.\n"},
		map[string]string{"linked.md": "/etc/hostname"})
	b := setupRemote(t, "builtin", remote, ".", t.TempDir())
	_, err := b.run(t, 1, `replace "/etc/hostname" with "/etc/shadow" in linked.md`)
	if err == nil || !strings.Contains(err.Error(), "linked.md is a symbolic link") {
		t.Fatalf("err = %v, want a refusal naming the link", err)
	}
	if strings.Contains(git(t, b.remote, "branch", "--list"), "docsmith/") {
		t.Error("a branch was pushed although the turn failed")
	}
}
