package app

import (
	"log/slog"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/trafficcheck"
)

// trafficHarvestEvery is the least time between two harvests of a domain's
// traffic by one process: listing the checks page or starting a run
// harvests when it is due, and a harvest reads a bounded slice of turns.
const trafficHarvestEvery = 5 * time.Minute

// NewTrafficChecks returns the answer checks kept from the domains'
// traffic in b: what the dashboard's checks page lists and changes, and
// what every run of checks asks besides the checks file
// (checkrun.Config.Traffic).
func NewTrafficChecks(b *Backend, now func() time.Time, log *slog.Logger) *trafficcheck.Service {
	return trafficcheck.New(trafficcheck.Config{
		Store:        b.TrafficChecks,
		Turns:        b.Analytics,
		Gaps:         analytics.NewService(b.Analytics),
		Now:          now,
		Log:          log,
		HarvestEvery: trafficHarvestEvery,
	})
}
