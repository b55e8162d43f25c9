// Package ratelimit enforces SPEC §6's limits with sliding windows kept in the
// store, so counts survive restarts and are shared by every replica that
// uses the same store.
//
// A store keeps one entry per recorded hit while it is inside its window:
// at most Limit entries per key, since refused hits are not recorded. Entries
// that left their window are deleted, those of the keys being checked at
// once and, a bounded batch at a time, those of keys never seen again, so
// storage follows the traffic of the last window rather than all traffic.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"
)

// Rule is one limit on one key: at most Limit hits in any Window.
type Rule struct {
	Name   string // names the limit in errors, e.g. "agent requests per project"
	Key    string // what is counted, e.g. "agent:project:docs"
	Limit  int
	Window time.Duration
}

// Usage is one rule's state after a check.
type Usage struct {
	Rule      Rule
	Used      int           // hits in the window, including this one if it was allowed
	ResetIn   time.Duration // until the oldest hit in the window leaves it
	Remaining int
}

// Store checks and records hits. Take counts, for each rule, the hits of its
// key in (now-window, now]; if every rule has room it records one hit for
// each, all atomically, and reports allowed. Otherwise nothing is recorded.
//
// A non-empty token names the request (a retried request carries the same
// one): a rule whose key already holds a hit with that token in its window
// counts as already taken — it is neither checked against its limit nor
// recorded again — so concurrent retries of one request are counted once.
// Each hit expires when it leaves its rule's window; a store deletes expired
// hits of any key as it goes, so its size stays bounded.
type Store interface {
	Take(ctx context.Context, now time.Time, token string, rules []Rule) (allowed bool, usage []Usage, err error)
}

// SweepBatch is how many expired hits of other keys a store deletes on one
// Take at most: more than any Take records (one per rule), so the expired
// hits never pile up, and few enough that one Take stays short.
const SweepBatch = 256

// Limiter checks requests against rules.
type Limiter struct {
	store Store
	now   func() time.Time
}

// New returns a Limiter over store.
func New(store Store, now func() time.Time) *Limiter {
	return &Limiter{store: store, now: now}
}

// Decision is the outcome of Allow: whether the request may go ahead, and
// the headers to send either way.
type Decision struct {
	Allowed bool
	// Binding is the rule that refused the request, or the one with the least
	// room left when it was allowed.
	Binding Usage
}

// Store returns the store the limiter keeps its hits in.
func (l *Limiter) Store() Store { return l.store }

// ErrRefused is what a store that makes a Check in a write of its own
// returns when a limit refused the request: nothing of the write is stored.
var ErrRefused = errors.New("refused by a rate limit")

// Check is a request's check against its rules, for a store that keeps the
// limits and makes the check in the transaction of the request's own write
// (see agentjob.CheckingStore): the request is then counted exactly when
// its write is stored, in one transaction instead of two. The store makes
// it as Take would, with Now and Token, fills in Allowed and Usage, and when
// not allowed stores nothing of the write and returns ErrRefused.
type Check struct {
	Now   time.Time
	Token string
	Rules []Rule // only rules with a limit

	Allowed bool
	Usage   []Usage
}

// Check returns a request's check for a store to make in the transaction
// of its write, or nil when no rule has a limit (nothing to count).
func (l *Limiter) Check(token string, rules ...Rule) *Check {
	active := activeRules(rules)
	if len(active) == 0 {
		return nil
	}
	return &Check{Now: l.now(), Token: token, Rules: active}
}

// Decision is the outcome of a check a store made; a nil check (no limit)
// allows.
func (c *Check) Decision() Decision {
	if c == nil {
		return Decision{Allowed: true}
	}
	return Decision{Allowed: c.Allowed, Binding: binding(c.Allowed, c.Usage)}
}

func activeRules(rules []Rule) []Rule {
	active := rules[:0:0]
	for _, r := range rules {
		if r.Limit > 0 {
			active = append(active, r)
		}
	}
	return active
}

// Allow checks and records one request against every rule.
func (l *Limiter) Allow(ctx context.Context, rules ...Rule) (Decision, error) {
	return l.AllowOnce(ctx, "", rules...)
}

// AllowOnce is Allow for a request that may be retried: every attempt
// carrying the same token (e.g. derived from an Idempotency-Key) is counted
// once, even when the attempts arrive at the same time.
func (l *Limiter) AllowOnce(ctx context.Context, token string, rules ...Rule) (Decision, error) {
	active := activeRules(rules)
	if len(active) == 0 {
		return Decision{Allowed: true}, nil
	}
	allowed, usage, err := l.store.Take(ctx, l.now(), token, active)
	if err != nil {
		return Decision{}, fmt.Errorf("check rate limits: %w", err)
	}
	return Decision{Allowed: allowed, Binding: binding(allowed, usage)}, nil
}

// binding picks the rule the headers describe: when refused, the full rule
// that frees up last (the client must wait for it); when allowed, the rule
// with the least room left.
func binding(allowed bool, usage []Usage) Usage {
	var best Usage
	found := false
	for _, u := range usage {
		u.Remaining = max(u.Rule.Limit-u.Used, 0)
		switch {
		case !allowed && u.Remaining > 0:
			continue
		case !found,
			!allowed && u.ResetIn > best.ResetIn,
			allowed && u.Remaining < best.Remaining:
			best, found = u, true
		}
	}
	return best
}

// RetryAfterSeconds rounds a wait up to whole seconds, at least one.
func RetryAfterSeconds(d time.Duration) int {
	return max(int(math.Ceil(d.Seconds())), 1)
}

// Message says which limit was hit and when to try again.
func (d Decision) Message() string {
	r := d.Binding.Rule
	return fmt.Sprintf("rate limit exceeded: %s is %d per %s; retry in %ds", r.Name, r.Limit, windowName(r.Window), RetryAfterSeconds(d.Binding.ResetIn))
}

func windowName(w time.Duration) string {
	switch w {
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	case 24 * time.Hour:
		return "day"
	case 30 * 24 * time.Hour:
		return "month (30 days)"
	}
	return w.String()
}

// ClientKey is the part of a client address that per-IP limits count: an
// IPv4 address (or an IPv4-mapped IPv6 one) as itself, an IPv6 address by
// its /64, the smallest prefix a site is usually given, so that one client
// cannot pick a fresh address of its subnet for every request.
func ClientKey(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
}
