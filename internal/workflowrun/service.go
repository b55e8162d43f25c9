// Package workflowrun starts agent workflows: it keeps each project's
// workflows in step with its docs repository's base ref, starts scheduled
// runs once per due slot, turns verified push webhooks into runs, and runs
// a workflow by hand. Runs are ordinary agent jobs (agentjob.StartRun).
package workflowrun

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
)

// Config is what a Service needs besides its dependencies.
type Config struct {
	// Location is the zone cron expressions are read in (UTC when nil).
	Location *time.Location
	// DailyCap is how many runs of one workflow may start in 24 hours,
	// counting only runs that did not fail; 0 means no cap.
	DailyCap int
	// NewRunWhileActive starts a second job when a workflow is triggered
	// while its last run is still active; by default the trigger is queued
	// on that run as a follow-up.
	NewRunWhileActive bool
	// SyncInterval is how often each project's base ref is checked for a
	// move (pushes to it that reach the webhook sync at once).
	SyncInterval time.Duration
	// Tick is how often due schedule slots are looked for.
	Tick time.Duration
	// LookupEnv reads webhook secrets named by projects.
	LookupEnv func(string) (string, bool)
	Log       *slog.Logger
	Now       func() time.Time
}

// Service runs workflows.
type Service struct {
	store   Store
	tenants Tenants
	jobs    *agentjob.Service
	repos   Repos
	cfg     Config
}

// New returns a Service.
func New(store Store, tenants Tenants, jobs *agentjob.Service, repos Repos, cfg Config) *Service {
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = 5 * time.Minute
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, tenants: tenants, jobs: jobs, repos: repos, cfg: cfg}
}

// Listing is a project's workflows as the API and CLI show them.
type Listing struct {
	SyncState
	Workflows []Entry
}

// Entry is one workflow with its schedule state.
type Entry struct {
	workflow.Workflow
	FirstSeen time.Time
	LastSlot  time.Time
	// NextRun is the next schedule slot, for a scheduled workflow.
	NextRun *time.Time
	// Refused says why the workflow does not run as it is (for example
	// automerge on a project that does not allow it), or "".
	Refused string
}

// RunResult is what one trigger did for one workflow.
type RunResult struct {
	Workflow string
	JobID    string
	Start    agentjob.RunStart
	// Refused says why no run started (the daily cap, automerge not
	// allowed); JobID is then "".
	Refused string
}

// WebhookResult is what a webhook delivery did.
type WebhookResult struct {
	Forge    string
	Delivery string
	// Replayed is true for a delivery handled before: nothing was started.
	Replayed bool
	// Ignored says why a genuine delivery starts nothing.
	Ignored string
	// Synced is true when the push moved the project's own base ref and
	// its workflows were read again.
	Synced bool
	Runs   []RunResult
}

// ErrBadSignature wraps every webhook that fails verification.
var ErrBadSignature = errors.New("webhook verification failed")

// List returns the project's workflows as last synced.
func (s *Service) List(ctx context.Context, p tenant.Project) (Listing, error) {
	return Listing{}, errors.New("not implemented")
}

// Sync reads the project's workflows at its base ref now and stores them.
func (s *Service) Sync(ctx context.Context, p tenant.Project) (Listing, error) {
	return Listing{}, errors.New("not implemented")
}

// RunManual runs a workflow by hand. key, if not "", is the caller's
// Idempotency-Key. An unknown workflow is NotFound; one that may not run
// (automerge not allowed, its daily cap reached) is a Conflict or
// RateLimited error saying why.
func (s *Service) RunManual(ctx context.Context, p tenant.Project, workflowID, key string) (agentjob.Job, agentjob.RunStart, error) {
	return agentjob.Job{}, "", errors.New("not implemented")
}

// Webhook verifies and handles a forge webhook for the project: a push to
// the project's base branch syncs its workflows; a push that workflows
// watch runs them. A delivery that fails verification is an Unauthorized
// error wrapping ErrBadSignature.
func (s *Service) Webhook(ctx context.Context, p tenant.Project, h http.Header, body io.Reader) (WebhookResult, error) {
	return WebhookResult{}, errors.New("not implemented")
}

// Tick does one pass of the background work: it syncs projects whose base
// ref has not been checked for SyncInterval, and starts every due slot.
func (s *Service) Tick(ctx context.Context) error {
	return errors.New("not implemented")
}

// Run ticks every Config.Tick until ctx ends.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("workflow tick failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
