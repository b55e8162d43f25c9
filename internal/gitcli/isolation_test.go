package gitcli_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestEnvironmentIsolation sets everything in our own environment that
// could steer git (config files, config parameters, repository location,
// tracing, identity) and checks that none of it reaches the commands. It
// cannot run in parallel because it changes the process environment; the
// real HOME is left alone.
func TestEnvironmentIsolation(t *testing.T) {
	hostile := t.TempDir()
	marker := filepath.Join(hostile, "hook-ran")
	hooks := filepath.Join(hostile, "hooks")
	writeFile(t, hooks, "post-commit", "#!/bin/sh\ntouch '"+marker+"'\n")
	writeFile(t, hooks, "pre-push", "#!/bin/sh\ntouch '"+marker+"'\nexit 1\n")
	if err := os.Chmod(filepath.Join(hooks, "post-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(hooks, "pre-push"), 0o755); err != nil {
		t.Fatal(err)
	}
	bogus := "file://" + filepath.Join(hostile, "nowhere.git")
	// Any of these, if read, rewrites our remote to one that does not exist.
	rewrite := "[url \"" + bogus + "\"]\n\tinsteadOf = /\n[core]\n\thooksPath = " + hooks +
		"\n[user]\n\tname = Leaked\n\temail = leaked@example.com\n"
	writeFile(t, hostile, "global.gitconfig", rewrite)
	writeFile(t, hostile, "xdg/git/config", rewrite)
	writeFile(t, hostile, "system.gitconfig", rewrite)
	trace := filepath.Join(hostile, "trace.log")

	for k, v := range map[string]string{
		"GIT_CONFIG_GLOBAL":     filepath.Join(hostile, "global.gitconfig"),
		"GIT_CONFIG_SYSTEM":     filepath.Join(hostile, "system.gitconfig"),
		"GIT_CONFIG_NOSYSTEM":   "0",
		"XDG_CONFIG_HOME":       filepath.Join(hostile, "xdg"),
		"GIT_CONFIG_PARAMETERS": "'url." + bogus + ".insteadof'='/' 'core.hookspath'='" + hooks + "'",
		"GIT_CONFIG_COUNT":      "1",
		"GIT_CONFIG_KEY_0":      "core.hooksPath",
		"GIT_CONFIG_VALUE_0":    hooks,
		"GIT_DIR":               filepath.Join(hostile, "not-a-repo"),
		"GIT_WORK_TREE":         hostile,
		"GIT_INDEX_FILE":        filepath.Join(hostile, "index"),
		"GIT_OBJECT_DIRECTORY":  filepath.Join(hostile, "objects"),
		"GIT_TRACE":             trace,
		"GIT_TRACE_CURL":        trace,
		"GIT_AUTHOR_NAME":       "Leaked",
		"GIT_COMMITTER_NAME":    "Leaked",
		"GIT_SSH_COMMAND":       "touch '" + marker + "'",
		"LC_ALL":                "de_DE.UTF-8",
	} {
		t.Setenv(k, v)
	}

	w := setup(t) // its fixture commands set a clean environment of their own
	ctx := t.Context()
	repo := w.clone(ctx, "main")
	if err := repo.CreateBranch(ctx, jobBranch); err != nil {
		t.Fatalf("CreateBranch: %v", err)
	}
	commit(t, repo, "isolated", map[string]string{"iso.md": "ok\n"})
	if err := repo.Push(ctx, jobBranch, nil); err != nil {
		t.Fatalf("Push: %v", err)
	}
	if exists, err := w.git.RemoteBranchExists(ctx, w.remote, jobBranch, nil); err != nil || !exists {
		t.Fatalf("RemoteBranchExists = %v, %v", exists, err)
	}

	if got, want := w.fixGit(repo.Dir, "log", "-1", "--format=%an|%cn"), "Docs Agent|docsmith"; got != want {
		t.Fatalf("identity = %q, want %q", got, want)
	}
	for _, path := range []string{marker, trace, filepath.Join(hostile, "not-a-repo"), filepath.Join(hostile, "index")} {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: the environment leaked into git", path)
		}
	}
}
