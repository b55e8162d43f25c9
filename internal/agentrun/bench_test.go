package agentrun

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/giteatest"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/tenant"
)

// BenchmarkTurnAgainstPlainGit measures the non-model cost of one agent turn
// (checkout, edit through the tools, validation, commit, push, pull request)
// on a real docs site pushed into a real Gitea, beside the same work done
// with plain git and one curl call. The site is a directory given by
// DOCSMITH_BENCH_SITE (the Makefile's bench-agent target points it at a
// medium-sized Mintlify site).
//
//	DOCSMITH_BENCH_SITE=DIR go test ./internal/agentrun -run '^$' -bench TurnAgainstPlainGit -benchtime 10x
func BenchmarkTurnAgainstPlainGit(b *testing.B) {
	site := os.Getenv("DOCSMITH_BENCH_SITE")
	if site == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	const page, old, replacement = "documentation/getting-started/introduction.mdx", "Hoppscotch", "HoppScotch"
	srv := giteatest.Start(b)
	cloneURL := srv.CreateRepo(b, "site")
	u, _ := url.Parse(cloneURL)
	u.User = url.UserPassword(srv.User, srv.Token)
	authURL := u.String()
	home := b.TempDir()
	sh := func(dir string, args ...string) {
		b.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home,
			"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	seed := filepath.Join(b.TempDir(), "seed")
	sh(b.TempDir(), "git", "clone", authURL, seed)
	_ = os.Remove(filepath.Join(seed, "README.md")) // the site brings its own
	if err := os.CopyFS(seed, os.DirFS(site)); err != nil {
		b.Fatal(err)
	}
	sh(seed, "git", "add", "-A")
	sh(seed, "git", "commit", "-qm", "site")
	sh(seed, "git", "push", "-q", "origin", "main")

	g, err := gitcli.New(gitcli.Config{HomeDir: b.TempDir(), AllowHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	runner := New(Config{
		WorkDir:   b.TempDir(),
		Git:       g,
		OpenModel: func(string) (llm.Model, error) { return nil, fmt.Errorf("no model") },
		LookupEnv: func(string) (string, bool) { return srv.Token, true },
		Log:       slog.New(slog.DiscardHandler),
	})
	project := tenant.Project{ID: "site", RepoURL: cloneURL, BaseRef: "main", ForgeKind: tenant.ForgeGitea, ForgeURL: srv.URL, TokenEnv: "T", DocsRoot: "."}
	prompt := fmt.Sprintf(`replace %q with %q in %s`, old, replacement, page)
	run := 0 // the framework calls each sub-benchmark more than once: names stay unique

	b.Run("docsmith-turn", func(b *testing.B) {
		for range b.N {
			run++
			id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", run)
			job := agentjob.Job{ID: id, Branch: agentjob.BranchName(id, "bench"), Model: "builtin"}
			msg := agentjob.Message{Seq: 1, Prompt: prompt}
			job.Messages = []agentjob.Message{msg}
			out, err := runner.RunTurn(b.Context(), agentjob.Turn{Job: job, Project: project, Message: msg}, &recorder{})
			if err != nil || out.PRLink == "" {
				b.Fatalf("turn %d: %+v %v", run, out, err)
			}
		}
	})
	b.Run("plain-git-and-curl", func(b *testing.B) {
		for range b.N {
			run++
			branch := fmt.Sprintf("plain/%d", run)
			work := filepath.Join(b.TempDir(), "w")
			sh(b.TempDir(), "git", "clone", "-q", "--depth=1", "--single-branch", "--branch", "main", authURL, work)
			sh(work, "git", "checkout", "-qb", branch)
			text, err := os.ReadFile(filepath.Join(work, page))
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, page), []byte(strings.ReplaceAll(string(text), old, replacement)), 0o644); err != nil {
				b.Fatal(err)
			}
			sh(work, "git", "commit", "-qam", "bench")
			sh(work, "git", "push", "-q", "origin", branch)
			sh(work, "curl", "-sf", "-o", "/dev/null", "-X", "POST", "-H", "Authorization: token "+srv.Token, "-H", "Content-Type: application/json",
				"-d", fmt.Sprintf(`{"title":"bench %d","head":%q,"base":"main"}`, run, branch), srv.URL+"/api/v1/repos/"+srv.User+"/site/pulls")
		}
	})
}
