package agentjob

import "sync"

// Hub carries in-process signals: workers wake when a turn is queued, event
// streams wake when a job changes, and a running turn hears that it was
// canceled. Signals are hints: workers and streams also poll the store, so a
// change made by another process is seen too, only later.
type Hub struct {
	mu       sync.Mutex
	subs     map[string]map[chan struct{}]struct{}
	wake     chan struct{}
	onCancel []func(jobID string)
}

// NewHub returns an empty Hub.
func NewHub() *Hub {
	return &Hub{subs: make(map[string]map[chan struct{}]struct{}), wake: make(chan struct{}, 1)}
}

// TurnQueued wakes a worker.
func (h *Hub) TurnQueued() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Wakeups is where workers wait for TurnQueued.
func (h *Hub) Wakeups() <-chan struct{} { return h.wake }

// JobChanged wakes the job's event streams.
func (h *Hub) JobChanged(jobID string) {
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

// RequestCancel tells local workers to stop the job's running turn.
func (h *Hub) RequestCancel(jobID string) {
	h.mu.Lock()
	fs := append([]func(string){}, h.onCancel...)
	h.mu.Unlock()
	for _, f := range fs {
		f(jobID)
	}
}
