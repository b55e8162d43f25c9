package prcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/forge"
	"github.com/docsmith/docsmith/internal/forge/forgeapi"
	"github.com/docsmith/docsmith/internal/tenant"
)

// WorkerConfig is what a Worker needs.
type WorkerConfig struct {
	Store   Store
	Tenants Tenants
	Runner  Runner
	Runs    checkrun.Store
	ForgeOf ForgeOf
	// PublicURL is where this server's dashboard is reached, for the
	// links of statuses and comments; "" leaves them out.
	PublicURL string
	WorkerID  string
	// Lease is how long a claim holds without renewal; it is renewed
	// every third of it while the checks run. Default 5 minutes.
	Lease time.Duration
	// Poll is how often an idle worker looks for work. Default 5 seconds.
	Poll time.Duration
	// MaxAttempts bounds the claims of one check (a crash, a forge or a
	// repository that fails for now); then it is recorded as failed.
	// Default 5.
	MaxAttempts int
	// RetryDelay is the wait after the first failure that may pass; it
	// doubles with each attempt, up to 10 minutes. Default 30 seconds.
	RetryDelay time.Duration
	Log        *slog.Logger
	Now        func() time.Time
}

// Worker runs queued checks one at a time.
type Worker struct {
	cfg    WorkerConfig
	wakeup chan struct{}
}

// NewWorker returns a Worker; Run starts it.
func NewWorker(cfg WorkerConfig) *Worker {
	if cfg.Lease <= 0 {
		cfg.Lease = 5 * time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 5 * time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &Worker{cfg: cfg, wakeup: make(chan struct{}, 1)}
}

// Wake makes an idle worker of this process look for work now (a check
// was just queued here).
func (w *Worker) Wake() {
	select {
	case w.wakeup <- struct{}{}:
	default:
	}
}

// Run works until ctx ends. A check running then is left to its lease:
// another worker, or this one's next start, takes it back.
func (w *Worker) Run(ctx context.Context) {
	for ctx.Err() == nil {
		worked, err := w.RunOne(ctx)
		if err != nil && ctx.Err() == nil {
			w.cfg.Log.Error("pull request check", "err", err)
		}
		if worked {
			continue
		}
		select {
		case <-ctx.Done():
		case <-w.wakeup:
		case <-time.After(w.cfg.Poll):
		}
	}
}

// RunOne claims one due check and carries it out; false when none was due.
func (w *Worker) RunOne(ctx context.Context) (bool, error) {
	now := w.cfg.Now()
	c, ok, err := w.cfg.Store.ClaimPRCheck(ctx, w.cfg.WorkerID, now, now.Add(w.cfg.Lease))
	if err != nil || !ok {
		return false, err
	}
	log := w.cfg.Log.With("project", c.ProjectID, "pr", c.Number, "head", c.HeadSHA, "attempt", c.Attempts)
	if c.Attempts > w.cfg.MaxAttempts {
		// Its last holder stopped (a crash) after the last attempt.
		return true, w.finish(ctx, c, StateFailed, fmt.Sprintf("stopped after %d attempts; the last: %s", w.cfg.MaxAttempts, orNothing(c.Error)), time.Time{})
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	keep := w.keepLease(runCtx, cancel, c)
	outcome := w.carryOut(runCtx, c, keep)
	keep.stop()
	if cause := context.Cause(runCtx); errors.Is(cause, ErrLeaseLost) {
		log.Warn("pull request check taken over by another worker")
		return true, nil
	}
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	switch {
	case outcome.err == nil:
		log.Info("pull request checked", "state", outcome.state, "note", outcome.note)
		return true, w.finish(ctx, c, outcome.state, outcome.note, time.Time{})
	case outcome.retry && c.Attempts < w.cfg.MaxAttempts:
		delay := retryDelay(w.cfg.RetryDelay, c.Attempts)
		log.Warn("pull request check will run again", "in", delay, "err", outcome.err)
		return true, w.finish(ctx, c, StateQueued, outcome.err.Error(), w.cfg.Now().Add(delay))
	default:
		log.Warn("pull request check failed", "err", outcome.err)
		return true, w.finish(ctx, c, StateFailed, outcome.err.Error(), time.Time{})
	}
}

func (w *Worker) finish(ctx context.Context, c Check, state State, note string, runAfter time.Time) error {
	err := w.cfg.Store.FinishPRCheck(ctx, c, state, clipBytes(note, 2000), runAfter)
	if errors.Is(err, ErrLeaseLost) {
		return nil
	}
	return err
}

// outcome is how carrying out a check ended.
type outcome struct {
	state State
	note  string
	err   error
	// retry is true when err may pass.
	retry bool
}

func (w *Worker) carryOut(ctx context.Context, c Check, keep *leaseKeeper) outcome {
	p, err := w.cfg.Tenants.GetProject(ctx, c.ProjectID)
	if apperr.Is(err, apperr.NotFound) {
		return outcome{state: StateDone, note: "the project is gone"}
	}
	if err != nil {
		return outcome{err: fmt.Errorf("read project %s: %w", c.ProjectID, err), retry: true}
	}
	reports, err := w.reports(ctx, p, c, keep)
	if err != nil {
		return w.failed(ctx, p, c, err)
	}
	if len(reports) == 0 {
		return outcome{state: StateDone, note: "no domain reads branch " + c.BaseRef + " any more"}
	}
	if err := keep.check(); err != nil {
		return outcome{err: err}
	}
	return w.report(ctx, p, c, reports)
}

// reports are the head's runs, one per domain that reads the base branch:
// those an earlier attempt stored, or new ones, stored now.
func (w *Worker) reports(ctx context.Context, p tenant.Project, c Check, keep *leaseKeeper) ([]answercheck.CommentReport, error) {
	domains, err := domainsReading(ctx, w.cfg.Tenants, p, c.BaseRef)
	if err != nil {
		return nil, err
	}
	stored := map[string]string{}
	for _, r := range c.Runs {
		stored[r.Domain] = r.ID
	}
	runs := append([]RunRef(nil), c.Runs...)
	var out []answercheck.CommentReport
	for _, d := range domains {
		var run checkrun.Run
		if id, ok := stored[d.ID]; ok {
			if run, err = w.cfg.Runs.GetRun(ctx, d.ID, id); err != nil {
				return nil, fmt.Errorf("read the stored run %s of domain %s: %w", id, d.ID, err)
			}
		} else {
			rep, err := w.cfg.Runner.Run(ctx, checkrun.Request{Domain: d, Ref: c.PullRef, Trigger: checkrun.TriggerPullRequest})
			if err != nil {
				return nil, &runError{domain: d.ID, err: err}
			}
			run, err = w.cfg.Runs.SaveRun(ctx, checkrun.Run{Domain: d.ID, Trigger: checkrun.TriggerPullRequest, PRNumber: c.Number, PRLink: c.Link, Report: rep})
			if err != nil {
				return nil, fmt.Errorf("store the run of domain %s: %w", d.ID, err)
			}
			runs = append(runs, RunRef{Domain: d.ID, ID: run.ID})
			if err := keep.save(runs); err != nil {
				return nil, err
			}
		}
		out = append(out, answercheck.CommentReport{Report: run.Report, Domain: d.ID, RunURL: w.runURL(d.ID, run.ID), SiteURL: d.SiteURL})
	}
	return out, nil
}

// runError is a run of the checks that failed.
type runError struct {
	domain string
	err    error
}

func (e *runError) Error() string {
	return fmt.Sprintf("the checks of domain %s could not run: %s", e.domain, apperr.MessageOf(e.err))
}
func (e *runError) Unwrap() error { return e.err }

// failed is the outcome of a check whose runs could not be made: tried
// again when the failure may pass, else an error status on the head.
func (w *Worker) failed(ctx context.Context, p tenant.Project, c Check, err error) outcome {
	if errors.Is(err, ErrLeaseLost) || ctx.Err() != nil {
		return outcome{err: err}
	}
	retry := mayPass(err)
	if !retry || c.Attempts >= w.cfg.MaxAttempts {
		if f, ferr := w.forge(p); ferr == nil && f != nil {
			st := forge.CommitStatus{State: forgeapi.StatusError, Context: StatusContext, Description: oneLine("The answer checks could not run: " + apperr.MessageOf(err))}
			if serr := f.SetStatus(ctx, c.HeadSHA, st); serr != nil {
				w.cfg.Log.Warn("pull request check: error status not set", "project", p.ID, "pr", c.Number, "err", serr)
			}
		}
	}
	return outcome{err: err, retry: retry}
}

// mayPass reports whether a failure may pass if tried again: not a
// refusal that says what to fix (a bad ref, a missing project setting, a
// forge call not implemented), anything else (a repository or model that
// failed for now, a store error).
func mayPass(err error) bool {
	var ferr *forge.Error
	if errors.As(err, &ferr) {
		return ferr.Temporary()
	}
	if errors.Is(err, forgeapi.ErrNotImplemented) {
		return false
	}
	switch apperr.CodeOf(err) {
	case apperr.Invalid, apperr.NotFound, apperr.Conflict, apperr.Unauthorized, apperr.Forbidden:
		return false
	}
	return true
}

// report sets the head's status and the pull request's comment.
func (w *Worker) report(ctx context.Context, p tenant.Project, c Check, reports []answercheck.CommentReport) outcome {
	f, err := w.forge(p)
	if err != nil {
		return outcome{err: err}
	}
	if f == nil {
		return outcome{state: StateDone, note: "the project's forge takes no statuses or comments"}
	}
	st := status(reports, w.runURLOf(reports))
	if err := f.SetStatus(ctx, c.HeadSHA, st); err != nil {
		return forgeOutcome("set the commit status", err)
	}
	newer, err := w.newerHead(ctx, c)
	if err != nil {
		return outcome{err: err, retry: true}
	}
	if newer {
		// A later push is queued: its comment replaces this one, and
		// this one must not come after it.
		return outcome{state: StateDone, note: "status set; the comment is left to the newer head"}
	}
	if err := f.UpsertComment(ctx, c.Number, answercheck.CommentMarker, answercheck.PRComment(c.HeadSHA, reports)); err != nil {
		return forgeOutcome("update the comment", err)
	}
	return outcome{state: StateDone, note: st.State + ": " + st.Description}
}

func forgeOutcome(what string, err error) outcome {
	if errors.Is(err, forge.ErrNoPullRequests) {
		return outcome{state: StateDone, note: "the project's forge takes no statuses or comments"}
	}
	var ferr *forge.Error
	retry := errors.As(err, &ferr) && ferr.Temporary()
	return outcome{err: fmt.Errorf("%s: %w", what, err), retry: retry}
}

// newerHead reports whether a later head of the same pull request is
// queued.
func (w *Worker) newerHead(ctx context.Context, c Check) (bool, error) {
	all, err := w.cfg.Store.PRChecks(ctx, c.ProjectID, c.Number)
	if err != nil {
		return false, err
	}
	return len(all) > 0 && all[0].ID != c.ID && all[0].CreatedAt.After(c.CreatedAt), nil
}

func (w *Worker) forge(p tenant.Project) (forge.Forge, error) {
	if p.ForgeKind == tenant.ForgeLocal || w.cfg.ForgeOf == nil {
		return nil, nil
	}
	f, err := w.cfg.ForgeOf(p)
	if err != nil {
		return nil, fmt.Errorf("the forge of project %s: %w", p.ID, err)
	}
	return f, nil
}

// status is the head's commit status: success when nothing regressed,
// failure naming the regressed checks.
func status(reports []answercheck.CommentReport, target string) forge.CommitStatus {
	st := forge.CommitStatus{State: forgeapi.StatusSuccess, Context: StatusContext, TargetURL: target, Description: answercheck.Headline(reports)}
	var regressed []string
	for _, r := range reports {
		for _, c := range r.Report.Checks {
			if c.Change == answercheck.Regressed {
				regressed = append(regressed, c.After.Check.Name)
			}
		}
	}
	if len(regressed) > 0 {
		st.State = forgeapi.StatusFailure
		st.Description = answercheck.Headline(reports) + ": " + strings.Join(regressed, ", ")
	}
	st.Description = oneLine(st.Description)
	return st
}

// maxDescriptionRunes is GitHub's limit on a status description, the
// smallest of the forges'.
const maxDescriptionRunes = 140

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= maxDescriptionRunes {
		return s
	}
	return string([]rune(s)[:maxDescriptionRunes-1]) + "…"
}

// RunPath is the dashboard page of a stored run.
func RunPath(domain, runID string) string {
	return "/ui/domains/" + url.PathEscape(domain) + "/checks/runs/" + url.PathEscape(runID)
}

func (w *Worker) runURL(domain, runID string) string {
	if w.cfg.PublicURL == "" {
		return ""
	}
	return w.cfg.PublicURL + RunPath(domain, runID)
}

// runURLOf is the status's link: the run's page when there is one run.
func (w *Worker) runURLOf(reports []answercheck.CommentReport) string {
	if len(reports) == 1 {
		return reports[0].RunURL
	}
	return ""
}

// retryDelay is the wait before attempt+1: base, doubled with each
// attempt, up to maxRetryDelay (as agent turns wait).
func retryDelay(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}

const maxRetryDelay = 10 * time.Minute

func orNothing(s string) string {
	if s == "" {
		return "nothing recorded"
	}
	return s
}

func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// leaseKeeper renews a claim's lease while its checks run, and stops the
// run (canceling its context with ErrLeaseLost) when another worker took
// it over.
type leaseKeeper struct {
	w      *Worker
	c      Check
	cancel context.CancelCauseFunc
	done   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	lost   error
}

func (w *Worker) keepLease(ctx context.Context, cancel context.CancelCauseFunc, c Check) *leaseKeeper {
	k := &leaseKeeper{w: w, c: c, cancel: cancel, done: make(chan struct{})}
	k.wg.Go(func() {
		t := time.NewTicker(w.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-k.done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := k.save(nil); err != nil && errors.Is(err, ErrLeaseLost) {
					return
				}
			}
		}
	})
	return k
}

// save renews the lease and records runs (nil leaves them).
func (k *leaseKeeper) save(runs []RunRef) error {
	if err := k.check(); err != nil {
		return err
	}
	// Not the run's context: runs stored must be recorded even as the run
	// is stopped.
	ctx, cancel := context.WithTimeout(context.Background(), renewTimeout)
	defer cancel()
	err := k.w.cfg.Store.RenewPRCheck(ctx, k.c, k.w.cfg.Now().Add(k.w.cfg.Lease), runs)
	if errors.Is(err, ErrLeaseLost) {
		k.mu.Lock()
		k.lost = err
		k.mu.Unlock()
		k.cancel(ErrLeaseLost)
	}
	return err
}

// renewTimeout bounds one renewal of a lease.
const renewTimeout = 10 * time.Second

// check fails once the lease is known lost: no forge call follows then.
func (k *leaseKeeper) check() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost
}

func (k *leaseKeeper) stop() {
	close(k.done)
	k.wg.Wait()
}
