package storetest

import (
	"bytes"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/websession"
)

func webSessionCases() []testCase {
	return []testCase{
		{"WebSession/Store", testWebSessionStore},
		{"WebSession/LoginTokenOnce", testLoginTokenOnce},
		{"WebSession/Lifetimes", testWebSessionLifetimes},
	}
}

func testWebSessionStore(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	a := websession.Session{IDHash: websession.Hash("a"), OrgID: "acme", KeyID: "k1", CSRF: "tok", CreatedAt: t0, LastSeenAt: t0}
	b := websession.Session{IDHash: websession.Hash("b"), OrgID: "acme", KeyID: "k1", CSRF: "tok2", CreatedAt: t0, LastSeenAt: t0}
	c := websession.Session{IDHash: websession.Hash("c"), OrgID: "acme", KeyID: "k2", CSRF: "tok3", CreatedAt: t0, LastSeenAt: t0}
	for _, ws := range []websession.Session{a, b, c} {
		must(t, s.CreateSession(ctx, ws), "CreateSession")
	}
	got, err := s.GetSession(ctx, a.IDHash)
	must(t, err, "GetSession")
	if got.OrgID != "acme" || got.KeyID != "k1" || got.CSRF != "tok" || !bytes.Equal(got.IDHash, a.IDHash) {
		t.Errorf("session = %+v", got)
	}
	sameTime(t, "created", got.CreatedAt, t0)
	must(t, s.TouchSession(ctx, a.IDHash, t0.Add(time.Hour)), "TouchSession")
	got, err = s.GetSession(ctx, a.IDHash)
	must(t, err, "GetSession")
	sameTime(t, "last seen", got.LastSeenAt, t0.Add(time.Hour))
	wantCode(t, s.TouchSession(ctx, websession.Hash("nope"), t0), apperr.NotFound, "TouchSession unknown")
	_, err = s.GetSession(ctx, websession.Hash("nope"))
	wantCode(t, err, apperr.NotFound, "GetSession unknown")

	must(t, s.DeleteKeySessions(ctx, "k1"), "DeleteKeySessions")
	for _, h := range [][]byte{a.IDHash, b.IDHash} {
		_, err = s.GetSession(ctx, h)
		wantCode(t, err, apperr.NotFound, "GetSession after DeleteKeySessions")
	}
	_, err = s.GetSession(ctx, c.IDHash)
	must(t, err, "another key's session stays")
	must(t, s.DeleteSession(ctx, c.IDHash), "DeleteSession")
	must(t, s.DeleteSession(ctx, c.IDHash), "DeleteSession twice")
	_, err = s.GetSession(ctx, c.IDHash)
	wantCode(t, err, apperr.NotFound, "GetSession after DeleteSession")
}

func testLoginTokenOnce(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	tok := websession.LoginToken{Hash: websession.Hash("x"), OrgID: "acme", KeyID: "k1", ExpiresAt: t0.Add(time.Minute)}
	must(t, s.CreateLoginToken(ctx, tok), "CreateLoginToken")
	must(t, s.CreateLoginToken(ctx, websession.LoginToken{Hash: websession.Hash("old"), OrgID: "acme", KeyID: "k1", ExpiresAt: t0}), "CreateLoginToken old")
	_, err := s.UseLoginToken(ctx, websession.Hash("old"), t0)
	wantCode(t, err, apperr.NotFound, "an expired token")

	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := s.UseLoginToken(ctx, tok.Hash, t0.Add(time.Second))
			switch {
			case err == nil:
				wins.Add(1)
				if got.OrgID != "acme" || got.KeyID != "k1" {
					t.Errorf("token = %+v", got)
				}
			case !apperr.Is(err, apperr.NotFound):
				t.Errorf("UseLoginToken: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("the token was used %d times, want once", wins.Load())
	}
}

// testWebSessionLifetimes drives the session manager over the store with a
// clock of its own: fixation, idle and absolute expiry, a revoked key.
func testWebSessionLifetimes(t *testing.T, s Store) {
	e := setup(t, s)
	keys := tenant.NewService(s, func() time.Time { return e.t0 })
	k, secret, err := keys.CreateKey(e.ctx, "acme", apikey.Admin, "ui")
	must(t, err, "CreateKey")
	p, err := keys.Authenticate(e.ctx, secret)
	must(t, err, "Authenticate")
	var now atomic.Int64
	now.Store(e.t0.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	advance := func(d time.Duration) { now.Add(int64(d)) }
	m := websession.NewManager(s, s, clock)
	m.Idle, m.Absolute = time.Hour, 5*time.Hour

	id1, s1, err := m.Start(e.ctx, p)
	must(t, err, "Start")
	id2, _, err := m.Start(e.ctx, p)
	must(t, err, "Start again")
	if id1 == id2 || len(id1) < 40 {
		t.Fatalf("sign-ins share an id or it is short: %q %q", id1, id2)
	}
	stored, err := s.GetSession(e.ctx, websession.Hash(id1))
	must(t, err, "GetSession")
	if bytes.Contains(stored.IDHash, []byte(id1)) {
		t.Error("the store keeps the id itself")
	}
	if got, err := m.Resolve(e.ctx, id1); err != nil || got.OrgID != "acme" || got.CSRF != s1.CSRF {
		t.Fatalf("Resolve = %+v, %v", got, err)
	}
	_, err = m.Resolve(e.ctx, "made-up-by-an-attacker")
	wantCode(t, err, apperr.Unauthorized, "an id the server never issued")
	if websession.CheckCSRF(s1, s1.CSRF) != nil || websession.CheckCSRF(s1, "") == nil || websession.CheckCSRF(s1, s1.CSRF+"x") == nil {
		t.Error("CheckCSRF accepts the wrong tokens or refuses the right one")
	}

	// Kept alive every 50 minutes, the session outlives the idle limit but
	// not the absolute one.
	for range 5 {
		advance(50 * time.Minute)
		if _, err := m.Resolve(e.ctx, id1); err != nil {
			t.Fatalf("Resolve at %v: %v", clock().Sub(e.t0), err)
		}
	}
	advance(55 * time.Minute) // 5h05 after sign-in, 55 minutes idle
	_, err = m.Resolve(e.ctx, id1)
	wantCode(t, err, apperr.Unauthorized, "past the absolute limit")
	// id2 was never used after sign-in: idle long ago.
	_, err = m.Resolve(e.ctx, id2)
	wantCode(t, err, apperr.Unauthorized, "idle")

	id3, _, err := m.Start(e.ctx, p)
	must(t, err, "Start")
	_, err = m.Resolve(e.ctx, id3)
	must(t, err, "Resolve fresh")
	must(t, s.RevokeKey(e.ctx, "acme", k.ID, clock()), "RevokeKey")
	_, err = m.Resolve(e.ctx, id3)
	wantCode(t, err, apperr.Unauthorized, "the key was revoked")
	if _, err := s.GetSession(e.ctx, websession.Hash(id3)); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("the revoked key's session is still stored: %v", err)
	}

	// Login links: once, and not for a revoked key.
	_, secret2, err := keys.CreateKey(e.ctx, "acme", apikey.Admin, "ui2")
	must(t, err, "CreateKey")
	p2, err := keys.Authenticate(e.ctx, secret2)
	must(t, err, "Authenticate")
	link, err := m.NewLoginToken(e.ctx, p2)
	must(t, err, "NewLoginToken")
	got, err := m.Redeem(e.ctx, link)
	if err != nil || got.KeyID != p2.KeyID || got.OrgID != "acme" {
		t.Fatalf("Redeem = %+v, %v", got, err)
	}
	_, err = m.Redeem(e.ctx, link)
	wantCode(t, err, apperr.Unauthorized, "a link used twice")
	link, err = m.NewLoginToken(e.ctx, p2)
	must(t, err, "NewLoginToken")
	advance(m.LinkTTL + time.Second)
	_, err = m.Redeem(e.ctx, link)
	wantCode(t, err, apperr.Unauthorized, "an expired link")
	_, _, err = m.Start(e.ctx, tenant.Principal{OrgID: "acme", KeyID: "x", Kind: apikey.Assistant})
	wantCode(t, err, apperr.Forbidden, "an assistant key signing in")
}
