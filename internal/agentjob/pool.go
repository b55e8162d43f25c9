package agentjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Runner carries out one turn of a job: the agent. The error it returns
// becomes the job's error as it reads, so it must say what went wrong in
// words a caller can act on and never carry a secret.
type Runner interface {
	RunTurn(ctx context.Context, t Turn, progress Progress) (TurnOutcome, error)
}

// Turn is what a runner gets: the job with its history, the project, and
// the message to carry out.
type Turn struct {
	Job     Job
	Project tenant.Project
	Message Message
	Attempt int
	// Lease is the turn's hold on its job; nil when nothing fences it.
	Lease Lease
}

// Lease is a running turn's hold on its job. A runner checks it right
// before each side effect outside the store (the push, the pull request
// call), so that a worker that lost its lease, or cannot prove it still has
// it, stops before it acts; and it records each side effect that landed.
type Lease interface {
	// Check fails if the lease may have passed to another worker: its last
	// renewal is too old, or the store refuses this attempt (the fencing
	// token). A successful check renews the lease.
	Check(ctx context.Context) error
	// Save records how far the turn got, fenced like Check.
	Save(ctx context.Context, cp Checkpoint) error
}

// TurnOutcome is what a turn achieved.
type TurnOutcome struct {
	Summary      string
	PRLink       string
	PRNumber     int
	FilesChanged []string
	Usage        Usage
}

// Progress lets a runner add events to the job's stream.
type Progress interface {
	Emit(ctx context.Context, eventType string, data any)
}

// Projects finds a job's project.
type Projects interface {
	GetProject(ctx context.Context, id string) (tenant.Project, error)
}

// PoolConfig tunes the workers.
type PoolConfig struct {
	WorkerID      string
	Workers       int
	Lease         time.Duration // a turn whose lease is not renewed in this time is taken back
	Poll          time.Duration // how often idle workers look for turns queued elsewhere
	MaxAttempts   int           // runs of one turn before it fails (a crash costs one)
	TurnTimeout   time.Duration // the wall-time budget of a turn
	ShutdownGrace time.Duration // how long running turns may finish on shutdown
}

// Pool runs queued turns on a fixed number of workers.
type Pool struct {
	cfg      PoolConfig
	store    Store
	projects Projects
	runner   Runner
	hub      *Hub
	log      *slog.Logger
	now      func() time.Time

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // by job id
}

var (
	errCanceledByRequest = errors.New("canceled by request")
	errShutdown          = errors.New("worker shutting down")
	errLeaseLost         = errors.New("lease lost to another worker")
	errLeaseExpired      = errors.New("the lease could not be renewed in time")
)

// leaseMargin is how long before its lease runs out a worker that could not
// renew it stops its turn: long enough for the turn to stop before another
// worker may take it back.
func (p *Pool) leaseMargin() time.Duration { return p.cfg.Lease / 4 }

// NewPool returns a Pool; Run starts it.
func NewPool(cfg PoolConfig, store Store, projects Projects, runner Runner, hub *Hub, log *slog.Logger, now func() time.Time) *Pool {
	p := &Pool{cfg: cfg, store: store, projects: projects, runner: runner, hub: hub, log: log, now: now, running: make(map[string]context.CancelCauseFunc)}
	hub.OnCancel(p.cancelLocal)
	return p
}

func (p *Pool) runningHere(jobID string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.running[jobID]
	return ok
}

func (p *Pool) cancelLocal(jobID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cancel, ok := p.running[jobID]; ok {
		cancel(errCanceledByRequest)
	}
}

// Run works until ctx is done. Then it stops claiming, lets running turns
// finish for ShutdownGrace, cancels the rest and hands them back to the
// queue, and returns once every worker has stopped.
func (p *Pool) Run(ctx context.Context) {
	hardCtx, hardStop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer hardStop(nil)
	var wg sync.WaitGroup
	for i := 0; i < p.cfg.Workers; i++ {
		wg.Go(func() { p.work(ctx, hardCtx) })
	}
	wg.Go(func() { p.recover(ctx) })
	<-ctx.Done()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(p.cfg.ShutdownGrace):
		p.log.Warn("turns still running at the end of the shutdown grace; handing them back", "grace", p.cfg.ShutdownGrace)
		hardStop(errShutdown)
		<-done
	}
}

func (p *Pool) work(ctx, hardCtx context.Context) {
	for ctx.Err() == nil {
		claim, ok, err := p.store.ClaimTurn(ctx, p.cfg.WorkerID, p.now(), p.now().Add(p.cfg.Lease))
		if err != nil && ctx.Err() == nil {
			p.log.Error("claim turn", "err", err)
		}
		if ok {
			p.runTurn(hardCtx, claim)
			continue
		}
		select {
		case <-ctx.Done():
		case <-p.hub.Wakeups():
		case <-time.After(p.cfg.Poll):
		}
	}
}

// recover takes back turns whose worker stopped renewing their lease: they
// run again, or fail once they have used their attempts.
func (p *Pool) recover(ctx context.Context) {
	for {
		expired, err := p.store.ExpiredTurns(ctx, p.now())
		if err != nil && ctx.Err() == nil {
			p.log.Error("list expired turns", "err", err)
		}
		for _, c := range expired {
			p.takeBack(ctx, c)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.cfg.Poll):
		}
	}
}

func (p *Pool) takeBack(ctx context.Context, c Claim) {
	log := p.log.With("job", c.JobID, "seq", c.Seq, "attempts", c.Attempts, "worker", c.Worker)
	if c.Worker == p.cfg.WorkerID && p.runningHere(c.JobID) {
		// Our own turn, still running: the process stalled past the lease
		// (a long pause), and its next renewal extends it again.
		log.Warn("turn lease expired while this worker still runs it; keeping it")
		return
	}
	p.finish(ctx, TurnEnd{Claim: c, Outcome: OutcomeInterrupted, MaxAttempts: p.cfg.MaxAttempts})
	log.Warn("turn lease expired; taken back")
}

func (p *Pool) runTurn(hardCtx context.Context, c Claim) {
	log := p.log.With("job", c.JobID, "seq", c.Seq, "attempt", c.Attempts)
	turnCtx, cancel := context.WithCancelCause(hardCtx)
	defer cancel(nil)
	p.mu.Lock()
	p.running[c.JobID] = cancel
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.running, c.JobID)
		p.mu.Unlock()
	}()

	lease := &turnLease{pool: p, claim: c, cancel: cancel}
	lease.renewed(p.now())
	renewDone := make(chan struct{})
	go p.renew(turnCtx, lease, renewDone)
	defer func() { cancel(nil); <-renewDone }()

	// The store calls must outlive a hard stop so the outcome is written.
	storeCtx := context.WithoutCancel(hardCtx)
	job, err := p.store.GetJob(storeCtx, c.ProjectID, c.JobID)
	if err != nil {
		log.Error("load job for turn", "err", err)
		p.finish(storeCtx, p.loadFailed(c, "the job could not be loaded", err))
		return
	}
	project, err := p.projects.GetProject(storeCtx, c.ProjectID)
	if err != nil {
		log.Error("load project for turn", "err", err)
		p.finish(storeCtx, p.loadFailed(c, "the job's project could not be loaded", err))
		return
	}
	var msg Message
	for _, m := range job.Messages {
		if m.Seq == c.Seq {
			msg = m
		}
	}
	p.emit(storeCtx, c.JobID, EventTurnStarted, map[string]any{"seq": c.Seq, "attempt": c.Attempts})
	log.Info("turn started")

	runCtx, stopTimer := context.WithTimeout(turnCtx, p.cfg.TurnTimeout)
	turn := Turn{Job: job, Project: project, Message: msg, Attempt: c.Attempts, Lease: lease}
	outcome, runErr := p.runner.RunTurn(runCtx, turn, progress{pool: p, jobID: c.JobID})
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	stopTimer()

	cause := context.Cause(turnCtx)
	switch {
	case errors.Is(cause, errShutdown):
		err := p.store.RequeueTurn(storeCtx, c)
		switch {
		case errors.Is(err, ErrLeaseLost):
			log.Info("turn not handed back: its job was canceled; recovery ends it")
		case err != nil:
			log.Error("hand turn back to the queue", "err", err)
		default:
			log.Info("turn handed back to the queue for shutdown")
		}
		return
	case errors.Is(cause, errLeaseLost), errors.Is(runErr, ErrLeaseLost):
		log.Warn("turn abandoned: its lease was taken over")
		return
	case errors.Is(cause, errLeaseExpired):
		log.Warn("turn stopped: its lease could not be renewed in time; another worker takes it back once it expires")
		return
	case errors.Is(cause, errCanceledByRequest):
		p.finish(storeCtx, TurnEnd{Claim: c, Outcome: OutcomeCanceled, Error: "canceled by request", Requested: true})
		log.Info("turn canceled")
		return
	case timedOut:
		msg := fmt.Sprintf("the turn exceeded its wall-time budget of %s", p.cfg.TurnTimeout)
		p.finish(storeCtx, TurnEnd{Claim: c, Outcome: OutcomeFailed, Error: msg})
		log.Warn("turn timed out")
		return
	}
	kind, delay := classify(runErr)
	end := TurnEnd{
		Claim:        c,
		Outcome:      kind,
		Summary:      outcome.Summary,
		PRLink:       outcome.PRLink,
		PRNumber:     outcome.PRNumber,
		FilesChanged: outcome.FilesChanged,
		Usage:        outcome.Usage,
		MaxAttempts:  p.cfg.MaxAttempts,
	}
	if runErr != nil {
		end.Error = runErr.Error()
		end.RetryAt = p.now().Add(delay)
	}
	p.finish(storeCtx, end)
	switch kind {
	case OutcomeDone:
		log.Info("turn finished", "pr", outcome.PRLink)
	case OutcomeRetry:
		log.Warn("turn failed; it may run again", "delay", delay, "err", runErr)
	default:
		log.Warn("turn failed", "outcome", kind, "err", runErr)
	}
}

// turnLease is a running turn's Lease: it remembers when the store last
// renewed it.
type turnLease struct {
	pool   *Pool
	claim  Claim
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	lastOK time.Time
}

func (l *turnLease) renewed(at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at.After(l.lastOK) {
		l.lastOK = at
	}
}

// deadline is when the turn must stop if no renewal succeeds before.
func (l *turnLease) deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastOK.Add(l.pool.cfg.Lease - l.pool.leaseMargin())
}

// renew extends the lease once and reports whether the turn may go on.
func (l *turnLease) renew(ctx context.Context) error {
	p := l.pool
	now := p.now()
	if !now.Before(l.deadline()) {
		l.cancel(errLeaseExpired)
		return fmt.Errorf("turn %d of job %s: %w", l.claim.Seq, l.claim.JobID, errLeaseExpired)
	}
	canceled, err := p.store.RenewLease(ctx, l.claim, now.Add(p.cfg.Lease))
	switch {
	case errors.Is(err, ErrLeaseLost):
		l.cancel(errLeaseLost)
		return err
	case err != nil:
		return fmt.Errorf("renew the lease of turn %d of job %s: %w", l.claim.Seq, l.claim.JobID, err)
	case canceled:
		l.cancel(errCanceledByRequest)
		return errCanceledByRequest
	}
	l.renewed(now)
	return nil
}

// Check renews the lease right before a side effect; see Lease.
func (l *turnLease) Check(ctx context.Context) error {
	if err := l.renew(ctx); err != nil {
		if errors.Is(err, ErrLeaseLost) || errors.Is(err, errLeaseExpired) || errors.Is(err, errCanceledByRequest) {
			return err
		}
		// The store could not be asked: do not act, try again later.
		return RetryAfter(l.pool.cfg.Lease, err)
	}
	return nil
}

// Save records a checkpoint; see Lease.
func (l *turnLease) Save(ctx context.Context, cp Checkpoint) error {
	err := l.pool.store.SaveCheckpoint(context.WithoutCancel(ctx), l.claim, cp)
	if errors.Is(err, ErrLeaseLost) {
		l.cancel(errLeaseLost)
	}
	return err
}

// renew keeps the turn's lease while it runs. When renewals fail for so long
// that the lease could pass to another worker, it stops the turn.
func (p *Pool) renew(ctx context.Context, l *turnLease, done chan<- struct{}) {
	defer close(done)
	failing := false
	for {
		wait := p.cfg.Lease / 3
		if failing {
			wait = p.cfg.Lease / 10
		}
		if left := l.deadline().Sub(p.now()); left < wait {
			wait = max(left, 0)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		err := l.renew(ctx)
		switch {
		case err == nil:
			failing = false
		case errors.Is(err, ErrLeaseLost), errors.Is(err, errLeaseExpired), errors.Is(err, errCanceledByRequest):
			if errors.Is(err, errLeaseExpired) {
				p.log.Error("turn lease not renewed in time; stopping the turn", "job", l.claim.JobID, "seq", l.claim.Seq)
			}
			return
		default:
			failing = true
			if ctx.Err() == nil {
				p.log.Error("renew turn lease", "job", l.claim.JobID, "err", err)
			}
		}
	}
}

// loadFailed ends a turn whose job or project could not be read: a store
// that failed for a moment runs the turn again at the next poll (counted
// against its attempts); one that is gone fails it.
func (p *Pool) loadFailed(c Claim, what string, err error) TurnEnd {
	if apperr.Is(err, apperr.NotFound) {
		return TurnEnd{Claim: c, Outcome: OutcomeFailed, Error: what}
	}
	return TurnEnd{Claim: c, Outcome: OutcomeRetry, Error: what, RetryAt: p.now().Add(p.cfg.Poll)}
}

// finish records how a turn ended: the reducer decides, the store applies,
// and a job that changed meanwhile is read and decided again.
func (p *Pool) finish(ctx context.Context, te TurnEnd) {
	c := te.Claim
	if te.MaxAttempts == 0 {
		te.MaxAttempts = p.cfg.MaxAttempts
	}
	for attempt := 0; ; attempt++ {
		job, err := p.store.GetJob(ctx, c.ProjectID, c.JobID)
		if err != nil {
			p.log.Error("record turn outcome: load job", "job", c.JobID, "seq", c.Seq, "err", err)
			return
		}
		patch, events, err := Reduce(job, Input{Kind: InTurnEnd, At: p.now(), Turn: te})
		if err == nil {
			_, _, err = p.store.Apply(ctx, c.ProjectID, c.JobID, patch, nil, events)
		}
		switch {
		case err == nil:
			p.hub.JobChanged(c.JobID)
			p.hub.TurnQueued() // the job's next message, or this one again, may be waiting
			return
		case errors.Is(err, ErrStale) && attempt < 10:
			continue
		case errors.Is(err, ErrLeaseLost):
			p.log.Info("turn outcome not recorded: the turn is no longer ours", "job", c.JobID, "seq", c.Seq)
			return
		default:
			p.log.Error("record turn outcome", "job", c.JobID, "seq", c.Seq, "err", err)
			return
		}
	}
}

func (p *Pool) emit(ctx context.Context, jobID, eventType string, data any) {
	if err := p.store.AppendEvents(ctx, jobID, p.now(), []NewEvent{{Type: eventType, Data: data}}); err != nil {
		p.log.Error("append job event", "job", jobID, "type", eventType, "err", err)
		return
	}
	p.hub.JobChanged(jobID)
}

type progress struct {
	pool  *Pool
	jobID string
}

func (pr progress) Emit(ctx context.Context, eventType string, data any) {
	pr.pool.emit(context.WithoutCancel(ctx), pr.jobID, eventType, data)
}
