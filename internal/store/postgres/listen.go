package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// A process hears the notifications of the others on one connection of its
// own (LISTEN is per session), whatever it listens for: other processes'
// signals (Signals), index changes (WatchSearch) and tenant changes
// (WatchTenants). PostgreSQL wakes every listening session of the database
// at each NOTIFY, whatever its channel, so each listening connection of
// each replica costs the database a wake-up per notification of any
// replica; one connection a process keeps that to one.

// listener is a Store's listening connection, shared by its subscriptions.
// It runs while at least one subscription does.
type listener struct {
	mu      sync.Mutex
	subs    map[*subscription]struct{}
	current *listenRun // nil when no subscription runs
}

// subscription is one listen call.
type subscription struct {
	channel   string
	connected func()
	heard     func(payload string)
}

// listenRun is one run of the listening connection, from its first
// subscription to the end of its last.
type listenRun struct {
	stop context.CancelFunc
	done chan struct{} // closed when the run's connection is closed
	live bool          // listening now (under listener.mu)
}

// channels are every channel a process of this schema listens on. The
// schema's own channel comes last, so the connection's last statement
// (pg_stat_activity.query) names the schema it listens for.
func (s *Store) channels() []string {
	return []string{tenantsChannel, s.searchChannel(), s.channel}
}

// listen calls heard with the payload of each notification on channel
// (one of s.channels) until ctx ends, and connected once listening begins
// and after each reconnection: what was sent while not listening is lost.
// connected may run while heard does. It returns once it calls neither.
func (s *Store) listen(ctx context.Context, channel string, connected func(), heard func(payload string)) {
	l := &s.listener
	sub := &subscription{channel: channel, connected: connected, heard: heard}
	l.mu.Lock()
	if l.subs == nil {
		l.subs = make(map[*subscription]struct{})
	}
	l.subs[sub] = struct{}{}
	if l.current == nil {
		runCtx, stop := context.WithCancel(context.Background())
		run := &listenRun{stop: stop, done: make(chan struct{})}
		l.current = run
		go s.runListener(runCtx, run)
	}
	live := l.current.live
	l.mu.Unlock()
	if live {
		// The run called the subscriptions it had when it began listening;
		// this one came later.
		connected()
	}

	<-ctx.Done()
	l.mu.Lock()
	delete(l.subs, sub)
	var last *listenRun
	if len(l.subs) == 0 {
		last, l.current = l.current, nil
	}
	l.mu.Unlock()
	if last != nil {
		last.stop()
		<-last.done
	}
}

// runListener keeps run's connection listening until ctx ends, connecting
// again after losing the database, with a growing pause.
func (s *Store) runListener(ctx context.Context, run *listenRun) {
	defer close(run.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, run)
		s.listener.mu.Lock()
		run.live = false
		s.listener.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("listening for other processes' notifications failed; retrying", "in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// listenOnce connects, listens on every channel, and hands notifications
// to the subscriptions until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, run *listenRun) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	for _, channel := range s.channels() {
		if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
			return err
		}
	}
	s.listener.mu.Lock()
	run.live = true
	subs := s.subscriptions(func(*subscription) bool { return true })
	s.listener.mu.Unlock()
	for _, sub := range subs {
		sub.connected()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.listener.mu.Lock()
		subs := s.subscriptions(func(sub *subscription) bool { return sub.channel == n.Channel })
		s.listener.mu.Unlock()
		for _, sub := range subs {
			sub.heard(n.Payload)
		}
	}
}

// subscriptions returns the subscriptions that match. The caller holds
// s.listener.mu.
func (s *Store) subscriptions(match func(*subscription) bool) []*subscription {
	var out []*subscription
	for sub := range s.listener.subs {
		if match(sub) {
			out = append(out, sub)
		}
	}
	return out
}
