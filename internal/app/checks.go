package app

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
)

// NewCheckRunner returns the answer checks' runner of a server and of
// 'docsmith check run': it reads the projects' repositories through the
// mirrors the indexer keeps (DATA_DIR/git-mirrors), asks the backend's
// served index, and opens models as the assistant does.
func NewCheckRunner(cfg config.Config, git *gitcli.Git, b *Backend, models llm.Config, lookupEnv func(string) (string, bool), log *slog.Logger) *checkrun.Runner {
	repos := projectrepo.New(projectrepo.Config{
		Git:       git,
		WorkDir:   filepath.Join(cfg.DataDir, "index-work"),
		MirrorDir: filepath.Join(cfg.DataDir, "git-mirrors"),
		LookupEnv: lookupEnv,
		Log:       log,
	})
	// The served passages' vectors live in the store under the index.
	var vectors search.VectorSource
	if b.Postgres != nil {
		vectors = b.Postgres
	} else if b.Local != nil {
		vectors = b.Local
	}
	return checkrun.New(checkrun.Config{
		Projects:  b.Tenants,
		Repos:     repos,
		Index:     b.Index,
		Catalogs:  b.Catalogs,
		OpenModel: func(name string) (llm.Model, error) { return llm.Open(name, models) },
		Hybrid:    b.semantic.hybrid(),
		Vectors:   vectors,
		Bases:     servedCommits{b.IndexStates},
		Log:       log,
	})
}

// CheckRuns is the store of the runs of answer checks: the one that holds
// everything else.
func (b *Backend) CheckRuns() checkrun.Store {
	if b.Postgres != nil {
		return b.Postgres
	}
	return b.Local
}

// servedCommits reads the commit of a domain's served index from its
// index state.
type servedCommits struct{ states freshness.Store }

func (s servedCommits) ServedCommit(ctx context.Context, domain string) (string, error) {
	st, err := s.states.IndexState(ctx, domain)
	if err != nil {
		return "", err
	}
	return st.Commit, nil
}
