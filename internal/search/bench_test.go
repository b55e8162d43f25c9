package search

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// retrieveBenchQuestions are asked when DOCSMITH_BENCH_QUESTIONS names no
// question set: assistant questions of the usual lengths, a quoted phrase, a
// question being typed and one in Spanish.
var retrieveBenchQuestions = []string{
	"How do I set up a custom domain?",
	"Which file holds the style rules the writing agent follows?",
	"Can I use snippets from the web editor?",
	"How do I hide a page from the navigation but keep it searchable?",
	"openapi authentication header",
	"analytics integrations",
	`What does "environment variables" do in the self-hosted setup?`,
	"What happens to redirects when I rename a page?",
	"How do I configure the API key for requests in a collecti",
	"¿Cómo configuro la búsqueda del sitio?",
}

// BenchmarkRetrieve measures one retrieval as the assistant runs it: a
// Retriever over a Memory holding the domain's index, built from a docs
// folder. One op asks every question once (queries/op says how many), so
// that B/op and allocs/op are exact sums over the set:
//
//	DOCSMITH_BENCH_SITE=/path/to/docs \
//	DOCSMITH_BENCH_QUESTIONS=/path/to/dev-questions.jsonl \
//	go test ./internal/search -run '^$' -bench Retrieve -count 5
func BenchmarkRetrieve(b *testing.B) {
	dir := os.Getenv("DOCSMITH_BENCH_SITE")
	if dir == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	_, chunks, err := LoadFolder(dir, "", "https://docs.example")
	if err != nil {
		b.Fatalf("load %s: %v", dir, err)
	}
	questions := retrieveBenchQuestions
	if f := os.Getenv("DOCSMITH_BENCH_QUESTIONS"); f != "" {
		questions = readBenchQuestions(b, f)
	}
	mem := NewMemory(newMemSource(), MemoryConfig{CheckEvery: 1 << 62})
	if err := mem.ReplacePages(b.Context(), "bench", chunks, nil); err != nil {
		b.Fatal(err)
	}
	r := NewRetriever(mem)
	for _, pageSize := range []int{DefaultPageSize, MaxPageSize} {
		b.Run(pageSizeName(pageSize), func(b *testing.B) {
			ask := func() {
				for _, q := range questions {
					if _, err := r.Retrieve(b.Context(), "bench", Request{Query: q, PageSize: pageSize}); err != nil {
						b.Fatal(err)
					}
				}
			}
			ask() // loads the index
			b.ReportAllocs()
			for b.Loop() {
				ask()
			}
			b.ReportMetric(float64(len(questions)), "queries/op")
		})
	}
}

func pageSizeName(n int) string {
	if n == MaxPageSize {
		return "max-page"
	}
	return "default-page"
}

// BenchmarkChunks measures reading a docs folder and cutting every page into
// chunks, plain text and Markdown, as every index build does; it reports the
// bytes of text and of Markdown the chunks hold:
//
//	DOCSMITH_BENCH_SITE=/path/to/docs go test ./internal/search -run '^$' -bench Chunks
func BenchmarkChunks(b *testing.B) {
	dir := os.Getenv("DOCSMITH_BENCH_SITE")
	if dir == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	var chunks []Chunk
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if _, chunks, err = LoadFolder(dir, "", "https://docs.example"); err != nil {
			b.Fatal(err)
		}
	}
	var text, md int
	for _, c := range chunks {
		text += len(c.Text)
		md += len(c.Markdown)
	}
	b.ReportMetric(float64(len(chunks)), "chunks")
	b.ReportMetric(float64(text), "text-bytes")
	b.ReportMetric(float64(md), "markdown-bytes")
}

// readBenchQuestions reads the "question" of each line of a JSON lines
// question set.
func readBenchQuestions(b *testing.B, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var q struct {
			Question string `json:"question"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			b.Fatalf("%s: %v", path, err)
		}
		out = append(out, q.Question)
	}
	return out
}
