package search

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

// benchDims is the vector length of the benchmarks, that of the common
// small embedding models.
const benchDims = 768

// benchChunks are the passages of DOCSMITH_BENCH_SITE, or made-up ones.
func benchChunks(b *testing.B) []Chunk {
	b.Helper()
	if dir := os.Getenv("DOCSMITH_BENCH_SITE"); dir != "" {
		_, chunks, err := LoadFolder(dir, "", "https://docs.example")
		if err != nil {
			b.Fatalf("load %s: %v", dir, err)
		}
		return chunks
	}
	var chunks []Chunk
	for i := range 1000 {
		p := fmt.Sprintf("page-%d", i/4)
		chunks = append(chunks, Chunk{ID: fmt.Sprintf("%s#%d", p, i%4), PagePath: p, PageTitle: "Page " + p, Seq: i % 4, PageHash: p,
			Text: fmt.Sprintf("Section %d explains how widget %d connects to the gateway, which settings it reads and what it logs when it fails.", i, i)})
	}
	return chunks
}

// BenchmarkEmbedPassages measures index-time embedding against a local
// server: one op embeds every passage of a domain with none yet and keeps
// the vectors. Reported per 1,000 passages: requests, bytes of text sent,
// and the time, with the server's own work (computing the vectors) measured
// apart and taken out as far as it can be (its JSON encoding stays in).
func BenchmarkEmbedPassages(b *testing.B) {
	chunks := benchChunks(b)
	srv := semantictest.NewEmbeddingsServer(b, semantictest.EmbeddingsOptions{Dimensions: benchDims})
	emb, err := semantic.NewEmbedder(config.Embeddings{Model: "words", BaseURL: srv.URL, Batch: 64}, semantic.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, len(chunks))
	for i := range chunks {
		texts[i] = EmbedText(&chunks[i])
	}
	serverStart := time.Now()
	for _, t := range texts {
		semantictest.Vector(t, benchDims)
	}
	serverWork := time.Since(serverStart)
	var requests, textBytes int
	for b.Loop() {
		src := newVecSource()
		if err := src.ReplacePages(b.Context(), "bench", chunks, nil); err != nil {
			b.Fatal(err)
		}
		srv.Reset()
		st, err := updateVectors(b.Context(), src, src, "bench", emb)
		if err != nil || st.Embedded == 0 {
			b.Fatalf("%+v, %v", st, err)
		}
		requests = len(srv.Requests())
		textBytes = 0
		for _, r := range srv.Requests() {
			for _, in := range r.Input {
				textBytes += len(in)
			}
		}
	}
	per1k := 1000 / float64(len(chunks))
	elapsed := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(len(chunks)), "passages")
	b.ReportMetric(float64(requests)*per1k, "requests/1k")
	b.ReportMetric(float64(textBytes)*per1k, "text-bytes/1k")
	b.ReportMetric(float64(elapsed.Milliseconds())*per1k, "ms/1k")
	b.ReportMetric(float64((elapsed-serverWork).Milliseconds())*per1k, "ms-less-server/1k")
}

// BenchmarkHybridRetrieve measures what hybrid retrieval adds to a search
// over DOCSMITH_BENCH_SITE: BM25 alone, fusion with the question's vector
// kept (the dense scan and the fusion), and fusion and rerank against
// servers that take a fixed delay, reported as the time added beyond it.
func BenchmarkHybridRetrieve(b *testing.B) {
	if os.Getenv("DOCSMITH_BENCH_SITE") == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	chunks := benchChunks(b)
	const delay = 5 * time.Millisecond
	embeds := semantictest.NewEmbeddingsServer(b, semantictest.EmbeddingsOptions{Dimensions: benchDims})
	rerank := semantictest.NewRerankServer(b, semantictest.RerankOptions{})
	emb, err := semantic.NewEmbedder(config.Embeddings{Model: "words", BaseURL: embeds.URL, Batch: 64}, semantic.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	rr, err := semantic.NewReranker(config.Rerank{URL: rerank.URL}, semantic.Deps{})
	if err != nil {
		b.Fatal(err)
	}
	src := newVecSource()
	mem := NewMemory(src, MemoryConfig{CheckEvery: 1 << 62, Embedder: emb})
	if err := mem.ReplacePages(b.Context(), "bench", chunks, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := mem.UpdateVectors(b.Context(), "bench"); err != nil {
		b.Fatal(err)
	}
	questions := retrieveBenchQuestions
	run := func(b *testing.B, r *Retriever, providerDelay time.Duration) {
		ask := func() {
			for _, q := range questions {
				if _, err := r.Retrieve(b.Context(), "bench", Request{Query: q}); err != nil {
					b.Fatal(err)
				}
			}
		}
		ask() // loads the index, keeps the vectors a cache may keep
		b.ReportAllocs()
		for b.Loop() {
			ask()
		}
		perQuery := b.Elapsed() / time.Duration(b.N*len(questions))
		b.ReportMetric(float64(perQuery.Microseconds()), "µs/query")
		b.ReportMetric(float64((perQuery - providerDelay).Microseconds()), "µs-beyond-provider/query")
	}
	b.Run("bm25", func(b *testing.B) { run(b, NewRetriever(mem), 0) })
	b.Run("fusion-vector-kept", func(b *testing.B) {
		run(b, NewRetriever(mem).WithHybrid(Hybrid{Embedder: emb}), 0)
	})
	b.Run("fusion-provider-5ms", func(b *testing.B) {
		embeds.SetFault(semantictest.Fault{Failure: semantictest.FailDelay, Delay: delay})
		defer embeds.SetFault(semantictest.Fault{})
		// A cache of one vector, and questions asked in turn: every
		// question is embedded.
		run(b, NewRetriever(mem).WithHybrid(Hybrid{Embedder: emb, QueryVectors: 1}), delay)
	})
	b.Run("fusion-rerank-provider-5ms", func(b *testing.B) {
		rerank.SetFault(semantictest.Fault{Failure: semantictest.FailDelay, Delay: delay})
		defer rerank.SetFault(semantictest.Fault{})
		run(b, NewRetriever(mem).WithHybrid(Hybrid{Embedder: emb, Reranker: rr}), delay)
	})
}

// BenchmarkVectorScan measures the dense half alone: a cosine top-40 over
// every passage vector of DOCSMITH_BENCH_SITE (or made-up passages).
func BenchmarkVectorScan(b *testing.B) {
	chunks := benchChunks(b)
	src := newVecSource()
	mem := NewMemory(src, MemoryConfig{CheckEvery: 1 << 62, Embedder: &localEmbedder{dims: benchDims}})
	if err := mem.ReplacePages(b.Context(), "bench", chunks, nil); err != nil {
		b.Fatal(err)
	}
	if _, err := mem.UpdateVectors(b.Context(), "bench"); err != nil {
		b.Fatal(err)
	}
	q := semantictest.Vector("how do I set up a custom domain", benchDims)
	if hits, err := mem.SearchVector(b.Context(), "bench", q, 40, Filter{}); err != nil || len(hits) == 0 {
		b.Fatalf("%d hits, %v", len(hits), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mem.SearchVector(b.Context(), "bench", q, 40, Filter{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(chunks)), "passages")
}

// localEmbedder embeds as the test server does, in process.
type localEmbedder struct{ dims int }

func (e *localEmbedder) Model() string { return "local/words" }

func (e *localEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = semantictest.Vector(t, e.dims)
	}
	return out, nil
}
