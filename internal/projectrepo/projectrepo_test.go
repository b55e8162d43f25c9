package projectrepo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestCredentials: the token from the variable or the file the project
// names, the user its forge expects, none without either; a token that
// cannot be read is a Conflict naming what to set, never the token.
func TestCredentials(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(" file-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) { return " env-secret ", k == "DOCS_TOKEN" }
	for _, tt := range []struct {
		name    string
		p       tenant.Project
		want    *gitcli.Credentials
		source  string
		errWith string
	}{
		{"none", tenant.Project{ID: "p"}, nil, "", ""},
		{"variable", tenant.Project{ID: "p", TokenEnv: "DOCS_TOKEN"}, &gitcli.Credentials{Username: "x-access-token", Password: "env-secret"}, "DOCS_TOKEN", ""},
		{"gitlab", tenant.Project{ID: "p", TokenEnv: "DOCS_TOKEN", ForgeKind: tenant.ForgeGitLab}, &gitcli.Credentials{Username: "oauth2", Password: "env-secret"}, "DOCS_TOKEN", ""},
		{"file", tenant.Project{ID: "p", TokenFile: file}, &gitcli.Credentials{Username: "x-access-token", Password: "file-secret"}, file, ""},
		{"variable unset", tenant.Project{ID: "p", TokenEnv: "OTHER"}, nil, "OTHER", "the forge token variable OTHER named by project p is not set"},
		{"file missing", tenant.Project{ID: "p", TokenFile: file + ".missing"}, nil, file + ".missing", "the forge token file named by project p could not be read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, source, err := projectrepo.Credentials(tt.p, env)
			if tt.errWith != "" {
				if !apperr.Is(err, apperr.Conflict) || apperr.MessageOf(err) != tt.errWith {
					t.Fatalf("err = %v, want a Conflict saying %q", err, tt.errWith)
				}
				return
			}
			if err != nil || source != tt.source || (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Fatalf("Credentials = %+v, %q, %v; want %+v, %q", got, source, err, tt.want, tt.source)
			}
		})
	}
}

// TestMirrorChangesBelowTheDocsRoot: the files changed between two
// commits, as paths from the docs root, a file made a link reported gone;
// ReadFiles reads only the files asked for but lists every one.
func TestMirrorChangesBelowTheDocsRoot(t *testing.T) {
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
	write("docs/docs.json", `{"navigation":{"pages":["a","b"]}}`)
	write("docs/a.mdx", "A\n")
	write("docs/b.mdx", "B\n")
	write("README.md", "outside\n")
	commitAll(t, work)
	repos := projectrepo.New(projectrepo.Config{Git: git, WorkDir: t.TempDir()})
	p := tenant.Project{ID: "p", RepoURL: work, BaseRef: "main", DocsRoot: "docs"}
	m, err := repos.OpenMirror(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	from, err := m.Fetch(t.Context(), "main")
	if err != nil {
		t.Fatal(err)
	}
	write("docs/a.mdx", "A, edited\n")
	write("README.md", "outside, edited\n")
	if err := os.Remove(filepath.Join(work, "docs", "b.mdx")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.mdx", filepath.Join(work, "docs", "b.mdx")); err != nil {
		t.Fatal(err)
	}
	commitAll(t, work)
	to, err := m.Fetch(t.Context(), "main")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := m.Changes(t.Context(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(changes, func(a, b projectrepo.Change) int { return strings.Compare(a.Path, b.Path) })
	if len(changes) != 2 || changes[0].Path != "a.mdx" || changes[0].Blob == "" || changes[1].Path != "b.mdx" || changes[1].Blob != "" {
		t.Fatalf("changes = %+v", changes)
	}
	src, err := m.ReadFiles(t.Context(), to, func(rel string) bool { return rel == "a.mdx" })
	if err != nil {
		t.Fatal(err)
	}
	if src.Tree.Len() != 1 || len(src.Files) != 2 || src.Files["a.mdx"] != changes[0].Blob || !slices.Equal(src.Links, []string{"docs/b.mdx"}) {
		t.Fatalf("read %d files, listed %v, links %v", src.Tree.Len(), src.Files, src.Links)
	}
	if b, err := src.Tree.ReadFile("docs/a.mdx"); err != nil || string(b) != "A, edited\n" {
		t.Fatalf("a.mdx = %q, %v", b, err)
	}
}

func commitAll(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "docs"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
