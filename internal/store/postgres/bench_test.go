package postgres_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// benchQuestions are asked when DOCSMITH_BENCH_QUESTIONS names no question
// set: assistant questions of the usual lengths.
var benchQuestions = []string{
	"How do I set up a custom domain?",
	"Where do I put house-style instructions for the writing agent?",
	"Can I use snippets from the web editor?",
	"How long can the path prefix be when I serve the docs at a subpath?",
	"openapi authentication header",
	"How do I hide a page from the navigation but keep it searchable?",
	"analytics integrations",
	"What happens to redirects when I rename a page?",
}

// BenchmarkSearchRetrieve measures the assistant's retrieval (the
// Retriever over an Index, as an assistant request runs it) on the same
// docs site indexed in SQLite FTS5 and in PostgreSQL, in one run, and
// reports each backend's p50 and p99 latency per question:
//
//	DOCSMITH_BENCH_SITE=/work/shared/corpora/mintlify \
//	DOCSMITH_BENCH_QUESTIONS=/work/shared/evals/mintlify/dev-questions.jsonl \
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
		qs, err := search.ReadQuestions(f)
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
		open func(b *testing.B) search.Index
	}{
		{"sqlite", func(b *testing.B) search.Index {
			s, err := sqlite.Open(b.Context(), b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		}},
		{"postgres", func(b *testing.B) search.Index {
			// PostgresURL takes a testing.TB; it skips without the variable.
			return open(b, storetest.PostgresURL(b))
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			idx := be.open(b)
			if _, err := search.Build(b.Context(), idx, "bench", site, "https://docs.example"); err != nil {
				b.Fatalf("build: %v", err)
			}
			r := search.NewRetriever(idx)
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
		})
	}
}
