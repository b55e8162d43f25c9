package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/store/storetest"
)

// TestRateTakeOldSignature calls the rate-limit function as a replica of
// the previous version does during a rolling upgrade: it still counts.
func TestRateTakeOldSignature(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	open(t, url) // brings the schema up to date
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(t.Context()) })
	now := time.Now()
	keys := []string{"agent:project:old"}
	starts := []time.Time{now.Add(-time.Hour)}
	for i, want := range []bool{true, false} {
		var used int
		var allowed bool
		err := conn.QueryRow(t.Context(), `SELECT used, allowed FROM rate_take($1, $2, $3, $4)`, keys, starts, []int32{1}, now).Scan(&used, &allowed)
		if err != nil {
			t.Fatalf("take %d with the old signature: %v", i, err)
		}
		if allowed != want || used != i {
			t.Fatalf("take %d: allowed=%v used=%d; want %v, %d", i, allowed, used, want, i)
		}
	}
}
