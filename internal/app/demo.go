package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/docsmith/docsmith"
	"github.com/docsmith/docsmith/examples"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Demo names.
const (
	DemoOrg     = "demo"
	DemoProject = "demo"
	DemoDomain  = "demo"
)

// DemoQuestions are the example questions the demo page's widget offers
// about docsmith's own docs; each is answered from them.
func DemoQuestions() []string {
	return []string{
		"How do I add the widget to my site?",
		"How do I run docsmith in a container?",
		"How do I back up docsmith?",
	}
}

// demoIndexer builds the demo domain's search index.
type demoIndexer interface {
	Index(ctx context.Context, d tenant.Domain) (indexer.IndexResult, error)
}

// demoDocs is the docs site of the demo project: docs, or docsmith's own
// docs when nil.
func demoDocs(docs fs.FS) fs.FS {
	if docs == nil {
		return docsmith.Docs()
	}
	return docs
}

// createDemo gives a fresh install something to try: on the first start with
// an empty store it creates an organization, a project, and one key of each
// kind, and an assistant domain over the project, indexed, and prints the
// keys (once) with commands to paste. The project's repository starts with
// the docs site docs and the sample workflow.
func createDemo(ctx context.Context, tenants *tenant.Service, git *gitcli.Git, indexer demoIndexer, cfg config.Config, docs fs.FS, out io.Writer) error {
	orgs, err := tenants.Store().ListOrgs(ctx)
	if err != nil || len(orgs) > 0 {
		return err
	}
	repo, err := filepath.Abs(filepath.Join(cfg.DataDir, "demo-docs.git"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(repo); err != nil {
		if err := seedDemoRepo(ctx, git, repo, docs, cfg); err != nil {
			return fmt.Errorf("create the demo docs repository: %w", err)
		}
	}
	if _, err := tenants.CreateOrg(ctx, DemoOrg); err != nil {
		return err
	}
	project, err := tenants.CreateProject(ctx, tenant.Project{ID: DemoProject, OrgID: DemoOrg, RepoURL: repo, ForgeKind: tenant.ForgeLocal})
	if err != nil {
		return err
	}
	// Any origin may call the demo assistant from a browser: it has only
	// public docs to tell.
	domain, err := tenants.CreateDomain(ctx, tenant.Domain{ID: DemoDomain, OrgID: DemoOrg, ProjectID: project.ID, AllowedOrigins: []string{"*"}, FinishThreadID: true})
	if err != nil {
		return err
	}
	indexed := "The demo domain's search index was built from these docs"
	if res, err := indexer.Index(ctx, domain); err != nil {
		indexed = fmt.Sprintf("Building the demo domain's search index failed (%v); run 'docsmith index %s' to retry", err, DemoDomain)
	} else {
		indexed += fmt.Sprintf(" (%d pages, %d passages)", res.Pages, res.Chunks)
	}
	_, admin, err := tenants.CreateKey(ctx, DemoOrg, apikey.Admin, "demo admin")
	if err != nil {
		return err
	}
	_, assistantKey, err := tenants.CreateKey(ctx, DemoOrg, apikey.Assistant, "demo assistant")
	if err != nil {
		return err
	}
	base := localURL(cfg.Addr)
	fmt.Fprintf(out, `
docsmith: first start, so a demo organization %q with project %q and
assistant domain %q was created.
These keys are shown once; only their hashes are stored.

  admin key (agent endpoints):          %s
  assistant key (assistant endpoints):  %s

The demo project works on a copy of docsmith's own docs, in a repository at
  %s
with the builtin model, which needs no LLM. Create an agent job, then follow it:

  curl -s -X POST %s/v2/agent/%s/job \
    -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \
    -d '{"prompt": "replace \"five minutes\" with \"a few minutes\" in quickstart"}'

  curl -s %s/v2/agent/%s/jobs -H 'Authorization: Bearer %s'
  curl -s %s/v2/agent/%s/job/JOB_ID -H 'Authorization: Bearer %s'
  curl -sN %s/v2/agent/%s/job/JOB_ID/events -H 'Authorization: Bearer %s'

The job's branch appears in the demo repository:
  git --git-dir %s log --oneline --all

The demo repository also carries a workflow, .mintlify/workflows/check-navigation.md,
that checks the navigation every ten minutes; each run is a job. Run it now:

  curl -s -X POST %s/v2/agent/%s/workflows/check-navigation/run -H 'Authorization: Bearer %s'

%s. Ask the assistant (extractive: it
quotes and cites the docs; set a domain model like openai/NAME for written answers):

  curl -sN -X POST %s/discovery/v2/assistant/%s/message \
    -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \
    -d '{"fp": "anonymous", "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "How do I add the widget to my site?"}]}]}'

The index follows the demo repository by itself: a push to its main branch
is served after the next poll (index_poll_interval), only changed pages read
again. See what the assistant serves now:

  curl -s %s/v2/domains/%s -H 'Authorization: Bearer %s'

`, DemoOrg, project.ID, domain.ID, admin, assistantKey, repo,
		base, project.ID, admin,
		base, project.ID, admin,
		base, project.ID, admin,
		base, project.ID, admin, repo,
		base, project.ID, admin,
		indexed, base, domain.ID, assistantKey,
		base, domain.ID, admin)
	return nil
}

// seedDemoRepo creates the demo project's repository: the docs site, and
// the sample workflow in .mintlify/workflows beside it.
func seedDemoRepo(ctx context.Context, git *gitcli.Git, repo string, docs fs.FS, cfg config.Config) error {
	files, err := os.MkdirTemp(filepath.Dir(repo), ".demo-docs-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(files) }()
	if err := os.CopyFS(files, docs); err != nil {
		return fmt.Errorf("copy the docs: %w", err)
	}
	workflows := filepath.Join(files, ".mintlify", "workflows")
	if _, err := os.Stat(workflows); errors.Is(err, fs.ErrNotExist) {
		if err := os.CopyFS(workflows, examples.DemoWorkflows()); err != nil {
			return fmt.Errorf("copy the sample workflow: %w", err)
		}
	}
	return git.SeedBare(ctx, repo, "main", os.DirFS(files), gitcli.CommitOptions{
		Message: "Demo docs", AuthorName: cfg.Agent.AuthorName, AuthorEmail: cfg.Agent.AuthorEmail,
	})
}

// demoWidgetKeyFile holds the assistant key the demo page embeds, in the
// data directory. Only its hash is in the store, like every key's; the file
// is what lets the page show the widget working without a copy-paste.
const demoWidgetKeyFile = "demo-widget-key"

// demoWidgetKey returns the assistant key of the demo page: the one in the
// data directory, or a new key of the demo organization (saved there) when
// the demo domain exists and none was made yet. It returns "" when this
// install has no demo domain.
func demoWidgetKey(ctx context.Context, tenants *tenant.Service, dataDir string) (string, error) {
	file := filepath.Join(dataDir, demoWidgetKeyFile)
	if b, err := os.ReadFile(file); err == nil {
		if key := strings.TrimSpace(string(b)); key != "" {
			return key, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read the demo page's key: %w", err)
	}
	d, err := tenants.Store().GetDomain(ctx, DemoDomain)
	if apperr.Is(err, apperr.NotFound) || err == nil && d.OrgID != DemoOrg {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	_, key, err := tenants.CreateKey(ctx, DemoOrg, apikey.Assistant, "demo page widget")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(file, []byte(key+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("save the demo page's key: %w", err)
	}
	return key, nil
}
