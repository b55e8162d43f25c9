package indexer_test

import (
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
)

func newGit(t testing.TB) *gitcli.Git {
	t.Helper()
	git, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Skipf("git is not usable here: %v", err)
	}
	return git
}

// indexEnv is a store with one organization whose project points at repo.
func indexEnv(t *testing.T, repo, docsRoot string) (*env, *indexer.Indexer, tenant.Domain) {
	t.Helper()
	e := setup(t)
	ctx := t.Context()
	_, err := e.tenants.CreateProject(ctx, tenant.Project{ID: "repo", OrgID: "acme", RepoURL: repo, DocsRoot: docsRoot})
	must(t, err)
	d, err := e.tenants.CreateDomain(ctx, tenant.Domain{ID: "fresh", OrgID: "acme", ProjectID: "repo", SiteURL: siteURL})
	must(t, err)
	x := newIndexer(e, projectrepo.Config{Git: newGit(t), WorkDir: t.TempDir()})
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
	e := setup(t)
	ctx := t.Context()
	_, err := e.tenants.CreateProject(ctx, tenant.Project{ID: "private", OrgID: "acme", RepoURL: "https://git.example/acme/docs.git", TokenEnv: "DOCS_TOKEN"})
	must(t, err)
	d, err := e.tenants.CreateDomain(ctx, tenant.Domain{ID: "private", OrgID: "acme", ProjectID: "private"})
	must(t, err)
	x := newIndexer(e, projectrepo.Config{Git: newGit(t), WorkDir: t.TempDir(),
		LookupEnv: func(string) (string, bool) { return "", false }})
	if _, err := x.Index(ctx, d); !apperr.Is(err, apperr.Conflict) || !strings.Contains(apperr.MessageOf(err), "DOCS_TOKEN") {
		t.Fatalf("missing token: %v", err)
	}
}

// TestIndexFromGitMirror: builds of domains on one repository fetch into
// its mirror, several at once (from one indexer, and from two sharing the
// data directory as two processes would), see pushed changes, and recover
// from a damaged mirror by making it again.
func TestIndexFromGitMirror(t *testing.T) {
	t.Parallel()
	git := newGit(t)
	base := t.TempDir()
	repo := filepath.Join(base, "docs.git")
	must(t, git.SeedBare(t.Context(), repo, "main", os.DirFS("testdata/site"), gitcli.CommitOptions{Message: "docs", AuthorName: "t", AuthorEmail: "t@example.com"}))
	e := setup(t)
	ctx := t.Context()
	_, err := e.tenants.CreateProject(ctx, tenant.Project{ID: "repo", OrgID: "acme", RepoURL: repo})
	must(t, err)
	var domains []tenant.Domain
	for _, id := range []string{"one", "two", "three", "four"} {
		d, err := e.tenants.CreateDomain(ctx, tenant.Domain{ID: id, OrgID: "acme", ProjectID: "repo", SiteURL: siteURL})
		must(t, err)
		domains = append(domains, d)
	}
	work, mirrors := filepath.Join(base, "work"), filepath.Join(base, "mirrors")
	// The second reads through a checkout on disk, as for a docs root too
	// large to read into memory.
	indexers := []*indexer.Indexer{
		newIndexer(e, projectrepo.Config{Git: git, WorkDir: work, MirrorDir: mirrors}),
		newIndexer(e, projectrepo.Config{Git: newGit(t), WorkDir: work, MirrorDir: mirrors, MaxDocsInMemory: 1}),
	}
	buildAll := func() []indexer.IndexResult {
		t.Helper()
		results := make([]indexer.IndexResult, len(domains))
		errs := make([]error, len(domains))
		var wg sync.WaitGroup
		for i, d := range domains {
			wg.Go(func() { results[i], errs[i] = indexers[i%2].Index(ctx, d) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("build of %s: %v", domains[i].ID, err)
			}
		}
		return results
	}
	first := buildAll()
	for _, r := range first {
		if r.Pages != 6 || r.Commit != first[0].Commit || len(r.Commit) != 40 {
			t.Fatalf("first builds = %+v", first)
		}
	}

	// A pushed change reaches every domain through the mirror.
	clone, err := git.Clone(ctx, repo, "main", filepath.Join(base, "clone"), nil)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(clone.Dir, "guides", "schedules.mdx"), []byte("---\ntitle: \"Schedules\"\n---\n\nThe quokka runs nightly.\n"), 0o644))
	pushed, _, err := clone.CommitAll(ctx, gitcli.CommitOptions{Message: "edit", AuthorName: "t", AuthorEmail: "t@example.com"})
	must(t, err)
	must(t, clone.Push(ctx, "main", nil))
	for _, r := range buildAll() {
		if r.Commit != pushed || r.Changed != 1 || r.Unchanged != 5 {
			t.Fatalf("build after the push = %+v, want commit %s with one page changed", r, pushed)
		}
	}
	hits, err := e.svc.Search(ctx, domains[3], assistant.SearchRequest{Query: "quokka", PageSize: 3})
	must(t, err)
	if len(hits) == 0 || hits[0].URL != siteURL+"/guides/schedules" {
		t.Fatalf("search after the push = %+v", hits)
	}

	// One mirror; damage it, and the next build makes it again.
	entries, err := os.ReadDir(mirrors)
	must(t, err)
	var mirror string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".git") {
			if mirror != "" {
				t.Fatalf("two mirrors of one repository: %v", entries)
			}
			mirror = filepath.Join(mirrors, e.Name())
		}
	}
	must(t, filepath.WalkDir(filepath.Join(mirror, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		must(t, os.Chmod(p, 0o644))
		return os.WriteFile(p, []byte("damaged"), 0o644)
	}))
	res, err := indexers[0].Index(ctx, domains[0])
	if err != nil || res.Commit != pushed || res.Pages != 6 || res.Changed != 0 {
		t.Fatalf("build from the damaged mirror = %+v, %v", res, err)
	}
	// The checkouts on disk are gone with their builds.
	left, err := filepath.Glob(filepath.Join(work, "index-*"))
	if err != nil || len(left) != 0 {
		t.Fatalf("workspaces left after the builds: %v, %v", left, err)
	}
}

// TestIndexFromGitRefusesLinksAndHugeFiles: a repository's symbolic links
// (to a host path, out of the repository, or within the docs) never reach
// the build, so nothing they point at is indexed, and a file over the
// largest the loader reads is never written out.
func TestIndexFromGitRefusesLinksAndHugeFiles(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	host := filepath.Join(base, "host")
	must(t, os.MkdirAll(host, 0o755))
	must(t, os.WriteFile(filepath.Join(host, "secret.mdx"), []byte("---\ntitle: Host\n---\n\n"+hostSecret+"\n"), 0o644))
	seed := filepath.Join(base, "seed")
	must(t, os.MkdirAll(filepath.Join(seed, "docs", "real"), 0o755))
	must(t, os.WriteFile(filepath.Join(seed, "docs", "docs.json"), []byte(`{"name":"H","navigation":{"groups":[{"group":"G","pages":["index","huge","abs/secret","up/secret","inside/page"]}]}}`), 0o644))
	must(t, os.WriteFile(filepath.Join(seed, "docs", "index.mdx"), []byte("---\ntitle: Home\n---\n\nWelcome home.\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(seed, "docs", "real", "page.mdx"), []byte("---\ntitle: Real\n---\n\n"+hostSecret+" reached in the folder.\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(seed, "docs", "huge.mdx"), []byte("---\ntitle: Huge\n---\n\n"+strings.Repeat("zebra ", 17<<20/6+1)), 0o644))
	must(t, os.Symlink(host, filepath.Join(seed, "docs", "abs")))
	must(t, os.Symlink("../../host", filepath.Join(seed, "docs", "up")))
	must(t, os.Symlink("real", filepath.Join(seed, "docs", "inside")))
	repo := filepath.Join(base, "docs.git")
	fixtureGit(t, base, "init", "--quiet", "--bare", "--initial-branch=main", repo)
	fixtureGit(t, seed, "init", "--quiet", "--initial-branch=main")
	fixtureGit(t, seed, "add", "-A")
	fixtureGit(t, seed, "commit", "--quiet", "-m", "hostile")
	fixtureGit(t, seed, "push", "--quiet", repo, "main")

	// Read into memory, and checked out on disk.
	for _, maxInMemory := range []int64{0, 1} {
		var logs strings.Builder
		e, _, d := indexEnv(t, repo, "docs")
		x := newIndexer(e, projectrepo.Config{Git: newGit(t), WorkDir: t.TempDir(),
			MaxDocsInMemory: maxInMemory, Log: slog.New(slog.NewTextHandler(&logs, nil))})
		res, err := x.Index(t.Context(), d)
		must(t, err)
		if res.Pages != 1 {
			t.Fatalf("build (at most %d bytes in memory) = %+v, want only the home page indexed", maxInMemory, res)
		}
		hits, err := e.svc.Search(t.Context(), d, assistant.SearchRequest{Query: hostSecret, PageSize: 3})
		must(t, err)
		if len(hits) != 0 {
			t.Fatalf("a page reached through a symbolic link was indexed: %+v", hits)
		}
		if !strings.Contains(logs.String(), "index: file left out") || !strings.Contains(logs.String(), "docs/huge.mdx") {
			t.Fatalf("the huge file was not logged as left out:\n%s", logs.String())
		}
	}

	// A docs root that is a link in the repository is refused, saying so.
	_, x, d := indexEnv(t, repo, "docs/abs")
	if _, err := x.Index(t.Context(), d); !apperr.Is(err, apperr.Conflict) || !strings.Contains(apperr.MessageOf(err), "docs/abs is a symbolic link") {
		t.Fatalf("docs root through a link: %v", err)
	}
}

// TestIndexLeavesOutSymlinkedPages: a page file that is a symbolic link
// (leak.mdx -> /etc/passwd) is left out of every build, from a plain folder
// and from a git repository where it is committed as a link (mode 120000),
// read into memory or checked out, and the build says which links it
// skipped. Before, a committed link became a page holding its target path.
func TestIndexLeavesOutSymlinkedPages(t *testing.T) {
	t.Parallel()
	writeSite := func(dir string) {
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "docs.json"), []byte(`{"name":"L","navigation":{"groups":[{"group":"G","pages":["index","leak"]}]}}`), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "index.mdx"), []byte("---\ntitle: Home\n---\n\nWelcome home.\n"), 0o644))
		must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "leak.mdx")))
	}
	folder := filepath.Join(t.TempDir(), "site")
	writeSite(folder)

	base := t.TempDir()
	seed := filepath.Join(base, "seed")
	writeSite(filepath.Join(seed, "docs"))
	repo := filepath.Join(base, "docs.git")
	fixtureGit(t, base, "init", "--quiet", "--bare", "--initial-branch=main", repo)
	fixtureGit(t, seed, "init", "--quiet", "--initial-branch=main")
	fixtureGit(t, seed, "add", "-A")
	fixtureGit(t, seed, "commit", "--quiet", "-m", "leak")
	fixtureGit(t, seed, "push", "--quiet", repo, "main")
	if mode := fixtureGitOutput(t, seed, "ls-files", "--stage", "docs/leak.mdx"); !strings.HasPrefix(mode, "120000 ") {
		t.Fatalf("the fixture's leak.mdx is not committed as a link: %q", mode)
	}

	tests := []struct {
		name        string
		repo, root  string
		maxInMemory int64
		link        string
	}{
		{"plain folder", folder, "", 0, "leak.mdx"},
		{"git read into memory", repo, "docs", 0, "docs/leak.mdx"},
		{"git checked out", repo, "docs", 1, "docs/leak.mdx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuilder
			e, _, d := indexEnv(t, tt.repo, tt.root)
			x := newIndexer(e, projectrepo.Config{Git: newGit(t), WorkDir: t.TempDir(),
				MaxDocsInMemory: tt.maxInMemory, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			res, err := x.Index(t.Context(), d)
			must(t, err)
			if res.Pages != 1 {
				t.Fatalf("build = %+v, want only the home page indexed", res)
			}
			if len(res.LinksSkipped) != 1 || res.LinksSkipped[0] != tt.link {
				t.Fatalf("LinksSkipped = %q, want [%q]", res.LinksSkipped, tt.link)
			}
			if !strings.Contains(logs.String(), "index: symbolic link left out") || !strings.Contains(logs.String(), tt.link) {
				t.Fatalf("the link was not logged as left out:\n%s", logs.String())
			}
			for _, q := range []string{"passwd", "etc"} {
				hits, err := e.svc.Search(t.Context(), d, assistant.SearchRequest{Query: q, PageSize: 3})
				must(t, err)
				if len(hits) != 0 {
					t.Fatalf("search %q found the link: %+v", q, hits)
				}
			}
		})
	}
}

// TestIndexLocalMirrorFailureIsOurs: when the data directory cannot hold
// the mirror (here a file stands where the mirrors' directory should be, a
// failure that holds for root too), the build fails as the server's own
// problem (503), not as an unreachable repository (502), and the log names
// the local path, which the client's message does not.
func TestIndexLocalMirrorFailureIsOurs(t *testing.T) {
	t.Parallel()
	git := newGit(t)
	repo := filepath.Join(t.TempDir(), "docs.git")
	must(t, git.SeedBare(t.Context(), repo, "main", os.DirFS("testdata/site"), gitcli.CommitOptions{Message: "docs", AuthorName: "t", AuthorEmail: "t@example.com"}))
	tests := []struct {
		name   string
		mirror func(base string) string
	}{
		{"mirrors directory is a file", func(base string) string { return filepath.Join(base, "blocked") }},
		{"a parent of the mirrors directory is a file", func(base string) string { return filepath.Join(base, "blocked", "mirrors") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			must(t, os.WriteFile(filepath.Join(base, "blocked"), []byte("not a directory"), 0o644))
			mirrors := tt.mirror(base)
			var logs syncBuilder
			e, _, d := indexEnv(t, repo, "")
			x := newIndexer(e, projectrepo.Config{Git: git, WorkDir: t.TempDir(),
				MirrorDir: mirrors, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			_, err := x.Index(t.Context(), d)
			if code := apperr.CodeOf(err); code != apperr.Unavailable {
				t.Fatalf("Index with an unwritable mirrors directory = %v (%s), want %s", err, code, apperr.Unavailable)
			}
			msg := apperr.MessageOf(err)
			if !strings.Contains(msg, "could not write its mirror") || strings.Contains(msg, base) || strings.Contains(msg, "check that it is up") {
				t.Fatalf("message %q: want the server's own failure, without its paths", msg)
			}
			if !strings.Contains(logs.String(), "index: local failure") || !strings.Contains(logs.String(), base) {
				t.Fatalf("the log does not name the local path:\n%s", logs.String())
			}
		})
	}
}

// syncBuilder is a strings.Builder a logger may write to from several
// goroutines.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixtureGitOutput is fixtureGit that returns what git printed.
func fixtureGitOutput(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// fixtureGit runs git for a test fixture, with no configuration of the
// machine's.
func fixtureGit(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Seed", "GIT_AUTHOR_EMAIL=seed@example.com", "GIT_COMMITTER_NAME=Seed", "GIT_COMMITTER_EMAIL=seed@example.com"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
