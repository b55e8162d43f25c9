package assistant_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// gatedStore is a real store whose batch writes can be held back, made to
// fail, and counted.
type gatedStore struct {
	*sqlite.Store
	mu      sync.Mutex
	gate    chan struct{} // while open (non-nil), writes wait for it to close
	failN   int           // the next failN writes fail as a timed-out write would
	batches []int
}

func (s *gatedStore) AddTurns(ctx context.Context, turns []assistant.Turn) ([]int, error) {
	s.mu.Lock()
	gate := s.gate
	fail := s.failN > 0
	if fail {
		s.failN--
	}
	s.batches = append(s.batches, len(turns))
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if fail {
		return nil, fmt.Errorf("add turns: %w", context.DeadlineExceeded)
	}
	return s.Store.AddTurns(ctx, turns)
}

type writerEnv struct {
	store *gatedStore
	reg   *prometheus.Registry
	w     *assistant.TurnWriter
}

func newWriterEnv(t *testing.T, cfg assistant.TurnWriterConfig) *writerEnv {
	t.Helper()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	must(t, err)
	t.Cleanup(func() { _ = store.Close() })
	now := time.Now().UTC()
	for _, id := range []string{"thr_a", "thr_b"} {
		must(t, store.CreateThread(t.Context(), assistant.Thread{ID: id, Domain: "d", OrgID: "o", FP: "anonymous", CreatedAt: now, UpdatedAt: now}))
	}
	e := &writerEnv{store: &gatedStore{Store: store}, reg: prometheus.NewRegistry()}
	cfg.Store, cfg.Registerer = e.store, e.reg
	e.w = assistant.NewTurnWriter(cfg)
	t.Cleanup(func() { _ = e.w.Close(context.Background()) })
	return e
}

func (e *writerEnv) metric(t *testing.T, name string) float64 {
	t.Helper()
	families, err := e.reg.Gather()
	must(t, err)
	for _, f := range families {
		if f.GetName() == name {
			m := f.GetMetric()[0]
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func turn(thread, msg string) assistant.Turn {
	return assistant.Turn{ThreadID: thread, MessageID: msg, FP: "anonymous", Question: "q " + msg, Answer: "a", Model: "builtin",
		Status: assistant.TurnAnswered, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
}

// TestTurnWriterRetriesTimedOutWrites: a write that times out is retried
// until it lands, never dropped; the retries are counted.
func TestTurnWriterRetriesTimedOutWrites(t *testing.T) {
	t.Parallel()
	e := newWriterEnv(t, assistant.TurnWriterConfig{})
	e.store.failN = 3
	if err := e.w.Record(t.Context(), turn("thr_a", "msg_1")); err != nil {
		t.Fatalf("Record = %v, want the turn stored", err)
	}
	turns, err := e.store.RecentTurns(t.Context(), "thr_a", 10)
	must(t, err)
	if len(turns) != 1 || turns[0].MessageID != "msg_1" {
		t.Fatalf("stored turns = %+v", turns)
	}
	if got := e.metric(t, "docsmith_assistant_turn_write_retries_total"); got != 3 {
		t.Errorf("retries = %v, want 3", got)
	}
	if got := e.metric(t, "docsmith_assistant_turns_lost_total"); got != 0 {
		t.Errorf("lost = %v, want 0", got)
	}
}

// TestTurnWriterFlushesInOrderOnClose: turns queued behind a slow write are
// written in the order they came, several per transaction, and Close
// writes all of them before it returns.
func TestTurnWriterFlushesInOrderOnClose(t *testing.T) {
	t.Parallel()
	e := newWriterEnv(t, assistant.TurnWriterConfig{Wait: time.Millisecond, MaxBatch: 8})
	e.store.gate = make(chan struct{})
	const n = 40
	for i := range n {
		thread := []string{"thr_a", "thr_b"}[i%2]
		if err := e.w.Record(t.Context(), turn(thread, fmt.Sprintf("msg_%02d", i))); !errors.Is(err, assistant.ErrTurnQueued) {
			t.Fatalf("Record %d = %v, want it left queued", i, err)
		}
	}
	if got := e.metric(t, "docsmith_assistant_turns_queued"); got != n {
		t.Errorf("queued = %v, want %d", got, n)
	}
	closed := make(chan error, 1)
	go func() { closed <- e.w.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a write was still held", err)
	case <-time.After(50 * time.Millisecond):
	}
	e.store.mu.Lock()
	close(e.store.gate)
	e.store.gate = nil
	e.store.mu.Unlock()
	if err := <-closed; err != nil {
		t.Fatalf("Close = %v", err)
	}
	for i, thread := range []string{"thr_a", "thr_b"} {
		turns, err := e.store.RecentTurns(t.Context(), thread, n)
		must(t, err)
		if len(turns) != n/2 {
			t.Fatalf("%s has %d turns, want %d", thread, len(turns), n/2)
		}
		for j, tu := range turns {
			if want := fmt.Sprintf("msg_%02d", 2*j+i); tu.MessageID != want || tu.Seq != j+1 {
				t.Errorf("%s turn %d = %s (seq %d), want %s (seq %d)", thread, j, tu.MessageID, tu.Seq, want, j+1)
			}
		}
	}
	if got := len(e.store.batches); got >= n {
		t.Errorf("%d transactions for %d turns; want them batched", got, n)
	}
	if got := e.metric(t, "docsmith_assistant_turns_stored_total"); got != n {
		t.Errorf("stored = %v, want %d", got, n)
	}
	if err := e.w.Record(t.Context(), turn("thr_a", "late")); !errors.Is(err, assistant.ErrWriterClosed) {
		t.Errorf("Record after Close = %v, want ErrWriterClosed", err)
	}
	if got := e.metric(t, "docsmith_assistant_turns_lost_total"); got != 1 {
		t.Errorf("lost = %v, want the late turn counted", got)
	}
}

// TestTurnWriterCountsRefusedTurns: a turn the store refuses (its thread is
// gone) is counted as lost without holding back the turns batched with it.
func TestTurnWriterCountsRefusedTurns(t *testing.T) {
	t.Parallel()
	e := newWriterEnv(t, assistant.TurnWriterConfig{Wait: time.Millisecond})
	e.store.gate = make(chan struct{})
	for _, tu := range []assistant.Turn{turn("thr_a", "first"), turn("thr_a", "ok"), turn("thr_gone", "bad"), turn("thr_b", "ok2")} {
		_ = e.w.Record(t.Context(), tu)
	}
	e.store.mu.Lock()
	close(e.store.gate)
	e.store.gate = nil
	e.store.mu.Unlock()
	must(t, e.w.Close(context.Background()))
	a, err := e.store.RecentTurns(t.Context(), "thr_a", 5)
	must(t, err)
	b, err := e.store.RecentTurns(t.Context(), "thr_b", 5)
	must(t, err)
	if len(a) != 2 || len(b) != 1 {
		t.Errorf("stored %d and %d turns, want 2 and 1", len(a), len(b))
	}
	if got := e.metric(t, "docsmith_assistant_turns_lost_total"); got != 1 {
		t.Errorf("lost = %v, want 1", got)
	}
}

// TestTurnWriterGivesUpAfterCloseDeadline: a write that keeps failing is
// retried until Close's deadline, then counted as lost; Close still returns.
func TestTurnWriterGivesUpAfterCloseDeadline(t *testing.T) {
	t.Parallel()
	e := newWriterEnv(t, assistant.TurnWriterConfig{Wait: time.Millisecond})
	e.store.failN = 1 << 30
	_ = e.w.Record(t.Context(), turn("thr_a", "doomed"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := e.w.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want its deadline reported", err)
	}
	if got := e.metric(t, "docsmith_assistant_turns_lost_total"); got != 1 {
		t.Errorf("lost = %v, want 1", got)
	}
	if got := e.metric(t, "docsmith_assistant_turn_write_retries_total"); got < 1 {
		t.Errorf("retries = %v, want some", got)
	}
}

// TestTurnWriterGathersABurst: a lone turn is written at once, however long
// the gather window; while turns come in a burst, a write waits in the
// window for more, so that they share one transaction.
func TestTurnWriterGathersABurst(t *testing.T) {
	t.Parallel()
	e := newWriterEnv(t, assistant.TurnWriterConfig{Gather: time.Hour, MaxBatch: 4, Wait: time.Minute})
	gate := make(chan struct{})
	e.store.gate = gate
	recorded := make(chan error, 5)
	record := func(msg string) {
		go func() { recorded <- e.w.Record(context.Background(), turn("thr_a", msg)) }()
	}
	waitFor := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !done(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting until %s", what)
			}
		}
	}
	writes := func() []int {
		e.store.mu.Lock()
		defer e.store.mu.Unlock()
		return slices.Clone(e.store.batches)
	}

	record("msg_1") // alone: its write starts at once and is held at the gate
	waitFor("the first turn is being written", func() bool { return len(writes()) == 1 })
	record("msg_2")
	record("msg_3")
	waitFor("two turns wait behind it", func() bool { return e.metric(t, "docsmith_assistant_turns_queued") == 3 })
	e.store.mu.Lock()
	close(gate)
	e.store.gate = nil
	e.store.mu.Unlock()
	if err := <-recorded; err != nil {
		t.Fatalf("Record = %v", err)
	}
	// The two waiting turns make a burst: their write waits for more, and
	// the turns that come meanwhile join it.
	time.Sleep(20 * time.Millisecond)
	record("msg_4")
	record("msg_5")
	for range 4 {
		if err := <-recorded; err != nil {
			t.Fatalf("Record = %v", err)
		}
	}
	if got := writes(); !slices.Equal(got, []int{1, 4}) {
		t.Errorf("turns per write = %v, want [1 4]", got)
	}
	turns, err := e.store.RecentTurns(t.Context(), "thr_a", 10)
	must(t, err)
	var stored []string
	for _, tu := range turns {
		stored = append(stored, tu.MessageID)
	}
	slices.Sort(stored) // turns recorded at once go in either order
	if want := []string{"msg_1", "msg_2", "msg_3", "msg_4", "msg_5"}; !slices.Equal(stored, want) {
		t.Errorf("stored turns = %v, want %v", stored, want)
	}
}
