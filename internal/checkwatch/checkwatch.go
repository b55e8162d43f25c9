// Package checkwatch watches a domain's live assistant: on the domain's
// schedule (daily unless the team sets another interval, or off) it runs
// the answer checks against the served index, stores the run, compares it
// with the previous scheduled run, and sends the checks that passed then
// and fail now to the team's alert webhook.
package checkwatch

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/alertwebhook"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/secretsource"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Runner runs a domain's checks (checkrun.Runner).
type Runner interface {
	Run(ctx context.Context, req checkrun.Request) (answercheck.Report, error)
}

// Domains lists the domains to watch (tenant.Store).
type Domains interface {
	ListDomains(ctx context.Context, orgID string) ([]tenant.Domain, error)
}

// ScheduleStore keeps when each domain's checks run next. Several
// processes may share it: a claim is atomic.
type ScheduleStore interface {
	// ClaimCheckRun claims the domain's scheduled run when it is due: the
	// domain has no next run recorded, its next run is at or before now,
	// or it was scheduled with another interval than every. The next run
	// becomes now+every and true is returned; of several callers at once,
	// one gets true.
	ClaimCheckRun(ctx context.Context, domain string, every time.Duration, now time.Time) (bool, error)
	// RetryCheckRun brings the domain's next run forward to at, when it
	// was later: a run that failed is tried again sooner than its
	// interval.
	RetryCheckRun(ctx context.Context, domain string, at time.Time) error
}

// Alerter sends an alert (alertwebhook.Sender).
type Alerter interface {
	Send(ctx context.Context, a alertwebhook.Alert) error
}

// Config configures a Service; zero durations take the defaults.
type Config struct {
	Domains  Domains
	Runner   Runner
	Runs     checkrun.Store
	Schedule ScheduleStore
	// Alerts sends the alerts; nil sends none (they are still stored).
	Alerts Alerter
	// Secrets reads the domains' alert signing secrets.
	Secrets secretsource.Reader
	// PublicURL is where the team reaches this server (public_url), for
	// the dashboard link in alerts; empty: the link is the path alone.
	PublicURL string
	// Tick is how often due domains are looked for (default a minute).
	Tick time.Duration
	// RetryAfter is how soon a run that failed is tried again (default an
	// hour, never later than the domain's interval).
	RetryAfter time.Duration
	Registerer prometheus.Registerer
	Log        *slog.Logger
	Now        func() time.Time
}

// Service runs the scheduled checks.
type Service struct {
	cfg    Config
	runs   *prometheus.CounterVec
	alerts sync.WaitGroup
}

// EventRegressed is the alert event of a scheduled run with regressions.
const EventRegressed = "checks.regressed"

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Tick <= 0 {
		cfg.Tick = time.Minute
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Hour
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Service{cfg: cfg, runs: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "docsmith_scheduled_check_runs_total",
		Help: "Scheduled runs of domains' answer checks, by outcome: passed, regressed (a check that passed the run before fails), failing (checks fail, none newly), empty (no checks) or error.",
	}, []string{"outcome"})}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(s.runs)
	}
	return s
}

// Run looks for due domains every Tick until ctx ends, then waits for the
// alerts still being sent (they end with ctx too). The first look is a
// Tick after the start, once the served indexes have loaded.
func (s *Service) Run(ctx context.Context) {
	defer s.alerts.Wait()
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.Tick(ctx)
	}
}

// Tick runs the checks of every domain whose scheduled run is due and
// that this process claims, one domain after another, and returns the
// runs it stored. An alert is sent in the background: Wait waits for it.
func (s *Service) Tick(ctx context.Context) []checkrun.Run {
	domains, err := s.cfg.Domains.ListDomains(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Log.Warn("checks: listing the domains to check failed", "err", err)
		}
		return nil
	}
	var stored []checkrun.Run
	for _, d := range domains {
		if ctx.Err() != nil {
			break
		}
		every, on := d.Settings.ChecksInterval()
		if !on {
			continue
		}
		claimed, err := s.cfg.Schedule.ClaimCheckRun(ctx, d.ID, every, s.cfg.Now())
		if err != nil {
			s.cfg.Log.Warn("checks: claiming the scheduled run failed", "domain", d.ID, "err", err)
			continue
		}
		if !claimed {
			continue
		}
		run, ok, err := s.runDomain(ctx, d)
		if err != nil {
			s.runs.WithLabelValues("error").Inc()
			s.retry(ctx, d.ID, every, err)
			continue
		}
		if ok {
			stored = append(stored, run)
		}
	}
	return stored
}

// Wait waits for the alerts being sent.
func (s *Service) Wait() { s.alerts.Wait() }

// retry brings a failed domain's next run forward, and says so.
func (s *Service) retry(ctx context.Context, domain string, every time.Duration, cause error) {
	next := s.cfg.Now().Add(min(s.cfg.RetryAfter, every))
	s.cfg.Log.Warn("checks: scheduled run failed", "domain", domain, "next", next, "err", cause)
	if err := s.cfg.Schedule.RetryCheckRun(context.WithoutCancel(ctx), domain, next); err != nil {
		s.cfg.Log.Warn("checks: rescheduling the failed run failed", "domain", domain, "err", err)
	}
}

// runDomain runs the domain's checks on its served index, compares them
// with the previous scheduled run and stores the run; false when the
// domain has no checks, which stores nothing.
func (s *Service) runDomain(ctx context.Context, d tenant.Domain) (checkrun.Run, bool, error) {
	report, err := s.cfg.Runner.Run(ctx, checkrun.Request{Domain: d, Trigger: checkrun.TriggerSchedule})
	if err != nil {
		return checkrun.Run{}, false, fmt.Errorf("run the checks: %w", err)
	}
	if len(report.Checks) == 0 && len(report.Problems) == 0 {
		s.runs.WithLabelValues("empty").Inc()
		return checkrun.Run{}, false, nil
	}
	previous, err := s.cfg.Runs.ListRuns(ctx, d.ID, checkrun.TriggerSchedule, 1)
	if err != nil {
		return checkrun.Run{}, false, fmt.Errorf("read the previous scheduled run: %w", err)
	}
	var before []answercheck.Result
	if len(previous) > 0 {
		before = Results(previous[0].Report)
	}
	report.Checks, report.Totals = answercheck.Compare(before, Results(report))
	run, err := s.cfg.Runs.SaveRun(context.WithoutCancel(ctx), checkrun.Run{Domain: d.ID, Trigger: checkrun.TriggerSchedule, Report: report})
	if err != nil {
		return checkrun.Run{}, false, fmt.Errorf("store the run: %w", err)
	}
	regressed := Regressed(run.Report)
	switch {
	case len(regressed) > 0:
		s.runs.WithLabelValues("regressed").Inc()
	case run.Report.Totals.Failed > 0:
		s.runs.WithLabelValues("failing").Inc()
	default:
		s.runs.WithLabelValues("passed").Inc()
	}
	s.cfg.Log.Info("checks: scheduled run", "domain", d.ID, "run", run.ID, "checks", run.Report.Totals.Checks,
		"passed", run.Report.Totals.Passed, "regressed", len(regressed))
	if len(regressed) > 0 {
		s.alert(ctx, d, run, regressed)
	}
	return run, true, nil
}

// Results are a report's results on the index it asked last: the served
// index for a scheduled run, the candidate for another.
func Results(r answercheck.Report) []answercheck.Result {
	out := make([]answercheck.Result, len(r.Checks))
	for i, c := range r.Checks {
		out[i] = c.After
	}
	return out
}

// Regressed are the checks of a run that passed on the index it was
// compared with (for a scheduled run, the previous scheduled run) and
// fail now.
func Regressed(r answercheck.Report) []answercheck.Compared {
	var out []answercheck.Compared
	for _, c := range r.Checks {
		if c.Change == answercheck.Regressed {
			out = append(out, c)
		}
	}
	return out
}

// alert sends the run's regressions to the domain's webhook, if it has
// one, in the background: a slow receiver never holds up the schedule.
func (s *Service) alert(ctx context.Context, d tenant.Domain, run checkrun.Run, regressed []answercheck.Compared) {
	if s.cfg.Alerts == nil || d.Settings.AlertWebhookURL == "" {
		return
	}
	secret, err := s.cfg.Secrets.Read(secretsource.Source{Env: d.Settings.AlertWebhookSecretEnv, File: d.Settings.AlertWebhookSecretFile})
	if err != nil {
		s.cfg.Log.Warn("checks: alert not sent: its signing secret cannot be read", "domain", d.ID, "run", run.ID, "err", err)
		return
	}
	body, err := AlertBody(d, run, regressed, s.RunLink(d.ID, run.ID))
	if err != nil {
		s.cfg.Log.Error("checks: alert not sent", "domain", d.ID, "run", run.ID, "err", err)
		return
	}
	a := alertwebhook.Alert{URL: d.Settings.AlertWebhookURL, Secret: secret, Event: EventRegressed, ID: run.ID, Body: body}
	s.alerts.Go(func() {
		if err := s.cfg.Alerts.Send(ctx, a); err != nil {
			s.cfg.Log.Warn("checks: alert not delivered", "domain", d.ID, "run", run.ID, "err", err)
		}
	})
}

// RunLink is the dashboard page of a stored run.
func (s *Service) RunLink(domain, runID string) string {
	path := "/ui/domains/" + url.PathEscape(domain) + "/checks/runs/" + url.PathEscape(runID)
	return strings.TrimSuffix(s.cfg.PublicURL, "/") + path
}
