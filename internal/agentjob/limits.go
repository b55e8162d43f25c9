package agentjob

import (
	"context"
	"errors"

	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Limiter counts requests against rate limits: a *ratelimit.Limiter.
type Limiter interface {
	AllowOnce(ctx context.Context, token string, rules ...ratelimit.Rule) (ratelimit.Decision, error)
	Check(token string, rules ...ratelimit.Rule) *ratelimit.Check
	Store() ratelimit.Store
}

// CheckingStore is a Store that keeps the rate limits too. It makes a
// request's check (ratelimit.Check) in the transaction that writes the
// request's job or message, so that the request is counted exactly when
// its write is stored, and a create or follow-up is one write transaction
// instead of two. A replay of an earlier request (its idempotency key
// found) is not checked. A refused request stores nothing and is
// ratelimit.ErrRefused.
type CheckingStore interface {
	CreateJobChecked(ctx context.Context, job Job, idem *Idempotency, events []NewEvent, check *ratelimit.Check) (Job, bool, error)
	ApplyChecked(ctx context.Context, projectID, jobID string, p Patch, idem *Idempotency, events []NewEvent, check *ratelimit.Check) (Job, bool, error)
}

// checked is a check for the store to make in its transaction.
type checked struct {
	store CheckingStore
	check *ratelimit.Check
}

// checkIn returns the check of a request for the service's store to make
// in its own transaction: when the store keeps the limiter's limits (it
// is the limiter's store). Otherwise (the limits live in Redis, say), or
// when no rule has a limit, ok is false.
func (s *Service) checkIn(limiter Limiter, token string, rules []ratelimit.Rule) (c *checked, ok bool) {
	cs, isChecking := s.store.(CheckingStore)
	ls, isLimits := s.store.(ratelimit.Store)
	if !isChecking || !isLimits || limiter.Store() != ls {
		return nil, false
	}
	check := limiter.Check(token, rules...)
	if check == nil {
		return nil, false
	}
	return &checked{store: cs, check: check}, true
}

// CreateLimited is Create for a request that counts against rules, named
// by token so that its retries count once (ratelimit.Limiter.AllowOnce).
// A replay of an earlier request is answered without being counted. Over a
// limit, the Decision does not allow the request and no job is made. When
// the store keeps the limits, the check is made in the transaction that
// writes the job; otherwise limiter checks the request first.
func (s *Service) CreateLimited(ctx context.Context, p tenant.Project, prompt, idempotencyKey string, limiter Limiter, token string, rules ...ratelimit.Rule) (Job, bool, ratelimit.Decision, error) {
	allowed := ratelimit.Decision{Allowed: true}
	if c, ok := s.checkIn(limiter, token, rules); ok {
		job, replayed, err := s.create(ctx, p, prompt, idempotencyKey, c)
		switch {
		case errors.Is(err, ratelimit.ErrRefused):
			return Job{}, false, c.check.Decision(), nil
		case err != nil:
			return Job{}, false, ratelimit.Decision{}, err
		case replayed:
			return job, true, allowed, nil
		}
		return job, false, c.check.Decision(), nil
	}
	if job, replayed, err := s.ReplayCreate(ctx, p.ID, prompt, idempotencyKey); err != nil || replayed {
		return job, replayed, allowed, err
	}
	d, err := limiter.AllowOnce(ctx, token, rules...)
	if err != nil || !d.Allowed {
		return Job{}, false, d, err
	}
	job, replayed, err := s.Create(ctx, p, prompt, idempotencyKey)
	return job, replayed, d, err
}

// MessageLimited is Message for a request that counts against rules, as
// CreateLimited is for Create.
func (s *Service) MessageLimited(ctx context.Context, projectID, jobID, prompt, idempotencyKey string, limiter Limiter, token string, rules ...ratelimit.Rule) (Job, bool, ratelimit.Decision, error) {
	allowed := ratelimit.Decision{Allowed: true}
	if c, ok := s.checkIn(limiter, token, rules); ok {
		job, replayed, err := s.message(ctx, projectID, jobID, prompt, idempotencyKey, c)
		switch {
		case errors.Is(err, ratelimit.ErrRefused):
			return Job{}, false, c.check.Decision(), nil
		case err != nil:
			return Job{}, false, ratelimit.Decision{}, err
		case replayed:
			return job, true, allowed, nil
		}
		return job, false, c.check.Decision(), nil
	}
	if job, replayed, err := s.ReplayMessage(ctx, projectID, jobID, prompt, idempotencyKey); err != nil || replayed {
		return job, replayed, allowed, err
	}
	d, err := limiter.AllowOnce(ctx, token, rules...)
	if err != nil || !d.Allowed {
		return Job{}, false, d, err
	}
	job, replayed, err := s.Message(ctx, projectID, jobID, prompt, idempotencyKey)
	return job, replayed, d, err
}
