package gitcli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/gitcli"
)

const jobBranch = "docsmith/1a2b3c4d-document-the-watch-flag"

// world is one test's set-up: a bare "remote" seeded with an initial commit
// on main, a Git under test, and what it logged.
type world struct {
	t       *testing.T
	root    string
	realGit string
	fixEnv  []string // environment for fixture git commands, clean too
	remote  string   // path of the bare repository
	git     *gitcli.Git
	logs    *bytes.Buffer
	argv    string // file where the recording git wrapper appends argv, if used
}

type worldOption func(*gitcli.Config, *world)

// withRecorder runs git through a wrapper script that records each argv.
func withRecorder() worldOption {
	return func(cfg *gitcli.Config, w *world) {
		w.argv = filepath.Join(w.root, "argv.log")
		script := filepath.Join(w.root, "git-recorder")
		body := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\nexec '%s' \"$@\"\n", w.argv, w.realGit)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			w.t.Fatal(err)
		}
		cfg.GitPath = script
	}
}

func withConfig(f func(*gitcli.Config)) worldOption {
	return func(cfg *gitcli.Config, _ *world) { f(cfg) }
}

func setup(t *testing.T, opts ...worldOption) *world {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fixtures use sh scripts")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	root := t.TempDir()
	w := &world{t: t, root: root, realGit: realGit, logs: new(bytes.Buffer)}
	w.fixEnv = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(root, "fixture-home"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"LC_ALL=C",
		"GIT_AUTHOR_NAME=Seed", "GIT_AUTHOR_EMAIL=seed@example.com",
		"GIT_COMMITTER_NAME=Seed", "GIT_COMMITTER_EMAIL=seed@example.com",
	}

	w.remote = filepath.Join(root, "remote.git")
	w.fixGit(root, "init", "--quiet", "--bare", "--initial-branch=main", w.remote)
	seed := filepath.Join(root, "seed")
	w.fixGit(root, "clone", "--quiet", w.remote, seed)
	writeFile(t, seed, "README.md", "hello\n")
	writeFile(t, seed, "shared.md", "line one\nline two\nline three\n")
	writeFile(t, seed, "docs/intro.mdx", "# Intro\n\nWelcome.\n")
	writeFile(t, seed, "docs/old.mdx", "# Old\n\nGone soon.\n")
	w.fixGit(seed, "add", "--all")
	w.fixGit(seed, "commit", "--quiet", "-m", "initial")
	w.fixGit(seed, "push", "--quiet", "origin", "HEAD:refs/heads/main")

	cfg := gitcli.Config{
		HomeDir: filepath.Join(root, "gitcli-home"),
		Log:     slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(&cfg, w)
	}
	w.git, err = gitcli.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return w
}

// fixGit runs git for the fixture (not through the package under test).
func (w *world) fixGit(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(w.realGit, args...)
	cmd.Dir = dir
	cmd.Env = w.fixEnv
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		w.t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// human clones branch and pushes a commit made by edit, as a person would.
func (w *world) human(branch, message string, edit func(dir string)) {
	w.t.Helper()
	dir, err := os.MkdirTemp(w.root, "human-")
	if err != nil {
		w.t.Fatal(err)
	}
	w.fixGit(w.root, "clone", "--quiet", "--branch", branch, w.remote, dir)
	edit(dir)
	w.fixGit(dir, "add", "--all")
	w.fixGit(dir, "-c", "user.name=Human", "-c", "user.email=human@example.com", "commit", "--quiet", "-m", message)
	w.fixGit(dir, "push", "--quiet", "origin", "HEAD:refs/heads/"+branch)
}

// remoteLog lists the subjects on a branch of the remote, newest first.
func (w *world) remoteLog(branch string) []string {
	w.t.Helper()
	return strings.Split(w.fixGit(w.root, "--git-dir="+w.remote, "log", "--format=%s", "refs/heads/"+branch), "\n")
}

// recorded is every argv the wrapper saw.
func (w *world) recorded() []string {
	w.t.Helper()
	data, err := os.ReadFile(w.argv)
	if err != nil {
		w.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// clone clones branch of the world's remote into a new directory.
func (w *world) clone(ctx context.Context, branch string) *gitcli.Repo {
	w.t.Helper()
	dir, err := os.MkdirTemp(w.root, "work-")
	if err != nil {
		w.t.Fatal(err)
	}
	repo, err := w.git.Clone(ctx, w.remote, branch, dir, nil)
	if err != nil {
		w.t.Fatalf("Clone %s: %v", branch, err)
	}
	return repo
}

// commit writes files and commits them through the package under test.
func commit(t *testing.T, repo *gitcli.Repo, message string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		writeFile(t, repo.Dir, name, content)
	}
	sha, committed, err := repo.CommitAll(t.Context(), gitcli.CommitOptions{
		Message: message, AuthorName: "Docs Agent", AuthorEmail: "agent@docsmith.test",
	})
	if err != nil || !committed {
		t.Fatalf("CommitAll = %q, %v, %v", sha, committed, err)
	}
	return sha
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCloneBranchCommitPush(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()

	repo := w.clone(ctx, "main")
	base, err := repo.HeadSHA(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.fixGit(repo.Dir, "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Errorf("clone is not shallow: %s", got)
	}
	if exists, err := w.git.RemoteBranchExists(ctx, w.remote, jobBranch, nil); err != nil || exists {
		t.Fatalf("RemoteBranchExists before push = %v, %v", exists, err)
	}
	if err := repo.CreateBranch(ctx, jobBranch); err != nil {
		t.Fatalf("CreateBranch: %v", err)
	}
	if got := w.fixGit(repo.Dir, "symbolic-ref", "--short", "HEAD"); got != jobBranch {
		t.Fatalf("HEAD is on %q, want %q", got, jobBranch)
	}

	writeFile(t, repo.Dir, "README.md", "hello\nworld\n")
	writeFile(t, repo.Dir, "docs/watch.mdx", "# Watch\n\nUse `--watch`.\n")
	if err := os.Remove(filepath.Join(repo.Dir, "docs/old.mdx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(repo.Dir, "docs/intro.mdx"), filepath.Join(repo.Dir, "docs/getting-started.mdx")); err != nil {
		t.Fatal(err)
	}
	changes, err := repo.Changes(ctx)
	if err != nil {
		t.Fatalf("Changes: %v", err)
	}
	slices.SortFunc(changes, func(a, b gitcli.Change) int { return strings.Compare(a.Path, b.Path) })
	wantChanges := []gitcli.Change{
		{Path: "README.md", Kind: gitcli.Modified},
		{Path: "docs/getting-started.mdx", OldPath: "docs/intro.mdx", Kind: gitcli.Renamed},
		{Path: "docs/old.mdx", Kind: gitcli.Deleted},
		{Path: "docs/watch.mdx", Kind: gitcli.Added},
	}
	if !slices.Equal(changes, wantChanges) {
		t.Fatalf("Changes = %+v, want %+v", changes, wantChanges)
	}

	sha, committed, err := repo.CommitAll(ctx, gitcli.CommitOptions{
		Message:     "--watch: document the flag\n\nAdds docs/watch.mdx.",
		AuthorName:  "Docs Agent",
		AuthorEmail: "agent@docsmith.test",
		Trailers:    []string{"Docsmith-Job: 1a2b3c4d"},
	})
	if err != nil || !committed {
		t.Fatalf("CommitAll = %q, %v, %v", sha, committed, err)
	}
	if head, _ := repo.HeadSHA(ctx); head != sha || len(sha) != 40 {
		t.Fatalf("HeadSHA = %q, CommitAll gave %q", head, sha)
	}
	got := w.fixGit(repo.Dir, "log", "-1", "--format=%an%n%ae%n%cn%n%ce%n%B")
	want := "Docs Agent\nagent@docsmith.test\ndocsmith\ndocsmith@localhost\n" +
		"--watch: document the flag\n\nAdds docs/watch.mdx.\n\nDocsmith-Job: 1a2b3c4d"
	if got != want {
		t.Fatalf("commit is\n%s\nwant\n%s", got, want)
	}
	if st := w.fixGit(repo.Dir, "status", "--porcelain"); st != "" {
		t.Fatalf("work tree not clean after commit: %s", st)
	}

	again, committed, err := repo.CommitAll(ctx, gitcli.CommitOptions{Message: "nothing", AuthorName: "A", AuthorEmail: "a@b"})
	if err != nil || committed || again != sha {
		t.Fatalf("CommitAll with nothing to commit = %q, %v, %v; want %q, false, nil", again, committed, err, sha)
	}

	files, added, removed, err := repo.DiffStat(ctx, base)
	if err != nil || files != 4 || added != 4 || removed != 3 {
		t.Fatalf("DiffStat = %d files +%d -%d, %v; want 4 files +4 -3", files, added, removed, err)
	}

	if err := repo.Push(ctx, jobBranch, nil); err != nil {
		t.Fatalf("Push: %v", err)
	}
	if exists, err := w.git.RemoteBranchExists(ctx, w.remote, jobBranch, nil); err != nil || !exists {
		t.Fatalf("RemoteBranchExists after push = %v, %v", exists, err)
	}
	// A branch whose name ends like ours is not ours.
	if exists, err := w.git.RemoteBranchExists(ctx, w.remote, "document-the-watch-flag", nil); err != nil || exists {
		t.Fatalf("RemoteBranchExists(suffix) = %v, %v", exists, err)
	}

	again2 := w.clone(ctx, jobBranch)
	if head, err := again2.HeadSHA(ctx); err != nil || head != sha {
		t.Fatalf("re-cloned HEAD = %q, %v; want %q", head, err, sha)
	}
	if data, err := os.ReadFile(filepath.Join(again2.Dir, "docs/watch.mdx")); err != nil || !strings.Contains(string(data), "--watch") {
		t.Fatalf("re-cloned docs/watch.mdx = %q, %v", data, err)
	}

	for _, r := range []*gitcli.Repo{repo, again2} {
		if err := r.Remove(); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		if _, err := os.Stat(r.Dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s still exists: %v", r.Dir, err)
		}
	}
}

func TestPushRebasing(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()

	repo := w.clone(ctx, "main")
	if err := repo.CreateBranch(ctx, jobBranch); err != nil {
		t.Fatal(err)
	}
	commit(t, repo, "ours 1", map[string]string{"ours.md": "first\n"})
	if err := repo.Push(ctx, jobBranch, nil); err != nil {
		t.Fatalf("Push: %v", err)
	}

	w.human(jobBranch, "human", func(dir string) { writeFile(t, dir, "human.md", "by hand\n") })
	commit(t, repo, "ours 2", map[string]string{"ours.md": "first\nsecond\n"})

	err := repo.Push(ctx, jobBranch, nil)
	if !errors.Is(err, gitcli.ErrPushRejected) {
		t.Fatalf("Push after a human pushed = %v, want ErrPushRejected", err)
	}
	if err := repo.PushRebasing(ctx, jobBranch, nil, 3); err != nil {
		t.Fatalf("PushRebasing: %v", err)
	}
	if got, want := w.remoteLog(jobBranch), []string{"ours 2", "human", "ours 1", "initial"}; !slices.Equal(got, want) {
		t.Fatalf("remote log = %q, want %q", got, want)
	}
	head, _ := repo.HeadSHA(ctx)
	if remoteHead := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/"+jobBranch); remoteHead != head {
		t.Fatalf("remote is at %s, we are at %s", remoteHead, head)
	}
	if _, err := os.Stat(filepath.Join(repo.Dir, "human.md")); err != nil {
		t.Fatalf("the human's file is not in our work tree: %v", err)
	}

	// It goes on working after a rebase: one more round.
	w.human(jobBranch, "human 2", func(dir string) { writeFile(t, dir, "human2.md", "again\n") })
	commit(t, repo, "ours 3", map[string]string{"ours3.md": "third\n"})
	if err := repo.PushRebasing(ctx, jobBranch, nil, 2); err != nil {
		t.Fatalf("second PushRebasing: %v", err)
	}
	if got, want := w.remoteLog(jobBranch), []string{"ours 3", "human 2", "ours 2", "human", "ours 1", "initial"}; !slices.Equal(got, want) {
		t.Fatalf("remote log = %q, want %q", got, want)
	}
}

func TestPushRebasingConflict(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()

	repo := w.clone(ctx, "main")
	if err := repo.CreateBranch(ctx, jobBranch); err != nil {
		t.Fatal(err)
	}
	commit(t, repo, "ours 1", map[string]string{"ours.md": "first\n"})
	if err := repo.Push(ctx, jobBranch, nil); err != nil {
		t.Fatalf("Push: %v", err)
	}
	w.human(jobBranch, "human", func(dir string) { writeFile(t, dir, "shared.md", "line one\nline TWO by hand\nline three\n") })
	ours := commit(t, repo, "ours 2", map[string]string{"shared.md": "line one\nline 2 by the agent\nline three\n"})

	err := repo.PushRebasing(ctx, jobBranch, nil, 3)
	if !errors.Is(err, gitcli.ErrConflict) {
		t.Fatalf("PushRebasing = %v, want ErrConflict", err)
	}
	var conflict *gitcli.ConflictError
	if !errors.As(err, &conflict) || !slices.Equal(conflict.Files, []string{"shared.md"}) {
		t.Fatalf("PushRebasing = %#v, want a ConflictError on shared.md", err)
	}
	if !strings.Contains(err.Error(), "shared.md") {
		t.Fatalf("error %q does not name the file", err)
	}
	if st := w.fixGit(repo.Dir, "status", "--porcelain"); st != "" {
		t.Fatalf("work tree not clean after the aborted rebase: %s", st)
	}
	for _, dir := range []string{"rebase-merge", "rebase-apply"} {
		if _, err := os.Stat(filepath.Join(repo.Dir, ".git", dir)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a rebase is still in progress (%s): %v", dir, err)
		}
	}
	if head, _ := repo.HeadSHA(ctx); head != ours {
		t.Fatalf("HEAD moved to %s, want our commit %s", head, ours)
	}
	if got, want := w.remoteLog(jobBranch), []string{"human", "ours 1", "initial"}; !slices.Equal(got, want) {
		t.Fatalf("remote log = %q, want %q", got, want)
	}
}

func TestOptionInjectionRefused(t *testing.T) {
	t.Parallel()
	w := setup(t, withRecorder())
	ctx := t.Context()
	repo := w.clone(ctx, "main")
	before := len(w.recorded())
	target := filepath.Join(w.root, "never")

	tests := []struct {
		name string
		call func() error
	}{
		{"clone branch -x", func() error { _, err := w.git.Clone(ctx, w.remote, "-x", target, nil); return err }},
		{"clone branch --upload-pack", func() error {
			_, err := w.git.Clone(ctx, w.remote, "--upload-pack=evil", target, nil)
			return err
		}},
		{"clone remote --foo", func() error { _, err := w.git.Clone(ctx, "--foo", "main", target, nil); return err }},
		{"clone remote --upload-pack", func() error {
			_, err := w.git.Clone(ctx, "--upload-pack=touch /tmp/pwned", "main", target, nil)
			return err
		}},
		{"clone remote ext::", func() error {
			_, err := w.git.Clone(ctx, "ext::sh -c touch% /tmp/pwned", "main", target, nil)
			return err
		}},
		{"clone remote ssh", func() error { _, err := w.git.Clone(ctx, "git@github.com:a/b.git", "main", target, nil); return err }},
		{"clone remote plain http", func() error {
			_, err := w.git.Clone(ctx, "http://127.0.0.1:1/a.git", "main", target, nil)
			return err
		}},
		{"clone remote with credentials", func() error {
			_, err := w.git.Clone(ctx, "https://x:ghp_abcdefghijklmnop@github.com/a/b.git", "main", target, nil)
			return err
		}},
		{"clone credentials with newline", func() error {
			_, err := w.git.Clone(ctx, "https://github.com/a/b.git", "main", target, &gitcli.Credentials{Username: "x", Password: "a\nhost=evil"})
			return err
		}},
		{"clone into a non-empty directory", func() error { _, err := w.git.Clone(ctx, w.remote, "main", w.root, nil); return err }},
		{"ls-remote remote --foo", func() error { _, err := w.git.RemoteBranchExists(ctx, "--foo", "main", nil); return err }},
		{"ls-remote branch -x", func() error { _, err := w.git.RemoteBranchExists(ctx, w.remote, "-x", nil); return err }},
		{"create branch -x", func() error { return repo.CreateBranch(ctx, "-x") }},
		{"create branch --orphan", func() error { return repo.CreateBranch(ctx, "--orphan=x") }},
		{"create branch range", func() error { return repo.CreateBranch(ctx, "a..b") }},
		{"push --upload-pack", func() error { return repo.Push(ctx, "--upload-pack=evil", nil) }},
		{"push -f", func() error { return repo.Push(ctx, "-f", nil) }},
		{"push rebasing --force", func() error { return repo.PushRebasing(ctx, "--force", nil, 2) }},
		{"diff stat --output", func() error { _, _, _, err := repo.DiffStat(ctx, "--output=/tmp/pwned"); return err }},
		{"diff stat range", func() error { _, _, _, err := repo.DiffStat(ctx, "HEAD..main"); return err }},
		{"commit trailer option", func() error {
			_, _, err := repo.CommitAll(ctx, gitcli.CommitOptions{Message: "m", AuthorName: "a", AuthorEmail: "a@b", Trailers: []string{"--amend: x"}})
			return err
		}},
		{"commit author forging a header", func() error {
			_, _, err := repo.CommitAll(ctx, gitcli.CommitOptions{Message: "m", AuthorName: "a> \ncommitter x", AuthorEmail: "a@b"})
			return err
		}},
	}
	t.Run("refused", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				err := tt.call()
				if !errors.Is(err, gitcli.ErrInvalidArgument) {
					t.Fatalf("got %v, want ErrInvalidArgument", err)
				}
				if strings.Contains(err.Error(), "ghp_abcdefghijklmnop") || strings.Contains(err.Error(), "host=evil") {
					t.Fatalf("error %q shows a secret", err)
				}
			})
		}
	})
	if after := w.recorded(); len(after) != before {
		t.Fatalf("git ran for refused input: %q", after[before:])
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s was created", target)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	oldGit := filepath.Join(dir, "old-git")
	if err := os.WriteFile(oldGit, []byte("#!/bin/sh\necho 'git version 2.20.1'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     gitcli.Config
		wantErr string
	}{
		{name: "ok", cfg: gitcli.Config{HomeDir: filepath.Join(dir, "ok")}},
		{name: "no home", cfg: gitcli.Config{}, wantErr: "HomeDir is required"},
		{name: "no git", cfg: gitcli.Config{HomeDir: filepath.Join(dir, "a"), GitPath: filepath.Join(dir, "missing")}, wantErr: "find git"},
		{name: "old git", cfg: gitcli.Config{HomeDir: filepath.Join(dir, "b"), GitPath: oldGit}, wantErr: "too old"},
		{name: "bad committer", cfg: gitcli.Config{HomeDir: filepath.Join(dir, "c"), CommitterName: "x <y>"}, wantErr: "committer name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := gitcli.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || !strings.HasPrefix(g.Version(), "git version ") {
					t.Fatalf("New = %v, version %q", err, g.Version())
				}
				info, err := os.Stat(tt.cfg.HomeDir)
				if err != nil || info.Mode().Perm() != 0o700 {
					t.Fatalf("home dir: %v, %v", info, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		timeout     time.Duration // Config.Timeout
		ctxDeadline time.Duration // 0: none
	}{
		{name: "context deadline", ctxDeadline: 200 * time.Millisecond},
		{name: "context already expired", ctxDeadline: time.Nanosecond},
		{name: "config timeout", timeout: 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := hangingServer(t)
			w := setup(t, withConfig(func(cfg *gitcli.Config) {
				cfg.Timeout = tt.timeout
				cfg.AllowHTTP = true
			}))
			ctx := t.Context()
			if tt.ctxDeadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxDeadline)
				defer cancel()
			}
			start := time.Now()
			target := filepath.Join(w.root, "slow")
			_, err := w.git.Clone(ctx, url, "main", target, nil)
			if err == nil {
				t.Fatal("Clone from a server that never answers succeeded")
			}
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
				t.Fatalf("Clone = %v, want a timeout", err)
			}
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Fatalf("Clone took %s to time out", elapsed)
			}
			if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the failed clone left %s behind: %v", target, err)
			}
		})
	}
}

// TestCheckoutsHoldNoSymlinks: a repository's symbolic links, whether they
// lead to an absolute host path, out of the repository through "..", or to a
// directory inside it, reach a checkout as plain files holding the link's
// target, on a clone and on the files a rebase brings in.
func TestCheckoutsHoldNoSymlinks(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()
	outside := t.TempDir()
	links := map[string]string{
		"abs":            outside,
		"up":             "../..",
		"docs/nested":    "../../../",
		"docs/in-repo":   "intro.mdx",
		"docs/guide-dir": ".",
	}
	w.human("main", "links", func(dir string) {
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
				t.Fatal(err)
			}
		}
	})
	assertPlain := func(dir string, name, target string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !fi.Mode().IsRegular() {
			t.Fatalf("%s is %v in the checkout, want a regular file", name, fi.Mode().Type())
		}
		if data, _ := os.ReadFile(p); string(data) != target {
			t.Fatalf("%s holds %q, want the link target %q", name, data, target)
		}
	}

	repo := w.clone(ctx, "main")
	for name, target := range links {
		assertPlain(repo.Dir, name, target)
	}

	// Links a rebase brings in are plain files too.
	if err := repo.CreateBranch(ctx, jobBranch); err != nil {
		t.Fatal(err)
	}
	commit(t, repo, "ours 1", map[string]string{"ours.md": "first\n"})
	if err := repo.Push(ctx, jobBranch, nil); err != nil {
		t.Fatal(err)
	}
	w.human(jobBranch, "more links", func(dir string) {
		if err := os.Symlink(outside, filepath.Join(dir, "late")); err != nil {
			t.Fatal(err)
		}
	})
	commit(t, repo, "ours 2", map[string]string{"ours.md": "first\nsecond\n"})
	if err := repo.PushRebasing(ctx, jobBranch, nil, 3); err != nil {
		t.Fatalf("PushRebasing: %v", err)
	}
	assertPlain(repo.Dir, "late", outside)
	// Our commits leave the links as the repository had them.
	if mode := w.fixGit(w.root, "--git-dir="+w.remote, "ls-tree", "refs/heads/"+jobBranch, "abs"); !strings.HasPrefix(mode, "120000") {
		t.Fatalf("abs is %q on the branch, want a symlink entry kept as is", mode)
	}
}

func TestSymlinks(t *testing.T) {
	t.Parallel()
	w := setup(t)
	w.human("main", "links", func(dir string) {
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(os.Symlink("/etc", filepath.Join(dir, "abs")))
		must(os.Symlink("intro.mdx", filepath.Join(dir, "docs", "a link with\ttab.mdx")))
	})
	repo := w.clone(t.Context(), "main")
	links, err := repo.Symlinks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"abs", "docs/a link with\ttab.mdx"}; !slices.Equal(links, want) {
		t.Fatalf("Symlinks = %q, want %q", links, want)
	}
}
