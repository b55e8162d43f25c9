package checkrun_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

const siteURL = "https://docs.example.com"

// The docs of a made-up product, written for these tests.
var baseDocs = map[string]string{
	"docs/docs.json": `{"name": "Vaultkeeper", "navigation": {"pages": ["index", "guides/install", "guides/tokens"]}}`,
	"docs/index.mdx": "---\ntitle: Vaultkeeper\n---\n\nVaultkeeper keeps secrets for small teams and serves them over HTTPS.\n",
	"docs/guides/install.mdx": "---\ntitle: Install Vaultkeeper\n---\n\n" +
		"Install Vaultkeeper from the release archive: unpack it, then run `vaultkeeper init` to create the data directory.\n\n" +
		"## Upgrading\n\nTo upgrade, install the new release archive over the old one and restart the service.\n",
	"docs/guides/tokens.mdx": "---\ntitle: Access tokens\n---\n\nAn access token grants one application read access to one secret path. Create a token with `vaultkeeper token create`.\n",
	".docsmith/checks.yaml": `checks:
  - name: install
    question: How do I install Vaultkeeper?
    cite: [guides/install]
  - name: restore-snapshot
    question: How do I restore a snapshot of the data directory?
    cite: [guides/backups]
    contains: ["snapshot"]
  - question: Is there a Helm chart for Kubernetes?
    not_covered: true
  - question: How do I rotate an access token?
    cites: [guides/tokens]
`,
	"README.md": "The docs of Vaultkeeper.\n",
}

const backupsPage = "---\ntitle: Backups\n---\n\n" +
	"Vaultkeeper writes a snapshot of the data directory every night.\n\n" +
	"## Restore a snapshot\n\nTo restore a snapshot of the data directory, stop the service, run `vaultkeeper snapshot restore FILE`, then start the service again.\n"

// world is a docs repository (a work tree, as a team's clone is), a store
// whose served index was built from its main branch by the indexer, and a
// runner over them.
type world struct {
	t      *testing.T
	repo   string
	store  *sqlite.Store
	index  *search.Memory
	runner *checkrun.Runner
	domain tenant.Domain
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newWorld(t *testing.T, files map[string]string) *world {
	t.Helper()
	ctx := t.Context()
	w := &world{t: t, repo: filepath.Join(t.TempDir(), "docs")}
	writeFiles(t, w.repo, files)
	gitRun(t, w.repo, "init", "--quiet", "--initial-branch=main")
	gitRun(t, w.repo, "add", "-A")
	gitRun(t, w.repo, "commit", "--quiet", "-m", "docs")

	var err error
	w.store, err = sqlite.Open(ctx, t.TempDir())
	must(t, err)
	t.Cleanup(func() { _ = w.store.Close() })
	w.index = search.NewMemory(w.store, search.MemoryConfig{})
	t.Cleanup(w.index.Close)
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	tenants := tenant.NewService(w.store, now)
	_, err = tenants.CreateOrg(ctx, "acme")
	must(t, err)
	_, err = tenants.CreateProject(ctx, tenant.Project{ID: "vault", OrgID: "acme", RepoURL: w.repo, DocsRoot: "docs"})
	must(t, err)
	w.domain, err = tenants.CreateDomain(ctx, tenant.Domain{ID: "vault-docs", OrgID: "acme", ProjectID: "vault", SiteURL: siteURL})
	must(t, err)
	git, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Skipf("git is not usable here: %v", err)
	}
	repos := projectrepo.New(projectrepo.Config{Git: git, WorkDir: t.TempDir()})
	x := indexer.New(indexer.Config{Repos: repos, Projects: w.store, Index: w.index, Catalogs: w.store})
	_, err = x.Index(ctx, w.domain)
	must(t, err)
	w.runner = checkrun.New(checkrun.Config{Projects: w.store, Repos: repos, Index: w.index, Catalogs: w.store,
		Bases: servedCommit(gitRun(t, w.repo, "rev-parse", "main"))})
	return w
}

// pullRequest commits changes on a branch of its own, made from main,
// and keeps its head as the forge does, under refs/pull/N/head; main is
// left as it was. remove lists files to delete.
func (w *world) pullRequest(n string, files map[string]string, remove ...string) string {
	w.t.Helper()
	gitRun(w.t, w.repo, "checkout", "--quiet", "-b", "pr-"+n, "main")
	writeFiles(w.t, w.repo, files)
	for _, f := range remove {
		must(w.t, os.Remove(filepath.Join(w.repo, filepath.FromSlash(f))))
	}
	gitRun(w.t, w.repo, "add", "-A")
	gitRun(w.t, w.repo, "commit", "--quiet", "-m", "proposal "+n)
	head := gitRun(w.t, w.repo, "rev-parse", "HEAD")
	gitRun(w.t, w.repo, "update-ref", "refs/pull/"+n+"/head", head)
	gitRun(w.t, w.repo, "checkout", "--quiet", "main")
	gitRun(w.t, w.repo, "branch", "--quiet", "-D", "pr-"+n)
	return head
}

type servedCommit string

func (c servedCommit) ServedCommit(context.Context, string) (string, error) { return string(c), nil }

func byName(rep answercheck.Report) map[string]answercheck.Compared {
	out := map[string]answercheck.Compared{}
	for _, c := range rep.Checks {
		out[c.After.Check.Name] = c
	}
	return out
}

// TestRunOnAPullRequest: a pull request that adds the page answering a
// check makes it newly answered; one that removes the page another check
// cites makes that one regressed; the checks file's mistakes are problems
// while its valid checks run.
func TestRunOnAPullRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t, baseDocs)
	ctx := t.Context()

	docsJSON := `{"name": "Vaultkeeper", "navigation": {"pages": ["index", "guides/install", "guides/tokens", "guides/backups"]}}`
	head := w.pullRequest("1", map[string]string{"docs/guides/backups.mdx": backupsPage, "docs/docs.json": docsJSON})
	rep, err := w.runner.Run(ctx, checkrun.Request{Domain: w.domain, Ref: "refs/pull/1/head", Trigger: checkrun.TriggerCLI})
	must(t, err)
	if rep.Commit != head || rep.Ref != "refs/pull/1/head" || rep.BaseCommit != gitRun(t, w.repo, "rev-parse", "main") || rep.Domain != "vault-docs" {
		t.Fatalf("report = %+v", rep)
	}
	got := byName(rep)
	restore := got["restore-snapshot"]
	if restore.Change != answercheck.NewlyAnswered || restore.Before == nil || restore.Before.Pass || !restore.After.Pass {
		t.Fatalf("restore-snapshot = %+v", restore)
	}
	if !slices.Contains(restore.After.Answer.Cited, "guides/backups") {
		t.Fatalf("restore-snapshot cited %v", restore.After.Answer.Cited)
	}
	if c := got["install"]; c.Change != answercheck.Unchanged || !c.After.Pass {
		t.Fatalf("install = %+v", c)
	}
	if c := got["is-there-a-helm-chart-for-kubernetes"]; c.Change != answercheck.Unchanged || !c.After.Pass || c.After.Answer.Status != "not_covered" {
		t.Fatalf("helm = %+v", c)
	}
	if rep.Totals != (answercheck.Totals{Checks: 3, Passed: 3, NewlyAnswered: 1, Unchanged: 2}) {
		t.Fatalf("totals = %+v", rep.Totals)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], ".docsmith/checks.yaml:12: checks[3].cites: is not a known key") {
		t.Fatalf("problems = %q", rep.Problems)
	}
	if rep.Summary() != "1 reader question now answered, 0 regressed" {
		t.Fatalf("summary = %q", rep.Summary())
	}

	// A pull request that drops the install guide breaks its check.
	w.pullRequest("2", map[string]string{"docs/docs.json": `{"name": "Vaultkeeper", "navigation": {"pages": ["index", "guides/tokens"]}}`}, "docs/guides/install.mdx")
	rep, err = w.runner.Run(ctx, checkrun.Request{Domain: w.domain, Ref: "refs/pull/2/head"})
	must(t, err)
	install := byName(rep)["install"]
	if install.Change != answercheck.Regressed || install.After.Pass || len(install.After.Failures) == 0 {
		t.Fatalf("install = %+v", install)
	}
	if rep.Totals.Regressed != 1 {
		t.Fatalf("totals = %+v", rep.Totals)
	}

	// Without a ref, the served index alone is asked: every check added.
	rep, err = w.runner.Run(ctx, checkrun.Request{Domain: w.domain, Trigger: checkrun.TriggerSchedule})
	must(t, err)
	if rep.Ref != "" || rep.Commit != gitRun(t, w.repo, "rev-parse", "main") || rep.Totals.Added != 3 || rep.Totals.Passed != 2 || rep.IndexDuration != 0 {
		t.Fatalf("served run = %+v", rep.Totals)
	}
	if c := byName(rep)["restore-snapshot"]; c.Before != nil || c.After.Pass {
		t.Fatalf("restore-snapshot on the served index = %+v", c)
	}

	// Refs that cannot be checked say why.
	for _, ref := range []string{"refs/tags/v1", "refs/pull/9/head", "-x"} {
		_, err := w.runner.Run(ctx, checkrun.Request{Domain: w.domain, Ref: ref})
		if !apperr.Is(err, apperr.Invalid) && !apperr.Is(err, apperr.Conflict) {
			t.Errorf("ref %s = %v, want a message saying what to fix", ref, err)
		}
	}
}

// TestRunChecksFileProblems: a checks file that is a symbolic link is not
// read, and says so; a plain folder has no refs.
func TestRunChecksFileProblems(t *testing.T) {
	t.Parallel()
	w := newWorld(t, baseDocs)
	ctx := t.Context()
	gitRun(t, w.repo, "checkout", "--quiet", "-b", "linked")
	must(t, os.Remove(filepath.Join(w.repo, ".docsmith", "checks.yaml")))
	must(t, os.Symlink("../README.md", filepath.Join(w.repo, ".docsmith", "checks.yaml")))
	gitRun(t, w.repo, "add", "-A")
	gitRun(t, w.repo, "commit", "--quiet", "-m", "link")
	gitRun(t, w.repo, "checkout", "--quiet", "main")

	rep, err := w.runner.Run(ctx, checkrun.Request{Domain: w.domain, Ref: "linked"})
	must(t, err)
	if rep.Totals.Checks != 0 || len(rep.Problems) != 2 || !strings.Contains(rep.Problems[0], "symbolic link") || !strings.Contains(rep.Problems[1], "no checks") {
		t.Fatalf("report = %+v", rep)
	}
}
