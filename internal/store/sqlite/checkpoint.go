package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Checkpoints copy the write-ahead log back into the database file. SQLite
// runs one inside the commit that takes the log past 1,000 pages: that
// commit, and every write queued behind it on the single writer, then waits
// for the copy and its fsyncs. The writer's connection has automatic
// checkpoints off, and a checkpointer runs them beside it on a connection
// of its own: a PASSIVE checkpoint takes no writer lock, so commits go on
// while it copies, and a page written many times between two checkpoints is
// copied once.
const (
	// checkpointEvery is how often the checkpointer copies the log. At the
	// store's highest write rates the log grows by a few MiB in that time.
	checkpointEvery = 200 * time.Millisecond
	// walSizeLimit is what the log file is cut back to when it restarts
	// after a burst made it large.
	walSizeLimit = 64 << 20
)

// checkpointer runs PASSIVE checkpoints every interval until closed.
type checkpointer struct {
	db    *sql.DB
	every time.Duration
	stop  chan struct{}
	done  chan struct{}
}

func newCheckpointer(db *sql.DB, every time.Duration) *checkpointer {
	c := &checkpointer{db: db, every: every, stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *checkpointer) loop() {
	defer close(c.done)
	tick := time.NewTicker(c.every)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			// A checkpoint that fails (a reader holds an old snapshot, say)
			// leaves the log as it is; the next one copies it.
			_ = c.checkpoint(context.Background(), "PASSIVE")
		}
	}
}

// checkpoint runs one checkpoint of mode.
func (c *checkpointer) checkpoint(ctx context.Context, mode string) error {
	var busy, logPages, copied int
	if err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &logPages, &copied); err != nil {
		return fmt.Errorf("checkpoint the write-ahead log (%s): %w", mode, err)
	}
	return nil
}

// close stops the loop and closes the connection. The last connection to
// close checkpoints what is left of the log.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.db.Close()
}
