package pow_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/altcha-org/altcha-lib-go"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/pow"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// clock is a settable time for the service and its limiter.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func setup(t *testing.T) (*pow.Service, *clock) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	// The library checks expiry against the wall clock when asked to;
	// the service's own clock starts at the wall clock's now.
	c := &clock{t: time.Now()}
	svc, err := pow.New(pow.Config{HMACKey: bytes.Repeat([]byte{7}, 32), MaxNumber: 1000, Spent: ratelimit.New(st, c.Now), Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return svc, c
}

// solve finds the number the way a browser does, and encodes the solution
// as the header carries it.
func solve(t *testing.T, c altcha.Challenge) string {
	t.Helper()
	sol, err := altcha.SolveChallenge(c.Challenge, c.Salt, altcha.Algorithm(c.Algorithm), int(c.MaxNumber), 0, nil)
	if err != nil || sol == nil {
		t.Fatalf("solve the challenge: %v", err)
	}
	return encode(t, altcha.Payload{Algorithm: c.Algorithm, Challenge: c.Challenge, Number: int64(sol.Number), Salt: c.Salt, Signature: c.Signature})
}

func encode(t *testing.T, p altcha.Payload) string {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func TestVerify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload func(t *testing.T, svc *pow.Service) string
		domain  string
		want    string // part of the refusal; empty: accepted
	}{
		{name: "solved", domain: "docs", payload: func(t *testing.T, svc *pow.Service) string { return solve(t, challenge(t, svc, "docs")) }},
		{name: "missing", domain: "docs", payload: func(*testing.T, *pow.Service) string { return "" }, want: "header is missing"},
		{name: "not base64", domain: "docs", payload: func(*testing.T, *pow.Service) string { return "%%%" }, want: "must be base64"},
		{name: "too long", domain: "docs", payload: func(*testing.T, *pow.Service) string { return strings.Repeat("A", 4096) }, want: "longer than any solution"},
		{name: "wrong number", domain: "docs", payload: func(t *testing.T, svc *pow.Service) string {
			c := challenge(t, svc, "docs")
			var p altcha.Payload
			raw, _ := base64.StdEncoding.DecodeString(solve(t, c))
			_ = json.Unmarshal(raw, &p)
			p.Number = (p.Number + 1) % (c.MaxNumber + 1)
			return encode(t, p)
		}, want: "does not solve"},
		{name: "signed with another key", domain: "docs", payload: func(t *testing.T, _ *pow.Service) string {
			expires := time.Now().Add(time.Minute)
			c, err := altcha.CreateChallenge(altcha.ChallengeOptions{HMACKey: "another key of sixteen bytes", MaxNumber: 100, Expires: &expires, Params: map[string][]string{"domain": {"docs"}}})
			if err != nil {
				t.Fatal(err)
			}
			return solve(t, c)
		}, want: "does not solve"},
		{name: "another domain's", domain: "docs", payload: func(t *testing.T, svc *pow.Service) string { return solve(t, challenge(t, svc, "other")) }, want: "another domain"},
		{name: "weaker algorithm", domain: "docs", payload: func(t *testing.T, svc *pow.Service) string {
			return encode(t, altcha.Payload{Algorithm: "SHA-1", Challenge: "x", Salt: "y", Signature: "z"})
		}, want: "must be SHA-256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			svc, _ := setup(t)
			err := svc.Verify(t.Context(), tt.domain, tt.payload(t, svc))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Verify refused a solved challenge: %v", err)
				}
				return
			}
			if !apperr.Is(err, apperr.Forbidden) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "/discovery/v1/challenge/docs") {
				t.Fatalf("Verify = %v; want a Forbidden error saying %q and where to fetch a challenge", err, tt.want)
			}
		})
	}
}

func challenge(t *testing.T, svc *pow.Service, domain string) altcha.Challenge {
	t.Helper()
	c, err := svc.Challenge(domain)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestVerifyRefusesASolutionTwice(t *testing.T) {
	t.Parallel()
	svc, _ := setup(t)
	payload := solve(t, challenge(t, svc, "docs"))
	if err := svc.Verify(t.Context(), "docs", payload); err != nil {
		t.Fatalf("first use refused: %v", err)
	}
	err := svc.Verify(t.Context(), "docs", payload)
	if !apperr.Is(err, apperr.Forbidden) || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("second use = %v; want Forbidden, already used", err)
	}
}

func TestVerifyRefusesAnExpiredChallenge(t *testing.T) {
	t.Parallel()
	svc, c := setup(t)
	payload := solve(t, challenge(t, svc, "docs"))
	c.Add(pow.TTL + time.Second)
	err := svc.Verify(t.Context(), "docs", payload)
	if !apperr.Is(err, apperr.Forbidden) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("Verify after the TTL = %v; want Forbidden, expired", err)
	}
}

func TestNewRefusesAShortKey(t *testing.T) {
	t.Parallel()
	if _, err := pow.New(pow.Config{HMACKey: []byte("short")}); err == nil {
		t.Fatal("New accepted a 5-byte signing key")
	}
}

// TestSharedKey: every process of an install gets the key the first one
// stored, on both stores.
func TestSharedKey(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) pow.KeyStore{
		"sqlite": func(t *testing.T) pow.KeyStore {
			st, err := sqlite.Open(t.Context(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
		"postgres": func(t *testing.T) pow.KeyStore {
			st, err := postgres.Open(t.Context(), storetest.PostgresURL(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			keys := open(t)
			ctx := context.Background()
			first, err := pow.SharedKey(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			second, err := pow.SharedKey(ctx, keys)
			if err != nil {
				t.Fatal(err)
			}
			if len(first) != 32 || !bytes.Equal(first, second) {
				t.Fatalf("SharedKey gave %x then %x; want the same 32 bytes", first, second)
			}
		})
	}
}
