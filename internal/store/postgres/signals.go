package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// maxPending bounds the signals waiting to be sent while the database is
// slow or away; beyond it they are dropped, and polling covers for them.
const maxPending = 4096

// relayGap is the least time between two sends of a busy process: the
// signals raised while one is sent, or within relayGap of it, go together
// in the next, one transaction of notifications. Each send wakes every
// replica's listening connection, and a busy API raises a signal for each
// job it creates; a quiet process sends at once.
const relayGap = 10 * time.Millisecond

// Signals carries an agentjob.Hub's signals between the processes that
// share this database, over LISTEN/NOTIFY: a turn queued through one API
// replica wakes the workers of another process, a cancel reaches the worker
// running the turn, and an event written by a worker wakes the streams that
// follow its job elsewhere. Notifications are hints, as the hub's signals
// are: workers and streams still poll, so a lost one only costs latency.
type Signals struct {
	store  *Store
	hub    *agentjob.Hub
	log    *slog.Logger
	origin string // tells this process's own notifications apart

	mu      sync.Mutex
	pending map[agentjob.Signal]struct{}
	order   []agentjob.Signal
	kick    chan struct{}

	listening chan struct{}
	once      sync.Once
}

// payload is a notification's body.
type payload struct {
	Origin string              `json:"o"`
	Kind   agentjob.SignalKind `json:"k"`
	JobID  string              `json:"j,omitempty"`
}

// NewSignals returns a bridge between hub and the other processes on the
// store's database. From now on it takes the hub's signals; Run sends them
// and delivers the other processes' signals to the hub.
func (s *Store) NewSignals(hub *agentjob.Hub, log *slog.Logger) *Signals {
	var b [8]byte
	_, _ = rand.Read(b[:])
	g := &Signals{
		store: s, hub: hub, log: log, origin: hex.EncodeToString(b[:]),
		pending: make(map[agentjob.Signal]struct{}), kick: make(chan struct{}, 1),
		listening: make(chan struct{}),
	}
	hub.Relay(g.publish)
	return g
}

// Listening is closed once the bridge first listens for other processes.
func (g *Signals) Listening() <-chan struct{} { return g.listening }

// Run relays the hub's signals to other processes and theirs to the hub
// until ctx ends. It reconnects after losing the database.
func (g *Signals) Run(ctx context.Context) {
	defer g.hub.Relay(nil)
	var wg sync.WaitGroup
	wg.Go(func() { g.send(ctx) })
	g.listen(ctx)
	wg.Wait()
}

// publish queues a local signal for the other processes; it never blocks.
func (g *Signals) publish(s agentjob.Signal) {
	g.mu.Lock()
	if _, dup := g.pending[s]; !dup && len(g.pending) < maxPending {
		g.pending[s] = struct{}{}
		g.order = append(g.order, s)
	}
	g.mu.Unlock()
	select {
	case g.kick <- struct{}{}:
	default:
	}
}

func (g *Signals) send(ctx context.Context) {
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.kick:
		}
		select {
		case <-ctx.Done():
			return
		case <-gap.C:
		}
		gap.Reset(relayGap)
		g.mu.Lock()
		batch := g.order
		g.order = nil
		g.pending = make(map[agentjob.Signal]struct{})
		g.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		b := &pgx.Batch{}
		for _, s := range batch {
			body, err := json.Marshal(payload{Origin: g.origin, Kind: s.Kind, JobID: s.JobID})
			if err != nil {
				continue
			}
			b.Queue(`SELECT pg_notify($1, $2)`, g.store.channel, string(body))
		}
		if err := g.store.pool.SendBatch(ctx, b).Close(); err != nil && ctx.Err() == nil {
			g.log.Warn("notify other processes", "signals", len(batch), "err", err)
		}
	}
}

func (g *Signals) listen(ctx context.Context) {
	g.store.listen(ctx, g.store.channel, func() {
		g.once.Do(func() { close(g.listening) })
		// Anything sent while we were not listening is lost: wake the
		// workers, who will look at the queue. Streams poll on their own.
		g.hub.Deliver(agentjob.Signal{Kind: agentjob.SignalTurnQueued})
	}, func(text string) {
		var p payload
		if err := json.Unmarshal([]byte(text), &p); err != nil {
			g.log.Warn("ignoring a malformed signal", "channel", g.store.channel, "err", err)
			return
		}
		if p.Origin == g.origin {
			return
		}
		g.hub.Deliver(agentjob.Signal{Kind: p.Kind, JobID: p.JobID})
	})
}
