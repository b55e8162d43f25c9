package gitcli_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
)

// TestMirrorChangedFiles: the files that differ between two commits of a
// shallow mirror, below a directory: edits and additions with their new
// blob ids, deletions and renames (a deletion and an addition), a file
// made a link; the files it names are those ReadFiles reads.
func TestMirrorChangedFiles(t *testing.T) {
	t.Parallel()
	w := setup(t)
	m, err := w.git.OpenMirror(t.Context(), filepath.Join(w.root, "mirrors"), w.remote)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	from, err := m.Fetch(t.Context(), "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.human("main", "docs", func(dir string) {
		writeFile(t, dir, "docs/intro.mdx", "# Intro\n\nChanged.\n")
		writeFile(t, dir, "docs/new/page.mdx", "# New\n")
		writeFile(t, dir, "README.md", "outside the docs\n")
		if err := os.Rename(filepath.Join(dir, "docs/old.mdx"), filepath.Join(dir, "docs/renamed.mdx")); err != nil {
			t.Fatal(err)
		}
	})
	to, err := m.Fetch(t.Context(), "main", nil)
	if err != nil || to == from {
		t.Fatalf("fetch = %s, %v", to, err)
	}
	changes, err := m.ChangedFiles(t.Context(), from, to, "docs")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]gitcli.FileChange{}
	for _, c := range changes {
		got[c.Path] = c
	}
	paths := make([]string, 0, len(got))
	for p := range got {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if want := []string{"docs/intro.mdx", "docs/new/page.mdx", "docs/old.mdx", "docs/renamed.mdx"}; !slices.Equal(paths, want) {
		t.Fatalf("changed = %v, want %v", paths, want)
	}
	if !got["docs/old.mdx"].Deleted() || got["docs/intro.mdx"].Deleted() || got["docs/renamed.mdx"].Mode != "100644" {
		t.Fatalf("changes = %+v", changes)
	}
	files, err := m.Files(t.Context(), to, func(f gitcli.TreeFile) bool { return f.Path == "docs/intro.mdx" })
	if err != nil || len(files) != 1 || files[0].ID() != got["docs/intro.mdx"].Blob {
		t.Fatalf("files = %+v, %v; want the blob the change names", files, err)
	}
	tree, err := m.ReadFiles(t.Context(), files)
	if err != nil || tree.Len() != 1 {
		t.Fatalf("read = %v", err)
	}
	if b, err := tree.ReadFile("docs/intro.mdx"); err != nil || string(b) != "# Intro\n\nChanged.\n" {
		t.Fatalf("intro = %q, %v", b, err)
	}

	w.human("main", "link", func(dir string) {
		if err := os.Remove(filepath.Join(dir, "docs/intro.mdx")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/passwd", filepath.Join(dir, "docs/intro.mdx")); err != nil {
			t.Fatal(err)
		}
	})
	linked, err := m.Fetch(t.Context(), "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	changes, err = m.ChangedFiles(t.Context(), to, linked, "")
	if err != nil || len(changes) != 1 || changes[0].Mode != "120000" {
		t.Fatalf("a file made a link = %+v, %v", changes, err)
	}
	if _, err := m.ChangedFiles(t.Context(), "-p", linked, ""); err == nil {
		t.Fatal("an option as a commit was accepted")
	}
	if _, err := m.ChangedFiles(t.Context(), "0123456789012345678901234567890123456789", linked, ""); err == nil {
		t.Fatal("a commit not in the mirror gave changes")
	}
}
