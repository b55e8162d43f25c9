package postgres

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// heardOn is one subscription of TestOneListeningConnection: each time it
// was told it listens (again), and what it heard.
type heardOn struct {
	channel   string
	connected chan struct{}
	heard     chan string
}

// TestOneListeningConnection: the signals, index changes and tenant
// changes of a process are heard on one connection, each subscription
// hearing its own channel only; after that connection is lost, a new one
// listens again and tells every subscription so; and it is closed when
// the last subscription ends.
func TestOneListeningConnection(t *testing.T) {
	t.Parallel()
	s := openFresh(t)

	// The sessions whose last statement listens on one of the schema's
	// own channels: each listening connection is one of them.
	listening := func() int {
		t.Helper()
		var n int
		err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE query = ANY($1)`,
			[]string{`LISTEN ` + pgx.Identifier{s.channel}.Sanitize(), `LISTEN ` + pgx.Identifier{s.searchChannel()}.Sanitize()}).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5s", what)
			}
		}
	}
	within := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: not within 5s", what)
		}
	}

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var subs []*heardOn
	for _, channel := range s.channels() {
		sub := &heardOn{channel: channel, connected: make(chan struct{}, 4), heard: make(chan string, 4)}
		subs = append(subs, sub)
		wg.Go(func() {
			s.listen(ctx, channel, func() { sub.connected <- struct{}{} }, func(p string) { sub.heard <- p })
		})
	}
	end := sync.OnceFunc(func() { stop(); wg.Wait() })
	t.Cleanup(end)
	for _, sub := range subs {
		within(sub.connected, "listening on "+sub.channel)
	}
	if n := listening(); n != 1 {
		t.Fatalf("%d connections listen for the schema, want 1", n)
	}

	notifyEach := func(round string) {
		t.Helper()
		for _, sub := range subs {
			if _, err := s.pool.Exec(t.Context(), `SELECT pg_notify($1, $2)`, sub.channel, round+" "+sub.channel); err != nil {
				t.Fatal(err)
			}
		}
		for _, sub := range subs {
			hear(t, sub, round+" "+sub.channel)
		}
	}
	notifyEach("first")

	// The database ends the listening session: a new one listens again,
	// and every subscription hears that it may have missed something.
	if _, err := s.pool.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1`,
		`LISTEN `+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		within(sub.connected, "listening again on "+sub.channel)
	}
	notifyEach("second")
	if n := listening(); n != 1 {
		t.Fatalf("%d connections listen for the schema after the reconnection, want 1", n)
	}

	end()
	eventually("the listening connection closed after the last subscription", func() bool { return listening() == 0 })
}

// hear waits for want on sub's channel. The tenants channel is every
// schema's, so other tests' notices may come first there; on the others,
// anything else is a mix-up.
func hear(t *testing.T, sub *heardOn, want string) {
	t.Helper()
	for {
		select {
		case p := <-sub.heard:
			if p == want {
				return
			}
			if sub.channel != tenantsChannel {
				t.Fatalf("%s heard %q, want %q", sub.channel, p, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: %q not heard", sub.channel, want)
		}
	}
}
