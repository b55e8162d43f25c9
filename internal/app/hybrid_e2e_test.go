package app_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

// TestHybridSearchThroughConfiguration points a server's configuration at
// local embeddings and rerank servers: 'docsmith index' embeds the
// passages, the search endpoint embeds the question and reranks, and a
// provider that fails leaves the reader keyword results, counted in the
// metrics.
func TestHybridSearchThroughConfiguration(t *testing.T) {
	t.Parallel()
	embeds := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{Dimensions: 48, APIKey: "emb-key"})
	rerank := semantictest.NewRerankServer(t, semantictest.RerankOptions{})
	s := assistantSetup(t,
		"DOCSMITH_EMBEDDINGS=openai/words",
		"DOCSMITH_EMBEDDINGS_BASE_URL="+embeds.URL,
		"DOCSMITH_EMBEDDINGS_API_KEY=emb-key",
		"DOCSMITH_RERANK_URL="+rerank.URL,
	)
	indexed := embeds.TextsEmbedded()
	if indexed == 0 {
		t.Fatal("docsmith index embedded no passage")
	}

	search := func() []map[string]any {
		t.Helper()
		r := s.post("/discovery/v1/search/tern", s.assistantA, map[string]any{"query": "limit the bandwidth of a sync", "pageSize": 3})
		expectStatus(t, r, http.StatusOK)
		hits := decode[[]map[string]any](t, r)
		if len(hits) == 0 || hits[0]["path"] != "guides/schedules" {
			t.Fatalf("search: %s", r.body)
		}
		return hits
	}
	search()
	var asked []string
	for _, req := range embeds.Requests() {
		asked = append(asked, req.Input...)
	}
	if !slices.Contains(asked, "limit the bandwidth of a sync") {
		t.Errorf("the question was not embedded; texts asked: %d", len(asked))
	}
	if n := len(rerank.Requests()); n != 1 {
		t.Errorf("%d rerank requests, want 1", n)
	}

	// Both providers fail: the reader still gets keyword results.
	embeds.SetFault(semantictest.Fault{Failure: semantictest.FailMalformed})
	rerank.SetFault(semantictest.Fault{Failure: semantictest.FailMalformed})
	r := s.post("/discovery/v1/search/tern", s.assistantA, map[string]any{"query": "how do conflicts get resolved", "pageSize": 3})
	expectStatus(t, r, http.StatusOK)
	if hits := decode[[]map[string]any](t, r); len(hits) == 0 {
		t.Fatalf("search with the providers failing: %s", r.body)
	}
	m := s.get("/metrics", "")
	expectStatus(t, m, http.StatusOK)
	for _, want := range []string{
		`docsmith_search_provider_fallbacks_total{provider="embeddings",reason="malformed"} 1`,
		`docsmith_search_provider_fallbacks_total{provider="rerank",reason="malformed"} 1`,
	} {
		if !bytes.Contains(m.body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if !strings.Contains(s.logs.String(), "going on without the provider") {
		t.Error("no warning logged for the fallback")
	}
}
