package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// A domain re-indexed by one process reaches another's index in memory
// through the change notification, without waiting for a version check.
func TestSearchChangeNotifiedAcrossProcesses(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	a, b := open(t, url), open(t, url)
	ctx := t.Context()
	page := func(text string) []search.Chunk {
		return []search.Chunk{{ID: "p", PagePath: "p", PageTitle: "p", Text: text, PageHash: text}}
	}
	if err := a.ReplacePages(ctx, "d", page("teapot"), nil); err != nil {
		t.Fatal(err)
	}
	// b checks versions only after an hour: what it sees comes from the
	// notification.
	mem := search.NewMemory(b, search.MemoryConfig{CheckEvery: time.Hour})
	ready := make(chan struct{})
	watchCtx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { b.WatchSearch(watchCtx, mem.Changed, ready) })
	t.Cleanup(func() { stop(); wg.Wait() })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("not listening for index changes")
	}
	q := search.Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 5}
	if hits, err := mem.Search(ctx, "d", q); err != nil || len(hits) != 0 {
		t.Fatalf("before the change: %v, %v", hits, err)
	}
	if err := a.ReplacePages(ctx, "d", page("samovar"), nil); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	for {
		hits, err := mem.Search(ctx, "d", q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 1 {
			return
		}
		if time.Since(changed) > time.Second {
			t.Fatal("the change was not seen within a second")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The store keeps one snapshot a domain: a later version replaces it, an
// earlier one does not, one larger than the reader's bound or of another
// key is not returned, and any change of the domain's pages drops it.
// While another process writes the domain's snapshot, a write does
// nothing.
func TestSharedSnapshots(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	s := open(t, url)
	ctx := t.Context()
	get := func(key string, maxBytes int64) string {
		t.Helper()
		data, err := s.SharedSnapshot(ctx, "d", []byte(key), maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	put := func(version int64, key, data string) {
		t.Helper()
		if err := s.PutSharedSnapshot(ctx, "d", version, []byte(key), []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if v, key, err := s.SharedSnapshotStamp(ctx, "d"); err != nil || v != 0 || key != nil {
		t.Fatalf("stamp with no snapshot: %d %q %v", v, key, err)
	}
	// Another process writing the domain's snapshot holds its lock.
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close(context.Background()) }()
	const lockSearchSnapshot = 0x64730004
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext('d'))`, lockSearchSnapshot); err != nil {
		t.Fatal(err)
	}
	put(1, "k1", "one")
	if v, _, err := s.SharedSnapshotStamp(ctx, "d"); err != nil || v != 0 {
		t.Fatalf("a write while another process writes the snapshot kept version %d (%v)", v, err)
	}
	if _, err := other.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext('d'))`, lockSearchSnapshot); err != nil {
		t.Fatal(err)
	}
	put(2, "k2", "two")
	put(1, "k1", "one")
	if v, key, err := s.SharedSnapshotStamp(ctx, "d"); err != nil || v != 2 || string(key) != "k2" {
		t.Fatalf("stamp after versions 2 then 1: %d %q %v", v, key, err)
	}
	if got := get("k2", 100); got != "two" {
		t.Fatalf("snapshot %q, want two", got)
	}
	if got := get("k1", 100); got != "" {
		t.Fatalf("snapshot of another key: %q", got)
	}
	if got := get("k2", 2); got != "" {
		t.Fatalf("snapshot over the bound: %q", got)
	}
	put(2, "k2b", "two again")
	if got := get("k2b", 100); got != "two again" {
		t.Fatalf("a snapshot of the same version did not replace the one kept: %q", got)
	}
	page := []search.Chunk{{ID: "p", PagePath: "p", PageTitle: "p", Text: "teapot", PageHash: "h"}}
	if err := s.ReplacePages(ctx, "d", page, nil); err != nil {
		t.Fatal(err)
	}
	if v, _, err := s.SharedSnapshotStamp(ctx, "d"); err != nil || v != 0 {
		t.Fatalf("after a change of the pages the store keeps a snapshot of version %d (%v)", v, err)
	}
}
