package search_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// TestFixedRanksAsMemory: the same site, indexed in memory from its chunks
// (Fixed) and through the store (Memory over SQLite), gives the same
// passages in the same order with the same scores, and the same counts
// the assistant asks for.
func TestFixedRanksAsMemory(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	_, chunks, err := search.LoadFolder("testdata/site", "", "https://docs.example.com")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	mem := search.NewMemory(st, search.MemoryConfig{})
	t.Cleanup(mem.Close)
	if _, err := search.BuildChunks(ctx, mem, "served", chunks); err != nil {
		t.Fatal(err)
	}
	// Shuffled: the order a site is read in must not matter.
	shuffled := append([]search.Chunk(nil), chunks...)
	for i, j := 0, len(shuffled)-1; i < j; i, j = i+1, j-1 {
		shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
	}
	fixed := search.NewFixed("served", shuffled)

	fromMem, fromFixed := search.NewRetriever(mem), search.NewRetriever(fixed)
	found := 0
	for _, q := range []string{"how do I brew tea", "water temperature", "kettle API", "boil", "staff", "nothing matches zyxwv"} {
		want, err := fromMem.Retrieve(ctx, "served", search.Request{Query: q, PageSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		got, err := fromFixed.Retrieve(ctx, "served", search.Request{Query: q, PageSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		// The store gives a page without groups an empty list, not nil.
		for _, hits := range [][]search.Hit{got, want} {
			for i := range hits {
				if len(hits[i].Groups) == 0 {
					hits[i].Groups = nil
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("%q: passage %d: fixed gives\n%#v\nmemory\n%#v", q, i, got[i], want[i])
				}
			}
			t.Errorf("%q: fixed gives %v, memory %v", q, ids(got), ids(want))
		}
		found += len(got)
	}
	if found < 10 {
		t.Fatalf("the questions found %d passages in all; the comparison says nothing", found)
	}
	wantPages, _ := mem.PageCount(ctx, "served")
	if got, _ := fixed.PageCount(ctx, "served"); got != wantPages || got == 0 {
		t.Errorf("page count = %d, memory says %d", got, wantPages)
	}
	term := search.Term{Words: []string{"the"}}
	wantCount, _ := mem.CountPages(ctx, "served", term, search.Filter{}, 0)
	if got, _ := fixed.CountPages(ctx, "served", term, search.Filter{}, 0); got != wantCount {
		t.Errorf("pages with %q = %d, memory says %d", "the", got, wantCount)
	}
	wantHashes, _ := mem.PageHashes(ctx, "served")
	if got, _ := fixed.PageHashes(ctx, "served"); !reflect.DeepEqual(got, wantHashes) {
		t.Errorf("page hashes differ from the store's")
	}
	page := chunks[0].PagePath
	wantPage, _ := mem.Page(ctx, "served", page)
	if got, err := fixed.Page(ctx, "served", page); err != nil || !reflect.DeepEqual(got, wantPage) {
		t.Errorf("page %s = %v, %v; memory gives %v", page, got, err, wantPage)
	}

	if err := fixed.ReplacePages(ctx, "served", chunks[:1], nil); !errors.Is(err, search.ErrReadOnly) {
		t.Errorf("a write = %v, want ErrReadOnly", err)
	}
	if _, err := fixed.Page(ctx, "other", page); !errors.Is(err, search.ErrPageNotFound) {
		t.Errorf("a page of another domain = %v, want ErrPageNotFound", err)
	}
	if hits, _ := fixed.Search(ctx, "other", search.Query{Text: "install", Limit: 5}); len(hits) != 0 {
		t.Errorf("another domain's search found %d passages", len(hits))
	}
}

func ids(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}
