package postgres_test

import (
	"fmt"
	"testing"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// TestSearchConcurrentWriters: writers of one domain, each rewriting its
// own page again and again at once, all succeed, and each page ends with
// its last version.
func TestSearchConcurrentWriters(t *testing.T) {
	t.Parallel()
	s := open(t, storetest.PostgresURL(t))
	ctx := t.Context()
	page := func(path string, version int) []search.Chunk {
		return []search.Chunk{
			{ID: path + "#a", PagePath: path, PageTitle: path, Text: fmt.Sprintf("shared words, version %d", version), PageHash: fmt.Sprint(version)},
			{ID: path + "#b", PagePath: path, Seq: 1, PageTitle: path, Text: "and more words", PageHash: fmt.Sprint(version)},
		}
	}
	const writers, versions = 8, 5
	errs := make(chan error, writers*versions)
	for w := range writers {
		go func() {
			for v := range versions {
				errs <- s.ReplacePages(ctx, "tea", page(fmt.Sprintf("p%d", w), v), nil)
			}
		}()
	}
	for range writers * versions {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent ReplacePages: %v", err)
		}
	}
	hashes, err := s.PageHashes(ctx, "tea")
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes) != writers {
		t.Fatalf("%d pages, want %d: %v", len(hashes), writers, hashes)
	}
	for p, h := range hashes {
		if h != fmt.Sprint(versions-1) {
			t.Errorf("page %s is at version %s, want the last, %d", p, h, versions-1)
		}
	}
}
