package assistant_test

import (
	"cmp"
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// discardWriter is a ResponseWriter that keeps nothing and can flush.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) Flush()                      {}

// discardTurns stores nothing.
type discardTurns struct{}

func (discardTurns) Record(context.Context, assistant.Turn) error { return nil }

// BenchmarkModelAnswer answers one question with an openai/… model whose
// answer is make bench-compare's, 200 deltas of four characters, replayed
// from a recording: retrieval, the request, the stream's decoding, the
// citation filter and the UI message stream, without the network and
// without storing the turn.
func BenchmarkModelAnswer(b *testing.B) {
	deltas := make([]string, 200)
	for i := range deltas {
		deltas[i] = "Per "
	}
	client := llmtest.ReplayClient(llmtest.RecordOpenAI(b, llmtest.Text(deltas...).WithUsage(1000, len(deltas))))
	e := setup(b, func(c *assistant.Config) {
		c.Turns = discardTurns{}
		c.OpenModel = func(name string) (llm.Model, error) {
			return llm.Open(name, llm.Config{OpenAIBaseURL: "http://model.test/v1", OpenAIAPIKey: "k", HTTPClient: client})
		}
	})
	d := e.withModel(e.domain, "openai/bench")
	req := ask("How do I exclude files from a sync?")
	must(b, req.Validate())
	b.ReportAllocs()
	for b.Loop() {
		a, err := e.svc.Begin(b.Context(), d, req)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Stream(b.Context(), uiSink(&discardWriter{h: http.Header{}})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtractiveAnswer answers one question with the extractive model,
// from an index held in memory as a server holds it: retrieval, the
// off-topic check, the quoted passages and the UI message stream, without
// storing the turn. It asks the fixture site, or the docs folder
// DOCSMITH_BENCH_SITE with the question DOCSMITH_BENCH_QUESTION (make
// bench-compare asks hoppscotch "How do I run my collection tests from the
// terminal against a self-hosted instance?").
//
//	DOCSMITH_BENCH_SITE=DIR DOCSMITH_BENCH_QUESTION=Q go test ./internal/assistant -run '^$' -bench ExtractiveAnswer -benchmem
func BenchmarkExtractiveAnswer(b *testing.B) {
	e := setup(b, func(c *assistant.Config) {
		c.Turns = discardTurns{}
	})
	d := e.withModel(e.domain, assistant.ModelExtractive)
	question := "How do I exclude files from a sync?"
	if dir := os.Getenv("DOCSMITH_BENCH_SITE"); dir != "" {
		_, err := e.tenants.CreateProject(b.Context(), tenant.Project{ID: "bench", OrgID: "acme", RepoURL: dir})
		must(b, err)
		d, err = e.tenants.CreateDomain(b.Context(), tenant.Domain{ID: "bench", OrgID: "acme", ProjectID: "bench", SiteURL: siteURL, Model: assistant.ModelExtractive})
		must(b, err)
		site, err := docs.Load(os.DirFS(dir))
		must(b, err)
		if _, err := search.Build(b.Context(), e.index, d.ID, site, d.SiteURL); err != nil {
			b.Fatal(err)
		}
		question = cmp.Or(os.Getenv("DOCSMITH_BENCH_QUESTION"), "How do I run my collection tests from the terminal against a self-hosted instance?")
	}
	req := ask(question)
	must(b, req.Validate())
	answer := func() {
		a, err := e.svc.Begin(b.Context(), d, req)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Stream(b.Context(), uiSink(&discardWriter{h: http.Header{}})); err != nil {
			b.Fatal(err)
		}
	}
	answer() // loads the index into memory, which is not what is measured
	b.ReportAllocs()
	for b.Loop() {
		answer()
	}
}
