package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/ratelimit"
)

// Take checks every rule's sliding window and records a hit in each if all
// have room. Hits that left their window are deleted on the way: those of
// the rules' keys, and up to ratelimit.SweepBatch of any other key.
func (s *Store) Take(ctx context.Context, now time.Time, token string, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	var allowed bool
	var usage []ratelimit.Usage
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		allowed, usage, err = take(ctx, tx, now, token, rules)
		return err
	})
	return allowed, usage, err
}

// check makes c (when not nil) in tx, and reports ratelimit.ErrRefused when
// a limit refuses it: its caller then returns that error, so that nothing
// of its write is stored (the writer rolls back to its savepoint).
func check(ctx context.Context, tx *wtx, c *ratelimit.Check) error {
	if c == nil {
		return nil
	}
	var err error
	c.Allowed, c.Usage, err = take(ctx, tx, c.Now, c.Token, c.Rules)
	if err != nil {
		return err
	}
	if !c.Allowed {
		return ratelimit.ErrRefused
	}
	return nil
}

// take is Take in the transaction tx.
func take(ctx context.Context, tx *wtx, now time.Time, token string, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	usage := make([]ratelimit.Usage, len(rules))
	taken := make([]bool, len(rules))
	allowed := true
	nowUS := toMicros(now)
	for i, r := range rules {
		start := nowUS - r.Window.Microseconds()
		if _, err := tx.ExecContext(ctx, `DELETE FROM rate_hits WHERE key = ? AND at <= ?`, r.Key, start); err != nil {
			return false, nil, fmt.Errorf("expire hits of %s: %w", r.Key, err)
		}
		// The count is kept by triggers (migration 0012); MIN alone reads
		// the first entry of the (key, at) index.
		var count int
		var oldest sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT hits FROM rate_counts WHERE key = ?1), 0), (SELECT MIN(at) FROM rate_hits WHERE key = ?1)`, r.Key).Scan(&count, &oldest)
		if err != nil {
			return false, nil, fmt.Errorf("count hits of %s: %w", r.Key, err)
		}
		usage[i] = ratelimit.Usage{Rule: r, Used: count, ResetIn: r.Window}
		if oldest.Valid {
			usage[i].ResetIn = time.Duration(oldest.Int64-start) * time.Microsecond
		}
		if token != "" {
			err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM rate_hits WHERE key = ? AND token = ?)`, r.Key, token).Scan(&taken[i])
			if err != nil {
				return false, nil, fmt.Errorf("look up the request's hit of %s: %w", r.Key, err)
			}
		}
		if !taken[i] && count >= r.Limit {
			allowed = false
		}
	}
	if err := sweepRateHits(ctx, tx, nowUS); err != nil {
		return false, nil, err
	}
	if !allowed {
		return false, usage, nil
	}
	for i, r := range rules {
		if taken[i] {
			continue
		}
		expires := nowUS + r.Window.Microseconds()
		if _, err := tx.ExecContext(ctx, `INSERT INTO rate_hits (key, at, expires, token) VALUES (?, ?, ?, NULLIF(?, ''))`, r.Key, nowUS, expires, token); err != nil {
			return false, nil, fmt.Errorf("record hit of %s: %w", r.Key, err)
		}
		usage[i].Used++
	}
	return true, usage, nil
}

// sweepRateHits deletes a batch of hits, of any key, that left their window.
func sweepRateHits(ctx context.Context, tx *wtx, nowUS int64) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM rate_hits WHERE rowid IN (SELECT rowid FROM rate_hits WHERE expires <= ? LIMIT ?)`, nowUS, ratelimit.SweepBatch)
	if err != nil {
		return fmt.Errorf("sweep expired rate-limit hits: %w", err)
	}
	return nil
}

// RateLimitEntries is the number of rate-limit hits the store holds.
func (s *Store) RateLimitEntries(ctx context.Context) (int, error) {
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM rate_hits`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rate-limit hits: %w", err)
	}
	return n, nil
}
