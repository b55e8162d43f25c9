package gitcli_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
)

// TestFindTrailer: a shallow clone finds a commit by its trailer below the
// tip (someone pushed on top of it), reads its body without the trailers
// and the files it changed; a trailer that no commit carries, or one
// deeper than asked, is not found.
func TestFindTrailer(t *testing.T) {
	t.Parallel()
	w := setup(t)
	ctx := t.Context()
	repo := w.clone(ctx, "main")
	if err := os.WriteFile(filepath.Join(repo.Dir, "docs", "intro.mdx"), []byte("# Intro\n\nHello.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(repo.Dir, "docs", "old.mdx")); err != nil {
		t.Fatal(err)
	}
	sha, _, err := repo.CommitAll(ctx, gitcli.CommitOptions{
		Message: "Greet the reader\n\nSaid hello.\n\nKept it short.", AuthorName: "docsmith", AuthorEmail: "d@example.com",
		Trailers: []string{"Docsmith-Job: j1", "Docsmith-Turn: j1/2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Push(ctx, "main", nil); err != nil {
		t.Fatal(err)
	}
	// At the tip, depth 1 finds it without looking further, and fetches its
	// parent so that its files can be listed.
	tip := w.clone(ctx, "main")
	got, found, err := tip.FindTrailer(ctx, "main", "Docsmith-Turn", "j1/2", 1, nil)
	if err != nil || !found || got != sha {
		t.Fatalf("FindTrailer at the tip = %q, %v, %v; want %q", got, found, err, sha)
	}
	if _, files, err := tip.CommitInfo(ctx, got); err != nil || len(files) != 2 {
		t.Errorf("CommitInfo at the tip = %v, %v; want its 2 files", files, err)
	}
	w.human("main", "a human edit on top", func(dir string) { writeFile(t, dir, "README.md", "hello again\n") })

	fresh := w.clone(ctx, "main") // depth 1: only the human's commit
	got, found, err = fresh.FindTrailer(ctx, "main", "Docsmith-Turn", "j1/2", 5, nil)
	if err != nil || !found || got != sha {
		t.Fatalf("FindTrailer = %q, %v, %v; want %q", got, found, err, sha)
	}
	body, files, err := fresh.CommitInfo(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	if body != "Said hello.\n\nKept it short." {
		t.Errorf("body = %q", body)
	}
	slices.Sort(files)
	if !slices.Equal(files, []string{"docs/intro.mdx", "docs/old.mdx"}) {
		t.Errorf("files = %v", files)
	}
	for _, tc := range []struct {
		value string
		depth int
	}{{"j1/3", 5}, {"j1/2", 1}, {"j1", 5}} {
		_, found, err := w.clone(ctx, "main").FindTrailer(ctx, "main", "Docsmith-Turn", tc.value, tc.depth, nil)
		if err != nil || found {
			t.Errorf("FindTrailer(%q, depth %d) = %v, %v; want not found", tc.value, tc.depth, found, err)
		}
	}
	if _, _, err := fresh.FindTrailer(ctx, "main", "Docsmith Turn", "x", 5, nil); err == nil {
		t.Errorf("FindTrailer with a key that is not a trailer token succeeded")
	}
}
