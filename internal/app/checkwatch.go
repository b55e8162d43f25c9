package app

import (
	"context"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/alertwebhook"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/checkwatch"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/secretsource"
)

// checkStores are the stores of check runs and of their schedule: the
// database's.
func (b *Backend) checkStores() (checkrun.Store, checkwatch.ScheduleStore) {
	if b.Postgres != nil {
		return b.Postgres, b.Postgres
	}
	return b.Local, b.Local
}

// newCheckWatch is the schedule of the domains' answer checks: runner asks
// them on the served index, and regressions go to the teams' webhooks
// under the server's alert policy (https to public addresses, unless
// git_allow_http and alert_allow_private say more).
func (m *Main) newCheckWatch(b *Backend, runner checkwatch.Runner, reg prometheus.Registerer) *checkwatch.Service {
	runs, schedule := b.checkStores()
	alerts := alertwebhook.New(alertwebhook.Config{
		Policy:     alertwebhook.Policy{AllowHTTP: m.Config.Agent.GitAllowHTTP, AllowPrivate: m.Config.Checks.AlertAllowPrivate},
		Registerer: reg,
		Log:        m.Log,
	})
	return checkwatch.New(checkwatch.Config{
		Domains:    b.Tenants,
		Runner:     runner,
		Runs:       runs,
		Schedule:   schedule,
		Alerts:     alerts,
		Secrets:    secretsource.Reader{LookupEnv: m.LookupEnv},
		PublicURL:  m.Config.Checks.PublicURL,
		Registerer: reg,
		Log:        m.Log,
		Now:        m.Now,
	})
}

// newCheckRunner is the runner of the domains' answer checks: it reads
// the projects' repositories through the mirrors the indexer keeps (each
// locked while in use) and asks each domain's assistant, as readers are
// answered, without recording the questions.
func (m *Main) newCheckRunner(b *Backend, git *gitcli.Git) *checkrun.Runner {
	models := m.modelConfig()
	repos := projectrepo.New(projectrepo.Config{
		Git:       git,
		WorkDir:   filepath.Join(m.Config.DataDir, "check-work"),
		MirrorDir: filepath.Join(m.Config.DataDir, "git-mirrors"),
		LookupEnv: m.LookupEnv,
		Log:       m.Log,
	})
	return checkrun.New(checkrun.Config{
		Projects:  b.Tenants,
		Repos:     repos,
		Index:     b.Index,
		Catalogs:  b.Catalogs,
		OpenModel: func(name string) (llm.Model, error) { return llm.Open(name, models) },
		Hybrid:    b.semantic.hybrid(),
		Bases:     servedCommits{b},
		Log:       m.Log,
		Now:       m.Now,
	})
}

// servedCommits reads the commit each domain's served index was built
// from, for the check runs' reports.
type servedCommits struct{ b *Backend }

func (s servedCommits) ServedCommit(ctx context.Context, domain string) (string, error) {
	st, err := s.b.IndexStates.IndexState(ctx, domain)
	return st.Commit, err
}
