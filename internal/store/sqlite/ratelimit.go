package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/ratelimit"
)

// Take checks every rule's sliding window and records a hit in each if all
// have room. Hits that left their window are deleted on the way.
func (s *Store) Take(ctx context.Context, now time.Time, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	usage := make([]ratelimit.Usage, len(rules))
	allowed := true
	err := s.writeTx(ctx, func(tx *sql.Tx) error {
		allowed = true
		nowUS := toMicros(now)
		for i, r := range rules {
			start := nowUS - r.Window.Microseconds()
			if _, err := tx.ExecContext(ctx, `DELETE FROM rate_hits WHERE key = ? AND at <= ?`, r.Key, start); err != nil {
				return fmt.Errorf("expire hits of %s: %w", r.Key, err)
			}
			var count int
			var oldest sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), MIN(at) FROM rate_hits WHERE key = ?`, r.Key).Scan(&count, &oldest); err != nil {
				return fmt.Errorf("count hits of %s: %w", r.Key, err)
			}
			usage[i] = ratelimit.Usage{Rule: r, Used: count, ResetIn: r.Window}
			if oldest.Valid {
				usage[i].ResetIn = time.Duration(oldest.Int64-start) * time.Microsecond
			}
			if count >= r.Limit {
				allowed = false
			}
		}
		if !allowed {
			return nil
		}
		for i, r := range rules {
			if _, err := tx.ExecContext(ctx, `INSERT INTO rate_hits (key, at) VALUES (?, ?)`, r.Key, nowUS); err != nil {
				return fmt.Errorf("record hit of %s: %w", r.Key, err)
			}
			usage[i].Used++
		}
		return nil
	})
	return allowed, usage, err
}
