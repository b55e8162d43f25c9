package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/search"
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
	q := search.Query{Terms: search.ParseQuery("samovar", "en"), Limit: 5}
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
