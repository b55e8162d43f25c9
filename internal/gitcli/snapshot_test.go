package gitcli_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
)

func TestRemoteBranchSHA(t *testing.T) {
	t.Parallel()
	w := setup(t)
	want := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main")
	sha, found, err := w.git.RemoteBranchSHA(t.Context(), w.remote, "main", nil)
	if err != nil || !found || sha != want {
		t.Fatalf("main: %q, %v, %v; want %q", sha, found, err, want)
	}
	// ls-remote matches the end of ref names: "ain" must not find main.
	for _, branch := range []string{"ain", "nope"} {
		if sha, found, err := w.git.RemoteBranchSHA(t.Context(), w.remote, branch, nil); err != nil || found || sha != "" {
			t.Fatalf("%s: %q, %v, %v; want not found", branch, sha, found, err)
		}
	}
}

// TestCloneSnapshot: one commit is fetched without a work tree; the caller
// lists the tree, checks out only the files it picks, and diffs against an
// older commit fetched on its own.
func TestCloneSnapshot(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()
	before := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main")
	w.human("main", "Add code", func(dir string) {
		writeFile(t, dir, "src/app.go", "package app\n")
		writeFile(t, dir, "shared.md", "line one\nline 2\nline three\n")
		writeFile(t, dir, "big.bin", strings.Repeat("x", 5000))
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
	})
	after := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main")

	for _, rev := range []string{gitcli.DefaultBranch, "main", after} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "snap")
			repo, err := w.git.CloneSnapshot(ctx, w.remote, rev, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if head, err := repo.HeadSHA(ctx); err != nil || head != after {
				t.Fatalf("HEAD = %q, %v; want %s", head, err, after)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 || entries[0].Name() != ".git" {
				t.Fatalf("the snapshot checked out files: %v", entries)
			}
			files, err := repo.TreeFiles(ctx, "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			byPath := map[string]gitcli.TreeFile{}
			for _, f := range files {
				byPath[f.Path] = f
			}
			if f := byPath["big.bin"]; f.Size != 5000 || !f.Regular() {
				t.Errorf("big.bin = %+v", f)
			}
			if f := byPath["link"]; f.Mode != "120000" || f.Regular() {
				t.Errorf("link = %+v", f)
			}
			if err := repo.CheckoutFiles(ctx, "HEAD", []string{"src/app.go", "shared.md"}); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "src", "app.go")); err != nil || string(got) != "package app\n" {
				t.Fatalf("src/app.go = %q, %v", got, err)
			}
			for _, name := range []string{"big.bin", "link", "README.md"} {
				if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was checked out: %v", name, err)
				}
			}
			if size, err := repo.ObjectsSize(ctx); err != nil || size <= 0 {
				t.Errorf("ObjectsSize = %d, %v", size, err)
			}
		})
	}

	t.Run("diff", func(t *testing.T) {
		t.Parallel()
		repo, err := w.git.CloneSnapshot(ctx, w.remote, after, filepath.Join(t.TempDir(), "snap"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.FetchCommit(ctx, before, nil); err != nil {
			t.Fatal(err)
		}
		diff, total, err := repo.Diff(ctx, before, after, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"+++ b/src/app.go", "-line two\n+line 2\n", "new file mode 120000"} {
			if !strings.Contains(diff, want) {
				t.Errorf("diff lacks %q:\n%s", want, diff)
			}
		}
		if total != int64(len(diff)) {
			t.Errorf("total %d, kept %d", total, len(diff))
		}
		cut, total2, err := repo.Diff(ctx, before, after, 100)
		if err != nil || len(cut) != 100 || total2 != total || !strings.HasPrefix(diff, cut) {
			t.Fatalf("capped diff: %d bytes of %d, %v", len(cut), total2, err)
		}
	})

	t.Run("unknown commit", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "snap")
		_, err := w.git.CloneSnapshot(ctx, w.remote, strings.Repeat("ab", 20), dir, nil)
		var gerr *gitcli.Error
		if !errors.As(err, &gerr) {
			t.Fatalf("err = %v, want a git error", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a failed snapshot left %s behind", dir)
		}
		repo, err := w.git.CloneSnapshot(ctx, w.remote, "main", dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.FetchCommit(ctx, strings.Repeat("cd", 20), nil); !errors.As(err, &gerr) {
			t.Fatalf("FetchCommit of an unknown commit: %v", err)
		}
	})
}

func TestSnapshotRefusesInjection(t *testing.T) {
	t.Parallel()
	w := setup(t, withRecorder())
	ctx := t.Context()
	repo, err := w.git.CloneSnapshot(ctx, w.remote, "main", filepath.Join(w.root, "snap"), nil)
	if err != nil {
		t.Fatal(err)
	}
	before := len(w.recorded())
	target := filepath.Join(w.root, "never")
	tests := map[string]func() error{
		"rev -x": func() error { _, err := w.git.CloneSnapshot(ctx, w.remote, "-x", target, nil); return err },
		"rev --upload-pack": func() error {
			_, err := w.git.CloneSnapshot(ctx, w.remote, "--upload-pack=touch /tmp/pwned", target, nil)
			return err
		},
		"rev refspec": func() error {
			_, err := w.git.CloneSnapshot(ctx, w.remote, "main:refs/heads/x", target, nil)
			return err
		},
		"remote ext::": func() error {
			_, err := w.git.CloneSnapshot(ctx, "ext::sh -c touch% /tmp/pwned", "main", target, nil)
			return err
		},
		"fetch short id":       func() error { return repo.FetchCommit(ctx, "abc123", nil) },
		"fetch option":         func() error { return repo.FetchCommit(ctx, "--depth=100000", nil) },
		"tree option":          func() error { _, err := repo.TreeFiles(ctx, "--output=/tmp/pwned"); return err },
		"checkout rev option":  func() error { return repo.CheckoutFiles(ctx, "--force", []string{"a"}) },
		"checkout NUL in path": func() error { return repo.CheckoutFiles(ctx, "HEAD", []string{"a\x00b"}) },
		"diff option":          func() error { _, _, err := repo.Diff(ctx, "--output=/tmp/pwned", "HEAD", 10); return err },
		"diff range":           func() error { _, _, err := repo.Diff(ctx, "HEAD..main", "HEAD", 10); return err },
		"ls-remote sha -x":     func() error { _, _, err := w.git.RemoteBranchSHA(ctx, w.remote, "-x", nil); return err },
	}
	for name, call := range tests {
		if err := call(); !errors.Is(err, gitcli.ErrInvalidArgument) {
			t.Errorf("%s: got %v, want ErrInvalidArgument", name, err)
		}
	}
	if after := w.recorded(); len(after) != before {
		t.Fatalf("git ran for refused input: %q", after[before:])
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s was created", target)
	}
	// A path that looks like an option or a pattern is checked out as the
	// one path it is.
	w.human("main", "Odd names", func(dir string) {
		writeFile(t, dir, "--force", "just a file\n")
		writeFile(t, dir, "*.md", "a star\n")
	})
	odd, err := w.git.CloneSnapshot(ctx, w.remote, "main", filepath.Join(w.root, "odd"), nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := odd.TreeFiles(ctx, "HEAD")
	if err != nil || !slices.ContainsFunc(files, func(f gitcli.TreeFile) bool { return f.Path == "--force" }) {
		t.Fatalf("TreeFiles = %v, %v", files, err)
	}
	if err := odd.CheckoutFiles(ctx, "HEAD", []string{"--force", "*.md"}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(odd.Dir, "--force")); err != nil || string(got) != "just a file\n" {
		t.Fatalf("--force = %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(odd.Dir, "README.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a pattern among the paths was expanded")
	}
}
