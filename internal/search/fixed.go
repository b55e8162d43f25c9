package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// ErrReadOnly is a write to a Fixed index.
var ErrReadOnly = errors.New("this search index is read-only")

// Fixed is a read-only Index of one domain's chunks, built in memory and
// never stored: the docs of a ref that is not served (a pull request's
// head, say), searched exactly as Memory searches a domain (the same
// engine, built from the chunks in the store's order), so that an answer
// from it is the one readers would get once those docs are served. It
// answers only its own domain; writes are refused.
type Fixed struct {
	domain string
	idx    *engine.Index
	hashes map[string]string // page path → PageHash
}

var (
	_ Index          = (*Fixed)(nil)
	_ VectorSearcher = (*Fixed)(nil)
)

// NewFixed indexes chunks (as Chunks cuts a site) for domain.
func NewFixed(domain string, chunks []Chunk) *Fixed {
	sorted := slices.Clone(chunks)
	// The store's order (page path, then seq), in which Memory loads a
	// domain: ties in ranking fall the same way.
	slices.SortStableFunc(sorted, func(a, b Chunk) int {
		return cmp.Or(cmp.Compare(a.PagePath, b.PagePath), cmp.Compare(a.Seq, b.Seq))
	})
	hashes := map[string]string{}
	for _, c := range sorted {
		hashes[c.PagePath] = c.PageHash
	}
	return &Fixed{domain: domain, idx: engine.Build(sorted, 1), hashes: hashes}
}

// SetVectors gives the chunks their vectors for dense retrieval (see
// engine.Index.SetVectors), by their EmbedHash; it returns how many
// chunks have one. Call it before the index is searched.
func (f *Fixed) SetVectors(byHash func(hash string) []float32) int {
	return f.idx.SetVectors(func(c *Chunk) []float32 { return byHash(EmbedHash(c)) })
}

// Chunks is how many passages the index holds.
func (f *Fixed) Chunks() int { return f.idx.Chunks() }

func (f *Fixed) check(domain string) error {
	if domain != f.domain {
		return fmt.Errorf("this index holds the docs of %s, not %s: %w", f.domain, domain, ErrPageNotFound)
	}
	return nil
}

// ReplacePages is refused.
func (f *Fixed) ReplacePages(context.Context, string, []Chunk, []string) error {
	return fmt.Errorf("replace pages: %w", ErrReadOnly)
}

// PageHashes returns each page's hash.
func (f *Fixed) PageHashes(_ context.Context, domain string) (map[string]string, error) {
	if err := f.check(domain); err != nil {
		return map[string]string{}, nil
	}
	return maps.Clone(f.hashes), nil
}

// Search runs q.
func (f *Fixed) Search(_ context.Context, domain string, q Query) ([]Hit, error) {
	if err := f.check(domain); err != nil {
		return nil, nil
	}
	return f.idx.Search(q), nil
}

// Page assembles a page from its chunks.
func (f *Fixed) Page(_ context.Context, domain, path string) (PageText, error) {
	if err := f.check(domain); err != nil {
		return PageText{}, err
	}
	if pt, ok := f.idx.Page(path); ok {
		return pt, nil
	}
	return PageText{}, fmt.Errorf("page %s of %s: %w", path, domain, ErrPageNotFound)
}

// PageCount is how many pages have passages, as Memory counts them.
func (f *Fixed) PageCount(_ context.Context, domain string) (int, error) {
	if err := f.check(domain); err != nil {
		return 0, nil
	}
	return f.idx.Pages(), nil
}

// CountPages counts the pages holding t, as Memory does.
func (f *Fixed) CountPages(_ context.Context, domain string, t Term, fl Filter, upTo int) (int, error) {
	if err := f.check(domain); err != nil {
		return 0, nil
	}
	return f.idx.CountPages(t, fl, upTo), nil
}

// SearchVector runs a cosine search on the vectors given by SetVectors.
func (f *Fixed) SearchVector(_ context.Context, domain string, vec []float32, k int, fl Filter) ([]Hit, error) {
	if err := f.check(domain); err != nil {
		return nil, nil
	}
	return f.idx.Nearest(vec, k, fl)
}
