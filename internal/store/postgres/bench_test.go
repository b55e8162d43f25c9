package postgres_test

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/retrievaleval"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// benchQuestions are asked when DOCSMITH_BENCH_QUESTIONS names no question
// set: assistant questions of the usual lengths.
var benchQuestions = []string{
	"How do I set up a custom domain?",
	"Which file holds the style rules the writing agent follows?",
	"Can I use snippets from the web editor?",
	"How long can the path prefix be when I serve the docs at a subpath?",
	"openapi authentication header",
	"How do I hide a page from the navigation but keep it searchable?",
	"analytics integrations",
	"What happens to redirects when I rename a page?",
}

// BenchmarkSearchRetrieve measures the assistant's retrieval (the
// Retriever over an Index, as an assistant request runs it) on the same
// docs site stored in SQLite and in PostgreSQL, in one run, and reports p50
// and p99 latency per question of the index in memory loaded from the
// store, as the server searches, with the first query's latency after a
// cold start and the heap the index takes:
//
//	DOCSMITH_BENCH_SITE=/path/to/docs \
//	DOCSMITH_BENCH_QUESTIONS=/path/to/dev-questions.jsonl \
//	DOCSMITH_TEST_DATABASE_URL=postgres://… \
//	go test ./internal/store/postgres -run '^$' -bench SearchRetrieve -benchtime 2000x
func BenchmarkSearchRetrieve(b *testing.B) {
	dir := os.Getenv("DOCSMITH_BENCH_SITE")
	if dir == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	site, err := docs.Load(os.DirFS(dir))
	if err != nil {
		b.Fatalf("load %s: %v", dir, err)
	}
	questions := benchQuestions
	if f := os.Getenv("DOCSMITH_BENCH_QUESTIONS"); f != "" {
		qs, err := retrievaleval.ReadQuestions(f)
		if err != nil {
			b.Fatal(err)
		}
		questions = nil
		for _, q := range qs {
			questions = append(questions, q.Question)
		}
	}
	backends := []struct {
		name string
		open func(b *testing.B) search.Source
	}{
		{"sqlite", func(b *testing.B) search.Source {
			s, err := sqlite.Open(b.Context(), b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}},
		{"postgres", func(b *testing.B) search.Source {
			// PostgresURL takes a testing.TB; it skips without the variable.
			return open(b, storetest.PostgresURL(b))
		}},
	}
	for _, be := range backends {
		b.Run("memory-"+be.name, func(b *testing.B) {
			benchRetrieve(b, be.open(b), site, questions)
		})
	}
}

func benchRetrieve(b *testing.B, src search.Source, site *docs.Site, questions []string) {
	if _, err := search.Build(b.Context(), search.NewMemory(src, search.MemoryConfig{}), "bench", site, "https://docs.example"); err != nil {
		b.Fatalf("build: %v", err)
	}
	// The first question of a process: the domain's chunks read from the
	// store and indexed, then searched.
	mem := search.NewMemory(src, search.MemoryConfig{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	if _, err := search.NewRetriever(mem).Retrieve(b.Context(), "bench", search.Request{Query: questions[0], PageSize: 5}); err != nil {
		b.Fatal(err)
	}
	cold := float64(time.Since(start).Microseconds()) / 1000
	runtime.GC()
	runtime.ReadMemStats(&after)
	heapMiB := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
	r := search.NewRetriever(mem)
	// One pass warms the caches and the planner.
	for _, q := range questions {
		if _, err := r.Retrieve(b.Context(), "bench", search.Request{Query: q, PageSize: 5}); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := r.Retrieve(b.Context(), "bench", search.Request{Query: questions[i%len(questions)], PageSize: 5}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(cold, "cold-ms")
	b.ReportMetric(heapMiB, "MiB-heap")
}
