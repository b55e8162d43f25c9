package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/websession"
)

var _ websession.Store = (*Store)(nil)

// CreateSession stores a dashboard session.
func (s *Store) CreateSession(ctx context.Context, ws websession.Session) error {
	return s.insert(ctx, "session", "", `INSERT INTO ui_sessions (id_hash, org_id, key_id, csrf, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)`,
		ws.IDHash, ws.OrgID, ws.KeyID, ws.CSRF, toMicros(ws.CreatedAt), toMicros(ws.LastSeenAt))
}

// GetSession returns a session by the hash of its id.
func (s *Store) GetSession(ctx context.Context, idHash []byte) (websession.Session, error) {
	ws := websession.Session{IDHash: idHash}
	var created, seen int64
	err := s.read.QueryRowContext(ctx, `SELECT org_id, key_id, csrf, created_at, last_seen_at FROM ui_sessions WHERE id_hash = ?`, idHash).
		Scan(&ws.OrgID, &ws.KeyID, &ws.CSRF, &created, &seen)
	if err != nil {
		return websession.Session{}, notFoundOr(err, "session", "")
	}
	ws.CreatedAt, ws.LastSeenAt = fromMicros(created), fromMicros(seen)
	return ws, nil
}

// TouchSession moves a session's last-seen time.
func (s *Store) TouchSession(ctx context.Context, idHash []byte, at time.Time) error {
	res, err := s.exec(ctx, `UPDATE ui_sessions SET last_seen_at = ? WHERE id_hash = ?`, toMicros(at), idHash)
	return updated(res, err, "session", "")
}

// DeleteSession ends a session; an unknown one is already ended.
func (s *Store) DeleteSession(ctx context.Context, idHash []byte) error {
	if _, err := s.exec(ctx, `DELETE FROM ui_sessions WHERE id_hash = ?`, idHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteKeySessions ends every session of a key.
func (s *Store) DeleteKeySessions(ctx context.Context, keyID string) error {
	if _, err := s.exec(ctx, `DELETE FROM ui_sessions WHERE key_id = ?`, keyID); err != nil {
		return fmt.Errorf("delete sessions of key %s: %w", keyID, err)
	}
	return nil
}

// CreateLoginToken stores a one-time login link by hash.
func (s *Store) CreateLoginToken(ctx context.Context, t websession.LoginToken) error {
	return s.insert(ctx, "login link", "", `INSERT INTO ui_login_tokens (hash, org_id, key_id, expires_at) VALUES (?, ?, ?, ?)`,
		t.Hash, t.OrgID, t.KeyID, toMicros(t.ExpiresAt))
}

// UseLoginToken marks an unused, unexpired token used, once.
func (s *Store) UseLoginToken(ctx context.Context, hash []byte, at time.Time) (websession.LoginToken, error) {
	t := websession.LoginToken{Hash: hash, UsedAt: &at}
	var expires int64
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		return tx.QueryRowContext(ctx, `UPDATE ui_login_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?
RETURNING org_id, key_id, expires_at`, toMicros(at), hash, toMicros(at)).Scan(&t.OrgID, &t.KeyID, &expires)
	})
	if err != nil {
		return websession.LoginToken{}, notFoundOr(err, "login link", "")
	}
	t.ExpiresAt = fromMicros(expires)
	return t, nil
}
