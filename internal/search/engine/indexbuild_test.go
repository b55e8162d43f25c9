package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
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
	build := func(workers int) *Index {
		b := newIndexBuilderN(workers)
		for _, c := range chunks {
			if err := b.Add(c); err != nil {
				t.Fatal(err)
			}
		}
		return b.Finish(3)
	}
	one := build(1)
	if len(one.terms) < len(vocab) || len(one.chunks) != len(chunks) {
		t.Fatalf("one goroutine: %d terms, %d chunks", len(one.terms), len(one.chunks))
	}
	want := naivePostings(chunks)
	if len(one.terms) != len(want) {
		t.Fatalf("%d terms, want %d", len(one.terms), len(want))
	}
	for st, w := range want {
		got := one.terms[st]
		if got == nil || !slices.Equal(got.docs, w.docs) || !slices.Equal(got.wtf, w.wtf) || !slices.Equal(got.off, w.off) || !slices.Equal(got.pos, w.pos) {
			t.Fatalf("postings of %q: %+v, want %+v", st, got, w)
		}
	}
	for _, n := range []int{2, 3, 8} {
		if got := build(n); !reflect.DeepEqual(got, one) {
			t.Errorf("the index built by %d goroutines differs from one built by one", n)
		}
	}
}

// naivePostings indexes chunks the plain way, one token at a time, for
// the build to be checked against.
func naivePostings(chunks []Chunk) map[string]*postings {
	out := map[string]*postings{}
	for d, c := range chunks {
		f := rawFields(c)
		for fi, text := range [numFields]string{f.Title, f.Headings, f.Keywords, f.Body} {
			p := 0
			analyzedTokens(text, func(raw string) {
				st := stemToken(raw)
				pl := out[st]
				if pl == nil {
					pl = &postings{}
					out[st] = pl
				}
				if len(pl.docs) == 0 || pl.docs[len(pl.docs)-1] != int32(d) {
					pl.docs = append(pl.docs, int32(d))
					pl.wtf = append(pl.wtf, 0)
					pl.off = append(pl.off, uint32(len(pl.pos)))
				}
				pl.wtf[len(pl.wtf)-1] += fieldWeights[fi]
				if p <= posMask {
					pl.pos = append(pl.pos, uint32(fi)<<fieldShift|uint32(p))
				}
				p++
			})
		}
	}
	for _, pl := range out {
		pl.off = append(pl.off, uint32(len(pl.pos)))
	}
	return out
}
