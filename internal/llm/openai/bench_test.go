package openai_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/llm/openai"
)

// replayTransport answers every request with the same recorded stream, so
// that a benchmark measures the adapter, not a server or the network.
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

// recordedAnswer is what llmtest's server streams for an answer of n deltas
// of four characters, with usage: the answer make bench-compare loads.
func recordedAnswer(tb testing.TB, n int) []byte {
	tb.Helper()
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = "Per "
	}
	h := llmtest.OpenAIHandler(llmtest.Text(deltas...).WithUsage(1000, n), tb.Errorf)
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"bench","stream":true,"stream_options":{"include_usage":true}}`))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Body.Bytes()
}

// BenchmarkChat streams one answer of 200 deltas through the adapter, from
// a recorded stream: the request, the decoding of every chunk, the
// callbacks.
func BenchmarkChat(b *testing.B) {
	body := recordedAnswer(b, 200)
	m, err := openai.New(openai.Options{
		Model: "bench", BaseURL: "http://model.test/v1", APIKey: "k",
		HTTPClient: &http.Client{Transport: replayTransport{body: body}},
	})
	if err != nil {
		b.Fatal(err)
	}
	req := llm.Request{System: "You answer from the docs.", Messages: []llm.Message{{Role: llm.RoleUser, Content: "How do I run a collection?"}}, MaxTokens: 1500}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		resp, err := m.Chat(b.Context(), req, func(string) { n++ })
		if err != nil {
			b.Fatal(err)
		}
		if n != 200 || resp.Usage.OutputTokens != 200 {
			b.Fatalf("got %d deltas, usage %+v", n, resp.Usage)
		}
	}
}
