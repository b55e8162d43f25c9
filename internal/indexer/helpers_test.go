package indexer_test

import (
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

const siteURL = "https://tern.example/docs"

// env is one test's world: a real SQLite store with an organization, the
// store's search index held in memory as a server holds it, and the
// assistant that searches it.
type env struct {
	t       testing.TB
	store   *sqlite.Store
	index   *search.Memory
	tenants *tenant.Service
	svc     *assistant.Service
}

func setup(t testing.TB) *env {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	e := &env{t: t, store: store, index: search.NewMemory(store, search.MemoryConfig{}), tenants: tenant.NewService(store, now)}
	_, err = e.tenants.CreateOrg(ctx, "acme")
	must(t, err)
	e.svc = assistant.New(assistant.Config{Index: e.index, Threads: store, Now: now, Heartbeat: time.Hour})
	return e
}

// newIndexer is an indexer over e's store reading repositories as cfg
// says.
func newIndexer(e *env, cfg projectrepo.Config) *indexer.Indexer {
	return indexer.New(indexer.Config{Repos: projectrepo.New(cfg), Projects: e.store, Index: e.index, Catalogs: e.store, Log: cfg.Log})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
