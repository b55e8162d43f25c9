package search

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docsmith/docsmith/internal/semantic"
)

// Defaults of hybrid retrieval.
const (
	// DefaultEmbedTimeout bounds the embedding of a question.
	DefaultEmbedTimeout = time.Second
	// DefaultRerankBudget bounds one rerank call.
	DefaultRerankBudget = 300 * time.Millisecond
	// DefaultQueryVectors is how many question vectors are kept.
	DefaultQueryVectors = 2048
	// rrfK is reciprocal rank fusion's constant: a passage at rank r of a
	// list adds 1/(rrfK+r). 60 is the value of the paper that introduced
	// it, and the one most systems keep.
	rrfK = 60
	// rerankTop is how many fused passages the reranker sees.
	rerankTop = 30
	// DefaultProviderPause is how long a provider that timed out, was
	// unreachable or overloaded is left alone: meanwhile searches rank
	// without it at once rather than each waiting out its timeout.
	DefaultProviderPause = 5 * time.Second
	// reasonPaused is the fallback reason of a search that did not ask a
	// paused provider.
	reasonPaused = "paused"
	// maxQueryVectorText bounds the question text a cached vector is kept
	// for: longer ones are embedded but not kept.
	maxQueryVectorText = 2 << 10
)

// Hybrid configures dense retrieval and reranking beside BM25. The zero
// value (no Embedder, no Reranker) is BM25 alone.
type Hybrid struct {
	// Embedder embeds questions; its Model must be the Memory's
	// VectorModel, so that they meet the passages' vectors.
	Embedder semantic.Embedder
	// Reranker reorders the first fused passages.
	Reranker semantic.Reranker
	// EmbedTimeout bounds embedding one question (DefaultEmbedTimeout);
	// RerankBudget one rerank call (DefaultRerankBudget).
	EmbedTimeout time.Duration
	RerankBudget time.Duration
	// QueryVectors bounds the question vectors kept (DefaultQueryVectors).
	QueryVectors int
	// ProviderPause is how long a provider that timed out, was
	// unreachable or rate limited is not asked (DefaultProviderPause; a
	// negative value never pauses).
	ProviderPause time.Duration
	// Metrics counts the searches that went on without a provider.
	Metrics *semantic.Metrics
	Log     *slog.Logger
}

// hybrid is a Retriever's Hybrid at work.
type hybrid struct {
	cfg   Hybrid
	dense VectorSearcher
	vecs  *vectorCache
	// pausedUntil holds, per provider, the unix nanoseconds until which
	// it is not asked (see ProviderPause).
	embedPaused, rerankPaused atomic.Int64
}

// WithHybrid makes r fuse dense retrieval with BM25 and rerank, as h
// says, when r's index can search by vector. It returns r.
func (r *Retriever) WithHybrid(h Hybrid) *Retriever {
	if h.EmbedTimeout <= 0 {
		h.EmbedTimeout = DefaultEmbedTimeout
	}
	if h.RerankBudget <= 0 {
		h.RerankBudget = DefaultRerankBudget
	}
	if h.QueryVectors <= 0 {
		h.QueryVectors = DefaultQueryVectors
	}
	if h.ProviderPause == 0 {
		h.ProviderPause = DefaultProviderPause
	}
	if h.Log == nil {
		h.Log = slog.New(slog.DiscardHandler)
	}
	dense, _ := r.idx.(VectorSearcher)
	if h.Embedder == nil || dense == nil {
		h.Embedder, dense = nil, nil
	}
	if h.Embedder == nil && h.Reranker == nil {
		r.hybrid = nil
		return r
	}
	r.hybrid = &hybrid{cfg: h, dense: dense, vecs: newVectorCache(h.QueryVectors)}
	return r
}

// fuse turns BM25's hits for a question into the hybrid ranking: the
// passages nearest the question's vector fused with them by reciprocal
// rank fusion, then the first ones reranked. A provider that fails leaves
// the ranking as it was before that step: BM25's, or the fused one.
//
// The hits keep scores with BM25's meaning, which the assistant's
// answered and not-covered decisions read: the i-th passage of the new
// order takes the i-th best BM25 score (0 past BM25's last hit). So the
// best score, and how scores fall from it, are what BM25 found for the
// question, while the order is the hybrid one.
func (h *hybrid) fuse(ctx context.Context, domain string, req Request, bm25 []Hit, limit, maxPerPage int) []Hit {
	// The scores first: the steps below may reorder bm25 in place.
	scores := make([]float64, len(bm25))
	for i := range bm25 {
		scores[i] = bm25[i].Score
	}
	slices.SortFunc(scores, func(a, b float64) int { return cmp.Compare(b, a) })
	ranked := bm25
	if h.dense != nil {
		if dense, ok := h.nearest(ctx, domain, req, limit); ok {
			ranked = reciprocalRankFusion(bm25, capPerPage(dense, maxPerPage), maxPerPage)
		}
	}
	if h.cfg.Reranker != nil && len(ranked) > 1 {
		ranked = h.rerank(ctx, req.Query, ranked)
	}
	for i := range ranked {
		if i < len(scores) {
			ranked[i].Score = scores[i]
		} else {
			ranked[i].Score = 0
		}
	}
	return ranked
}

// nearest returns the passages nearest the question's vector; ok is false
// when the question could not be embedded or searched, and it is logged
// and counted.
func (h *hybrid) nearest(ctx context.Context, domain string, req Request, limit int) ([]Hit, bool) {
	model := h.cfg.Embedder.Model()
	vec, ok := h.vecs.get(model, req.Query)
	if !ok {
		if h.paused(ctx, &h.embedPaused, semantic.ProviderEmbeddings) {
			return nil, false
		}
		ectx, cancel := context.WithTimeout(ctx, h.cfg.EmbedTimeout)
		vecs, err := h.cfg.Embedder.Embed(ectx, []string{req.Query})
		cancel()
		if err == nil && len(vecs) != 1 {
			err = &semantic.Error{Provider: semantic.ProviderEmbeddings, Reason: semantic.ReasonMalformed,
				Err: errors.New("no vector for the question")}
		}
		if err != nil {
			h.fallBack(ctx, semantic.ProviderEmbeddings, domain, err)
			h.pauseAfter(&h.embedPaused, err)
			return nil, false
		}
		vec = vecs[0]
		h.vecs.put(model, req.Query, vec)
	}
	hits, err := h.dense.SearchVector(ctx, domain, vec, limit, req.Filter)
	if err != nil {
		if errors.Is(err, ErrBadVector) {
			err = &semantic.Error{Provider: semantic.ProviderEmbeddings, Reason: semantic.ReasonDimension, Err: err}
		}
		h.fallBack(ctx, semantic.ProviderEmbeddings, domain, err)
		return nil, false
	}
	return hits, true
}

// rerank reorders the first rerankTop hits by the reranker's scores,
// within the budget; past it, or on any failure, hits keep their order.
func (h *hybrid) rerank(ctx context.Context, query string, hits []Hit) []Hit {
	if h.paused(ctx, &h.rerankPaused, semantic.ProviderRerank) {
		return hits
	}
	n := min(len(hits), rerankTop)
	docs := make([]string, n)
	for i := range n {
		docs[i] = EmbedText(&hits[i].Chunk)
	}
	rctx, cancel := context.WithTimeout(ctx, h.cfg.RerankBudget)
	scores, err := h.cfg.Reranker.Rerank(rctx, query, docs)
	cancel()
	if err == nil && len(scores) != n {
		err = &semantic.Error{Provider: semantic.ProviderRerank, Reason: semantic.ReasonMalformed,
			Err: errors.New("not one score per passage")}
	}
	if err != nil {
		h.fallBack(ctx, semantic.ProviderRerank, "", err)
		h.pauseAfter(&h.rerankPaused, err)
		return hits
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	top := make([]Hit, n)
	for i, o := range order {
		top[i] = hits[o]
	}
	copy(hits, top)
	return hits
}

// fallBack logs and counts a search that goes on without a provider.
func (h *hybrid) fallBack(ctx context.Context, provider, domain string, err error) {
	reason := semantic.Reason(err)
	h.cfg.Metrics.Fallback(provider, reason)
	h.cfg.Log.WarnContext(ctx, "search: going on without the provider", "provider", provider, "reason", reason, "domain", domain, "err", err)
}

// paused reports whether the provider is paused, counting the search that
// goes on without it.
func (h *hybrid) paused(ctx context.Context, until *atomic.Int64, provider string) bool {
	if time.Now().UnixNano() >= until.Load() {
		return false
	}
	h.cfg.Metrics.Fallback(provider, reasonPaused)
	h.cfg.Log.DebugContext(ctx, "search: provider paused", "provider", provider)
	return true
}

// pauseAfter pauses the provider after a failure that the next requests
// would most likely meet too, and wait for: a timeout, no connection, a
// rate limit or an overloaded server. A malformed reply or a refusal comes
// back at once, and pausing would gain nothing.
func (h *hybrid) pauseAfter(until *atomic.Int64, err error) {
	if h.cfg.ProviderPause < 0 {
		return
	}
	switch semantic.Reason(err) {
	case semantic.ReasonTimeout, semantic.ReasonUnreachable, semantic.ReasonRateLimited, semantic.ReasonServer:
		until.Store(time.Now().Add(h.cfg.ProviderPause).UnixNano())
	}
}

// capPerPage keeps at most maxPerPage hits of each page (0: all), in order.
func capPerPage(hits []Hit, maxPerPage int) []Hit {
	if maxPerPage <= 0 {
		return hits
	}
	seen := map[string]int{}
	out := hits[:0]
	for _, h := range hits {
		if seen[h.PagePath] < maxPerPage {
			seen[h.PagePath]++
			out = append(out, h)
		}
	}
	return out
}

// reciprocalRankFusion merges ranked lists of hits: each passage scores
// the sum of 1/(rrfK+rank) over the lists it is in, and equal sums keep
// the first list's order. The result keeps at most maxPerPage passages of
// a page. Scores are left for the caller to set.
func reciprocalRankFusion(first, second []Hit, maxPerPage int) []Hit {
	type fused struct {
		hit   Hit
		score float64
		order int
	}
	byID := make(map[string]int, len(first)+len(second))
	var all []fused
	for _, list := range [][]Hit{first, second} {
		for rank, h := range list {
			add := 1 / float64(rrfK+rank+1)
			if i, ok := byID[h.ID]; ok {
				all[i].score += add
				continue
			}
			byID[h.ID] = len(all)
			all = append(all, fused{hit: h, score: add, order: len(all)})
		}
	}
	slices.SortFunc(all, func(a, b fused) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	out := make([]Hit, len(all))
	for i := range all {
		out[i] = all[i].hit
	}
	return capPerPage(out, maxPerPage)
}

// vectorCache keeps the vectors of recent questions, by model and text,
// the least recently used dropped past its bound: a question asked again
// (the same search typed twice, an assistant's retries) costs no request.
type vectorCache struct {
	mu    sync.Mutex
	max   int
	items map[vectorKey]*list.Element
	lru   *list.List // of *vectorEntry, most recent first
}

type vectorKey struct{ model, text string }

type vectorEntry struct {
	key vectorKey
	vec []float32
}

func newVectorCache(n int) *vectorCache {
	return &vectorCache{max: n, items: map[vectorKey]*list.Element{}, lru: list.New()}
}

func (c *vectorCache) get(model, text string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[vectorKey{model, text}]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*vectorEntry).vec, true
}

func (c *vectorCache) put(model, text string, vec []float32) {
	if len(text) > maxQueryVectorText {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := vectorKey{model, text}
	if el, ok := c.items[k]; ok {
		c.lru.MoveToFront(el)
		return
	}
	c.items[k] = c.lru.PushFront(&vectorEntry{key: k, vec: vec})
	for c.lru.Len() > c.max {
		old := c.lru.Remove(c.lru.Back()).(*vectorEntry)
		delete(c.items, old.key)
	}
}
