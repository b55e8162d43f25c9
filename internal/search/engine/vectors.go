package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrBadVector is a vector that cannot be used: empty, of another
// dimension than the index's, or not finite.
var ErrBadVector = errors.New("unusable vector")

// SetVectors gives the chunks their vectors, for Nearest: vectorOf returns
// a chunk's vector, or nil when it has none. Vectors are kept at unit
// length; one of another length than the first, or not finite, is left
// out (its chunk is found by words alone). It returns how many chunks have
// a vector. It is for an index not yet shared with other goroutines.
func (di *Index) SetVectors(vectorOf func(c *Chunk) []float32) int {
	vectorAt := make([]int32, len(di.chunks))
	var (
		flat []float32
		dims int
		n    int
	)
	for d := range di.chunks {
		vectorAt[d] = -1
		unit, ok := Normalized(vectorOf(&di.chunks[d]))
		if !ok || (dims != 0 && len(unit) != dims) {
			continue
		}
		if dims == 0 {
			dims = len(unit)
			flat = make([]float32, 0, dims*len(di.chunks))
		}
		vectorAt[d] = int32(len(flat) / dims)
		flat = append(flat, unit...)
		n++
	}
	if n == 0 {
		return 0
	}
	di.vectors, di.vectorAt, di.dims = slices.Clip(flat), vectorAt, dims
	di.bytes += int64(4*len(di.vectors) + 4*len(di.vectorAt))
	return n
}

// Nearest returns up to k chunks the filter keeps, by cosine to vec, best
// first, with the cosine (at least 0) as Score; none when the index has no
// vectors. A vector of another dimension than the index's is an error
// wrapping ErrBadVector.
//
// It scans every vector: a docs site has thousands of passages, and an
// approximate index would only add memory and a second truth to keep in
// step.
func (di *Index) Nearest(vec []float32, k int, f Filter) ([]Hit, error) {
	if di.dims == 0 || k <= 0 {
		return nil, nil
	}
	if len(vec) != di.dims {
		return nil, fmt.Errorf("a query vector of %d dimensions, the passages' have %d: %w", len(vec), di.dims, ErrBadVector)
	}
	q, ok := Normalized(vec)
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
		cos := dot(di.vectors[int(at)*di.dims:int(at+1)*di.dims], q)
		if len(best) == k && cos <= best[k-1].cos {
			continue
		}
		if !keep.keeps(&di.chunks[d]) {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, cos, func(s scored, t float32) int { return cmp.Compare(t, s.cos) })
		// Equal cosines keep chunk order: after those already there.
		for i < len(best) && best[i].cos == cos {
			i++
		}
		best = slices.Insert(best, i, scored{doc: int32(d), cos: cos})
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

// Normalized returns v scaled to unit length, or false when v is empty,
// has no length or a value that is not finite.
func Normalized(v []float32) ([]float32, bool) {
	var sum float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		sum += f * f
	}
	if sum == 0 || math.IsInf(sum, 0) {
		return nil, false
	}
	inv := 1 / math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out, true
}

// dot is the dot product of two vectors of the same length. Four sums run
// side by side: the scan of an index's vectors is this loop, and the
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
