package search

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The index does not depend on how many goroutines analysed the chunks or
// which batches each took: every stem's postings, the lengths, pages and
// boosts come out the same as from one.
func TestIndexBuildSameWithAnyWorkers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	vocab := []string{"kettle", "Kettles", "water", "boiling", "randomUUID", "HTTPServer", "café", "naïve",
		"侧边栏", "导航", "カタカナ", "한국어", "x²", "getID2", "descale", "lid", "timer", "“quoted”", "—"}
	var chunks []Chunk
	for i := range 5*buildBatch + 17 {
		var words []string
		for range 1 + rng.IntN(40) {
			words = append(words, vocab[rng.IntN(len(vocab))])
		}
		page := fmt.Sprintf("p%03d", i/3)
		chunks = append(chunks, Chunk{
			ID: fmt.Sprintf("%s#%d", page, i), PagePath: page, Seq: i % 3,
			PageTitle:  "Title " + vocab[(i/3)%len(vocab)],
			Breadcrumb: []string{"Guides", "Title " + vocab[(i/3)%len(vocab)], vocab[i%len(vocab)]},
			Keywords:   vocab[(i/3+1)%len(vocab)],
			Text:       strings.Join(words, " "),
			Boost:      float64(i % 4),
		})
	}
	build := func(workers int) *domainIndex {
		b := newIndexBuilderN(workers)
		for _, c := range chunks {
			if err := b.add(c); err != nil {
				t.Fatal(err)
			}
		}
		return b.finish(3)
	}
	one := build(1)
	if len(one.terms) < len(vocab) || len(one.chunks) != len(chunks) {
		t.Fatalf("one goroutine: %d terms, %d chunks", len(one.terms), len(one.chunks))
	}
	for _, n := range []int{2, 3, 8} {
		if got := build(n); !reflect.DeepEqual(got, one) {
			t.Errorf("the index built by %d goroutines differs from one built by one", n)
		}
	}
}
