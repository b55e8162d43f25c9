package tenant_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// countingStore counts the key and project reads that reach the store, and
// can hold a key read until released.
type countingStore struct {
	tenant.Store
	keyReads, projectReads atomic.Int32

	mu   sync.Mutex
	hold chan struct{} // when not nil, GetKey waits for it to close
	held chan struct{} // closed when a GetKey starts waiting
}

func (s *countingStore) GetKey(ctx context.Context, id string) (tenant.Key, error) {
	s.keyReads.Add(1)
	k, err := s.Store.GetKey(ctx, id)
	s.mu.Lock()
	hold, held := s.hold, s.held
	s.mu.Unlock()
	if hold != nil {
		close(held)
		<-hold
	}
	return k, err
}

func (s *countingStore) GetProject(ctx context.Context, id string) (tenant.Project, error) {
	s.projectReads.Add(1)
	return s.Store.GetProject(ctx, id)
}

// cacheFixture is a cached store over SQLite with an organization, a
// project and an admin key, on a clock the test moves.
type cacheFixture struct {
	counting *countingStore
	cache    *tenant.CachedStore
	tenants  *tenant.Service
	key      string
	keyID    string
	clock    atomic.Int64 // nanoseconds since start
	start    time.Time
}

const testMaxAge = time.Second

func newCacheFixture(t *testing.T) *cacheFixture {
	t.Helper()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &cacheFixture{counting: &countingStore{Store: store}, start: time.Now()}
	f.cache = tenant.NewCachedStore(f.counting, testMaxAge, func() time.Time { return f.start.Add(time.Duration(f.clock.Load())) })
	f.tenants = tenant.NewService(f.cache, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) })
	ctx := t.Context()
	if _, err := f.tenants.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tenants.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "/srv/docs"}); err != nil {
		t.Fatal(err)
	}
	k, secret, err := f.tenants.CreateKey(ctx, "acme", apikey.Admin, "ci")
	if err != nil {
		t.Fatal(err)
	}
	f.key, f.keyID = secret, k.ID
	return f
}

func (f *cacheFixture) advance(d time.Duration) { f.clock.Add(int64(d)) }

// request authenticates the key and finds the project, as an API request
// does.
func (f *cacheFixture) request(t *testing.T) error {
	t.Helper()
	p, err := f.tenants.Authenticate(t.Context(), f.key)
	if err != nil {
		return err
	}
	_, err = f.tenants.ProjectFor(t.Context(), p, "docs")
	return err
}

func TestCachedStoreServesFromMemoryForMaxAge(t *testing.T) {
	t.Parallel()
	f := newCacheFixture(t)
	for range 5 {
		if err := f.request(t); err != nil {
			t.Fatal(err)
		}
	}
	if k, p := f.counting.keyReads.Load(), f.counting.projectReads.Load(); k != 1 || p != 1 {
		t.Fatalf("5 requests read the key %d times and the project %d times, want once each", k, p)
	}
	f.advance(testMaxAge)
	if err := f.request(t); err != nil {
		t.Fatal(err)
	}
	if k, p := f.counting.keyReads.Load(), f.counting.projectReads.Load(); k != 2 || p != 2 {
		t.Fatalf("a request after maxAge read the key %d times and the project %d times in all, want twice each", k, p)
	}
}

// TestCachedStoreRevokedAtOnce: a key revoked through the cache is refused
// by the next request, with nothing waiting for an entry to age.
func TestCachedStoreRevokedAtOnce(t *testing.T) {
	t.Parallel()
	f := newCacheFixture(t)
	if err := f.request(t); err != nil {
		t.Fatal(err)
	}
	if err := f.tenants.Store().RevokeKey(t.Context(), "acme", f.keyID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := f.request(t); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("request with the key revoked through the cache = %v, want Unauthorized", err)
	}
}

// TestCachedStoreInvalidate: a key revoked behind the cache's back (another
// process) is refused once the change feed invalidates, and at the latest
// once its entry is maxAge old when no notice comes.
func TestCachedStoreInvalidate(t *testing.T) {
	t.Parallel()
	f := newCacheFixture(t)
	if err := f.request(t); err != nil {
		t.Fatal(err)
	}
	if err := f.counting.RevokeKey(t.Context(), "acme", f.keyID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := f.request(t); err != nil {
		t.Fatalf("within maxAge and with no notice, the key still passes from memory: %v", err)
	}
	f.cache.Invalidate()
	if err := f.request(t); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("request after Invalidate = %v, want Unauthorized", err)
	}

	g := newCacheFixture(t)
	if err := g.request(t); err != nil {
		t.Fatal(err)
	}
	if err := g.counting.RevokeKey(t.Context(), "acme", g.keyID, time.Now()); err != nil {
		t.Fatal(err)
	}
	g.advance(testMaxAge)
	if err := g.request(t); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("request maxAge after a revocation nobody announced = %v, want Unauthorized", err)
	}
}

// TestCachedStoreDropsReadsOverlappingInvalidate: a read that was under way
// when an invalidation came may hold what the change replaced; it must not
// be kept.
func TestCachedStoreDropsReadsOverlappingInvalidate(t *testing.T) {
	t.Parallel()
	f := newCacheFixture(t)
	hold, held := make(chan struct{}), make(chan struct{})
	f.counting.mu.Lock()
	f.counting.hold, f.counting.held = hold, held
	f.counting.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := f.cache.GetKey(context.Background(), f.keyID)
		done <- err
	}()
	<-held // the read has the key as it was before the revocation
	if err := f.counting.RevokeKey(t.Context(), "acme", f.keyID, time.Now()); err != nil {
		t.Fatal(err)
	}
	f.cache.Invalidate()
	f.counting.mu.Lock()
	f.counting.hold = nil
	f.counting.mu.Unlock()
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := f.request(t); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("request after a read that overlapped the invalidation = %v, want Unauthorized (the stale read was kept)", err)
	}
}

func TestCachedStoreKeepsNoMisses(t *testing.T) {
	t.Parallel()
	f := newCacheFixture(t)
	if _, err := f.cache.GetProject(t.Context(), "later"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("GetProject of an unknown project = %v, want NotFound", err)
	}
	// Created behind the cache's back: found at once all the same.
	if err := f.counting.CreateProject(t.Context(), tenant.Project{ID: "later", OrgID: "acme", RepoURL: "/srv/later", BaseRef: "main", ForgeKind: "local", DocsRoot: ".", Model: "builtin", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.cache.GetProject(t.Context(), "later"); err != nil {
		t.Fatalf("GetProject after the project was created = %v", err)
	}
}

// TestCachedStoreChecksTheChangeCounter: with CheckChanges, the cache reads
// the store's change counter before it serves from memory, once for all
// the lookups within checkEvery, and a key revoked by another process (the
// CLI, on the same SQLite file) is refused as soon as the counter is read
// again.
func TestCachedStoreChecksTheChangeCounter(t *testing.T) {
	t.Parallel()
	const checkEvery = time.Millisecond
	dir := t.TempDir()
	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &cacheFixture{counting: &countingStore{Store: store}, start: time.Now()}
	var counterReads atomic.Int32
	var counterFails atomic.Bool
	counter := func(ctx context.Context) (int64, error) {
		counterReads.Add(1)
		if counterFails.Load() {
			return 0, errors.New("database is locked")
		}
		return store.TenantChanges(ctx)
	}
	f.cache = tenant.NewCachedStore(f.counting, time.Hour, func() time.Time { return f.start.Add(time.Duration(f.clock.Load())) }).
		CheckChanges(counter, checkEvery)
	f.tenants = tenant.NewService(f.cache, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) })
	if _, err := f.tenants.CreateOrg(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tenants.CreateProject(t.Context(), tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "/srv/docs"}); err != nil {
		t.Fatal(err)
	}
	k, secret, err := f.tenants.CreateKey(t.Context(), "acme", apikey.Admin, "ci")
	if err != nil {
		t.Fatal(err)
	}
	f.key, f.keyID = secret, k.ID

	for range 5 {
		if err := f.request(t); err != nil {
			t.Fatal(err)
		}
	}
	if k, p, c := f.counting.keyReads.Load(), f.counting.projectReads.Load(), counterReads.Load(); k != 1 || p != 1 || c != 1 {
		t.Fatalf("5 requests within checkEvery read the key %d times, the project %d times and the counter %d times, want once each", k, p, c)
	}

	cli, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := cli.RevokeKey(t.Context(), "acme", f.keyID, time.Now()); err != nil {
		t.Fatal(err)
	}
	f.advance(checkEvery)
	if err := f.request(t); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("request checkEvery after another process revoked the key = %v, want Unauthorized", err)
	}

	// A counter that cannot be read serves nothing from memory.
	reads := f.counting.projectReads.Load()
	counterFails.Store(true)
	f.advance(checkEvery)
	for range 2 {
		if _, err := f.cache.GetProject(t.Context(), "docs"); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.counting.projectReads.Load() - reads; got != 2 {
		t.Errorf("with the counter unreadable, 2 lookups read the project %d times, want 2", got)
	}
}
