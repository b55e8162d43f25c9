package assistant_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

// replayTransport answers every model request with the same recorded
// stream, so that a benchmark measures docsmith, not a model server.
type replayTransport struct{ body []byte }

func (rt replayTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}},
		Body:       io.NopCloser(bytes.NewReader(rt.body)),
		Request:    req,
	}, nil
}

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
	h := llmtest.OpenAIHandler(llmtest.Text(deltas...).WithUsage(1000, len(deltas)), b.Errorf)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"bench","stream":true,"stream_options":{"include_usage":true}}`)))
	client := &http.Client{Transport: replayTransport{body: rec.Body.Bytes()}}
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
