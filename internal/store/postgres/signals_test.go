package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// replica is one process's view: its own pool, hub and bridge.
type replica struct {
	hub      *agentjob.Hub
	canceled chan string
}

func startReplica(t *testing.T, url string) *replica {
	t.Helper()
	s := open(t, url)
	r := &replica{hub: agentjob.NewHub(), canceled: make(chan string, 16)}
	r.hub.OnCancel(func(jobID string) { r.canceled <- jobID })
	sig := s.NewSignals(r.hub, slog.New(slog.DiscardHandler))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { sig.Run(ctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
	select {
	case <-sig.Listening():
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge did not start listening")
	}
	// Listening wakes the local workers once; drain that.
	select {
	case <-r.hub.Wakeups():
	case <-time.After(time.Second):
	}
	return r
}

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not arrive", what)
	}
	var zero T
	return zero
}

func nothing[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s: got %v, want nothing", what, v)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestSignalsAcrossProcesses: what one process's hub raises reaches the
// hubs of the others on the same schema, and only theirs.
func TestSignalsAcrossProcesses(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	a, b := startReplica(t, url), startReplica(t, url)
	other := startReplica(t, storetest.PostgresURL(t)) // another deployment

	changed, stop := b.hub.Subscribe("job-1")
	defer stop()
	a.hub.JobChanged("job-1")
	within(t, changed, "job-1 changed, on b")

	a.hub.TurnQueued()
	within(t, b.hub.Wakeups(), "turn queued, on b")

	a.hub.RequestCancel("job-2")
	if got := within(t, b.canceled, "cancel, on b"); got != "job-2" {
		t.Fatalf("b heard a cancel of %q, want job-2", got)
	}
	// a heard its own cancel once, locally, and not again through the database.
	if got := within(t, a.canceled, "cancel, on a"); got != "job-2" {
		t.Fatalf("a heard a cancel of %q, want job-2", got)
	}
	nothing(t, a.canceled, "a's own cancel echoed back")
	nothing(t, other.canceled, "a cancel on another schema")
	nothing(t, other.hub.Wakeups(), "a wake-up on another schema")

	// Delivered signals are not relayed again: b does not bounce a's
	// signals back to a.
	b.hub.Deliver(agentjob.Signal{Kind: agentjob.SignalCancel, JobID: "job-3"})
	within(t, b.canceled, "a delivered cancel, on b")
	nothing(t, a.canceled, "a delivered signal relayed")
}

// TestSignalsBurstArrives: signals raised faster than they are sent go
// together, and none is lost on the way.
func TestSignalsBurstArrives(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	a, b := startReplica(t, url), startReplica(t, url)
	const jobs = 200
	changed := make([]<-chan struct{}, jobs)
	for i := range jobs {
		ch, stop := b.hub.Subscribe(fmt.Sprintf("job-%d", i))
		defer stop()
		changed[i] = ch
	}
	for i := range jobs {
		a.hub.JobChanged(fmt.Sprintf("job-%d", i))
	}
	for i, ch := range changed {
		within(t, ch, fmt.Sprintf("job-%d changed, on b", i))
	}
}
