package postgres

import (
	"context"
	"fmt"
	"time"
)

// ServerKey returns the key stored under name, storing fresh first when
// there is none: the first replica to ask decides, every other one reads it.
// The read is a statement of its own, so that it sees a key another replica
// committed while the insert waited on it.
func (s *Store) ServerKey(ctx context.Context, name string, fresh []byte) ([]byte, error) {
	if _, err := s.pool.Exec(ctx, `INSERT INTO server_keys (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, fresh, utc(time.Now())); err != nil {
		return nil, fmt.Errorf("store server key %s: %w", name, err)
	}
	var key []byte
	if err := s.pool.QueryRow(ctx, `SELECT value FROM server_keys WHERE name = $1`, name).Scan(&key); err != nil {
		return nil, fmt.Errorf("read server key %s: %w", name, err)
	}
	return key, nil
}
