package projectrepo_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestReadFileOutsideTheDocsRoot: a file at the repository's root is read
// whatever the docs root, at the commit asked; a link, a file below a link
// or one too large is a FileProblem; a missing one is fs.ErrNotExist. The
// same holds in a plain folder.
func TestReadFileOutsideTheDocsRoot(t *testing.T) {
	t.Parallel()
	git, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Skipf("git is not usable here: %v", err)
	}
	work := filepath.Join(t.TempDir(), "repo")
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/docs.json", `{"navigation":{"pages":["a"]}}`)
	write("docs/a.mdx", "A\n")
	write(".docsmith/checks.yaml", "checks: []\n")
	write("big/file.yaml", strings.Repeat("x", 100))
	write("real/file.yaml", "real\n")
	if err := os.Symlink("real", filepath.Join(work, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../real/file.yaml", filepath.Join(work, ".docsmith", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	commitAll(t, work)

	repos := projectrepo.New(projectrepo.Config{Git: git, WorkDir: t.TempDir()})
	p := tenant.Project{ID: "p", RepoURL: work, BaseRef: "main", DocsRoot: "docs"}
	m, err := repos.OpenMirror(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	src, err := m.ReadDocs(t.Context(), "main", "t-")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()

	// The plain folder: the same files, without git.
	folder := t.TempDir()
	for _, f := range []string{"docs/docs.json", "docs/a.mdx", ".docsmith/checks.yaml", "big/file.yaml", "real/file.yaml"} {
		data, err := os.ReadFile(filepath.Join(work, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(folder, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range [][2]string{{"real", "linked"}, {"../real/file.yaml", ".docsmith/link.yaml"}} {
		if err := os.Symlink(l[0], filepath.Join(folder, l[1])); err != nil {
			t.Fatal(err)
		}
	}

	readers := map[string]func(file string) ([]byte, error){
		"mirror": func(file string) ([]byte, error) { return m.ReadFile(t.Context(), src.Commit, file, 50) },
		"folder": func(file string) ([]byte, error) { return projectrepo.ReadFolderFile(folder, file, 50) },
	}
	for name, read := range readers {
		if data, err := read(".docsmith/checks.yaml"); err != nil || string(data) != "checks: []\n" {
			t.Errorf("%s: checks file = %q, %v", name, data, err)
		}
		if data, err := read("real/file.yaml"); err != nil || string(data) != "real\n" {
			t.Errorf("%s: real/file.yaml = %q, %v", name, data, err)
		}
		for _, file := range []string{".docsmith/link.yaml", "linked/file.yaml", "big/file.yaml"} {
			var problem *projectrepo.FileProblem
			if _, err := read(file); !errors.As(err, &problem) || problem.File != file {
				t.Errorf("%s: %s = %v, want a FileProblem", name, file, err)
			}
		}
		for _, file := range []string{".docsmith/none.yaml", "docs/a.mdx/x"} {
			if _, err := read(file); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %s = %v, want fs.ErrNotExist", name, file, err)
			}
		}
		for _, file := range []string{"../x", "/etc/passwd", "a//b", ""} {
			if _, err := read(file); err == nil {
				t.Errorf("%s: %q was read", name, file)
			}
		}
	}
}
