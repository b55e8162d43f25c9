package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/alertwebhook"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/checkwatch"
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
		PublicURL:  m.Config.PublicURL,
		Registerer: reg,
		Log:        m.Log,
		Now:        m.Now,
	})
}
