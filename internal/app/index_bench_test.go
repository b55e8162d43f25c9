package app_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/gitcli"
)

// BenchmarkIndexBuild measures `docsmith index` on a large docs site (SQLite
// in a temp dir), from a plain folder and from a git repository: a bare
// repository of the site made in the benchmark, in a temp dir. It reports
// the first build of each and, per iteration, a build from the repository
// again, alternately with nothing changed and after a commit that changes
// one page (the median of each), each a whole `docsmith index` run.
//
//	DOCSMITH_BENCH_SITE=DIR go test ./internal/app -run '^$' -bench IndexBuild -benchtime 10x
func BenchmarkIndexBuild(b *testing.B) {
	site := os.Getenv("DOCSMITH_BENCH_SITE")
	if site == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	ctx := context.Background()
	base := b.TempDir()
	git, err := gitcli.New(gitcli.Config{HomeDir: filepath.Join(base, "git-home")})
	if err != nil {
		b.Skipf("git is not usable here: %v", err)
	}
	repo := filepath.Join(base, "site.git")
	author := gitcli.CommitOptions{Message: "docs", AuthorName: "Bench", AuthorEmail: "bench@example.com"}
	if err := git.SeedBare(ctx, repo, "main", os.DirFS(site), author); err != nil {
		b.Fatal(err)
	}
	// A clone to push the one-page changes from; its first page is edited.
	clone, err := git.Clone(ctx, repo, "main", filepath.Join(base, "clone"), nil)
	if err != nil {
		b.Fatal(err)
	}
	var page string
	_ = filepath.WalkDir(clone.Dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git":
			return fs.SkipDir
		case strings.HasSuffix(p, ".mdx"):
			page = p
			return fs.SkipAll
		}
		return nil
	})

	dir := filepath.Join(base, "data")
	lookup := func(k string) (string, bool) { return dir, k == "DOCSMITH_DATA_DIR" }
	cliRun := func(args ...string) time.Duration {
		b.Helper()
		var out, errOut bytes.Buffer
		start := time.Now()
		if code := cli.Run(ctx, args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: lookup}); code != 0 {
			b.Fatalf("docsmith %s: %s", strings.Join(args, " "), errOut.String())
		}
		return time.Since(start)
	}
	cliRun("org", "create", "acme")
	cliRun("project", "create", "--org", "acme", "--id", "folder", "--repo", site)
	cliRun("project", "create", "--org", "acme", "--id", "git", "--repo", repo, "--check=false")
	cliRun("domain", "create", "--org", "acme", "--domain", "folder", "--project", "folder", "--index=false")
	cliRun("domain", "create", "--org", "acme", "--domain", "git", "--project", "git", "--index=false")
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	folderFirst, gitFirst := cliRun("index", "folder"), cliRun("index", "git")

	var same, changed []time.Duration
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			same = append(same, cliRun("index", "git"))
			continue
		}
		b.StopTimer()
		data, err := os.ReadFile(page)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(page, append(data, []byte("\nOne more line.\n")...), 0o644); err != nil {
			b.Fatal(err)
		}
		if _, _, err := clone.CommitAll(ctx, author); err != nil {
			b.Fatal(err)
		}
		if err := clone.Push(ctx, "main", nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		changed = append(changed, cliRun("index", "git"))
	}
	median := func(d []time.Duration) float64 {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return ms(d[len(d)/2])
	}
	// After the loop: it resets the metrics reported before it.
	b.ReportMetric(ms(folderFirst), "folder-first-ms")
	b.ReportMetric(ms(gitFirst), "git-first-ms")
	b.ReportMetric(median(same), "git-again-ms")
	b.ReportMetric(median(changed), "git-one-page-changed-ms")
}
