// Package websession keeps the dashboard's sign-ins: server-side sessions
// whose ids only the browser knows (the store keeps their hashes), bound to
// the admin key that signed in, ending when idle, when old, on sign-out,
// and when the key is revoked; and one-time login links.
package websession

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Session is a signed-in browser. IDHash is the SHA-256 of the id in its
// cookie; CSRF is the token its forms carry.
type Session struct {
	IDHash     []byte
	OrgID      string
	KeyID      string
	CSRF       string
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// LoginToken is a one-time login link's secret, by hash.
type LoginToken struct {
	Hash      []byte
	OrgID     string
	KeyID     string
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// Store keeps sessions and login tokens. Unknown ones are apperr NotFound.
type Store interface {
	CreateSession(ctx context.Context, s Session) error
	GetSession(ctx context.Context, idHash []byte) (Session, error)
	TouchSession(ctx context.Context, idHash []byte, at time.Time) error
	DeleteSession(ctx context.Context, idHash []byte) error
	// DeleteKeySessions ends every session signed in with the key.
	DeleteKeySessions(ctx context.Context, keyID string) error
	CreateLoginToken(ctx context.Context, t LoginToken) error
	// UseLoginToken marks an unused, unexpired token used and returns it,
	// at most once however many callers race; anything else is NotFound.
	UseLoginToken(ctx context.Context, hash []byte, at time.Time) (LoginToken, error)
}

// Keys looks up the key a session was signed in with.
type Keys interface {
	GetKey(ctx context.Context, id string) (tenant.Key, error)
}

// Defaults of a Manager.
const (
	DefaultIdle     = 2 * time.Hour
	DefaultAbsolute = 7 * 24 * time.Hour
	DefaultLinkTTL  = 15 * time.Minute
	// touchEvery limits the writes of a busy session: its last-seen time
	// moves at most this often.
	touchEvery = time.Minute
)

// Manager starts, checks and ends sessions.
type Manager struct {
	store Store
	keys  Keys
	now   func() time.Time
	// Idle ends a session unused this long; Absolute one this old.
	Idle     time.Duration
	Absolute time.Duration
	LinkTTL  time.Duration
}

// NewManager returns a Manager with the default lifetimes.
func NewManager(store Store, keys Keys, now func() time.Time) *Manager {
	return &Manager{store: store, keys: keys, now: now, Idle: DefaultIdle, Absolute: DefaultAbsolute, LinkTTL: DefaultLinkTTL}
}

// errSignedOut is what every dead or unknown session gets.
var errSignedOut = apperr.New(apperr.Unauthorized, "you are signed out; sign in again")

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// Hash is how ids and tokens are stored.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Start opens a session for an admin principal and returns the id for its
// cookie. Each sign-in gets a new id, whatever cookie came with it.
func (m *Manager) Start(ctx context.Context, p tenant.Principal) (string, Session, error) {
	if p.Kind != apikey.Admin {
		return "", Session{}, apperr.New(apperr.Forbidden, "the dashboard needs an admin key (svc_...); an assistant key cannot sign in")
	}
	id := randomToken()
	now := m.now()
	s := Session{IDHash: Hash(id), OrgID: p.OrgID, KeyID: p.KeyID, CSRF: randomToken(), CreatedAt: now, LastSeenAt: now}
	if err := m.store.CreateSession(ctx, s); err != nil {
		return "", Session{}, fmt.Errorf("store session: %w", err)
	}
	return id, s, nil
}

// Resolve returns the live session of a cookie's id. A session that is
// unknown, idle too long, too old, or whose key was revoked is ended and
// Unauthorized.
func (m *Manager) Resolve(ctx context.Context, id string) (Session, error) {
	if id == "" || len(id) > 128 {
		return Session{}, errSignedOut
	}
	h := Hash(id)
	s, err := m.store.GetSession(ctx, h)
	if apperr.Is(err, apperr.NotFound) {
		return Session{}, errSignedOut
	}
	if err != nil {
		return Session{}, fmt.Errorf("read session: %w", err)
	}
	now := m.now()
	alive := now.Sub(s.LastSeenAt) < m.Idle && now.Sub(s.CreatedAt) < m.Absolute
	if alive {
		k, err := m.keys.GetKey(ctx, s.KeyID)
		switch {
		case apperr.Is(err, apperr.NotFound):
			alive = false
		case err != nil:
			return Session{}, fmt.Errorf("check the session's key: %w", err)
		default:
			alive = k.RevokedAt == nil && k.OrgID == s.OrgID
		}
	}
	if !alive {
		if err := m.store.DeleteSession(ctx, h); err != nil {
			return Session{}, fmt.Errorf("end session: %w", err)
		}
		return Session{}, errSignedOut
	}
	if now.Sub(s.LastSeenAt) >= touchEvery {
		if err := m.store.TouchSession(ctx, h, now); err != nil {
			return Session{}, fmt.Errorf("touch session: %w", err)
		}
		s.LastSeenAt = now
	}
	return s, nil
}

// End signs one session out.
func (m *Manager) End(ctx context.Context, id string) error {
	if err := m.store.DeleteSession(ctx, Hash(id)); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// EndAll signs out every session of the key: sign-out everywhere, and what
// revoking a key does.
func (m *Manager) EndAll(ctx context.Context, keyID string) error {
	if err := m.store.DeleteKeySessions(ctx, keyID); err != nil {
		return fmt.Errorf("end the sessions of key %s: %w", keyID, err)
	}
	return nil
}

// NewLoginToken makes a one-time login secret for an admin principal, valid
// for LinkTTL.
func (m *Manager) NewLoginToken(ctx context.Context, p tenant.Principal) (string, error) {
	if p.Kind != apikey.Admin {
		return "", apperr.New(apperr.Forbidden, "a login link needs an admin key")
	}
	secret := randomToken()
	t := LoginToken{Hash: Hash(secret), OrgID: p.OrgID, KeyID: p.KeyID, ExpiresAt: m.now().Add(m.LinkTTL)}
	if err := m.store.CreateLoginToken(ctx, t); err != nil {
		return "", fmt.Errorf("store login link: %w", err)
	}
	return secret, nil
}

// Redeem uses a login link's secret once and returns who it signs in. Its
// key must still be valid.
func (m *Manager) Redeem(ctx context.Context, secret string) (tenant.Principal, error) {
	expired := apperr.New(apperr.Unauthorized, "this login link is not valid: it was used, expired, or mistyped; run 'docsmith ui login' for a new one")
	if secret == "" || len(secret) > 128 {
		return tenant.Principal{}, expired
	}
	t, err := m.store.UseLoginToken(ctx, Hash(secret), m.now())
	if apperr.Is(err, apperr.NotFound) {
		return tenant.Principal{}, expired
	}
	if err != nil {
		return tenant.Principal{}, fmt.Errorf("use login link: %w", err)
	}
	k, err := m.keys.GetKey(ctx, t.KeyID)
	if apperr.Is(err, apperr.NotFound) || (err == nil && (k.RevokedAt != nil || k.OrgID != t.OrgID)) {
		return tenant.Principal{}, expired
	}
	if err != nil {
		return tenant.Principal{}, fmt.Errorf("check the login link's key: %w", err)
	}
	return tenant.Principal{OrgID: t.OrgID, KeyID: t.KeyID, Kind: apikey.Admin}, nil
}

// CheckCSRF compares a form's token with the session's in constant time.
func CheckCSRF(s Session, token string) error {
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRF)) != 1 {
		return apperr.New(apperr.Forbidden, "the form's security token is missing or stale; reload the page and try again")
	}
	return nil
}
