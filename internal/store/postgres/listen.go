package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// listen holds a connection of its own (LISTEN is per session) listening on
// channel, and calls heard with each notification's payload until ctx ends.
// It connects again after losing the database, with a growing pause, and
// calls connected after each connection: what was sent meanwhile is lost.
// what names the listener in the log.
func (s *Store) listen(ctx context.Context, channel, what string, connected func(), heard func(payload string)) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, channel, connected, heard)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("listening failed; retrying", "for", what, "in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, channel string, connected func(), heard func(string)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	connected()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		heard(n.Payload)
	}
}
