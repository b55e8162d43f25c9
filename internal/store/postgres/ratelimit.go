package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/ratelimit"
)

// Take checks every rule's sliding window and records a hit in each if all
// have room, in one statement: the schema's rate_take function
// (migrations/0001_init.sql) locks the rules' keys, so replicas checking
// the same key take turns and the count is exact, and deletes the hits
// that left their window on the way.
func (s *Store) Take(ctx context.Context, now time.Time, rules []ratelimit.Rule) (bool, []ratelimit.Usage, error) {
	keys := make([]string, len(rules))
	starts := make([]time.Time, len(rules))
	limits := make([]int32, len(rules))
	for i, r := range rules {
		keys[i], starts[i], limits[i] = r.Key, now.Add(-r.Window), int32(min(r.Limit, 1<<31-1))
	}
	rows, err := s.pool.Query(ctx, `SELECT used, oldest, allowed FROM rate_take($1, $2, $3, $4)`, keys, starts, limits, now)
	if err != nil {
		return false, nil, fmt.Errorf("check rate limits: %w", err)
	}
	defer rows.Close()
	usage := make([]ratelimit.Usage, 0, len(rules))
	allowed := true
	for rows.Next() {
		var used int
		var oldest *time.Time
		if err := rows.Scan(&used, &oldest, &allowed); err != nil {
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
	}
	if err := rows.Err(); err != nil {
		return false, nil, fmt.Errorf("check rate limits: %w", err)
	}
	if len(usage) != len(rules) {
		return false, nil, fmt.Errorf("check rate limits: %d results for %d rules", len(usage), len(rules))
	}
	if allowed {
		for i := range usage {
			usage[i].Used++
		}
	}
	return allowed, usage, nil
}
