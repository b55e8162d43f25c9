package assistant_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
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
		if err := a.Stream(b.Context(), aisdk.NewUIMessageStream(&discardWriter{h: http.Header{}})); err != nil {
			b.Fatal(err)
		}
	}
}
