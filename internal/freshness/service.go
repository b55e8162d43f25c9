package freshness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Config is what a Service needs.
type Config struct {
	Tenants Tenants
	Heads   Heads
	Indexer Indexer
	// Recorder keeps each build's outcome and each head seen (required).
	Recorder *Recorder
	// PollInterval is how often every branch a domain reads is compared
	// with the commit its index was built from; 0 turns polling off.
	PollInterval time.Duration
	// RetryAfter is how long a domain whose repository failed waits before
	// a poll tries it again; it doubles with each failure in a row, up to
	// MaxRetryAfter. Defaults: the poll interval (or a minute), and 30
	// minutes. Pushes and our own pushes try at once whatever the wait.
	RetryAfter    time.Duration
	MaxRetryAfter time.Duration
	// BuildTimeout bounds one build, and HeadTimeout one read of a head.
	// Defaults 15 minutes and 1 minute.
	BuildTimeout time.Duration
	HeadTimeout  time.Duration
	// Built, when set, is called after each successful build of a
	// domain's index with the domain and the build's commit ("" for a
	// plain folder), in the build's goroutine: the next build of the
	// domain waits for it. Its context ends with Close or after
	// BuildTimeout.
	Built func(ctx context.Context, d tenant.Domain, commit string)
	Now   func() time.Time
	Log   *slog.Logger
}

// Service rebuilds domains' indexes when their branches move.
type Service struct {
	cfg Config
	// ctx is the builds' own: they outlive the request or tick that asked
	// for them, and end with Close.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	slots map[string]*slot // domain id -> its builds
}

// slot is one domain's builds: at most one runs, and a trigger that comes
// while it runs asks for one more after it, however many come.
type slot struct {
	building bool
	again    bool
	domain   tenant.Domain // as the latest trigger saw it
	failures int           // attempts failed in a row
	retryAt  time.Time     // a poll leaves the domain alone until then
}

// Trigger reasons, as logs and the webhook reply name them.
const (
	ReasonPush      = "push"
	ReasonPoll      = "poll"
	ReasonAutomerge = "automerge"
)

// New returns a Service. Close stops its builds.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = cfg.PollInterval
		if cfg.RetryAfter <= 0 {
			cfg.RetryAfter = time.Minute
		}
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 30 * time.Minute
	}
	if cfg.BuildTimeout <= 0 {
		cfg.BuildTimeout = 15 * time.Minute
	}
	if cfg.HeadTimeout <= 0 {
		cfg.HeadTimeout = time.Minute
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: cfg, ctx: ctx, cancel: cancel, slots: map[string]*slot{}}
}

// Close stops the builds running (a build stopped writes nothing) and
// waits for them to end.
func (s *Service) Close() {
	s.cancel()
	s.wg.Wait()
}

// Wait waits until no build runs or is queued.
func (s *Service) Wait() { s.wg.Wait() }

// Trigger asks for a build of the domain's index: it starts now, or, if
// one is running, once more after it (triggers that come meanwhile make one
// build together). It does not wait for the build.
func (s *Service) Trigger(d tenant.Domain, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	sl := s.slot(d.ID)
	sl.domain = d
	if sl.building {
		sl.again = true
		return
	}
	sl.building = true
	s.wg.Go(func() { s.builds(d.ID, reason) })
}

// slot is the domain's slot; s.mu is held.
func (s *Service) slot(id string) *slot {
	sl := s.slots[id]
	if sl == nil {
		sl = &slot{}
		s.slots[id] = sl
	}
	return sl
}

// builds runs the domain's builds until no trigger is left.
func (s *Service) builds(id, reason string) {
	for {
		s.mu.Lock()
		d := s.slots[id].domain
		s.mu.Unlock()
		s.build(d, reason)
		s.mu.Lock()
		sl := s.slots[id]
		if !sl.again || s.ctx.Err() != nil {
			sl.building, sl.again = false, false
			s.mu.Unlock()
			return
		}
		sl.again = false
		s.mu.Unlock()
		reason = "queued"
	}
}

func (s *Service) build(d tenant.Domain, reason string) {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.BuildTimeout)
	defer cancel()
	started := s.cfg.Now()
	b, err := s.cfg.Indexer.Index(ctx, d)
	if s.ctx.Err() != nil {
		return // stopped by Close: neither a success nor a failure
	}
	if err != nil {
		s.cfg.Log.Warn("index: rebuild failed; the last good index is still served", "domain", d.ID, "reason", reason, "err", err)
	} else {
		s.cfg.Log.Info("index: rebuilt", "domain", d.ID, "reason", reason, "commit", b.Commit, "pages", b.Pages, "passages", b.Passages)
	}
	s.failed(d.ID, err)
	if rerr := s.cfg.Recorder.Record(s.ctx, d.ID, started, b, err); rerr != nil {
		s.cfg.Log.Warn("index: recording the build failed", "domain", d.ID, "err", rerr)
	}
	if err == nil && s.cfg.Built != nil {
		after, cancel := context.WithTimeout(s.ctx, s.cfg.BuildTimeout)
		defer cancel()
		s.cfg.Built(after, d, b.Commit)
	}
}

// failed counts a failure of the domain's repository or docs (nil: a
// success) and sets when a poll may try again.
func (s *Service) failed(id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.slot(id)
	if err == nil {
		sl.failures, sl.retryAt = 0, time.Time{}
		return
	}
	sl.failures++
	sl.retryAt = s.cfg.Now().Add(s.retryDelay(sl.failures))
}

// retryDelay is the wait after the n-th failure in a row.
func (s *Service) retryDelay(n int) time.Duration {
	d := s.cfg.RetryAfter
	for i := 1; i < n && d < s.cfg.MaxRetryAfter; i++ {
		d *= 2
	}
	return min(d, s.cfg.MaxRetryAfter)
}

// waiting reports whether a poll leaves the domain alone at now.
func (s *Service) waiting(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.slots[id]
	return sl != nil && now.Before(sl.retryAt)
}

// Pushed is a push to branch of the project's own repository: every domain
// of the project that reads that branch is rebuilt at once. head, when
// known, is recorded as the branch's head. It returns the domains it
// triggered.
func (s *Service) Pushed(ctx context.Context, p tenant.Project, branch, head, reason string) ([]string, error) {
	domains, err := s.cfg.Tenants.ListDomains(ctx, p.OrgID)
	if err != nil {
		return nil, fmt.Errorf("list the domains of %s: %w", p.OrgID, err)
	}
	if strings.Trim(head, "0") == "" {
		head = "" // a deleted branch, or not said
	}
	now := s.cfg.Now()
	var ids []string
	for _, d := range domains {
		if d.ProjectID != p.ID || RefOf(d, p) != branch {
			continue
		}
		if head != "" {
			if err := s.cfg.Recorder.store.SeeHead(ctx, d.ID, head, now); err != nil {
				s.cfg.Log.Warn("index: recording a pushed head failed", "domain", d.ID, "err", err)
			}
		}
		s.Trigger(d, reason)
		ids = append(ids, d.ID)
	}
	return ids, nil
}

// Poll compares the head of every branch a domain reads with the commit
// its index was built from, and rebuilds those that differ. A branch is
// read once however many domains read it; a domain whose repository keeps
// failing is tried again only after its wait.
func (s *Service) Poll(ctx context.Context) error {
	domains, err := s.cfg.Tenants.ListDomains(ctx, "")
	if err != nil {
		return fmt.Errorf("list the domains: %w", err)
	}
	type branch struct{ project, ref string }
	var order []branch
	groups := map[branch][]tenant.Domain{}
	projects := map[string]tenant.Project{}
	var errs []error
	for _, d := range domains {
		p, ok := projects[d.ProjectID]
		if !ok {
			if p, err = s.cfg.Tenants.GetProject(ctx, d.ProjectID); err != nil {
				errs = append(errs, fmt.Errorf("domain %s: project %s: %w", d.ID, d.ProjectID, err))
				continue
			}
			projects[d.ProjectID] = p
		}
		b := branch{p.ID, RefOf(d, p)}
		if _, seen := groups[b]; !seen {
			order = append(order, b)
		}
		groups[b] = append(groups[b], d)
	}
	for _, b := range order {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := s.pollBranch(ctx, projects[b.project], b.ref, groups[b]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Service) pollBranch(ctx context.Context, p tenant.Project, ref string, domains []tenant.Domain) error {
	now := s.cfg.Now()
	var due []tenant.Domain
	for _, d := range domains {
		if !s.waiting(d.ID, now) {
			due = append(due, d)
		}
	}
	if len(due) == 0 {
		return nil
	}
	headCtx, cancel := context.WithTimeout(ctx, s.cfg.HeadTimeout)
	head, err := s.cfg.Heads.Head(headCtx, p, ref)
	cancel()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		s.cfg.Log.Warn("index: reading the branch head failed; the last good index is still served", "project", p.ID, "ref", ref, "err", err)
		var errs []error
		for _, d := range due {
			s.failed(d.ID, err)
			errs = append(errs, s.cfg.Recorder.Failure(ctx, d.ID, err, now, s.cfg.Now().Sub(now)))
		}
		return errors.Join(errs...)
	}
	if head == "" {
		return nil // not a git repository: nothing to compare
	}
	var errs []error
	for _, d := range due {
		st, err := s.cfg.Recorder.store.IndexState(ctx, d.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("domain %s: %w", d.ID, err))
			continue
		}
		if err := s.cfg.Recorder.store.SeeHead(ctx, d.ID, head, now); err != nil {
			errs = append(errs, fmt.Errorf("domain %s: %w", d.ID, err))
		}
		if st.Commit != head {
			s.Trigger(d, ReasonPoll)
		}
	}
	return errors.Join(errs...)
}

// Run polls every PollInterval until ctx ends; with no interval it does
// nothing.
func (s *Service) Run(ctx context.Context) {
	if s.cfg.PollInterval <= 0 {
		return
	}
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		if err := s.Poll(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("index poll failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reason is what a failure records: the message of an error that says what
// to fix, or a pointer to the server log for any other.
func reason(err error) string {
	return apperr.MessageOf(err)
}

// Status is a domain's index state with its lag at the time it was read.
type Status struct {
	State
	Lag time.Duration
}

// Status reads the domain's index state.
func (s *Service) Status(ctx context.Context, domain string) (Status, error) {
	st, err := s.cfg.Recorder.store.IndexState(ctx, domain)
	if err != nil {
		return Status{}, err
	}
	return Status{State: st, Lag: st.Lag(s.cfg.Now())}, nil
}

// Recorder is the recorder the service writes to, for builds asked for
// elsewhere ('docsmith index', the index endpoint).
func (s *Service) Recorder() *Recorder { return s.cfg.Recorder }
