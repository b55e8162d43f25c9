package llmtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// RecordOpenAI returns the bytes NewOpenAIServer streams for turn, to be
// replayed by ReplayClient.
func RecordOpenAI(tb testing.TB, turn Turn) []byte {
	tb.Helper()
	rec := httptest.NewRecorder()
	OpenAIHandler(turn, tb.Errorf).ServeHTTP(rec, httptest.NewRequestWithContext(tb.Context(), http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"bench","stream":true,"stream_options":{"include_usage":true}}`)))
	return rec.Body.Bytes()
}

// ReplayClient is an HTTP client that answers every request with body as
// an event stream, without a server or the network: for benchmarks that
// measure the client side only.
func ReplayClient(body []byte) *http.Client {
	return &http.Client{Transport: replayTransport{body: body}}
}

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
