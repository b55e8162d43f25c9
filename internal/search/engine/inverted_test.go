package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCandHeapKeepsBest checks that candHeap keeps the best n of the
// candidates offered, and that once it holds n its root is the worst of
// them, as maxScore reads it for its threshold after every offer.
func TestCandHeapKeepsBest(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 7, 64} {
		for round := 0; round < 50; round++ {
			var h candHeap
			var offered []scored
			count := rng.IntN(4 * n)
			for d := 0; d < count; d++ {
				// Few distinct scores, so that ties are ordered by chunk.
				c := scored{doc: int32(d), score: float64(rng.IntN(5))}
				h.offer(n, c)
				offered = append(offered, c)
				want := bestOf(offered, n)
				if h.Len() != len(want) {
					t.Fatalf("n=%d: heap holds %d, want %d", n, h.Len(), len(want))
				}
				if h.Len() == n && h.s[0] != want[len(want)-1] {
					t.Fatalf("n=%d: root %v, want the worst kept %v", n, h.s[0], want[len(want)-1])
				}
			}
			got := bestOf(h.s, n)
			if !slices.Equal(got, bestOf(offered, n)) {
				t.Fatalf("n=%d: kept %v, want %v", n, got, bestOf(offered, n))
			}
		}
	}
}

// bestOf returns the best n of cands, best first.
func bestOf(cands []scored, n int) []scored {
	sorted := slices.Clone(cands)
	slices.SortFunc(sorted, func(a, b scored) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return sorted[:min(n, len(sorted))]
}

// TestSeek checks seek against a binary search of the rest of the list.
func TestSeek(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	for round := 0; round < 500; round++ {
		var docs []int32
		d := int32(0)
		for range rng.IntN(100) {
			d += 1 + int32(rng.IntN(5))
			docs = append(docs, d)
		}
		from := rng.IntN(len(docs) + 1)
		target := int32(rng.IntN(int(d) + 3))
		skip, _ := slices.BinarySearch(docs[from:], target)
		if got := seek(docs, from, target); got != from+skip {
			t.Fatalf("seek(%v, %d, %d) = %d, want %d", docs, from, target, got, from+skip)
		}
	}
}
