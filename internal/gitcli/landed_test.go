package gitcli_test

import (
	"path/filepath"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
)

// TestLandedSeesMergesAndKeptTrailers: a job's commit merged into the
// base branch lands by ancestry, a squash merge that kept its message lands
// by its trailer, and the base branch without either has not landed.
func TestLandedSeesMergesAndKeptTrailers(t *testing.T) {
	t.Parallel()
	w := setup(t)
	mirrors := filepath.Join(w.root, "mirrors")
	work := filepath.Join(w.root, "work")
	w.fixGit(w.root, "clone", "--quiet", w.remote, work)
	commit := func(file, message string) string {
		writeFile(t, work, file, message+"\n")
		w.fixGit(work, "add", "--all")
		w.fixGit(work, "commit", "--quiet", "-m", message)
		return w.fixGit(work, "rev-parse", "HEAD")
	}
	w.fixGit(work, "checkout", "--quiet", "-b", "job-a")
	jobA := commit("docs/a.mdx", "Add page a\n\nDocsmith-Job: job_a")
	w.fixGit(work, "push", "--quiet", "origin", "job-a")
	w.fixGit(work, "checkout", "--quiet", "main")
	w.fixGit(work, "checkout", "--quiet", "-b", "job-b")
	jobB := commit("docs/b.mdx", "Add page b\n\nDocsmith-Job: job_b")
	w.fixGit(work, "push", "--quiet", "origin", "job-b")
	w.fixGit(work, "checkout", "--quiet", "main")
	unrelated := commit("docs/c.mdx", "Unrelated change")
	w.fixGit(work, "push", "--quiet", "origin", "main")

	landed := func(at string, pushed []string, job string) gitcli.Landing {
		t.Helper()
		m, err := w.git.OpenMirror(t.Context(), mirrors, w.remote)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = m.Close() }()
		// A build read the tip first: the mirror is shallow.
		if _, _, err := m.ReadBranch(t.Context(), "main", nil, nil, 1<<20); err != nil {
			t.Fatal(err)
		}
		l, err := m.Landed(t.Context(), "main", at, 50, nil, pushed, "Docsmith-Job", job)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := landed(unrelated, []string{jobA}, "job_a"); l.Landed {
		t.Fatalf("before any merge: %+v", l)
	}

	w.fixGit(work, "merge", "--quiet", "--no-ff", "-m", "Merge job-a", "origin/job-a")
	// Some commits on top, so that the merge is not the tip.
	commit("docs/d.mdx", "Another change")
	w.fixGit(work, "merge", "--quiet", "--squash", "origin/job-b")
	w.fixGit(work, "commit", "--quiet", "-m", "Add page b (#2)\n\nDocsmith-Job: job_b")
	tip := w.fixGit(work, "rev-parse", "HEAD")
	w.fixGit(work, "push", "--quiet", "origin", "main")

	if l := landed(tip, []string{jobA}, "job_a"); !l.Landed || l.By != gitcli.LandedByAncestry || l.Commit != jobA {
		t.Fatalf("merged job a: %+v", l)
	}
	if l := landed(tip, []string{jobB}, "job_b"); !l.Landed || l.By != gitcli.LandedByTrailer || l.Commit != tip {
		t.Fatalf("squash-merged job b: %+v", l)
	}
	if l := landed(tip, []string{jobB}, "job_c"); l.Landed {
		t.Fatalf("a job whose commit was squashed without its trailer: %+v", l)
	}
	if _, err := (func() (gitcli.Landing, error) {
		m, err := w.git.OpenMirror(t.Context(), mirrors, w.remote)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = m.Close() }()
		return m.Landed(t.Context(), "main", "--output=/tmp/x", 50, nil, nil, "", "")
	})(); err == nil {
		t.Fatal("a commit that is an option was accepted")
	}
}
