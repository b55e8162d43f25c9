package gitcli_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/docsmith/docsmith/internal/gitcli"
)

// readMirror opens the world's remote's mirror below mirrors, checks branch
// out into a new directory and closes the mirror again.
func (w *world) readMirror(git *gitcli.Git, mirrors, branch string, creds *gitcli.Credentials, keep func(gitcli.TreeFile) bool) (string, string, error) {
	w.t.Helper()
	m, err := git.OpenMirror(w.t.Context(), mirrors, w.remote)
	if err != nil {
		return "", "", err
	}
	defer func() { _ = m.Close() }()
	dir, err := os.MkdirTemp(w.root, "read-")
	if err != nil {
		w.t.Fatal(err)
	}
	commit, err := m.CheckoutBranch(w.t.Context(), branch, filepath.Join(dir, "repo"), creds, keep)
	return commit, filepath.Join(dir, "repo"), err
}

func readText(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestMirrorFollowsTheBranch: the first read makes the mirror, later reads
// fetch what changed; what is written is the tip's files that keep
// accepts, symbolic links left out.
func TestMirrorFollowsTheBranch(t *testing.T) {
	t.Parallel()
	w := setup(t)
	mirrors := filepath.Join(w.root, "mirrors")
	commit, dir, err := w.readMirror(w.git, mirrors, "main", nil, nil)
	if err != nil {
		t.Fatalf("first read: %v", err)
	}
	if want := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main"); commit != want {
		t.Fatalf("commit = %s, want %s", commit, want)
	}
	if got := readText(t, dir, "docs/intro.mdx"); got != "# Intro\n\nWelcome.\n" {
		t.Fatalf("intro = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the checkout has a .git: %v", err)
	}

	w.human("main", "edit", func(dir string) {
		writeFile(t, dir, "docs/intro.mdx", "# Intro\n\nChanged.\n")
		writeFile(t, dir, "docs/big.mdx", strings.Repeat("x", 5000))
		if err := os.Symlink("/etc", filepath.Join(dir, "docs", "abs")); err != nil {
			t.Fatal(err)
		}
	})
	small := func(f gitcli.TreeFile) bool { return strings.HasPrefix(f.Path, "docs/") && f.Size < 1000 }
	commit2, dir2, err := w.readMirror(w.git, mirrors, "main", nil, small)
	if err != nil {
		t.Fatalf("second read: %v", err)
	}
	if commit2 == commit {
		t.Fatal("the second read did not fetch the new commit")
	}
	if got := readText(t, dir2, "docs/intro.mdx"); got != "# Intro\n\nChanged.\n" {
		t.Fatalf("intro after the edit = %q", got)
	}
	for _, left := range []string{"README.md", "docs/big.mdx"} {
		if _, err := os.Stat(filepath.Join(dir2, left)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was checked out though keep refused it: %v", left, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir2, "docs", "abs")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the link docs/abs was checked out: %v", err)
	}
	if !strings.Contains(w.logs.String(), "symbolic links left out") || !strings.Contains(w.logs.String(), "docs/abs") {
		t.Fatalf("the link left out was not logged:\n%s", w.logs.String())
	}
	// One mirror for the remote, however often it is read.
	entries, err := os.ReadDir(mirrors)
	if err != nil {
		t.Fatal(err)
	}
	var repos []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".git") {
			repos = append(repos, e.Name())
		}
	}
	if len(repos) != 1 {
		t.Fatalf("mirrors = %v, want one repository", entries)
	}

	if _, _, err := w.readMirror(w.git, mirrors, "no-such-branch", nil, nil); err == nil || !strings.Contains(err.Error(), "no-such-branch") {
		t.Fatalf("unknown branch: %v", err)
	}
	// The remote's refusal leaves the mirror as it was.
	if got, _, err := w.readMirror(w.git, mirrors, "main", nil, nil); err != nil || got != commit2 {
		t.Fatalf("read after the unknown branch = %s, %v", got, err)
	}
	if strings.Contains(w.logs.String(), "made again") {
		t.Fatalf("a sound mirror was made again:\n%s", w.logs.String())
	}
}

// TestMirrorConcurrentReads: builds reading one mirror at once, through one
// Git or through two (as two processes would, kept apart by flock), each
// get the whole tip; a reader waits for the holder, until its context ends.
func TestMirrorConcurrentReads(t *testing.T) {
	t.Parallel()
	w := setup(t)
	other, err := gitcli.New(gitcli.Config{HomeDir: filepath.Join(w.root, "other-home")})
	if err != nil {
		t.Fatal(err)
	}
	mirrors := filepath.Join(w.root, "mirrors")
	want := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			git := w.git
			if i%2 == 1 {
				git = other
			}
			commit, dir, err := w.readMirror(git, mirrors, "main", nil, nil)
			switch {
			case err != nil:
				errs[i] = err
			case commit != want:
				errs[i] = errors.New("commit " + commit)
			default:
				data, err := os.ReadFile(filepath.Join(dir, "shared.md"))
				if err != nil || string(data) != "line one\nline two\nline three\n" {
					errs[i] = errors.New("shared.md: " + string(data))
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("reader %d: %v", i, err)
		}
	}

	held, err := w.git.OpenMirror(t.Context(), mirrors, w.remote)
	if err != nil {
		t.Fatal(err)
	}
	for _, git := range []*gitcli.Git{w.git, other} {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		m, err := git.OpenMirror(ctx, mirrors, w.remote)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("OpenMirror while another holds it = %v, want it to wait", err)
		}
		if err == nil {
			_ = m.Close()
		}
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := other.OpenMirror(t.Context(), mirrors, w.remote)
	if err != nil {
		t.Fatalf("OpenMirror once released: %v", err)
	}
	_ = m.Close()
}

// TestMirrorRecoversWhenDamaged: a mirror that git cannot read (its objects
// damaged, its refs garbage, or left half made) is made again from the
// remote, and the read gives the tip.
func TestMirrorRecoversWhenDamaged(t *testing.T) {
	t.Parallel()
	damages := map[string]func(t *testing.T, dir string){
		"objects": func(t *testing.T, dir string) {
			err := filepath.WalkDir(filepath.Join(dir, "objects"), func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || strings.HasSuffix(p, ".idx") {
					return err
				}
				if err := os.Chmod(p, 0o644); err != nil {
					return err
				}
				return os.WriteFile(p, []byte("garbage"), 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
		},
		"refs": func(t *testing.T, dir string) {
			writeFile(t, dir, "refs/heads/main", "not a commit id\n")
			_ = os.Remove(filepath.Join(dir, "packed-refs"))
		},
		"half-made": func(t *testing.T, dir string) {
			for _, name := range []string{"objects", "refs", "config"} {
				if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := setup(t)
			mirrors := filepath.Join(w.root, "mirrors")
			if _, _, err := w.readMirror(w.git, mirrors, "main", nil, nil); err != nil {
				t.Fatal(err)
			}
			m, err := w.git.OpenMirror(t.Context(), mirrors, w.remote)
			if err != nil {
				t.Fatal(err)
			}
			dir := m.Dir
			_ = m.Close()
			damage(t, dir)
			w.human("main", "after the damage", func(dir string) { writeFile(t, dir, "docs/new.mdx", "# New\n") })
			commit, out, err := w.readMirror(w.git, mirrors, "main", nil, nil)
			if err != nil {
				t.Fatalf("read of the damaged mirror: %v", err)
			}
			if want := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main"); commit != want {
				t.Fatalf("commit = %s, want %s", commit, want)
			}
			if readText(t, out, "docs/new.mdx") != "# New\n" || readText(t, out, "README.md") != "hello\n" {
				t.Fatal("the checkout lacks the tip's files")
			}
			if !strings.Contains(w.logs.String(), "made again") {
				t.Errorf("the damaged mirror was not logged as made again:\n%s", w.logs.String())
			}
		})
	}
}

// TestMirrorCredentials: over HTTP the token reaches git only through the
// credential helper: not in argv, logs or errors, and nowhere in the
// mirror's files; a refused token fails the read and keeps the mirror.
func TestMirrorCredentials(t *testing.T) {
	t.Parallel()
	w := setup(t, withRecorder(), withConfig(func(cfg *gitcli.Config) { cfg.AllowHTTP = true }))
	url, authed := smartHTTP(t, w)
	mirrors := filepath.Join(w.root, "mirrors")
	read := func(creds *gitcli.Credentials) (string, error) {
		m, err := w.git.OpenMirror(t.Context(), mirrors, url)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = m.Close() }()
		dir, err := os.MkdirTemp(w.root, "read-")
		if err != nil {
			t.Fatal(err)
		}
		return m.CheckoutBranch(t.Context(), "main", filepath.Join(dir, "repo"), creds, nil)
	}
	good := &gitcli.Credentials{Username: tokenUser, Password: goodToken}
	wrong := &gitcli.Credentials{Username: tokenUser, Password: wrongToken}
	if _, err := read(good); err != nil {
		t.Fatalf("read with the token: %v", err)
	}
	if authed.Load() == 0 {
		t.Fatal("the server saw no authenticated request")
	}
	_, err := read(wrong)
	if err == nil {
		t.Fatal("read with a wrong token succeeded")
	}
	if strings.Contains(err.Error(), wrongToken) {
		t.Fatalf("error shows the token: %v", err)
	}
	if _, err := read(good); err != nil {
		t.Fatalf("read after a refused token: %v", err)
	}
	if strings.Contains(w.logs.String(), "made again") {
		t.Fatalf("a refused token made the mirror again:\n%s", w.logs.String())
	}
	err = filepath.WalkDir(mirrors, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, secret := range []string{goodToken, wrongToken, tokenUser} {
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds %q", p, secret)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"argv": strings.Join(w.recorded(), "\n"), "log": w.logs.String()} {
		if !strings.Contains(text, "fetch") {
			t.Fatalf("%s does not show the fetches, is it captured?\n%s", name, text)
		}
		for _, token := range []string{goodToken, wrongToken} {
			if strings.Contains(text, token) {
				t.Fatalf("%s contains a token:\n%s", name, text)
			}
		}
	}
}

// TestMirrorReadBranch: the tip's files read into memory are the files a
// checkout writes, symbolic links left out; over the
// memory allowed nothing is read; a damaged mirror is made again.
func TestMirrorReadBranch(t *testing.T) {
	t.Parallel()
	w := setup(t)
	w.human("main", "links", func(dir string) {
		writeFile(t, dir, "docs/guide/setup.mdx", "# Setup\n")
		if err := os.Symlink("/etc", filepath.Join(dir, "docs", "abs")); err != nil {
			t.Fatal(err)
		}
	})
	mirrors := filepath.Join(w.root, "mirrors")
	read := func(keep func(gitcli.TreeFile) bool, maxBytes int64) (string, *gitcli.TreeFS, error) {
		m, err := w.git.OpenMirror(t.Context(), mirrors, w.remote)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = m.Close() }()
		return m.ReadBranch(t.Context(), "main", nil, keep, maxBytes)
	}
	docsOnly := func(f gitcli.TreeFile) bool { return strings.HasPrefix(f.Path, "docs/") }
	commit, tree, err := read(docsOnly, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main"); commit != want {
		t.Fatalf("commit = %s, want %s", commit, want)
	}
	if err := fstest.TestFS(tree, "docs/intro.mdx", "docs/old.mdx", "docs/guide/setup.mdx"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(tree, "docs/abs"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the link docs/abs was read: %v", err)
	}
	want := map[string]string{"docs/intro.mdx": "# Intro\n\nWelcome.\n", "docs/guide/setup.mdx": "# Setup\n"}
	for name, content := range want {
		fi, err := fs.Stat(tree, name)
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: %v, %v", name, fi, err)
		}
		if data, err := fs.ReadFile(tree, name); err != nil || string(data) != content {
			t.Fatalf("%s = %q, %v, want %q", name, data, err, content)
		}
	}
	if _, err := fs.Stat(tree, "README.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("README.md read though keep refused it: %v", err)
	}

	if _, _, err := read(nil, 10); !errors.Is(err, gitcli.ErrTreeTooLarge) {
		t.Fatalf("read over the memory allowed = %v, want ErrTreeTooLarge", err)
	}
	if strings.Contains(w.logs.String(), "made again") {
		t.Fatalf("a read over the memory allowed made the mirror again:\n%s", w.logs.String())
	}

	m, err := w.git.OpenMirror(t.Context(), mirrors, w.remote)
	if err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(m.Dir, "objects", "pack", "*.pack"))
	loose, _ := filepath.Glob(filepath.Join(m.Dir, "objects", "??", "*"))
	_ = m.Close()
	if len(packs)+len(loose) == 0 {
		t.Fatal("the mirror has no objects to damage")
	}
	for _, p := range append(packs, loose...) {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, tree, err = read(docsOnly, 1<<20); err != nil {
		t.Fatalf("read of the damaged mirror: %v", err)
	}
	if data, err := fs.ReadFile(tree, "docs/guide/setup.mdx"); err != nil || string(data) != "# Setup\n" {
		t.Fatalf("after the damage: %q, %v", data, err)
	}
	if !strings.Contains(w.logs.String(), "made again") {
		t.Errorf("the damaged mirror was not logged as made again")
	}
}

// TestMirrorReadsPullRequestRefs: a pull request's head, kept by the forge
// under refs/pull/N/head or refs/merge-requests/N/head (no branch of the
// repository), is read as a branch is; any other full ref is refused
// before git runs.
func TestMirrorReadsPullRequestRefs(t *testing.T) {
	t.Parallel()
	w := setup(t)
	w.human("main", "proposal", func(dir string) {
		writeFile(t, dir, "docs/proposal.mdx", "# Proposal\n")
	})
	proposal := w.fixGit(w.root, "--git-dir="+w.remote, "rev-parse", "refs/heads/main")
	w.fixGit(w.root, "--git-dir="+w.remote, "update-ref", "refs/pull/7/head", proposal)
	w.fixGit(w.root, "--git-dir="+w.remote, "update-ref", "refs/merge-requests/12/head", proposal)
	w.fixGit(w.root, "--git-dir="+w.remote, "update-ref", "refs/heads/main", proposal+"~1")

	mirrors := filepath.Join(w.root, "mirrors")
	for _, ref := range []string{"refs/pull/7/head", "refs/merge-requests/12/head"} {
		commit, dir, err := w.readMirror(w.git, mirrors, ref, nil, nil)
		if err != nil {
			t.Fatalf("read %s: %v", ref, err)
		}
		if commit != proposal {
			t.Fatalf("%s: commit = %s, want %s", ref, commit, proposal)
		}
		if got := readText(t, dir, "docs/proposal.mdx"); got != "# Proposal\n" {
			t.Fatalf("%s: proposal = %q", ref, got)
		}
	}
	commit, _, err := w.readMirror(w.git, mirrors, "refs/heads/main", nil, nil)
	if err != nil || commit == proposal {
		t.Fatalf("refs/heads/main = %s, %v; want the branch without the proposal", commit, err)
	}

	for _, ref := range []string{"refs/pull/7/merge", "refs/pull/07/head", "refs/pull/x/head", "refs/tags/v1", "refs/heads/-x", "refs/remotes/origin/main", "refs/merge-requests/1/head/../x"} {
		if _, _, err := w.readMirror(w.git, mirrors, ref, nil, nil); !errors.Is(err, gitcli.ErrInvalidArgument) {
			t.Errorf("read %s = %v, want ErrInvalidArgument", ref, err)
		}
	}
}
