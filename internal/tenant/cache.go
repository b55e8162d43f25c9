package tenant

import (
	"context"
	"slices"
	"sync"
	"time"
)

// CachedStore is a Store that keeps the keys, projects and domains it reads
// for at most maxAge, so that a request is authenticated and finds its
// project without a round trip to the database each time.
//
// What it keeps must never outlive a change for long, above all a revoked
// key. Every write made through it forgets everything at once, so this
// process sees its own changes immediately; changes made elsewhere (another
// replica, the CLI, an operator) reach it through Invalidate, which the
// store's change feed calls (PostgreSQL's LISTEN/NOTIFY), or through a
// change counter the store raises with every change, which it reads before
// serving from memory (see CheckChanges; SQLite). maxAge bounds the rest:
// should a change notice be lost, an entry is still read again once it is
// maxAge old.
type CachedStore struct {
	store  Store
	maxAge time.Duration
	now    func() time.Time

	// With CheckChanges: the store's change counter, read again when the
	// last read is checkEvery old.
	changes    func(context.Context) (int64, error)
	checkEvery time.Duration
	checkMu    sync.Mutex
	checkedAt  time.Time // when the last good read of the counter began
	counter    int64     // what it read
	counted    bool      // whether counter holds a read

	mu sync.Mutex
	// generation counts invalidations: a read that began before one is
	// not kept, since it may return what the change replaced.
	generation uint64
	keys       map[string]cached[Key]
	projects   map[string]cached[Project]
	domains    map[string]cached[Domain]
}

var _ Store = (*CachedStore)(nil)

// cached is a value read from the store, and when the read began.
type cached[T any] struct {
	value T
	at    time.Time
}

// NewCachedStore returns a CachedStore over store. now should be a
// monotonic clock (time.Now).
func NewCachedStore(store Store, maxAge time.Duration, now func() time.Time) *CachedStore {
	return &CachedStore{
		store: store, maxAge: maxAge, now: now,
		keys: make(map[string]cached[Key]), projects: make(map[string]cached[Project]), domains: make(map[string]cached[Domain]),
	}
}

// CheckChanges makes the cache read the store's change counter, a number
// every change of a key, project or domain raises whoever makes it, before
// it serves anything from memory, and forget everything when the counter
// moved. Lookups within every of a read share it: a change made by another
// process is seen within every. It returns c, and is called before c is
// used.
func (c *CachedStore) CheckChanges(counter func(context.Context) (int64, error), every time.Duration) *CachedStore {
	c.changes, c.checkEvery = counter, every
	return c
}

// current reports whether what the cache holds may be served: without
// CheckChanges always; with it, once the change counter was read less than
// checkEvery ago, what the cache held before the counter last moved being
// forgotten. A failed read of the counter serves nothing from memory.
//
// The counter is read outside the lock, so that a reader the scheduler
// pauses mid-read holds up no other request; reads that overlap may finish
// out of order, and one that finds another number than the last forgets
// everything again, which costs reads, never freshness.
func (c *CachedStore) current(ctx context.Context) bool {
	if c.changes == nil {
		return true
	}
	start := c.now()
	c.checkMu.Lock()
	fresh := c.counted && start.Sub(c.checkedAt) < c.checkEvery
	c.checkMu.Unlock()
	if fresh {
		return true
	}
	n, err := c.changes(ctx)
	if err != nil {
		return false
	}
	c.checkMu.Lock()
	defer c.checkMu.Unlock()
	if !c.counted || n != c.counter {
		c.Invalidate()
		c.counter, c.counted = n, true
	}
	if start.After(c.checkedAt) {
		c.checkedAt = start
	}
	return true
}

// Invalidate forgets everything read so far, including reads under way:
// the next lookup of anything reads the store again.
func (c *CachedStore) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.generation++
	clear(c.keys)
	clear(c.projects)
	clear(c.domains)
}

// lookup returns entries[id] if it is younger than maxAge, and otherwise
// reads it and keeps it, unless an invalidation came in the meantime.
// Failed reads (an unknown id among them) are not kept.
func lookup[T any](ctx context.Context, c *CachedStore, entries map[string]cached[T], id string, read func() (T, error)) (T, error) {
	if !c.current(ctx) {
		return read()
	}
	c.mu.Lock()
	e, found := entries[id]
	generation := c.generation
	c.mu.Unlock()
	start := c.now()
	if found && start.Sub(e.at) < c.maxAge {
		return e.value, nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.generation == generation {
		entries[id] = cached[T]{value: v, at: start}
	}
	c.mu.Unlock()
	return v, nil
}

// write runs a change through to the store and forgets everything read,
// whether or not it succeeded (a failed write may still have committed).
func (c *CachedStore) write(err error) error {
	c.Invalidate()
	return err
}

// GetKey returns a key, from memory if it was read less than maxAge ago.
func (c *CachedStore) GetKey(ctx context.Context, id string) (Key, error) {
	k, err := lookup(ctx, c, c.keys, id, func() (Key, error) { return c.store.GetKey(ctx, id) })
	return cloneKey(k), err
}

// GetProject returns a project, from memory if it was read less than maxAge
// ago.
func (c *CachedStore) GetProject(ctx context.Context, id string) (Project, error) {
	return lookup(ctx, c, c.projects, id, func() (Project, error) { return c.store.GetProject(ctx, id) })
}

// GetDomain returns a domain, from memory if it was read less than maxAge
// ago.
func (c *CachedStore) GetDomain(ctx context.Context, id string) (Domain, error) {
	d, err := lookup(ctx, c, c.domains, id, func() (Domain, error) { return c.store.GetDomain(ctx, id) })
	d.AllowedOrigins = slices.Clone(d.AllowedOrigins)
	return d, err
}

// cloneKey copies what a caller could change in place, so that no caller
// changes what the cache keeps.
func cloneKey(k Key) Key {
	k.Hash = slices.Clone(k.Hash)
	if k.RevokedAt != nil {
		at := *k.RevokedAt
		k.RevokedAt = &at
	}
	return k
}

// CreateOrg stores an organization.
func (c *CachedStore) CreateOrg(ctx context.Context, org Org) error {
	return c.write(c.store.CreateOrg(ctx, org))
}

// GetOrg returns an organization (never from memory).
func (c *CachedStore) GetOrg(ctx context.Context, id string) (Org, error) {
	return c.store.GetOrg(ctx, id)
}

// ListOrgs lists the organizations (never from memory).
func (c *CachedStore) ListOrgs(ctx context.Context) ([]Org, error) { return c.store.ListOrgs(ctx) }

// CreateProject stores a project.
func (c *CachedStore) CreateProject(ctx context.Context, p Project) error {
	return c.write(c.store.CreateProject(ctx, p))
}

// UpdateProject changes a project.
func (c *CachedStore) UpdateProject(ctx context.Context, p Project) error {
	return c.write(c.store.UpdateProject(ctx, p))
}

// ListProjects lists an organization's projects (never from memory).
func (c *CachedStore) ListProjects(ctx context.Context, orgID string) ([]Project, error) {
	return c.store.ListProjects(ctx, orgID)
}

// CreateDomain stores a domain.
func (c *CachedStore) CreateDomain(ctx context.Context, d Domain) error {
	return c.write(c.store.CreateDomain(ctx, d))
}

// UpdateDomain changes a domain.
func (c *CachedStore) UpdateDomain(ctx context.Context, d Domain) error {
	return c.write(c.store.UpdateDomain(ctx, d))
}

// ListDomains lists an organization's domains (never from memory).
func (c *CachedStore) ListDomains(ctx context.Context, orgID string) ([]Domain, error) {
	return c.store.ListDomains(ctx, orgID)
}

// CreateKey stores a key.
func (c *CachedStore) CreateKey(ctx context.Context, k Key) error {
	return c.write(c.store.CreateKey(ctx, k))
}

// ListKeys lists an organization's keys (never from memory).
func (c *CachedStore) ListKeys(ctx context.Context, orgID string) ([]Key, error) {
	return c.store.ListKeys(ctx, orgID)
}

// RevokeKey revokes a key; this process refuses it from now on.
func (c *CachedStore) RevokeKey(ctx context.Context, orgID, id string, at time.Time) error {
	return c.write(c.store.RevokeKey(ctx, orgID, id, at))
}
