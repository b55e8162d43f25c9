// Package pow is the proof of work a domain may ask of its readers'
// browsers when its public assistant key is abused: the server hands out an
// ALTCHA challenge signed with its own key, the browser searches for the
// number that solves it, and each solution opens one request. No third
// party is involved and nothing about the reader is kept.
package pow

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/altcha-org/altcha-lib-go"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
)

const (
	// TTL is how long a challenge may be solved and used.
	TTL = 5 * time.Minute
	// DefaultMaxNumber is the default complexity: a browser tries half of
	// it on average (see docs/assistant/widget.mdx for what that costs a reader).
	DefaultMaxNumber = 50_000
	// KeyName is the name the generated signing key is stored under.
	KeyName = "pow_hmac"
	// Header is the request header that carries a solution.
	Header = "X-Docsmith-Pow"
	// maxPayload bounds the header read: a real solution is about 400 bytes.
	maxPayload = 2048
)

// Config configures a Service.
type Config struct {
	// HMACKey signs the challenges; every process of an install must use
	// the same one.
	HMACKey []byte
	// MaxNumber is the complexity: the solution is a number from 0 to it.
	MaxNumber int64
	// Spent remembers the solutions already used, shared by every process
	// (the rate limiter's store).
	Spent *ratelimit.Limiter
	Now   func() time.Time
}

// Service issues and checks challenges.
type Service struct {
	key       string
	maxNumber int64
	spent     *ratelimit.Limiter
	now       func() time.Time
}

// New returns a Service; a zero MaxNumber is DefaultMaxNumber.
func New(cfg Config) (*Service, error) {
	if len(cfg.HMACKey) < 16 {
		return nil, fmt.Errorf("the proof-of-work signing key must be at least 16 bytes, got %d", len(cfg.HMACKey))
	}
	if cfg.MaxNumber == 0 {
		cfg.MaxNumber = DefaultMaxNumber
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{key: string(cfg.HMACKey), maxNumber: cfg.MaxNumber, spent: cfg.Spent, now: cfg.Now}, nil
}

// KeyStore keeps a key that all processes of an install share
// (sqlite.Store and postgres.Store).
type KeyStore interface {
	ServerKey(ctx context.Context, name string, fresh []byte) ([]byte, error)
}

// SharedKey returns the install's generated signing key, making it on the
// first call of any process.
func SharedKey(ctx context.Context, keys KeyStore) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("make a proof-of-work key: %w", err)
	}
	key, err := keys.ServerKey(ctx, KeyName, fresh)
	if err != nil {
		return nil, fmt.Errorf("load the proof-of-work key: %w", err)
	}
	return key, nil
}

// Challenge is a new challenge for the domain, valid for TTL.
func (s *Service) Challenge(domain string) (altcha.Challenge, error) {
	expires := s.now().Add(TTL)
	c, err := altcha.CreateChallenge(altcha.ChallengeOptions{
		Algorithm: altcha.SHA256,
		MaxNumber: s.maxNumber,
		HMACKey:   s.key,
		Expires:   &expires,
		// The domain is signed in, so a solution opens only its own
		// domain's requests.
		Params: map[string][]string{"domain": {domain}},
	})
	if err != nil {
		return altcha.Challenge{}, fmt.Errorf("create a proof-of-work challenge: %w", err)
	}
	return c, nil
}

// Verify checks a solution sent for the domain and spends it: a solution
// opens one request. Every refusal is a Forbidden error that says what to do.
func (s *Service) Verify(ctx context.Context, domain, payload string) error {
	p, err := s.check(domain, payload)
	if err != nil {
		return err
	}
	d, err := s.spent.Allow(ctx, ratelimit.Rule{Name: "uses of one proof of work", Key: "pow:" + p.Signature, Limit: 1, Window: TTL})
	if err != nil {
		return fmt.Errorf("record a spent proof of work: %w", err)
	}
	if !d.Allowed {
		return refuse(domain, "this proof of work was already used; each one opens one request")
	}
	return nil
}

// check verifies a solution without spending it.
func (s *Service) check(domain, payload string) (altcha.Payload, error) {
	if payload == "" {
		return altcha.Payload{}, refuse(domain, "this domain asks for a proof of work and the "+Header+" header is missing")
	}
	if len(payload) > maxPayload {
		return altcha.Payload{}, refuse(domain, "the "+Header+" header is longer than any solution (%d bytes at most)", maxPayload)
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return altcha.Payload{}, refuse(domain, "the %s header must be base64 of the JSON solution {algorithm, challenge, number, salt, signature}", Header)
	}
	var p altcha.Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return altcha.Payload{}, refuse(domain, "the %s header must be base64 of the JSON solution {algorithm, challenge, number, salt, signature}", Header)
	}
	if p.Algorithm != string(altcha.SHA256) {
		return altcha.Payload{}, refuse(domain, "the solution's algorithm must be %s", altcha.SHA256)
	}
	params := altcha.ExtractParams(p)
	expires, err := strconv.ParseInt(params.Get("expires"), 10, 64)
	if err != nil {
		return altcha.Payload{}, refuse(domain, "the solution is not of a challenge this server issued")
	}
	if !s.now().Before(time.Unix(expires, 0)) {
		return altcha.Payload{}, refuse(domain, "the challenge expired (challenges last %s)", TTL)
	}
	// The library checks expiry against the wall clock; it was checked
	// above against the service's.
	ok, err := altcha.VerifySolutionSafe(p, s.key, false)
	if err != nil || !ok {
		return altcha.Payload{}, refuse(domain, "the solution does not solve a challenge this server issued")
	}
	if params.Get("domain") != domain {
		return altcha.Payload{}, refuse(domain, "the challenge was issued for another domain")
	}
	return p, nil
}

// refuse is a Forbidden error that ends with how to get a valid solution.
func refuse(domain, format string, args ...any) error {
	return apperr.New(apperr.Forbidden, "%s; fetch a challenge from GET /discovery/v1/challenge/%s, solve it, and send the solution in the %s header",
		fmt.Sprintf(format, args...), domain, Header)
}
