package sqlite

import (
	"context"
	"fmt"
	"time"
)

// ServerKey returns the key stored under name, storing fresh first when
// there is none: the first process to ask decides, every later one reads it.
func (s *Store) ServerKey(ctx context.Context, name string, fresh []byte) ([]byte, error) {
	if _, err := s.exec(ctx, `INSERT INTO server_keys (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		name, fresh, toMicros(time.Now())); err != nil {
		return nil, fmt.Errorf("store server key %s: %w", name, err)
	}
	var key []byte
	if err := s.read.QueryRowContext(ctx, `SELECT value FROM server_keys WHERE name = ?`, name).Scan(&key); err != nil {
		return nil, fmt.Errorf("read server key %s: %w", name, err)
	}
	return key, nil
}
