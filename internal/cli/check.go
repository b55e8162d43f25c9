package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
)

// checkMode is the value of project create's --check: whether to read the
// repository before the project is stored.
type checkMode int

const (
	checkAuto checkMode = iota // local paths only: a remote may not be reachable from here
	checkOn
	checkOff
)

func (m *checkMode) String() string {
	switch *m {
	case checkOn:
		return "true"
	case checkOff:
		return "false"
	}
	return "auto"
}

func (m *checkMode) Set(v string) error {
	if v == "auto" {
		*m = checkAuto
		return nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("must be true, false or auto")
	}
	*m = checkOff
	if on {
		*m = checkOn
	}
	return nil
}

// IsBoolFlag lets --check stand alone for --check=true.
func (m *checkMode) IsBoolFlag() bool { return true }

// checkProject checks, as the mode says, that the project's repository can
// be read at its base branch and holds docs at its docs root. The model and
// the other fields are checked when the project is stored.
func checkProject(ctx context.Context, cfg config.Config, b *app.Backend, env Env, p tenant.Project, mode checkMode) error {
	if err := p.Normalize(app.RemotePolicy(cfg)); err != nil {
		return err
	}
	if mode == checkOff || (mode == checkAuto && !projectrepo.LocalRepo(p.RepoURL)) {
		return nil
	}
	x, err := newIndexer(cfg, b, env)
	if err != nil {
		return err
	}
	if err := x.Indexer.CheckProject(ctx, p); err != nil {
		return fmt.Errorf("project %s: %w (--check=false skips this check)", p.ID, err)
	}
	return nil
}

// newIndexer is the indexer of the CLI: the server's, on the same data
// directory and backend, recording each build as the domain's index state.
func newIndexer(cfg config.Config, b *app.Backend, env Env) (*app.RecordingIndexer, error) {
	log := cfg.Logger(env.Stderr)
	git, err := gitcli.New(app.GitConfig(cfg, log))
	if err != nil {
		return nil, fmt.Errorf("docsmith needs git: %w", err)
	}
	lookupEnv := env.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	return app.NewRecordingIndexer(app.NewIndexer(cfg, git, b.Tenants, b.Index, b.Catalogs, lookupEnv, log), b), nil
}

// indexNew builds the index of a domain just created or changed, so that
// its assistant answers from the docs at once. A failure does not undo the
// domain: it is reported with what to run once the cause is fixed.
func indexNew(ctx context.Context, cfg config.Config, b *app.Backend, env Env, d tenant.Domain) {
	x, err := newIndexer(cfg, b, env)
	if err == nil {
		var res indexer.IndexResult
		if res, err = x.Index(ctx, d); err == nil {
			fmt.Fprintf(env.Stderr, "indexed domain %s: %d pages, %d passages\n", d.ID, res.Pages, res.Chunks)
			return
		}
	}
	fmt.Fprintf(env.Stderr, "docsmith: domain %s has no index yet, so its assistant cannot answer: %v\n"+
		"  fix that, then run: docsmith index %s\n", d.ID, err, d.ID)
}
