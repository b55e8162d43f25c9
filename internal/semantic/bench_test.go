package semantic_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

// BenchmarkEmbed1000Passages is the client's own cost of embedding 1,000
// passages of about 600 bytes in batches of 64 against a local server of
// 384 dimensions: encoding, HTTP, decoding and checking (the local server's
// hashing is in it too; a real model's time is not).
func BenchmarkEmbed1000Passages(b *testing.B) {
	srv := semantictest.NewEmbeddingsServer(b, semantictest.EmbeddingsOptions{Dimensions: 384})
	e, err := semantic.NewOpenAIEmbedder(semantic.EmbedderOptions{BaseURL: srv.URL, Model: "m"}, semantic.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = fmt.Sprintf("Passage %d. ", i) + strings.Repeat("Configure the tern workspace token before the first deploy. ", 10)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRerank30 is one rerank call of 30 passages against a local
// server: the time a search adds over the provider's own.
func BenchmarkRerank30(b *testing.B) {
	srv := semantictest.NewRerankServer(b, semantictest.RerankOptions{})
	r, err := semantic.NewHTTPReranker(semantic.RerankerOptions{URL: srv.URL}, semantic.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]string, 30)
	for i := range docs {
		docs[i] = fmt.Sprintf("Passage %d. ", i) + strings.Repeat("Rotate the workspace token from settings. ", 12)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.Rerank(context.Background(), "how do I rotate a token", docs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedQuery is one question embedded against a local server.
func BenchmarkEmbedQuery(b *testing.B) {
	srv := semantictest.NewEmbeddingsServer(b, semantictest.EmbeddingsOptions{Dimensions: 384})
	e, err := semantic.NewOpenAIEmbedder(semantic.EmbedderOptions{BaseURL: srv.URL, Model: "m"}, semantic.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := e.Embed(context.Background(), []string{"how do I rotate a token"}); err != nil {
			b.Fatal(err)
		}
	}
}
