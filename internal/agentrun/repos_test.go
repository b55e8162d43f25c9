package agentrun

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
)

// codeRepo makes the bare repository bare whose main branch gets one commit per map, in order,
// and returns their ids. A value "symlink:TARGET" makes a symbolic link; "" deletes the file.
func codeRepo(t *testing.T, bare string, commits ...map[string]string) []string {
	t.Helper()
	git(t, t.TempDir(), "init", "--quiet", "--bare", "--initial-branch=main", bare)
	work := t.TempDir()
	git(t, work, "init", "--quiet", "--initial-branch=main")
	var ids []string
	for i, files := range commits {
		for name, content := range files {
			p := filepath.Join(work, filepath.FromSlash(name))
			switch {
			case content == "":
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			case strings.HasPrefix(content, "symlink:"):
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(strings.TrimPrefix(content, "symlink:"), p); err != nil {
					t.Fatal(err)
				}
			default:
				writeTestFile(t, p, content)
			}
		}
		git(t, work, "add", "--all")
		git(t, work, "commit", "--quiet", "-m", "change "+string(rune('A'+i)))
		ids = append(ids, strings.TrimSpace(git(t, work, "rev-parse", "HEAD")))
	}
	git(t, work, "push", "--quiet", bare, "main")
	return ids
}

// Workflow files written for these tests.
var workflowFiles = map[string]string{
	".mintlify/workflows/reference.md": "---\nname: Reference from code\non:\n  push:\n    - repo: acme/api\n      branch: main\ncontext:\n  - repo: acme/api\n---\nUpdate the reference pages the change touches.\n",
	".docsmith/workflows/links.md":     "---\nname: Weekly link check\non:\n  cron: \"0 6 * * 1\"\nautomerge: true\n---\nFix links that point nowhere.\n",
	".mintlify/workflows/broken.md":    "---\nname: Broken\non:\n  cron: \"every day\"\n---\nNever runs.\n",
}

// workflowRemote is a bare repository in ROOT/acme/docs.git whose main branch holds the fixture
// site and workflow files.
func workflowRemote(t *testing.T) (root, bare, sha string) {
	t.Helper()
	root = t.TempDir()
	bare = filepath.Join(root, "acme", "docs.git")
	files := map[string]string{}
	for name, content := range workflowFiles {
		files[name] = content
	}
	err := filepath.WalkDir("testdata/site", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel("testdata/site", p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	files[".mintlify/workflows/linked.md"] = "symlink:reference.md"
	ids := codeRepo(t, bare, files)
	return root, bare, ids[0]
}

func reposRunner(t *testing.T, work string, env map[string]string) *Runner {
	t.Helper()
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir(), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{
		WorkDir:   work,
		Git:       g,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Log:       slog.New(slog.DiscardHandler),
	})
}

// TestBaseSHAAndReadWorkflows: the base ref's commit on the remote, and the workflow files read
// at it from a shallow clone that is gone afterwards.
func TestBaseSHAAndReadWorkflows(t *testing.T) {
	t.Parallel()
	_, bare, sha := workflowRemote(t)
	work := t.TempDir()
	r := reposRunner(t, work, nil)
	p := tenant.Project{ID: "docs", RepoURL: bare, BaseRef: "main", ForgeKind: tenant.ForgeLocal, DocsRoot: "."}

	got, err := r.BaseSHA(t.Context(), p)
	if err != nil || got != sha {
		t.Fatalf("BaseSHA = %q, %v; want %s", got, err, sha)
	}
	read, wfs, problems, err := r.ReadWorkflows(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if read != sha {
		t.Errorf("read at %s, want %s", read, sha)
	}
	if len(wfs) != 2 || wfs[0].ID != "links" || wfs[1].ID != "reference" {
		t.Fatalf("workflows = %+v", wfs)
	}
	if !wfs[0].Automerge || wfs[0].Cron != "0 6 * * 1" || len(wfs[1].Push) != 1 || wfs[1].Push[0].Repo != "acme/api" || len(wfs[1].Context) != 1 {
		t.Errorf("workflows read wrongly: %+v", wfs)
	}
	if len(problems) != 2 || problems[0].File != ".mintlify/workflows/linked.md" || !strings.Contains(problems[0].Msg, "is a symbolic link") ||
		problems[1].File != ".mintlify/workflows/broken.md" {
		t.Errorf("problems = %v", problems)
	}
	if entries, err := os.ReadDir(work); err != nil || len(entries) != 0 {
		t.Errorf("the work directory holds %v (%v)", entries, err)
	}

	p.BaseRef = "trunk"
	_, err = r.BaseSHA(t.Context(), p)
	var re *RepoError
	if !errors.As(err, &re) || !errors.Is(err, ErrBranchNotFound) || re.Transient || re.Ref != "trunk" || !strings.Contains(err.Error(), "reading trunk of "+bare) {
		t.Errorf("missing branch: %v", err)
	}
	if _, _, _, err := r.ReadWorkflows(t.Context(), p); !errors.As(err, &re) || re.Transient || !strings.Contains(err.Error(), "trunk") {
		t.Errorf("ReadWorkflows of a missing branch: %v", err)
	}
}

const reposToken = "ghp_REPOSTEST0123456789abcdefABCDEF"

// authGit serves the repositories under root over git's smart HTTP protocol, for Basic auth
// with reposToken only.
func authGit(t *testing.T, root string) string {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path:   gitPath,
		Args:   []string{"http-backend"},
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + t.TempDir()},
		Stderr: io.Discard,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); !ok || user != "x-access-token" || pass != reposToken {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestReposOverHTTP: with the project's token, as turns get it, both calls read the remote;
// every failure names the repository and the ref, never the token, and says whether it may
// pass.
func TestReposOverHTTP(t *testing.T) {
	t.Parallel()
	root, _, sha := workflowRemote(t)
	base := authGit(t, root)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	t.Cleanup(down.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	project := func(url string) tenant.Project {
		return tenant.Project{ID: "docs", RepoURL: url, BaseRef: "main", ForgeKind: tenant.ForgeGitHub, TokenEnv: "ACME_TOKEN", DocsRoot: "."}
	}
	good := reposRunner(t, t.TempDir(), map[string]string{"ACME_TOKEN": reposToken})
	p := project(base + "/acme/docs.git")
	if got, err := good.BaseSHA(t.Context(), p); err != nil || got != sha {
		t.Fatalf("BaseSHA = %q, %v", got, err)
	}
	if got, wfs, _, err := good.ReadWorkflows(t.Context(), p); err != nil || got != sha || len(wfs) != 2 {
		t.Fatalf("ReadWorkflows = %q, %d workflows, %v", got, len(wfs), err)
	}

	wrongToken := "ghp_WRONGTOKEN0123456789abcdefABCDEF"
	tests := []struct {
		name      string
		runner    *Runner
		url       string
		transient bool
		want      string
	}{
		{"wrong token", reposRunner(t, t.TempDir(), map[string]string{"ACME_TOKEN": wrongToken}), base + "/acme/docs.git", false, "reading main of " + base + "/acme/docs.git (project docs)"},
		{"token not set", reposRunner(t, t.TempDir(), nil), base + "/acme/docs.git", false, "the forge token variable ACME_TOKEN named by project docs is not set"},
		{"gateway error", good, down.URL + "/acme/docs.git", true, "reading main of " + down.URL},
		{"nobody listening", good, closed.URL + "/acme/docs.git", true, "reading main of " + closed.URL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.runner.BaseSHA(t.Context(), project(tc.url))
			_, _, _, rerr := tc.runner.ReadWorkflows(t.Context(), project(tc.url))
			for _, err := range []error{err, rerr} {
				var re *RepoError
				if !errors.As(err, &re) {
					t.Fatalf("err = %v, want a *RepoError", err)
				}
				if re.Transient != tc.transient || re.Ref != "main" || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v (transient %v), want %q, transient %v", err, re.Transient, tc.want, tc.transient)
				}
				for _, secret := range []string{reposToken, wrongToken, "REPOSTEST", "WRONGTOKEN"} {
					if strings.Contains(err.Error(), secret) || strings.Contains(re.Repo, secret) {
						t.Errorf("the error shows the token: %v", err)
					}
				}
			}
		})
	}
}
