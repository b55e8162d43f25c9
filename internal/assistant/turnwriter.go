package assistant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/apperr"
)

// TurnRecorder stores a finished turn. Record returns nil once the turn is
// stored, ErrTurnQueued when it is still on its way (it will be stored
// later), or the error that kept it from being stored.
type TurnRecorder interface {
	Record(ctx context.Context, t Turn) error
}

// ErrTurnQueued: the turn was not stored yet when Record stopped waiting;
// it stays queued and will be.
var ErrTurnQueued = errors.New("the turn is queued and not stored yet")

// ErrWriterClosed: the writer was closed before the turn was handed to it.
var ErrWriterClosed = errors.New("the turn writer is closed")

// Defaults of a TurnWriter.
const (
	DefaultTurnQueue   = 4096
	DefaultTurnBatch   = 64
	DefaultTurnGather  = 10 * time.Millisecond
	DefaultTurnWait    = 10 * time.Second
	DefaultTurnGiveUp  = 5 * time.Minute
	defaultTurnAttempt = 30 * time.Second
	firstTurnRetry     = 50 * time.Millisecond
	maxTurnRetry       = 5 * time.Second
)

// TurnWriterConfig is what a TurnWriter needs.
type TurnWriterConfig struct {
	Store ThreadStore
	Log   *slog.Logger
	// Registerer receives the writer's metrics; nil registers none.
	Registerer prometheus.Registerer
	// QueueSize bounds the turns waiting to be written (0: DefaultTurnQueue);
	// Record waits for room when it is full rather than drop one.
	QueueSize int
	// MaxBatch bounds the turns written in one transaction (0: DefaultTurnBatch).
	MaxBatch int
	// Gather is how long a write waits for more turns to join it while
	// answers come in bursts (0: DefaultTurnGather; negative: never).
	Gather time.Duration
	// Wait is how long Record waits for its turn to be stored before it
	// leaves it queued (0: DefaultTurnWait).
	Wait time.Duration
	// GiveUp is how long a turn that keeps failing is retried before it is
	// counted as lost (0: DefaultTurnGiveUp).
	GiveUp time.Duration
	// Attempt bounds one write (0: 30s); one that takes longer is retried.
	Attempt time.Duration
}

// TurnWriter stores turns through one goroutine, in the order they were
// handed over, several per transaction: a burst of answers becomes a few
// commits instead of one per turn fighting for the database's writer. A
// write that fails or times out is retried, never dropped; a turn that
// still cannot be stored after GiveUp, or that the store refuses (its
// thread is gone), is logged and counted in
// docsmith_assistant_turns_lost_total. Close flushes the queue.
type TurnWriter struct {
	store        ThreadStore
	log          *slog.Logger
	maxBatch     int
	gatherWindow time.Duration
	wait         time.Duration
	giveUp       time.Duration
	attempt      time.Duration

	mu     sync.RWMutex // closed and sends on queue
	closed bool
	queue  chan *pendingTurn

	abort    context.Context // ends retries once Close's deadline has passed
	abortNow context.CancelFunc
	done     chan struct{}

	queued  prometheus.Gauge
	stored  prometheus.Counter
	retries prometheus.Counter
	lost    prometheus.Counter
}

type pendingTurn struct {
	turn  Turn
	since time.Time
	done  chan error
}

// NewTurnWriter returns a running TurnWriter; Close stops it.
func NewTurnWriter(cfg TurnWriterConfig) *TurnWriter {
	w := &TurnWriter{
		store:        cfg.Store,
		log:          cfg.Log,
		maxBatch:     cmpOr(cfg.MaxBatch, DefaultTurnBatch),
		gatherWindow: cfg.Gather,
		wait:         cmpOr(cfg.Wait, DefaultTurnWait),
		giveUp:       cmpOr(cfg.GiveUp, DefaultTurnGiveUp),
		attempt:      cmpOr(cfg.Attempt, defaultTurnAttempt),
		queue:        make(chan *pendingTurn, cmpOr(cfg.QueueSize, DefaultTurnQueue)),
		done:         make(chan struct{}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "docsmith_assistant_turns_queued", Help: "Assistant turns answered and waiting to be stored.",
		}),
		stored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "docsmith_assistant_turns_stored_total", Help: "Assistant turns stored in their threads.",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "docsmith_assistant_turn_write_retries_total", Help: "Writes of assistant turns that failed and were retried.",
		}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "docsmith_assistant_turns_lost_total", Help: "Assistant turns that could not be stored (each is in the log).",
		}),
	}
	switch {
	case w.gatherWindow == 0:
		w.gatherWindow = DefaultTurnGather
	case w.gatherWindow < 0:
		w.gatherWindow = 0
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(w.queued, w.stored, w.retries, w.lost)
	}
	w.abort, w.abortNow = context.WithCancel(context.Background())
	go w.run()
	return w
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Record hands t to the writer and waits until it is stored, until the
// store refuses it, or for the configured wait at most (then it returns
// ErrTurnQueued and the turn stays queued). While the queue is full it
// waits for room: a turn is never dropped to make way.
func (w *TurnWriter) Record(ctx context.Context, t Turn) error {
	p := &pendingTurn{turn: t, since: time.Now(), done: make(chan error, 1)}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		w.lose([]*pendingTurn{p}, ErrWriterClosed)
		return ErrWriterClosed
	}
	w.queued.Inc()
	w.queue <- p // Close waits for this send: the loop keeps draining
	w.mu.RUnlock()

	timer := time.NewTimer(w.wait)
	defer timer.Stop()
	select {
	case err := <-p.done:
		return err
	case <-timer.C:
		return ErrTurnQueued
	case <-ctx.Done():
		return ErrTurnQueued
	}
}

// Close stops taking turns and writes those still queued. Once ctx ends,
// a turn whose write keeps failing is no longer retried and counts as
// lost. Close returns when the queue is empty.
func (w *TurnWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
	}
	w.abortNow()
	<-w.done
	return fmt.Errorf("flush assistant turns: %w", ctx.Err())
}

// run writes the queue in order, each time taking what has gathered (up to
// a batch) into one transaction.
//
// While answers come in bursts (the last write held more than one turn, or
// another turn is already waiting), a write first waits up to the gather
// window for more turns, as PostgreSQL's commit_delay does. Most of a
// commit's cost does not depend on how many turns it holds (SQLite writes
// each page it touched to its log once; PostgreSQL flushes its log once),
// so ten turns in one commit cost little more than one. A lone turn on a
// quiet server is written at once.
func (w *TurnWriter) run() {
	defer close(w.done)
	defer w.abortNow()
	window := time.NewTimer(time.Hour)
	window.Stop()
	burst := false
	for p := range w.queue {
		batch := w.gather([]*pendingTurn{p}, nil)
		if w.gatherWindow > 0 && (burst || len(batch) > 1) && len(batch) < w.maxBatch {
			window.Reset(w.gatherWindow)
			batch = w.gather(batch, window.C)
			window.Stop() // since Go 1.23 a stopped timer's channel holds no stale tick
		}
		burst = len(batch) > 1
		w.write(batch)
	}
}

// gather adds queued turns to batch until it is full or the queue closes.
// With a nil window it takes only the turns already waiting; otherwise it
// waits for more until the window ends.
func (w *TurnWriter) gather(batch []*pendingTurn, window <-chan time.Time) []*pendingTurn {
	for len(batch) < w.maxBatch {
		var q *pendingTurn
		ok := true
		if window == nil {
			select {
			case q, ok = <-w.queue:
			default:
				return batch
			}
		} else {
			select {
			case q, ok = <-w.queue:
			case <-window:
				return batch
			}
		}
		if !ok {
			return batch
		}
		batch = append(batch, q)
	}
	return batch
}

// write stores a batch, retrying failures with a growing delay. A batch
// that fails is split, so that one turn the store refuses does not hold
// back the others.
func (w *TurnWriter) write(batch []*pendingTurn) {
	delay := firstTurnRetry
	for {
		err := w.tryWrite(batch)
		if err == nil {
			w.finish(batch, nil)
			return
		}
		if len(batch) > 1 {
			for _, p := range batch {
				w.write([]*pendingTurn{p})
			}
			return
		}
		p := batch[0]
		if refused(err) {
			w.lose(batch, err)
			return
		}
		if time.Since(p.since) > w.giveUp || w.abort.Err() != nil {
			w.lose(batch, err)
			return
		}
		w.retries.Inc()
		w.log.Warn("retrying the write of an assistant turn", "thread", p.turn.ThreadID, "message", p.turn.MessageID, "retry_in", delay, "err", err)
		select {
		case <-time.After(delay):
		case <-w.abort.Done():
		}
		delay = min(2*delay, maxTurnRetry)
	}
}

func (w *TurnWriter) tryWrite(batch []*pendingTurn) error {
	ctx, cancel := context.WithTimeout(context.Background(), w.attempt)
	defer cancel()
	turns := make([]Turn, len(batch))
	for i, p := range batch {
		turns[i] = p.turn
	}
	_, err := w.store.AddTurns(ctx, turns)
	return err
}

// refused reports whether the store turned the turn down for what it is
// (its thread is gone, say), so that writing it again cannot succeed.
func refused(err error) bool {
	switch apperr.CodeOf(err) {
	case apperr.NotFound, apperr.Invalid, apperr.Conflict:
		return true
	}
	return false
}

func (w *TurnWriter) finish(batch []*pendingTurn, err error) {
	for _, p := range batch {
		w.queued.Dec()
		p.done <- err
	}
	if err == nil {
		w.stored.Add(float64(len(batch)))
	}
}

// lose gives up on turns: each is logged with what identifies it and
// counted, so an operator sees that history is missing and why.
func (w *TurnWriter) lose(batch []*pendingTurn, err error) {
	for _, p := range batch {
		w.log.Error("assistant turn lost: it could not be stored", "thread", p.turn.ThreadID, "message", p.turn.MessageID,
			"status", p.turn.Status, "waited", time.Since(p.since).Round(time.Millisecond), "err", err)
	}
	w.lost.Add(float64(len(batch)))
	if errors.Is(err, ErrWriterClosed) {
		return // it was never queued
	}
	w.finish(batch, err)
}

// directRecorder stores each turn at once, waiting as long as it takes:
// the recorder of a Service built without a TurnWriter.
type directRecorder struct{ store ThreadStore }

func (d directRecorder) Record(ctx context.Context, t Turn) error {
	_, err := d.store.AddTurn(context.WithoutCancel(ctx), t)
	return err
}
