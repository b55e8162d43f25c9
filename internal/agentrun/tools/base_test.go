package tools

import (
	"io/fs"
	"os"
	"slices"
	"testing"
)

// TestBaseFS: the base view shows the docs as they were before the turn's
// edits, created, deleted and moved files included.
func TestBaseFS(t *testing.T) {
	t.Parallel()
	w, root := setup(t, Limits{MaxFileBytes: 1 << 20})
	for _, c := range []struct{ name, args string }{
		{"str_replace", `{"path":"index.mdx","old_str":"Welcome.","new_str":"Hello."}`},
		{"create_file", `{"path":"guides/new.mdx","content":"---\ntitle: New\n---\n"}`},
		{"create_file", `{"path":"fresh/page.mdx","content":"---\ntitle: Fresh\n---\n"}`},
		{"delete_file", `{"path":"guides/old.mdx"}`},
		{"move_file", `{"from":"guides/advanced/deep.mdx","to":"guides/deep.mdx"}`},
	} {
		if _, msg := run(t, w, c.name, c.args); msg != "" {
			t.Fatalf("%s: %s", c.name, msg)
		}
	}
	work := os.DirFS(root)
	base := w.BaseFS(work)

	if got, err := fs.ReadFile(base, "index.mdx"); err != nil || string(got) != testIndex {
		t.Errorf("base index.mdx = %q, %v", got, err)
	}
	if got, err := fs.ReadFile(base, "guides/old.mdx"); err != nil || string(got) != testOld {
		t.Errorf("base guides/old.mdx = %q, %v", got, err)
	}
	if _, err := fs.ReadFile(base, "guides/advanced/deep.mdx"); err != nil {
		t.Errorf("the moved file is not back in the base: %v", err)
	}
	for _, gone := range []string{"guides/new.mdx", "guides/deep.mdx", "fresh/page.mdx"} {
		if _, err := fs.Stat(base, gone); err == nil {
			t.Errorf("%s, created by the turn, is in the base", gone)
		}
		if _, err := fs.Lstat(base, gone); err == nil {
			t.Errorf("%s, created by the turn, is in the base (Lstat)", gone)
		}
	}
	entries, err := fs.ReadDir(base, "guides")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"advanced", "intro.mdx", "old.mdx"}; !slices.Equal(names, want) {
		t.Errorf("base guides/ = %v, want %v", names, want)
	}
	var walked []string
	if err := fs.WalkDir(base, "guides", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"guides/advanced/deep.mdx", "guides/intro.mdx", "guides/old.mdx"}; !slices.Equal(walked, want) {
		t.Errorf("walking the base = %v, want %v", walked, want)
	}
	// The work tree itself shows the edits.
	if _, err := fs.Stat(work, "guides/new.mdx"); err != nil {
		t.Errorf("the work tree lost the new file: %v", err)
	}
}
