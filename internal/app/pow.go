package app

import (
	"context"
	"errors"

	"github.com/docsmith/docsmith/internal/pow"
	"github.com/docsmith/docsmith/internal/ratelimit"
)

// proofOfWork builds the challenges' service: signed with the configured
// key, or with the one generated once and kept in the database, so that a
// challenge one replica issued is accepted by every other. Spent solutions
// are kept where the rate limits are, shared the same way.
func (m *Main) proofOfWork(ctx context.Context, b *Backend, limiter *ratelimit.Limiter) (*pow.Service, error) {
	key := []byte(m.Config.ProofOfWork.HMACKey)
	if len(key) == 0 {
		var keys pow.KeyStore
		switch {
		case b.Postgres != nil:
			keys = b.Postgres
		case b.Local != nil:
			keys = b.Local
		default:
			return nil, errors.New("no database to keep the proof-of-work key in; set pow_hmac_key")
		}
		var err error
		if key, err = pow.SharedKey(ctx, keys); err != nil {
			return nil, err
		}
	}
	return pow.New(pow.Config{HMACKey: key, MaxNumber: int64(m.Config.ProofOfWork.MaxNumber), Spent: limiter, Now: m.Now})
}
