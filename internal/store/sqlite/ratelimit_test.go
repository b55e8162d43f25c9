package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/ratelimit"
)

// countsMatch checks that rate_counts says, for every key, how many hits
// rate_hits holds: the triggers of migration 0012 keep it so.
func countsMatch(t *testing.T, s *Store, step string) {
	t.Helper()
	rows, err := s.read.QueryContext(t.Context(), `
		SELECT COALESCE(h.key, c.key), COALESCE(h.n, 0), COALESCE(c.hits, 0)
		FROM (SELECT key, COUNT(*) AS n FROM rate_hits GROUP BY key) h
		FULL JOIN rate_counts c ON c.key = h.key
		WHERE COALESCE(h.n, 0) != COALESCE(c.hits, 0) OR c.hits <= 0`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var hits, counted int
		if err := rows.Scan(&key, &hits, &counted); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s: key %s holds %d hits, rate_counts says %d", step, key, hits, counted)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestRateCountsFollowHits: the kept counts equal a fresh count of the hits
// after hits are recorded, refused, expired within their key, swept from
// other keys, and retried with a token.
func TestRateCountsFollowHits(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rule := func(key string, limit int, window time.Duration) ratelimit.Rule {
		return ratelimit.Rule{Name: key, Key: key, Limit: limit, Window: window}
	}
	take := func(at time.Time, token string, rules ...ratelimit.Rule) bool {
		t.Helper()
		ok, _, err := s.Take(ctx, at, token, rules)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for i := range 5 {
		take(start.Add(time.Duration(i)*time.Second), "", rule("a", 3, time.Minute), rule("b", 10, time.Hour))
	}
	countsMatch(t, s, "a limit reached, refusals")
	for i := range 400 {
		take(start.Add(time.Duration(i)*time.Millisecond), "", rule(fmt.Sprintf("short-%d", i), 5, time.Second))
	}
	countsMatch(t, s, "many keys")
	take(start.Add(2*time.Minute), "retry-1", rule("a", 3, time.Minute))
	take(start.Add(2*time.Minute), "retry-1", rule("a", 3, time.Minute))
	countsMatch(t, s, "expired within the key, a retried token")
	// Two Takes long after every window sweep the keys never seen again.
	take(start.Add(3*time.Hour), "", rule("c", 1, time.Second))
	take(start.Add(3*time.Hour), "", rule("d", 1, time.Second))
	countsMatch(t, s, "swept")
	var left int
	if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM rate_counts WHERE key LIKE 'short-%'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d counts of swept keys stay", left)
	}
}

// TestMigrateRateCounts: hits recorded before migration 0012 are counted
// by it, and a limit reached before the upgrade still holds after it.
func TestMigrateRateCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, exec := databaseBefore(t, dir, "0012")
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		at := now.Add(-time.Duration(i+1) * time.Minute)
		exec(`INSERT INTO rate_hits (key, at, expires) VALUES ('agent:project:docs', ?, ?)`, toMicros(at), toMicros(at.Add(time.Hour)))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	countsMatch(t, s, "migrated")
	rule := ratelimit.Rule{Name: "agent", Key: "agent:project:docs", Limit: 3, Window: time.Hour}
	ok, usage, err := s.Take(ctx, now, "", []ratelimit.Rule{rule})
	if err != nil {
		t.Fatal(err)
	}
	if ok || usage[0].Used != 3 {
		t.Errorf("after the upgrade: allowed %v, used %d; want refused at 3", ok, usage[0].Used)
	}
}
