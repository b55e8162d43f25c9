package gitcli

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSeedBare(t *testing.T) {
	t.Parallel()
	g, err := New(Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "docs.git")
	files := fstest.MapFS{"docs.json": {Data: []byte("{}\n")}, "guides/a.mdx": {Data: []byte("# A\n")}}
	if err := g.SeedBare(t.Context(), dir, "main", files, CommitOptions{Message: "Sample docs", AuthorName: "docsmith", AuthorEmail: "docsmith@localhost"}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "--git-dir", dir, "ls-tree", "-r", "--name-only", "main").Output()
	if err != nil || strings.TrimSpace(string(out)) != "docs.json\nguides/a.mdx" {
		t.Fatalf("ls-tree = %q, %v", out, err)
	}
	clone, err := g.Clone(t.Context(), dir, "main", filepath.Join(t.TempDir(), "c"), nil)
	if err != nil {
		t.Fatalf("clone the seeded repository: %v", err)
	}
	_ = clone.Remove()
	if err := g.SeedBare(t.Context(), dir, "main", files, CommitOptions{Message: "again"}); err == nil {
		t.Fatal("seeding over an existing repository succeeded")
	}
}
