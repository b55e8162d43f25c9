package postgres_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

func open(t testing.TB, url string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close postgres store: %v", err)
		}
	})
	return s
}

// TestStore runs the conformance suite, each case on a fresh schema.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Store {
		return open(t, storetest.PostgresURL(t))
	})
}

// TestMigrateConcurrently opens several stores on one empty schema at once,
// as replicas starting together do: the advisory lock lets one apply each
// migration and the others find it applied.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	stores := make([]*postgres.Store, len(errs))
	for i := range errs {
		wg.Go(func() {
			stores[i], errs[i] = postgres.Open(context.Background(), url, slog.New(slog.DiscardHandler))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: open: %v", i, err)
			continue
		}
		if err := stores[i].Ping(t.Context()); err != nil {
			t.Errorf("replica %d: ping: %v", i, err)
		}
		stores[i].Close()
	}
	// Opening again changes nothing.
	s := open(t, url)
	if _, err := s.ListOrgs(t.Context()); err != nil {
		t.Fatalf("ListOrgs after the migrations: %v", err)
	}
}
