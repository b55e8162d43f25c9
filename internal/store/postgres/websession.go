package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/websession"
)

var _ websession.Store = (*Store)(nil)

// CreateSession stores a dashboard session.
func (s *Store) CreateSession(ctx context.Context, ws websession.Session) error {
	return s.insert(ctx, "session", "", `INSERT INTO ui_sessions (id_hash, org_id, key_id, csrf, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		ws.IDHash, ws.OrgID, ws.KeyID, ws.CSRF, utc(ws.CreatedAt), utc(ws.LastSeenAt))
}

// GetSession returns a session by the hash of its id.
func (s *Store) GetSession(ctx context.Context, idHash []byte) (websession.Session, error) {
	ws := websession.Session{IDHash: idHash}
	err := s.pool.QueryRow(ctx, `SELECT org_id, key_id, csrf, created_at, last_seen_at FROM ui_sessions WHERE id_hash = $1`, idHash).
		Scan(&ws.OrgID, &ws.KeyID, &ws.CSRF, &ws.CreatedAt, &ws.LastSeenAt)
	if err != nil {
		return websession.Session{}, notFoundOr(err, "session", "")
	}
	ws.CreatedAt, ws.LastSeenAt = utc(ws.CreatedAt), utc(ws.LastSeenAt)
	return ws, nil
}

// TouchSession moves a session's last-seen time.
func (s *Store) TouchSession(ctx context.Context, idHash []byte, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE ui_sessions SET last_seen_at = $1 WHERE id_hash = $2`, utc(at), idHash)
	return updated(tag, err, "session", "")
}

// DeleteSession ends a session; an unknown one is already ended.
func (s *Store) DeleteSession(ctx context.Context, idHash []byte) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM ui_sessions WHERE id_hash = $1`, idHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteKeySessions ends every session of a key.
func (s *Store) DeleteKeySessions(ctx context.Context, keyID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM ui_sessions WHERE key_id = $1`, keyID); err != nil {
		return fmt.Errorf("delete sessions of key %s: %w", keyID, err)
	}
	return nil
}

// CreateLoginToken stores a one-time login link by hash.
func (s *Store) CreateLoginToken(ctx context.Context, t websession.LoginToken) error {
	return s.insert(ctx, "login link", "", `INSERT INTO ui_login_tokens (hash, org_id, key_id, expires_at) VALUES ($1, $2, $3, $4)`,
		t.Hash, t.OrgID, t.KeyID, utc(t.ExpiresAt))
}

// UseLoginToken marks an unused, unexpired token used, once.
func (s *Store) UseLoginToken(ctx context.Context, hash []byte, at time.Time) (websession.LoginToken, error) {
	t := websession.LoginToken{Hash: hash, UsedAt: &at}
	err := s.pool.QueryRow(ctx, `UPDATE ui_login_tokens SET used_at = $1 WHERE hash = $2 AND used_at IS NULL AND expires_at > $1
RETURNING org_id, key_id, expires_at`, utc(at), hash).Scan(&t.OrgID, &t.KeyID, &t.ExpiresAt)
	if err != nil {
		return websession.LoginToken{}, notFoundOr(err, "login link", "")
	}
	t.ExpiresAt = utc(t.ExpiresAt)
	return t, nil
}
