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

// NewCheckRunner returns the runner of answer checks of a server and of
// the CLI: it reads refs through the same repository mirrors as the
// indexer (DATA_DIR/git-mirrors), answers with the domains' models opened
// with models, ranks as the assistant does, and asks the served index of
// b, which it never writes. traffic gives the checks kept from readers'
// questions; nil asks the checks files' alone.
func NewCheckRunner(cfg config.Config, git *gitcli.Git, b *Backend, models llm.Config, traffic checkrun.TrafficChecks, lookupEnv func(string) (string, bool), log *slog.Logger) *checkrun.Runner {
	repos := projectrepo.New(projectrepo.Config{
		Git:       git,
		WorkDir:   filepath.Join(cfg.DataDir, "index-work"),
		MirrorDir: filepath.Join(cfg.DataDir, "git-mirrors"),
		LookupEnv: lookupEnv,
		Log:       log,
	})
	var vectors search.VectorSource = b.Local
	if b.Postgres != nil {
		vectors = b.Postgres
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
		Traffic:   traffic,
		Log:       log,
	})
}

// servedCommits reads the commit of each domain's served index from its
// index state.
type servedCommits struct{ states freshness.Store }

func (s servedCommits) ServedCommit(ctx context.Context, domain string) (string, error) {
	st, err := s.states.IndexState(ctx, domain)
	return st.Commit, err
}

// Checks is the server's runner of answer checks (nil before Start).
func (m *Main) Checks() *checkrun.Runner { return m.checks }
