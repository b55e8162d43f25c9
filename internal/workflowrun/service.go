// Package workflowrun starts agent workflows: it keeps each project's
// workflows in step with its docs repository's base ref, starts scheduled
// runs once per due slot, turns verified push webhooks into runs, and runs
// a workflow by hand. Runs are ordinary agent jobs (agentjob.StartRun).
package workflowrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/prcheck"
	"github.com/docsmith/docsmith/internal/secretsource"
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
	// SyncInterval is how often the base ref of each project that uses
	// workflows is checked for a move (pushes to it that reach the webhook
	// sync at once).
	SyncInterval time.Duration
	// Tick is how often due schedule slots are looked for.
	Tick time.Duration
	// LookupEnv reads webhook secrets named by projects.
	LookupEnv func(string) (string, bool)
	// DocsPushed, when set, is told of each verified push to a project's
	// own docs repository (any branch) as soon as it is read, before the
	// workflows are synced, so that what follows its branches (the
	// domains' indexes) starts at once. It must not block; what it
	// returns (the domains it rebuilds) is the result's Reindexed.
	DocsPushed func(ctx context.Context, p tenant.Project, push Pushed) []string
	// PullRequests, when set, queues the answer checks of each verified
	// pull request event that gives a pull request of the project's own
	// docs repository a new head. Nothing else is started for a pull
	// request: no workflow, no agent job, and nothing is fetched from a
	// fork.
	PullRequests PullRequests
	Log          *slog.Logger
	Now          func() time.Time
}

// PullRequests queues the answer checks of pull request heads
// (prcheck.Queue).
type PullRequests interface {
	Enqueue(ctx context.Context, p tenant.Project, req prcheck.Request) (prcheck.Enqueued, error)
}

// Service runs workflows.
type Service struct {
	store   Store
	tenants Tenants
	jobs    *agentjob.Service
	repos   Repos
	cfg     Config

	mu        sync.Mutex
	lastCheck map[string]time.Time // project id -> when its base ref was last checked
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
	if cfg.LookupEnv == nil {
		cfg.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, tenants: tenants, jobs: jobs, repos: repos, cfg: cfg, lastCheck: map[string]time.Time{}}
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
	// Reindexed are the domains whose indexes a push to the project's own
	// docs repository rebuilds (Config.DocsPushed).
	Reindexed []string
	Runs      []RunResult
	// PullRequest is what a pull request event did, or nil.
	PullRequest *PullRequestResult
}

// PullRequestResult is what a pull request event with a new head did.
type PullRequestResult struct {
	Number int
	Head   string
	Fork   bool
	// Queued is true when the head was queued by this delivery; false
	// when it was queued before (the same head delivered again).
	Queued bool
	// Domains are the domains whose checks run on it.
	Domains []string
}

// ErrBadSignature wraps every webhook that fails verification.
var ErrBadSignature = errors.New("webhook verification failed")

// List returns the project's workflows as last synced.
func (s *Service) List(ctx context.Context, p tenant.Project) (Listing, error) {
	state, stored, err := s.store.Workflows(ctx, p.ID)
	if err != nil {
		return Listing{}, err
	}
	return s.listing(p, state, stored), nil
}

func (s *Service) listing(p tenant.Project, state SyncState, stored []Stored) Listing {
	now := s.cfg.Now()
	l := Listing{SyncState: state, Workflows: make([]Entry, 0, len(stored))}
	for _, st := range stored {
		e := Entry{Workflow: st.Workflow, FirstSeen: st.FirstSeen, LastSlot: st.LastSlot, Refused: refusal(p, st.Workflow)}
		if st.Workflow.Cron != "" {
			if sched, err := workflow.ParseSchedule(st.Workflow.Cron, s.cfg.Location); err == nil {
				if next, ok := sched.Next(now); ok {
					e.NextRun = &next
				}
			}
		}
		l.Workflows = append(l.Workflows, e)
	}
	return l
}

// refusal says why a workflow may not run for project p as it is, or "".
// It is decided against the project as it is now, so an operator's change
// to the project shows in the next listing without a sync.
func refusal(p tenant.Project, wf workflow.Workflow) string {
	if wf.Automerge && !p.AllowAutomerge {
		return fmt.Sprintf("automerge: true pushes straight to %s, which project %s does not allow; run 'docsmith project update --id %s --allow-automerge' or set automerge: false in %s", p.BaseRef, p.ID, p.ID, wf.Path)
	}
	// The runner checks again before it reads anything; refusing here
	// tells the operator before a run fails.
	for _, repo := range wf.Context {
		if _, err := p.AllowedContextRepo(wf.ID, repo); err != nil {
			return apperr.MessageOf(err)
		}
	}
	return ""
}

// Sync reads the project's workflows at its base ref now and stores them.
func (s *Service) Sync(ctx context.Context, p tenant.Project) (Listing, error) {
	now := s.cfg.Now()
	sha, wfs, problems, err := s.repos.ReadWorkflows(ctx, p)
	if err != nil {
		return Listing{}, apperr.Wrap(err, apperr.BadGateway, "the workflow files of project %s could not be read at %s: %v", p.ID, p.BaseRef, err)
	}
	state := SyncState{BaseSHA: sha, SyncedAt: now, Problems: problems}
	if err := s.store.SaveWorkflows(ctx, p.ID, state, wfs); err != nil {
		return Listing{}, fmt.Errorf("save the workflows of project %s: %w", p.ID, err)
	}
	s.checked(p.ID, now)
	s.cfg.Log.Info("workflows synced", "project", p.ID, "sha", sha, "workflows", len(wfs), "problems", len(problems))
	return s.List(ctx, p)
}

// RunManual runs a workflow by hand. key, if not "", is the caller's
// Idempotency-Key. An unknown workflow is NotFound; one that may not run
// (automerge not allowed, its daily cap reached) is a Conflict or
// RateLimited error saying why.
func (s *Service) RunManual(ctx context.Context, p tenant.Project, workflowID, key string) (agentjob.Job, agentjob.RunStart, error) {
	_, stored, err := s.store.Workflows(ctx, p.ID)
	if err != nil {
		return agentjob.Job{}, "", err
	}
	i := slices.IndexFunc(stored, func(st Stored) bool { return st.Workflow.ID == workflowID })
	if i < 0 {
		return agentjob.Job{}, "", apperr.New(apperr.NotFound, "project %s has no workflow %q; 'docsmith workflow list' shows them, and 'docsmith workflow sync %s' reads them again from %s", p.ID, workflowID, p.ID, p.BaseRef)
	}
	wf := stored[i].Workflow
	if why := refusal(p, wf); why != "" {
		return agentjob.Job{}, "", apperr.New(apperr.Conflict, "workflow %s cannot run: %s", wf.ID, why)
	}
	return s.start(ctx, p, wf, agentjob.TriggerManual, nil, manualKey(workflowID, key))
}

// ReplayManual returns the job an earlier RunManual of the workflow with
// the same key started or was queued on; it starts nothing. It is false for
// an empty or unused key.
func (s *Service) ReplayManual(ctx context.Context, p tenant.Project, workflowID, key string) (agentjob.Job, bool, error) {
	if key == "" {
		return agentjob.Job{}, false, nil
	}
	return s.jobs.ReplayRun(ctx, p.ID, manualKey(workflowID, key))
}

// manualKey is a manual run's key: the caller's Idempotency-Key, for one
// workflow.
func manualKey(workflowID, key string) string {
	if key == "" {
		return ""
	}
	return "manual:" + workflowID + ":" + key
}

// start makes a run of wf: a new job, or a follow-up on its active run.
func (s *Service) start(ctx context.Context, p tenant.Project, wf workflow.Workflow, trigger string, push *workflow.Push, key string) (agentjob.Job, agentjob.RunStart, error) {
	prompt, err := fitPrompt(wf, push)
	if err != nil {
		return agentjob.Job{}, "", err
	}
	req := agentjob.RunRequest{
		Trigger:  trigger,
		Workflow: wf.ID,
		Prompt:   prompt,
		Spec:     agentjob.RunSpec{Automerge: wf.Automerge, Context: slices.Clone(wf.Context)},
		Key:      key,
		FollowUp: !s.cfg.NewRunWhileActive,
		DailyCap: s.cfg.DailyCap,
	}
	if push != nil {
		req.Push = &agentjob.PushRange{Repo: push.Repo, Branch: push.Branch, Before: push.Before, After: push.After}
	}
	job, started, err := s.jobs.StartRun(ctx, p, req)
	if err != nil {
		return agentjob.Job{}, "", err
	}
	s.cfg.Log.Info("workflow run", "project", p.ID, "workflow", wf.ID, "trigger", trigger, "job", job.ID, "start", started)
	return job, started, nil
}

// fitPrompt is the run's instruction, with fewer of the push's commits
// listed when all of them would make it longer than a prompt may be.
func fitPrompt(wf workflow.Workflow, push *workflow.Push) (string, error) {
	prompt := workflow.Instruction(wf, push, "")
	if push != nil {
		cut := *push
		for len(prompt) > agentjob.MaxPromptBytes && len(cut.Commits) > 0 {
			cut.Commits = cut.Commits[:len(cut.Commits)/2]
			prompt = workflow.Instruction(wf, &cut, "")
		}
	}
	if len(prompt) > agentjob.MaxPromptBytes {
		return "", apperr.New(apperr.Invalid, "the instruction of %s is %d bytes with its push context; a run's prompt may be at most %d bytes (32 KiB)", wf.Path, len(prompt), agentjob.MaxPromptBytes)
	}
	return prompt, nil
}

// Webhook verifies and handles a forge webhook for the project: a push to
// the project's base branch syncs its workflows; a push that workflows
// watch runs them. A delivery handled before, under its own id or, for a
// push, under any id, starts nothing. Every refusal made before the
// delivery is verified is an Unauthorized error wrapping ErrBadSignature,
// whose message says why for the log; the caller must not show it to the
// sender.
func (s *Service) Webhook(ctx context.Context, p tenant.Project, h http.Header, body io.Reader) (WebhookResult, error) {
	secret, err := s.webhookSecret(p)
	if err != nil {
		return WebhookResult{}, err
	}
	d, err := workflow.ReadWebhook(h, body, secret)
	switch {
	case errors.Is(err, workflow.ErrUnverified):
		return WebhookResult{}, &apperr.Error{Code: apperr.Unauthorized, Message: fmt.Sprintf("a webhook delivery to project %s was not verified: %v", p.ID, err), Cause: fmt.Errorf("%w: %w", ErrBadSignature, err)}
	case errors.Is(err, workflow.ErrTooLarge):
		return WebhookResult{}, apperr.Wrap(err, apperr.TooLarge, "%v", err)
	case err != nil:
		return WebhookResult{}, apperr.Wrap(err, apperr.Invalid, "%v", err)
	}
	res := WebhookResult{Forge: string(d.Forge), Delivery: d.ID, Ignored: d.Ignored}
	pushed := pushedBy(d.Push)
	seen, err := s.store.DeliverySeen(ctx, p.ID, d.ID, pushed)
	if err != nil {
		return WebhookResult{}, err
	}
	if seen {
		res.Replayed = true
		return res, nil
	}
	if d.PullRequest != nil && d.Ignored == "" {
		if err := s.handlePullRequest(ctx, p, d, &res); err != nil {
			// Nothing is recorded: the forge's retry of this delivery
			// queues it, once.
			return WebhookResult{}, err
		}
	}
	if d.Push != nil {
		if err := s.handlePush(ctx, p, d, &res); err != nil {
			// Nothing is recorded: the forge's retry of this delivery runs
			// it again, and the runs' keys keep it from starting twice.
			return WebhookResult{}, err
		}
	}
	if err := s.store.RecordDelivery(ctx, p.ID, Handled{ID: d.ID, Forge: string(d.Forge), Push: pushed, At: s.cfg.Now()}); err != nil {
		return WebhookResult{}, err
	}
	return res, nil
}

// pushedBy is what identifies push, or nil for no push.
func pushedBy(push *workflow.Push) *Pushed {
	if push == nil {
		return nil
	}
	return &Pushed{Repo: strings.ToLower(push.Repo), Branch: push.Branch, Before: push.Before, After: push.After}
}

// pushRunKey is the key of the run a push starts for a workflow. It names
// the push, not the delivery: deliveries of one push, whatever their ids,
// start one run.
func pushRunKey(pushed *Pushed, workflowID string) string {
	return "push:" + pushed.Repo + ":" + pushed.Branch + ":" + pushed.Before + ":" + pushed.After + ":" + workflowID
}

func (s *Service) handlePush(ctx context.Context, p tenant.Project, d workflow.Delivery, res *WebhookResult) error {
	push := d.Push
	own := repoName(p.RepoURL)
	if own != "" && strings.EqualFold(own, push.Repo) && s.cfg.DocsPushed != nil {
		res.Reindexed = s.cfg.DocsPushed(ctx, p, *pushedBy(push))
	}
	if own != "" && strings.EqualFold(own, push.Repo) && push.Branch == p.BaseRef {
		if _, err := s.Sync(ctx, p); err != nil {
			// The workflows as last read still run.
			s.cfg.Log.Warn("workflow sync after a push failed", "project", p.ID, "err", err)
		} else {
			res.Synced = true
		}
	}
	_, stored, err := s.store.Workflows(ctx, p.ID)
	if err != nil {
		return err
	}
	wfs := make([]workflow.Workflow, len(stored))
	for i, st := range stored {
		wfs[i] = st.Workflow
	}
	triggered := workflow.Triggered(push, wfs, "")
	if len(triggered) == 0 && res.Ignored == "" && !res.Synced {
		res.Ignored = fmt.Sprintf("no workflow of project %s watches %s on branch %s", p.ID, push.Repo, push.Branch)
	}
	for _, wf := range triggered {
		rr := RunResult{Workflow: wf.ID}
		if why := refusal(p, wf); why != "" {
			rr.Refused = why
			res.Runs = append(res.Runs, rr)
			continue
		}
		job, started, err := s.start(ctx, p, wf, agentjob.TriggerPush, push, pushRunKey(pushedBy(push), wf.ID))
		if err != nil {
			if !refusable(err) {
				return err
			}
			rr.Refused = apperr.MessageOf(err)
		}
		rr.JobID, rr.Start = job.ID, started
		res.Runs = append(res.Runs, rr)
	}
	return nil
}

// handlePullRequest queues the answer checks of a pull request's new head,
// read from the project's own repository at the pull request's ref there,
// whether the head is in a fork or not.
func (s *Service) handlePullRequest(ctx context.Context, p tenant.Project, d workflow.Delivery, res *WebhookResult) error {
	pr := d.PullRequest
	own := repoName(p.RepoURL)
	switch {
	case own == "" || !strings.EqualFold(own, pr.Repo):
		res.Ignored = fmt.Sprintf("pull request #%d is on %s, not on the docs repository of project %s", pr.Number, pr.Repo, p.ID)
		return nil
	case s.cfg.PullRequests == nil:
		res.Ignored = "this server does not check pull requests"
		return nil
	}
	q, err := s.cfg.PullRequests.Enqueue(ctx, p, prcheck.Request{
		Number:  pr.Number,
		HeadSHA: pr.HeadSHA,
		HeadRef: pr.HeadRef,
		BaseRef: pr.BaseRef,
		PullRef: prcheck.PullRef(string(d.Forge), pr.Number),
		Fork:    pr.Fork,
		Link:    pr.URL,
		Source:  prcheck.SourceWebhook,
	})
	if err != nil {
		return err
	}
	if q.Ignored != "" {
		res.Ignored = q.Ignored
		return nil
	}
	res.PullRequest = &PullRequestResult{Number: pr.Number, Head: pr.HeadSHA, Fork: pr.Fork, Queued: q.New, Domains: q.Domains}
	return nil
}

// refusable reports whether a run's error is the run being refused (its
// cap, its prompt) rather than a fault to retry.
func refusable(err error) bool {
	return apperr.Is(err, apperr.RateLimited) || apperr.Is(err, apperr.Invalid) || apperr.Is(err, apperr.Conflict)
}

// webhookSecret reads the secret the project names.
func (s *Service) webhookSecret(p tenant.Project) ([]byte, error) {
	src := secretsource.Source{Env: p.WebhookSecretEnv, File: p.WebhookSecretFile}
	if !src.Named() {
		return nil, s.noSecret(p, "it names none")
	}
	secret, err := secretsource.Reader{LookupEnv: s.cfg.LookupEnv}.Read(src)
	if err != nil {
		return nil, s.noSecret(p, err.Error())
	}
	return secret, nil
}

// noSecret is the refusal of every delivery to a project without a
// webhook secret. Its message names where the secret should be, for the
// log: the caller tells the sender only that it was refused.
func (s *Service) noSecret(p tenant.Project, why string) error {
	return &apperr.Error{
		Code:    apperr.Unauthorized,
		Message: fmt.Sprintf("project %s has no webhook secret (%s); every delivery is refused until 'docsmith project update --id %s --webhook-secret-env VAR' names one", p.ID, why, p.ID),
		Cause:   fmt.Errorf("%w: %w", ErrBadSignature, workflow.ErrNoSecret),
	}
}

// repoName is "owner/name" of a repository URL, or "" for a local path.
func repoName(repoURL string) string {
	u, err := url.Parse(repoURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
}

// Tick does one pass of the background work: it syncs projects whose base
// ref moved (each checked at most every SyncInterval), and starts every due
// slot.
func (s *Service) Tick(ctx context.Context) error {
	orgs, err := s.tenants.ListOrgs(ctx)
	if err != nil {
		return fmt.Errorf("list organizations: %w", err)
	}
	var errs []error
	for _, org := range orgs {
		projects, err := s.tenants.ListProjects(ctx, org.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("list the projects of %s: %w", org.ID, err))
			continue
		}
		for _, p := range projects {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := s.syncIfMoved(ctx, p); err != nil {
				s.cfg.Log.Warn("workflow sync failed", "project", p.ID, "err", err)
			}
			if err := s.startDue(ctx, p); err != nil {
				errs = append(errs, fmt.Errorf("project %s: %w", p.ID, err))
			}
		}
	}
	return errors.Join(errs...)
}

// syncIfMoved reads the project's workflows again when its base ref is no
// longer at the commit they were read at. It asks the remote at most once
// per SyncInterval, and only for projects that use workflows: those synced
// once (by 'docsmith workflow sync', the sync endpoint or a push webhook
// from the docs repository) and those that name a webhook secret. Other
// projects' remotes are never polled.
func (s *Service) syncIfMoved(ctx context.Context, p tenant.Project) error {
	now := s.cfg.Now()
	s.mu.Lock()
	last, ok := s.lastCheck[p.ID]
	s.mu.Unlock()
	if ok && now.Sub(last) < s.cfg.SyncInterval {
		return nil
	}
	state, _, err := s.store.Workflows(ctx, p.ID)
	if err != nil {
		return err
	}
	if state.SyncedAt.IsZero() && p.WebhookSecretEnv == "" && p.WebhookSecretFile == "" {
		return nil
	}
	s.checked(p.ID, now)
	sha, err := s.repos.BaseSHA(ctx, p)
	if err != nil {
		return err
	}
	if sha == state.BaseSHA {
		return nil
	}
	_, err = s.Sync(ctx, p)
	return err
}

func (s *Service) checked(projectID string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastCheck[projectID] = at
}

// startDue starts each scheduled workflow's due slot: the latest since the
// last one it started, so slots missed while no process ran become one
// run. Each slot's key makes it start once whatever the number of
// processes ticking.
func (s *Service) startDue(ctx context.Context, p tenant.Project) error {
	_, stored, err := s.store.Workflows(ctx, p.ID)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	var errs []error
	for _, st := range stored {
		wf := st.Workflow
		if wf.Cron == "" {
			continue
		}
		sched, err := workflow.ParseSchedule(wf.Cron, s.cfg.Location)
		if err != nil {
			continue // Load validated it; nothing to run
		}
		last := st.LastSlot
		if last.IsZero() {
			last = st.FirstSeen
		}
		slot, due := sched.Due(wf.ID, last, now)
		if !due {
			continue
		}
		if why := refusal(p, wf); why != "" {
			s.cfg.Log.Warn("scheduled workflow refused", "project", p.ID, "workflow", wf.ID, "slot", slot.At, "why", why)
		} else if _, _, err := s.start(ctx, p, wf, agentjob.TriggerSchedule, nil, "schedule:"+slot.Key); err != nil {
			if !refusable(err) {
				// Not advanced: the next tick tries the slot again.
				errs = append(errs, fmt.Errorf("workflow %s, slot %s: %w", wf.ID, slot.At.Format(time.RFC3339), err))
				continue
			}
			s.cfg.Log.Warn("scheduled workflow refused", "project", p.ID, "workflow", wf.ID, "slot", slot.At, "why", apperr.MessageOf(err))
		}
		if err := s.store.AdvanceSlot(ctx, p.ID, wf.ID, slot.At); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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
