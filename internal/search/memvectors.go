package search

import (
	"context"
	"fmt"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// VectorSearcher finds the passages nearest a query vector, for hybrid
// retrieval. Memory is one; it finds none unless it holds vectors
// (MemoryConfig.Embedder).
type VectorSearcher interface {
	// SearchVector returns up to k chunks the filter keeps, nearest vec
	// by cosine first, with the cosine as Score; none when the domain has
	// no vectors. A vector of another dimension than the domain's is an
	// error wrapping ErrBadVector.
	SearchVector(ctx context.Context, domain string, vec []float32, k int, f Filter) ([]Hit, error)
}

var _ VectorSearcher = (*Memory)(nil)

// ErrBadVector is a vector that cannot be used (see engine.ErrBadVector).
var ErrBadVector = engine.ErrBadVector

// SearchVector runs a cosine search on the domain's vectors held in
// memory (see engine.Index.Nearest).
func (m *Memory) SearchVector(ctx context.Context, domain string, vec []float32, k int, f Filter) ([]Hit, error) {
	di, err := m.index(ctx, domain)
	if err != nil {
		return nil, fmt.Errorf("search %s by vector: %w", domain, err)
	}
	return di.Nearest(vec, k, f)
}

// attachVectors reads the domain's vectors for the embedder's model from
// the store and gives each chunk of di its own, by content hash. A store
// that fails leaves di without vectors (BM25 serves alone) until the
// domain next loads.
func (m *Memory) attachVectors(ctx context.Context, domain string, di *engine.Index) {
	vs, ok := m.src.(VectorSource)
	if m.cfg.Embedder == nil || !ok || di.Chunks() == 0 {
		return
	}
	byHash := map[string][]float32{}
	err := vs.DomainVectors(ctx, domain, m.cfg.Embedder.Model(), func(v Vector) error {
		byHash[v.Hash] = v.Values
		return nil
	})
	if err != nil {
		m.cfg.Log.WarnContext(ctx, "search: reading the passage vectors failed; searching without them", "domain", domain, "err", err)
		return
	}
	if len(byHash) == 0 {
		return
	}
	di.SetVectors(func(c *Chunk) []float32 { return byHash[EmbedHash(c)] })
}
