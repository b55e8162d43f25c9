package agentjob

import "sync"

// Hub carries in-process signals: workers wake when a turn is queued, event
// streams wake when a job changes, and a running turn hears that it was
// canceled. Signals are hints: workers and streams also poll the store, so a
// change made by another process is seen too, only later. A relay (see
// Relay) can carry them to other processes sooner.
type Hub struct {
	mu       sync.Mutex
	subs     map[string]map[chan struct{}]struct{}
	wake     chan struct{}
	onCancel []func(jobID string)
	relay    func(Signal)
}

// SignalKind names a hub signal.
type SignalKind string

// The signals a hub carries.
const (
	SignalTurnQueued SignalKind = "turn_queued"
	SignalJobChanged SignalKind = "job_changed"
	SignalCancel     SignalKind = "cancel"
)

// Signal is one hub signal, as a relay carries it between processes.
type Signal struct {
	Kind  SignalKind
	JobID string // empty for SignalTurnQueued
}

// NewHub returns an empty Hub.
func NewHub() *Hub {
	return &Hub{subs: make(map[string]map[chan struct{}]struct{}), wake: make(chan struct{}, 1)}
}

// Relay makes f hear every signal raised in this process, after local
// delivery, so it can pass them to other processes. f must not block.
func (h *Hub) Relay(f func(Signal)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.relay = f
}

// Deliver raises a signal that came from another process, in this process
// only: it is not relayed again.
func (h *Hub) Deliver(s Signal) {
	switch s.Kind {
	case SignalTurnQueued:
		h.turnQueued()
	case SignalJobChanged:
		h.jobChanged(s.JobID)
	case SignalCancel:
		h.requestCancel(s.JobID)
	}
}

func (h *Hub) send(s Signal) {
	h.mu.Lock()
	f := h.relay
	h.mu.Unlock()
	if f != nil {
		f(s)
	}
}

// TurnQueued wakes a worker.
func (h *Hub) TurnQueued() {
	h.turnQueued()
	h.send(Signal{Kind: SignalTurnQueued})
}

func (h *Hub) turnQueued() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Wakeups is where workers wait for TurnQueued.
func (h *Hub) Wakeups() <-chan struct{} { return h.wake }

// JobChanged wakes the job's event streams.
func (h *Hub) JobChanged(jobID string) {
	h.jobChanged(jobID)
	h.send(Signal{Kind: SignalJobChanged, JobID: jobID})
}

func (h *Hub) jobChanged(jobID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[jobID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Subscribe returns a channel that JobChanged signals, and a function to stop.
func (h *Hub) Subscribe(jobID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[jobID] == nil {
		h.subs[jobID] = make(map[chan struct{}]struct{})
	}
	h.subs[jobID][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[jobID], ch)
		if len(h.subs[jobID]) == 0 {
			delete(h.subs, jobID)
		}
	}
}

// OnCancel registers f to hear cancel requests.
func (h *Hub) OnCancel(f func(jobID string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.onCancel = append(h.onCancel, f)
}

// RequestCancel tells workers to stop the job's running turn: local ones
// at once, others through the relay.
func (h *Hub) RequestCancel(jobID string) {
	h.requestCancel(jobID)
	h.send(Signal{Kind: SignalCancel, JobID: jobID})
}

func (h *Hub) requestCancel(jobID string) {
	h.mu.Lock()
	fs := append([]func(string){}, h.onCancel...)
	h.mu.Unlock()
	for _, f := range fs {
		f(jobID)
	}
}
