package engine

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func textChunk(page, text string) Chunk {
	return Chunk{ID: page, PagePath: page, PageTitle: page, Text: text, PageHash: text}
}

// MaxScore pruning returns exactly the best candidates that scoring every
// match would.
func TestMaxScoreMatchesExhaustiveScoring(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"kettle", "water", "boil", "tea", "green", "black", "cup", "descale", "filter", "lid",
		"steam", "spout", "handle", "timer", "warm", "cold", "leaf", "brew", "pour", "temperature"}
	var chunks []Chunk
	for i := range 400 {
		var words []string
		for range 3 + rng.IntN(60) {
			// Skewed: the first words are common, the last rare.
			words = append(words, vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64())])
		}
		c := textChunk(fmt.Sprintf("p%03d", i), fmt.Sprint(words))
		c.PageTitle = vocab[rng.IntN(len(vocab))]
		if i%7 == 0 {
			c.Boost = 3
		}
		chunks = append(chunks, c)
	}
	di := Build(chunks, 1)
	for trial := range 200 {
		var q string
		for range 1 + rng.IntN(6) {
			q += vocab[rng.IntN(len(vocab))] + " "
		}
		query := Query{Terms: ParseQuery(q, "en"), BoostPath: fmt.Sprintf("p%03d", rng.IntN(400)), PathBoost: 1.5}
		n := 1 + rng.IntN(40)
		got := searchCandidates(di, query, n)
		all := searchCandidates(di, query, len(chunks))
		bestFirst := func(a, b scored) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			return cmp.Compare(a.doc, b.doc)
		}
		slices.SortFunc(all, bestFirst)
		slices.SortFunc(got, bestFirst)
		want := all[:min(n, len(all))]
		if len(got) != len(want) {
			t.Fatalf("trial %d %q top %d: %d candidates, want %d", trial, q, n, len(got), len(want))
		}
		for i := range want {
			// The same sums, added in another order.
			if math.Abs(got[i].score-want[i].score) > 1e-9*want[i].score {
				t.Fatalf("trial %d %q top %d: #%d scores %v, want %v", trial, q, n, i, got[i].score, want[i].score)
			}
		}
	}
}

// searchCandidates is di.search's best n candidates of q, copied out of
// the scratch they are held in.
func searchCandidates(di *Index, q Query, n int) []scored {
	s := getQueryScratch()
	defer s.release()
	return slices.Clone(di.search(q, n, s))
}

// A query's hits do not depend on the queries before it, on the same index
// or on another of another size, nor on those running with it, although
// they share buffers: asked in another order, by several goroutines at
// once, every query gives the same hits.
func TestHitsDoNotDependOnEarlierQueries(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	vocab := []string{"kettle", "kettles", "water", "boil", "boiling", "tea", "teapot", "green", "cup", "descale", "lid", "timer"}
	index := func(n int) *Index {
		var chunks []Chunk
		for i := range n {
			var words []string
			for range 2 + rng.IntN(30) {
				words = append(words, vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64())])
			}
			page := fmt.Sprintf("p%03d", i/3)
			c := textChunk(page, fmt.Sprint(words))
			c.ID, c.Seq = fmt.Sprintf("%s-%d", page, i%3), i%3
			chunks = append(chunks, c)
		}
		return Build(chunks, 1)
	}
	small, large := index(40), index(900)
	queries := []string{"kettle water", "green tea cup", "boil", `"green tea" timer`, `"descale kettle"`, "teap", "kettle bo",
		"lid timer water tea", `"water boil" kettle`, "green te"}
	type asked struct {
		di    *Index
		query Query
	}
	var all []asked
	for _, q := range queries {
		for _, di := range []*Index{small, large} {
			for _, mpp := range []int{0, 2} {
				all = append(all, asked{di, Query{Terms: ParseQuery(q, "en"), Limit: 5 + len(all)%20, MaxPerPage: mpp, BoostPath: "p001", PathBoost: 1.5}})
			}
		}
	}
	first := make([][]Hit, len(all))
	for i, a := range all {
		first[i] = a.di.Search(a.query)
	}
	order := rng.Perm(len(all))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for _, i := range order[g*len(order)/4 : (g+1)*len(order)/4] {
				a := all[i]
				if got := a.di.Search(a.query); !reflect.DeepEqual(got, first[i]) {
					t.Errorf("query %d %+v: hits %v, first %v", i, a.query.Terms, got, first[i])
				}
			}
		})
	}
	wg.Wait()
}

// The index tokenizes text as Analyze then the tokenizer would, without
// building the analyzed text.
func TestAnalyzedTokensAsAnalyze(t *testing.T) {
	t.Parallel()
	texts := []string{
		"", "plain words only", "randomUUID and HTTPServer, getID2", "JUnit iPhone x.Y aB",
		"data/prices.json MY_ENV_VAR", "绿茶应该用多少度的水？", "Café déjà vu, naïve", "mixed 侧边栏 withCamelCase",
		"x² ½ Ⅻ numbers", "CLAUDE.md fooBar_bazQux", "a\nb\tc", "ÉCOLE élève",
	}
	// And every line of the docs of the fixture site.
	pages, err := filepath.Glob("../testdata/site/*/*.mdx")
	if err != nil || len(pages) == 0 {
		t.Fatalf("fixture pages: %v, %v", pages, err)
	}
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, strings.Split(string(data), "\n")...)
	}
	for _, text := range texts {
		var got, want []string
		analyzedTokens(text, func(raw string) { got = append(got, raw) })
		rawTokens(Analyze(text), func(raw string) { want = append(want, raw) })
		if !slices.Equal(got, want) {
			t.Errorf("%q: tokens %q, want %q", text, got, want)
		}
	}
}

// failingSource fails its reads once told to: every read with fail, or
// only the chunks' read, half-way, with failChunks.
// An index keeps at most maxPageCounts page counts, however many words it
// is asked about.
func TestPageCountsAreBounded(t *testing.T) {
	t.Parallel()
	di := Build([]Chunk{textChunk("p0", "boil the kettle"), textChunk("p1", "a cup of tea")}, 1)
	for i := range maxPageCounts + 100 {
		di.CountPages(Term{Words: []string{fmt.Sprintf("w%d", i)}}, Filter{}, 10)
	}
	held := 0
	di.pageCounts.Range(func(any, any) bool { held++; return true })
	if held != maxPageCounts {
		t.Errorf("the index keeps %d page counts, want the bound, %d", held, maxPageCounts)
	}
}
