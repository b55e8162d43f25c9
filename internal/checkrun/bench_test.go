package checkrun_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// BenchmarkCheckPullRequest measures checking a pull request on a large
// docs site in a git repository (DOCSMITH_BENCH_SITE, else the mintlify
// corpus) with 100 checks: the temporary index of the pull request's head
// and the answers on it and on the served index, against a full build of
// the served index. The checks are made at run time from the site's own
// pages: each page's title asked as a question, expecting a citation of
// that page. Answers are the extractive ones (no model): with a model,
// the answer time is its latency times 100 over the parallel questions.
//
//	go test ./internal/checkrun -run '^$' -bench CheckPullRequest -benchtime 5x
func BenchmarkCheckPullRequest(b *testing.B) {
	site := os.Getenv("DOCSMITH_BENCH_SITE")
	if site == "" {
		site = corpusDir(b, "mintlify")
	}
	ctx := b.Context()
	repo := filepath.Join(b.TempDir(), "docs")
	if err := os.CopyFS(repo, os.DirFS(site)); err != nil {
		b.Fatal(err)
	}
	gitRun(b, repo, "init", "--quiet", "--initial-branch=main")
	gitRun(b, repo, "add", "-A")
	gitRun(b, repo, "commit", "--quiet", "-m", "docs")

	st, err := sqlite.Open(ctx, b.TempDir())
	must(b, err)
	b.Cleanup(func() { _ = st.Close() })
	index := search.NewMemory(st, search.MemoryConfig{})
	b.Cleanup(index.Close)
	tenants := tenant.NewService(st, time.Now)
	_, err = tenants.CreateOrg(ctx, "acme")
	must(b, err)
	_, err = tenants.CreateProject(ctx, tenant.Project{ID: "site", OrgID: "acme", RepoURL: repo})
	must(b, err)
	d, err := tenants.CreateDomain(ctx, tenant.Domain{ID: "site", OrgID: "acme", ProjectID: "site", SiteURL: siteURL})
	must(b, err)
	git, err := gitcli.New(gitcli.Config{HomeDir: b.TempDir()})
	must(b, err)
	repos := projectrepo.New(projectrepo.Config{Git: git, WorkDir: b.TempDir()})
	x := indexer.New(indexer.Config{Repos: repos, Projects: st, Index: index, Catalogs: st})
	start := time.Now()
	built, err := x.Index(ctx, d)
	must(b, err)
	full := time.Since(start)

	// 100 checks from the pages' titles, on a pull request that also edits
	// one page.
	catalog, err := st.GetCatalog(ctx, "site")
	must(b, err)
	var yaml strings.Builder
	yaml.WriteString("checks:\n")
	n := 0
	for _, p := range catalog.Pages {
		if n == 100 {
			break
		}
		if strings.TrimSpace(p.Title) == "" {
			continue
		}
		fmt.Fprintf(&yaml, "  - name: page-%d\n    question: %q\n    cite: [%q]\n", n, p.Title, p.Path)
		n++
	}
	if n < 100 {
		b.Fatalf("the site has %d pages with a title; 100 are needed", n)
	}
	gitRun(b, repo, "checkout", "--quiet", "-b", "proposal")
	writeFiles(b, repo, map[string]string{".docsmith/checks.yaml": yaml.String()})
	edited := filepath.Join(repo, filepath.FromSlash(catalog.Pages[len(catalog.Pages)/2].Path)+".mdx")
	if data, err := os.ReadFile(edited); err == nil {
		must(b, os.WriteFile(edited, append(data, "\nOne more line.\n"...), 0o644))
	}
	gitRun(b, repo, "add", "-A")
	gitRun(b, repo, "commit", "--quiet", "-m", "proposal")
	gitRun(b, repo, "update-ref", "refs/pull/1/head", "HEAD")

	runner := checkrun.New(checkrun.Config{Projects: st, Repos: repos, Index: index, Catalogs: st})
	var indexTook, answerTook, total time.Duration
	passed, runs := 0, 0
	for b.Loop() {
		start := time.Now()
		rep, err := runner.Run(ctx, checkrun.Request{Domain: d, Ref: "refs/pull/1/head"})
		must(b, err)
		total += time.Since(start)
		if rep.Totals.Checks != 100 {
			b.Fatalf("%d checks ran, problems %q", rep.Totals.Checks, rep.Problems)
		}
		indexTook += rep.IndexDuration
		answerTook += rep.AnswerDuration
		passed += rep.Totals.Passed
		runs++
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(runs) }
	b.ReportMetric(ms(total), "check-total-ms")
	b.ReportMetric(ms(indexTook), "temp-index-ms")
	b.ReportMetric(ms(answerTook), "answers-ms")
	b.ReportMetric(float64(full.Microseconds())/1000, "full-build-ms")
	b.ReportMetric(float64(passed)/float64(runs), "checks-passed")
	b.ReportMetric(float64(built.Pages), "pages")
}

// corpusDir finds a corpus of the shared directory above the package's.
func corpusDir(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.Getwd()
	must(tb, err)
	for {
		for _, cand := range []string{filepath.Join(dir, "shared", "corpora", name), filepath.Join(dir, "..", "shared", "corpora", name)} {
			if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
				return cand
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("corpus %s not found above the package directory", name)
		}
		dir = parent
	}
}
