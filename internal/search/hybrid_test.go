package search

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

// vecSource is a memSource that keeps vectors too.
type vecSource struct {
	*memSource
	vmu     sync.Mutex
	vectors map[string]map[string][]float32 // domain+"\x00"+model → hash → vector
}

func newVecSource() *vecSource {
	return &vecSource{memSource: newMemSource(), vectors: map[string]map[string][]float32{}}
}

func (s *vecSource) VectorHashes(_ context.Context, domain, model string) (map[string]bool, error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	out := map[string]bool{}
	for h := range s.vectors[domain+"\x00"+model] {
		out[h] = true
	}
	return out, nil
}

func (s *vecSource) DomainVectors(_ context.Context, domain, model string, each func(Vector) error) error {
	s.vmu.Lock()
	held := maps.Clone(s.vectors[domain+"\x00"+model])
	s.vmu.Unlock()
	for _, h := range slices.Sorted(maps.Keys(held)) {
		if err := each(Vector{Hash: h, Values: held[h]}); err != nil {
			return err
		}
	}
	return nil
}

func (s *vecSource) PutVectors(_ context.Context, domain, model string, vectors []Vector, inUse []string) error {
	s.vmu.Lock()
	key := domain + "\x00" + model
	held := s.vectors[key]
	if held == nil {
		held = map[string][]float32{}
		s.vectors[key] = held
	}
	for _, v := range vectors {
		held[v.Hash] = v.Values
	}
	for h := range held {
		if !slices.Contains(inUse, h) {
			delete(held, h)
		}
	}
	s.vmu.Unlock()
	s.mu.Lock()
	s.versions[domain]++
	s.mu.Unlock()
	return nil
}

// hybridChunks are the passages of a made-up product's docs, written so
// that the word-hash vectors of the test server and BM25 disagree on some
// questions.
func hybridChunks() []Chunk {
	page := func(path, title, text string) Chunk {
		return Chunk{ID: path, PagePath: path, PageTitle: title, Breadcrumb: []string{title}, Text: text, PageHash: "h-" + path + text}
	}
	return []Chunk{
		page("lanterns", "Lanterns", "A lantern lantern lantern glows. Trim the lantern wick before you light the lantern."),
		page("wicks", "Wicks and oil", "Trim the wick, pour the oil, light it. Wick oil light trim."),
		page("glass", "Glass chimneys", "Clean the glass chimney of soot with a soft cloth; a lantern chimney cracks when cold water touches it."),
		page("storage", "Storage", "Store the lantern dry, with the wick trimmed and the oil tank empty, away from children."),
		page("shipping", "Shipping", "Orders ship in three days; lanterns ship without oil."),
		page("secret", "Dealer prices", "Dealer prices for the lantern wick oil light trim kit."), // restricted
	}
}

type hybridFixture struct {
	src    *vecSource
	mem    *Memory
	embeds *semantictest.EmbeddingsServer
	rerank *semantictest.RerankServer
	emb    semantic.Embedder
	rr     semantic.Reranker
	reg    *prometheus.Registry
	deps   semantic.Deps
}

// newHybridFixture indexes hybridChunks with vectors from a local
// embeddings server, through the clients the configuration builds.
func newHybridFixture(t *testing.T) *hybridFixture {
	t.Helper()
	f := &hybridFixture{src: newVecSource(), reg: prometheus.NewRegistry()}
	f.embeds = semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{Dimensions: 64})
	f.rerank = semantictest.NewRerankServer(t, semantictest.RerankOptions{})
	f.deps = semantic.Deps{Metrics: semantic.NewMetrics(f.reg)}
	var err error
	f.emb, err = semantic.NewEmbedder(config.Embeddings{Model: "words", BaseURL: f.embeds.URL, Batch: 4}, f.deps)
	if err != nil {
		t.Fatal(err)
	}
	f.rr, err = semantic.NewReranker(config.Rerank{URL: f.rerank.URL, Model: "words"}, f.deps)
	if err != nil {
		t.Fatal(err)
	}
	chunks := hybridChunks()
	chunks[len(chunks)-1].Groups = []string{"dealers"}
	f.mem = NewMemory(f.src, MemoryConfig{Embedder: f.emb})
	if err := f.mem.ReplacePages(t.Context(), "shop", chunks, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.mem.UpdateVectors(t.Context(), "shop"); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *hybridFixture) retriever(h Hybrid) *Retriever {
	h.Metrics = f.deps.Metrics
	return NewRetriever(f.mem).WithHybrid(h)
}

// fallbacks reads the fallback counter of provider and reason.
func (f *hybridFixture) fallbacks(t *testing.T, provider, reason string) float64 {
	t.Helper()
	families, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != "docsmith_search_provider_fallbacks_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["provider"] == provider && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// expectedFusion is the fused order the test computes on its own from the
// two lists: reciprocal rank fusion with k = 60, ties in BM25's order.
func expectedFusion(bm25, dense []string) []string {
	score := map[string]float64{}
	first := map[string]int{}
	for _, list := range [][]string{bm25, dense} {
		for r, id := range list {
			score[id] += 1 / float64(60+r+1)
			if _, ok := first[id]; !ok {
				first[id] = len(first)
			}
		}
	}
	out := slices.Collect(maps.Keys(score))
	slices.SortFunc(out, func(a, b string) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return cmp.Compare(first[a], first[b])
	})
	return out
}

const fusionQuestion = "how do I trim and light the wick with oil"

func TestHybridFusionFollowsTheVectors(t *testing.T) {
	t.Parallel()
	f := newHybridFixture(t)
	ctx := t.Context()
	bm25, err := NewRetriever(f.mem).Retrieve(ctx, "shop", Request{Query: fusionQuestion})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := f.mem.SearchVector(ctx, "shop", semantictest.Vector(fusionQuestion, 64), 40, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.retriever(Hybrid{Embedder: f.emb}).Retrieve(ctx, "shop", Request{Query: fusionQuestion})
	if err != nil {
		t.Fatal(err)
	}
	want := expectedFusion(ids(bm25), ids(dense))
	if !slices.Equal(ids(got), want) {
		t.Fatalf("fused %q, want %q (bm25 %q, dense %q)", ids(got), want, ids(bm25), ids(dense))
	}
	if slices.Equal(ids(got), ids(bm25)) {
		t.Errorf("fusion left BM25's order %q: the fixture no longer tells them apart", ids(bm25))
	}
	// Scores keep BM25's meaning: the i-th hit takes the i-th best BM25
	// score.
	for i := range got {
		want := 0.0
		if i < len(bm25) {
			want = bm25[i].Score
		}
		if got[i].Score != want {
			t.Errorf("hit %d scores %v, want BM25's %d-th score %v", i, got[i].Score, i, want)
		}
	}
	if slices.Contains(ids(got), "secret") {
		t.Errorf("the restricted page came through fusion: %q", ids(got))
	}
	// The question's vector is kept: asking again costs no request.
	before := len(f.embeds.Requests())
	if _, err := f.retriever(Hybrid{Embedder: f.emb}).Retrieve(ctx, "shop", Request{Query: fusionQuestion}); err != nil {
		t.Fatal(err)
	}
	r := f.retriever(Hybrid{Embedder: f.emb})
	for range 3 {
		if _, err := r.Retrieve(ctx, "shop", Request{Query: fusionQuestion}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.embeds.Requests()) - before; n != 2 {
		t.Errorf("%d embedding requests for the question asked four times of two retrievers, want 2", n)
	}
}

func TestHybridRerankReorders(t *testing.T) {
	t.Parallel()
	f := newHybridFixture(t)
	ctx := t.Context()
	fused, err := f.retriever(Hybrid{Embedder: f.emb}).Retrieve(ctx, "shop", Request{Query: fusionQuestion})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.retriever(Hybrid{Embedder: f.emb, Reranker: f.rr}).Retrieve(ctx, "shop", Request{Query: fusionQuestion})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(fused)
	slices.SortStableFunc(want, func(a, b Hit) int {
		return cmp.Compare(semantictest.Score(fusionQuestion, EmbedText(&b.Chunk)), semantictest.Score(fusionQuestion, EmbedText(&a.Chunk)))
	})
	if !slices.Equal(ids(got), ids(want)) {
		t.Fatalf("reranked %q, want %q (fused %q)", ids(got), ids(want), ids(fused))
	}
	if slices.Equal(ids(got), ids(fused)) {
		t.Errorf("rerank left the fused order %q: the fixture no longer tells them apart", ids(fused))
	}
	if reqs := f.rerank.Requests(); len(reqs) != 1 {
		t.Errorf("%d rerank requests, want 1", len(reqs))
	}
}

func TestHybridRerankBudgetKeepsFusedOrder(t *testing.T) {
	t.Parallel()
	f := newHybridFixture(t)
	ctx := t.Context()
	fused, err := f.retriever(Hybrid{Embedder: f.emb}).Retrieve(ctx, "shop", Request{Query: fusionQuestion})
	if err != nil {
		t.Fatal(err)
	}
	f.rerank.SetFault(semantictest.Fault{Failure: semantictest.FailDelay, Delay: 2 * time.Second})
	start := time.Now()
	got, err := f.retriever(Hybrid{Embedder: f.emb, Reranker: f.rr, RerankBudget: 50 * time.Millisecond}).
		Retrieve(ctx, "shop", Request{Query: fusionQuestion})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), ids(fused)) {
		t.Errorf("past the budget %q, want the fused order %q", ids(got), ids(fused))
	}
	if took > time.Second {
		t.Errorf("the search took %v with a 50ms rerank budget", took)
	}
	if n := f.fallbacks(t, semantic.ProviderRerank, semantic.ReasonTimeout); n != 1 {
		t.Errorf("rerank timeout fallbacks = %v, want 1", n)
	}
}

func TestHybridProviderFailuresFallBackToBM25(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fault  semantictest.Fault
		reason string
	}{
		{"timeout", semantictest.Fault{Failure: semantictest.FailDelay, Delay: 2 * time.Second}, semantic.ReasonTimeout},
		{"rate limited", semantictest.Fault{Failure: semantictest.FailRateLimited}, semantic.ReasonRateLimited},
		{"server error", semantictest.Fault{Failure: semantictest.FailServer}, semantic.ReasonServer},
		{"wrong dimension", semantictest.Fault{Failure: semantictest.FailWrongDimension}, semantic.ReasonDimension},
		{"malformed JSON", semantictest.Fault{Failure: semantictest.FailMalformed}, semantic.ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newHybridFixture(t)
			ctx := t.Context()
			bm25, err := NewRetriever(f.mem).Retrieve(ctx, "shop", Request{Query: fusionQuestion})
			if err != nil {
				t.Fatal(err)
			}
			f.embeds.SetFault(tt.fault)
			f.rerank.SetFault(tt.fault)
			start := time.Now()
			got, err := f.retriever(Hybrid{Embedder: f.emb, Reranker: f.rr, EmbedTimeout: 300 * time.Millisecond, RerankBudget: 100 * time.Millisecond}).
				Retrieve(ctx, "shop", Request{Query: fusionQuestion})
			if err != nil {
				t.Fatalf("the reader got an error: %v", err)
			}
			if took := time.Since(start); took > 1500*time.Millisecond {
				t.Errorf("the search took %v", took)
			}
			// Without vectors the rerank still runs, and fails the same way:
			// the order is BM25's.
			if !slices.Equal(ids(got), ids(bm25)) {
				t.Errorf("hits %q, want BM25's %q", ids(got), ids(bm25))
			}
			for i := range got {
				if got[i].Score != bm25[i].Score {
					t.Errorf("hit %d scores %v, want %v", i, got[i].Score, bm25[i].Score)
				}
			}
			if n := f.fallbacks(t, semantic.ProviderEmbeddings, tt.reason); n != 1 {
				t.Errorf("embeddings fallbacks for %s = %v, want 1", tt.reason, n)
			}
			if n := f.fallbacks(t, semantic.ProviderRerank, tt.reason); tt.reason != semantic.ReasonDimension && n != 1 {
				t.Errorf("rerank fallbacks for %s = %v, want 1", tt.reason, n)
			}
		})
	}
}

func TestHybridIndexTimeFailureRetriedOnNextUpdate(t *testing.T) {
	t.Parallel()
	f := newHybridFixture(t)
	ctx := t.Context()
	chunks := hybridChunks()
	chunks[0].Text += " Now with a brass handle."
	chunks[1].Text += " Use paraffin."
	f.embeds.Reset()
	f.embeds.SetFault(semantictest.Fault{Failure: semantictest.FailServer})
	if err := f.mem.ReplacePages(ctx, "shop", chunks, nil); err != nil {
		t.Fatal(err)
	}
	st, err := f.mem.UpdateVectors(ctx, "shop")
	if err == nil || st.Missing != 2 || st.Embedded != 0 {
		t.Fatalf("update with the provider down: %+v, err %v", st, err)
	}
	// BM25 still serves the changed pages.
	hits, err := f.retriever(Hybrid{Embedder: f.emb}).Retrieve(ctx, "shop", Request{Query: "brass handle"})
	if err != nil || len(hits) == 0 || hits[0].ID != "lanterns" {
		t.Fatalf("hits %q, err %v", ids(hits), err)
	}
	f.embeds.SetFault(semantictest.Fault{})
	f.embeds.Reset()
	st, err = f.mem.UpdateVectors(ctx, "shop")
	if err != nil || st.Embedded != 2 || st.Missing != 0 {
		t.Fatalf("next update: %+v, err %v", st, err)
	}
	if n := f.embeds.TextsEmbedded(); n != 2 {
		t.Errorf("%d texts embedded, want the 2 changed passages", n)
	}
	near, err := f.mem.SearchVector(ctx, "shop", semantictest.Vector(EmbedText(&chunks[1]), 64), 1, Filter{})
	if err != nil || len(near) != 1 || near[0].ID != "wicks" {
		t.Errorf("nearest the changed passage: %q, err %v", ids(near), err)
	}
}

func TestVectorCacheBounded(t *testing.T) {
	t.Parallel()
	c := newVectorCache(2)
	c.put("m", "a", []float32{1})
	c.put("m", "b", []float32{2})
	c.get("m", "a")
	c.put("m", "c", []float32{3})
	if _, ok := c.get("m", "b"); ok {
		t.Error("the least recently used vector was kept past the bound")
	}
	if v, ok := c.get("m", "a"); !ok || v[0] != 1 {
		t.Error("a recently used vector was dropped")
	}
	if _, ok := c.get("other", "a"); ok {
		t.Error("a vector served for another model")
	}
}

func TestHybridPausesAProviderThatTimesOut(t *testing.T) {
	t.Parallel()
	f := newHybridFixture(t)
	ctx := t.Context()
	f.embeds.Reset()
	f.embeds.SetFault(semantictest.Fault{Failure: semantictest.FailDelay, Delay: 2 * time.Second})
	r := f.retriever(Hybrid{Embedder: f.emb, EmbedTimeout: 100 * time.Millisecond, ProviderPause: time.Hour})
	if _, err := r.Retrieve(ctx, "shop", Request{Query: "trim the wick"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, q := range []string{"light the lantern", "clean the chimney", "ship without oil"} {
		hits, err := r.Retrieve(ctx, "shop", Request{Query: q})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%q: %q, %v", q, ids(hits), err)
		}
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("three searches took %v while the provider was paused", took)
	}
	if n := f.fallbacks(t, semantic.ProviderEmbeddings, "paused"); n != 3 {
		t.Errorf("paused fallbacks = %v, want 3", n)
	}
	if n := len(f.embeds.Requests()); n > 1+1 { // the first search's, and perhaps its retry
		t.Errorf("%d requests reached the paused provider", n)
	}
}
