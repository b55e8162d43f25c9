package assistant_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
)

func newGit(t *testing.T) *gitcli.Git {
	t.Helper()
	git, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Skipf("git is not usable here: %v", err)
	}
	return git
}

// indexEnv is a store with one organization whose project points at repo.
func indexEnv(t *testing.T, repo, docsRoot string) (*env, *assistant.Indexer, tenant.Domain) {
	t.Helper()
	e := setup(t, nil)
	ctx := t.Context()
	_, err := e.tenants.CreateProject(ctx, tenant.Project{ID: "repo", OrgID: "acme", RepoURL: repo, DocsRoot: docsRoot})
	must(t, err)
	d, err := e.tenants.CreateDomain(ctx, tenant.Domain{ID: "fresh", OrgID: "acme", ProjectID: "repo", SiteURL: siteURL})
	must(t, err)
	x := assistant.NewIndexer(assistant.IndexerConfig{Git: newGit(t), Projects: e.store, Index: e.store, WorkDir: t.TempDir()})
	return e, x, d
}

func TestIndexFromGitRepository(t *testing.T) {
	t.Parallel()
	git := newGit(t)
	repo := filepath.Join(t.TempDir(), "docs.git")
	// The docs live below docs/ in the repository.
	tree := t.TempDir()
	must(t, os.CopyFS(filepath.Join(tree, "docs"), os.DirFS("testdata/site")))
	must(t, os.WriteFile(filepath.Join(tree, "README.md"), []byte("not part of the docs\n"), 0o644))
	must(t, git.SeedBare(t.Context(), repo, "main", os.DirFS(tree), gitcli.CommitOptions{Message: "docs", AuthorName: "t", AuthorEmail: "t@example.com"}))

	e, x, d := indexEnv(t, repo, "docs")
	res, err := x.Index(t.Context(), d)
	must(t, err)
	if res.Pages != 6 || res.Changed != 6 || res.Unchanged != 0 || res.Ref != "main" || len(res.Commit) != 40 || res.Chunks < 6 {
		t.Fatalf("first build = %+v", res)
	}
	// The domain answers from its new index.
	hits, err := e.svc.Search(t.Context(), d, assistant.SearchRequest{Query: "bandwidth", PageSize: 3})
	must(t, err)
	if len(hits) == 0 || hits[0].URL != siteURL+"/guides/schedules" {
		t.Fatalf("search after the build = %+v", hits)
	}
	// A second build rewrites nothing.
	res, err = x.Index(t.Context(), d)
	must(t, err)
	if res.Changed != 0 || res.Unchanged != 6 || res.ChunksWritten != 0 {
		t.Fatalf("second build = %+v", res)
	}

	// A ref that does not exist is the operator's to fix.
	d.Ref = "no-such-branch"
	_, err = x.Index(t.Context(), d)
	if !apperr.Is(err, apperr.Conflict) || !strings.Contains(apperr.MessageOf(err), `"no-such-branch"`) {
		t.Fatalf("unknown ref: %v", err)
	}
}

func TestIndexFromPlainFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must(t, os.CopyFS(dir, os.DirFS("testdata/site")))
	_, x, d := indexEnv(t, dir, "")
	res, err := x.Index(t.Context(), d)
	must(t, err)
	if res.Pages != 6 || res.Ref != "" || res.Commit != "" {
		t.Fatalf("build = %+v", res)
	}
	// An edited page is the only one rewritten; a deleted one goes.
	must(t, os.WriteFile(filepath.Join(dir, "guides", "schedules.mdx"), []byte("---\ntitle: \"Schedules\"\n---\n\nNightly only.\n"), 0o644))
	must(t, os.Remove(filepath.Join(dir, "guides", "audit.mdx")))
	res, err = x.Index(t.Context(), d)
	must(t, err)
	if res.Changed != 1 || res.Removed != 1 || res.Unchanged != 4 {
		t.Fatalf("rebuild = %+v", res)
	}
}

func TestIndexWithoutDocs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("hello\n"), 0o644))
	_, x, d := indexEnv(t, dir, "")
	_, err := x.Index(t.Context(), d)
	if !apperr.Is(err, apperr.Conflict) || !strings.Contains(apperr.MessageOf(err), "no docs.json or mint.json") || strings.Contains(apperr.MessageOf(err), dir) {
		t.Fatalf("no docs: %v", err)
	}
}

func TestIndexNeedsTheNamedToken(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	ctx := t.Context()
	_, err := e.tenants.CreateProject(ctx, tenant.Project{ID: "private", OrgID: "acme", RepoURL: "https://git.example/acme/docs.git", TokenEnv: "DOCS_TOKEN"})
	must(t, err)
	d, err := e.tenants.CreateDomain(ctx, tenant.Domain{ID: "private", OrgID: "acme", ProjectID: "private"})
	must(t, err)
	x := assistant.NewIndexer(assistant.IndexerConfig{Git: newGit(t), Projects: e.store, Index: e.store, WorkDir: t.TempDir(),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if _, err := x.Index(ctx, d); !apperr.Is(err, apperr.Conflict) || !strings.Contains(apperr.MessageOf(err), "DOCS_TOKEN") {
		t.Fatalf("missing token: %v", err)
	}
}
