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
)

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
	if c.CancelRequested {
		p.finish(ctx, c, TurnResult{State: TurnCanceled, Error: "canceled by request", JobStatus: mustTransition(Active, EvCancel)})
		log.Info("expired turn was canceled while it ran; not queued again")
		return
	}
	if c.Attempts < p.cfg.MaxAttempts {
		if err := p.store.RequeueTurn(ctx, c, true); err != nil {
			if !apperr.Is(err, apperr.Conflict) {
				log.Error("requeue expired turn", "err", err)
			}
			return
		}
		log.Warn("turn lease expired; queued again")
		p.hub.TurnQueued()
		return
	}
	msg := fmt.Sprintf("the turn was interrupted %d times before it could finish (the worker running it stopped); giving up", c.Attempts)
	p.finish(ctx, c, TurnResult{State: TurnFailed, Error: msg, JobStatus: mustTransition(Active, EvFailed)})
	log.Warn("turn lease expired too often; failed")
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

	renewDone := make(chan struct{})
	go p.renew(turnCtx, c, cancel, renewDone)
	defer func() { cancel(nil); <-renewDone }()

	// The store calls must outlive a hard stop so the outcome is written.
	storeCtx := context.WithoutCancel(hardCtx)
	job, err := p.store.GetJob(storeCtx, c.ProjectID, c.JobID)
	if err != nil {
		log.Error("load job for turn", "err", err)
		p.finish(storeCtx, c, TurnResult{State: TurnFailed, Error: "the job could not be loaded", JobStatus: mustTransition(Active, EvFailed)})
		return
	}
	project, err := p.projects.GetProject(storeCtx, c.ProjectID)
	if err != nil {
		log.Error("load project for turn", "err", err)
		p.finish(storeCtx, c, TurnResult{State: TurnFailed, Error: "the job's project could not be loaded", JobStatus: mustTransition(Active, EvFailed)})
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
	outcome, runErr := p.runner.RunTurn(runCtx, Turn{Job: job, Project: project, Message: msg, Attempt: c.Attempts}, progress{pool: p, jobID: c.JobID})
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	stopTimer()

	cause := context.Cause(turnCtx)
	switch {
	case errors.Is(cause, errShutdown):
		err := p.store.RequeueTurn(storeCtx, c, false)
		switch {
		case apperr.Is(err, apperr.Conflict):
			log.Info("turn not handed back: its job was canceled; recovery ends it")
		case err != nil:
			log.Error("hand turn back to the queue", "err", err)
		default:
			log.Info("turn handed back to the queue for shutdown")
		}
		return
	case errors.Is(cause, errLeaseLost):
		log.Warn("turn abandoned: its lease was taken over")
		return
	case errors.Is(cause, errCanceledByRequest):
		p.finish(storeCtx, c, TurnResult{State: TurnCanceled, Error: "canceled by request", JobStatus: mustTransition(Active, EvCancel)})
		log.Info("turn canceled")
		return
	case timedOut:
		msg := fmt.Sprintf("the turn exceeded its wall-time budget of %s", p.cfg.TurnTimeout)
		p.finish(storeCtx, c, TurnResult{State: TurnFailed, Error: msg, JobStatus: mustTransition(Active, EvFailed)})
		log.Warn("turn timed out")
		return
	case runErr != nil:
		p.finish(storeCtx, c, TurnResult{State: TurnFailed, Error: runErr.Error(), JobStatus: mustTransition(Active, EvFailed)})
		log.Warn("turn failed", "err", runErr)
		return
	}
	p.finish(storeCtx, c, TurnResult{
		State:        TurnDone,
		Summary:      outcome.Summary,
		PRLink:       outcome.PRLink,
		PRNumber:     outcome.PRNumber,
		FilesChanged: outcome.FilesChanged,
		Usage:        outcome.Usage,
		JobStatus:    mustTransition(Active, EvFinished),
	})
	log.Info("turn finished", "pr", outcome.PRLink)
}

func (p *Pool) renew(ctx context.Context, c Claim, cancel context.CancelCauseFunc, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(p.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		canceled, err := p.store.RenewLease(ctx, c, p.now().Add(p.cfg.Lease))
		switch {
		case apperr.Is(err, apperr.Conflict):
			cancel(errLeaseLost)
			return
		case err != nil:
			if ctx.Err() == nil {
				p.log.Error("renew turn lease", "job", c.JobID, "err", err)
			}
		case canceled:
			cancel(errCanceledByRequest)
			return
		}
	}
}

func (p *Pool) finish(ctx context.Context, c Claim, r TurnResult) {
	r.At = p.now()
	data := map[string]any{"seq": c.Seq, "state": r.State}
	if r.Summary != "" {
		data["summary"] = r.Summary
	}
	if r.Error != "" {
		data["error"] = r.Error
	}
	if _, err := p.store.FinishTurn(ctx, c, r, []NewEvent{{Type: EventTurnFinished, Data: data}}); err != nil {
		if !apperr.Is(err, apperr.Conflict) {
			p.log.Error("record turn outcome", "job", c.JobID, "seq", c.Seq, "err", err)
		}
		return
	}
	p.hub.JobChanged(c.JobID)
	p.hub.TurnQueued() // the job's next message may be waiting
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

func mustTransition(from Status, ev Event) Status {
	to, err := Transition(from, ev)
	if err != nil {
		panic(err)
	}
	return to
}
