package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/ratelimit"
)

// Take checks every rule's sliding window and records a hit in each if all
// have room, in one statement: the schema's rate_take function
// (migrations/0006_rate_sweep.sql) locks the rules' keys, so replicas
// checking the same key take turns and the count is exact, and deletes the
// hits that left their window on the way, of these keys and of any other.
func (s *Store) Take(ctx context.Context, now time.Time, token string, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	return take(ctx, s.pool, now, token, rules)
}

// check makes c (when not nil) in the transaction tx, and reports
// ratelimit.ErrRefused when a limit refuses it: its caller then returns
// that error, and the transaction, the request's write with it, rolls
// back. A request is so counted exactly when its write commits.
func check(ctx context.Context, tx pgx.Tx, c *ratelimit.Check) error {
	if c == nil {
		return nil
	}
	var err error
	if c.Allowed, c.Usage, err = take(ctx, tx, c.Now, c.Token, c.Rules); err != nil {
		return err
	}
	if !c.Allowed {
		return ratelimit.ErrRefused
	}
	return nil
}

// take is Take through q, a pool or a transaction.
func take(ctx context.Context, q querier, now time.Time, token string, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	keys := make([]string, len(rules))
	starts := make([]time.Time, len(rules))
	expiries := make([]time.Time, len(rules))
	limits := make([]int32, len(rules))
	for i, r := range rules {
		keys[i], starts[i], expiries[i], limits[i] = r.Key, now.Add(-r.Window), now.Add(r.Window), int32(min(r.Limit, 1<<31-1))
	}
	rows, err := q.Query(ctx, `SELECT used, oldest, allowed, taken FROM rate_take($1, $2, $3, $4, $5, $6, $7)`,
		keys, starts, limits, expiries, token, ratelimit.SweepBatch, now)
	if err != nil {
		return false, nil, fmt.Errorf("check rate limits: %w", err)
	}
	defer rows.Close()
	usage := make([]ratelimit.Usage, 0, len(rules))
	taken := make([]bool, 0, len(rules))
	allowed := true
	for rows.Next() {
		var used int
		var oldest *time.Time
		var done bool
		if err := rows.Scan(&used, &oldest, &allowed, &done); err != nil {
			return false, nil, fmt.Errorf("check rate limits: %w", err)
		}
		i := len(usage)
		if i >= len(rules) {
			return false, nil, fmt.Errorf("check rate limits: more results than the %d rules", len(rules))
		}
		u := ratelimit.Usage{Rule: rules[i], Used: used, ResetIn: rules[i].Window}
		if oldest != nil {
			u.ResetIn = oldest.Sub(starts[i])
		}
		usage = append(usage, u)
		taken = append(taken, done)
	}
	if err := rows.Err(); err != nil {
		return false, nil, fmt.Errorf("check rate limits: %w", err)
	}
	if len(usage) != len(rules) {
		return false, nil, fmt.Errorf("check rate limits: %d results for %d rules", len(usage), len(rules))
	}
	if allowed {
		for i := range usage {
			if !taken[i] {
				usage[i].Used++
			}
		}
	}
	return allowed, usage, nil
}

// RateLimitEntries is the number of rate-limit hits the store holds.
func (s *Store) RateLimitEntries(ctx context.Context) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM rate_hits`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rate-limit hits: %w", err)
	}
	return n, nil
}
