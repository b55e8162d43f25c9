package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// VectorSearcher finds the passages nearest a query vector, for hybrid
// retrieval. Memory is one when it holds vectors (MemoryConfig.VectorModel).
type VectorSearcher interface {
	// SearchVector returns up to k chunks the filter keeps, nearest vec
	// by cosine first, with the cosine as Score; none when the domain has
	// no vectors. A vector of another dimension than the domain's is an
	// error wrapping ErrBadVector.
	SearchVector(ctx context.Context, domain string, vec []float32, k int, f Filter) ([]Hit, error)
}

var _ VectorSearcher = (*Memory)(nil)

// SearchVector runs a brute-force cosine search on the domain's vectors
// held in memory: a docs site has thousands of passages, which a scan
// compares in well under a millisecond, and an approximate index would
// only add memory and a second truth to keep in step.
func (m *Memory) SearchVector(ctx context.Context, domain string, vec []float32, k int, f Filter) ([]Hit, error) {
	di, err := m.index(ctx, domain)
	if err != nil {
		return nil, fmt.Errorf("search %s by vector: %w", domain, err)
	}
	return di.nearest(vec, k, f)
}

// attachVectors reads the domain's vectors for the configured model from
// the store and gives each chunk of di its own, by content hash. A store
// that fails leaves di without vectors (BM25 serves alone) until the
// domain next loads.
func (m *Memory) attachVectors(ctx context.Context, domain string, di *domainIndex) {
	vs, ok := m.src.(VectorSource)
	if m.cfg.Embedder == nil || !ok || len(di.chunks) == 0 {
		return
	}
	want := make(map[string][]int32, len(di.chunks))
	for d := range di.chunks {
		h := EmbedHash(&di.chunks[d])
		want[h] = append(want[h], int32(d))
	}
	vectorAt := make([]int32, len(di.chunks))
	for d := range vectorAt {
		vectorAt[d] = -1
	}
	var (
		flat []float32
		dims int
		n    int32
	)
	err := vs.DomainVectors(ctx, domain, m.cfg.Embedder.Model(), func(v Vector) error {
		docs := want[v.Hash]
		if len(docs) == 0 {
			return nil
		}
		unit, ok := normalized(v.Values)
		if !ok || (dims != 0 && len(unit) != dims) {
			// One bad vector costs its passages the dense path, no more.
			return nil
		}
		if dims == 0 {
			dims = len(unit)
			flat = make([]float32, 0, dims*len(di.chunks))
		}
		flat = append(flat, unit...)
		for _, d := range docs {
			vectorAt[d] = n
		}
		n++
		return nil
	})
	if err != nil {
		m.cfg.Log.WarnContext(ctx, "search: reading the passage vectors failed; searching without them", "domain", domain, "err", err)
		return
	}
	if n == 0 {
		return
	}
	di.vectors, di.vectorAt, di.dims = flat[:len(flat):len(flat)], vectorAt, dims
	di.bytes += int64(4*len(di.vectors) + 4*len(vectorAt))
}

// nearest is SearchVector on this index.
func (di *domainIndex) nearest(vec []float32, k int, f Filter) ([]Hit, error) {
	if di.dims == 0 || k <= 0 {
		return nil, nil
	}
	if len(vec) != di.dims {
		return nil, fmt.Errorf("a query vector of %d dimensions, the passages' have %d: %w", len(vec), di.dims, ErrBadVector)
	}
	q, ok := normalized(vec)
	if !ok {
		return nil, fmt.Errorf("a query vector of no length: %w", ErrBadVector)
	}
	keep := di.chunkFilter(f)
	type scored struct {
		doc int32
		cos float32
	}
	// best is kept sorted, worst last, k long at most: k is small (tens),
	// so an insertion beats a heap.
	best := make([]scored, 0, k+1)
	for d, at := range di.vectorAt {
		if at < 0 {
			continue
		}
		dot := dot(di.vectors[int(at)*di.dims:int(at+1)*di.dims], q)
		if len(best) == k && dot <= best[k-1].cos {
			continue
		}
		if !keep.keeps(&di.chunks[d]) {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, dot, func(s scored, t float32) int { return cmp.Compare(t, s.cos) })
		// Equal cosines keep chunk order: after those already there.
		for i < len(best) && best[i].cos == dot {
			i++
		}
		best = slices.Insert(best, i, scored{doc: int32(d), cos: dot})
		if len(best) > k {
			best = best[:k]
		}
	}
	out := make([]Hit, len(best))
	for i, s := range best {
		out[i] = Hit{Chunk: di.chunks[s.doc], Score: min(max(float64(s.cos), 0), 1)}
	}
	return out, nil
}

// dot is the dot product of two vectors of the same length. Four sums run
// side by side: the scan of a domain's vectors is this loop, and the
// processor overlaps independent additions where one sum would wait on
// each.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
