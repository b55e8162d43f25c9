package semantic_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

func newTestEmbedder(t *testing.T, srv *semantictest.EmbeddingsServer, opts semantic.EmbedderOptions) *semantic.OpenAIEmbedder {
	t.Helper()
	opts.BaseURL = srv.URL
	if opts.Model == "" {
		opts.Model = "tern-embed-small"
	}
	e, err := semantic.NewOpenAIEmbedder(opts, semantic.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e.SetRetryBaseForTest(time.Millisecond)
	return e
}

func TestEmbedOpenAICompatibleLocalServer(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{Dimensions: 32, APIKey: "sk-test-key"})
	e := newTestEmbedder(t, srv, semantic.EmbedderOptions{APIKey: "sk-test-key"})
	texts := []string{"Install the tern CLI", "Rotate a workspace token", "", "Install tern on Linux"}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vecs), len(texts))
	}
	for i, text := range texts {
		want := semantictest.Vector(text, 32)
		if strings.TrimSpace(text) == "" {
			want = semantictest.Vector(" ", 32)
		}
		if fmt.Sprint(vecs[i]) != fmt.Sprint(want) {
			t.Errorf("vector %d (%q) is not the server's vector of that text: the reply's order was not undone", i, text)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	if r := reqs[0]; r.Model != "tern-embed-small" || r.EncodingFormat != "float" || r.Authorization != "Bearer sk-test-key" {
		t.Errorf("request = model %q, encoding %q, authorization %q", r.Model, r.EncodingFormat, r.Authorization)
	}
	host := strings.TrimPrefix(strings.TrimSuffix(srv.URL, "/v1"), "http://")
	if got, want := e.Model(), host+"/tern-embed-small"; got != want {
		t.Errorf("Model() = %q, want %q", got, want)
	}
	if near, far := cosine(vecs[0], vecs[3]), cosine(vecs[0], vecs[1]); near <= far {
		t.Errorf("texts sharing words are not nearer: %.3f <= %.3f", near, far)
	}
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func TestEmbedBatchesByCountAndBytes(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{})
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = fmt.Sprintf("passage %d about tern", i)
	}
	e := newTestEmbedder(t, srv, semantic.EmbedderOptions{})
	if _, err := e.Embed(context.Background(), texts); err != nil {
		t.Fatal(err)
	}
	if got := batchSizes(srv); got != "[64 64 22]" {
		t.Errorf("batches by count = %s", got)
	}

	srv.Reset()
	big := strings.Repeat("tern ", 100) // 500 bytes
	e = newTestEmbedder(t, srv, semantic.EmbedderOptions{Batch: 10, BatchBytes: 1200})
	vecs, err := e.Embed(context.Background(), []string{big, big, big, strings.Repeat(big, 4), "short", "short"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 6 {
		t.Fatalf("%d vectors for 6 texts", len(vecs))
	}
	// Two texts fit in 1,200 bytes; a text larger than the bound goes alone.
	if got := batchSizes(srv); got != "[2 1 1 2]" {
		t.Errorf("batches by bytes = %s", got)
	}
	if srv.TextsEmbedded() != 6 {
		t.Errorf("TextsEmbedded = %d, want 6", srv.TextsEmbedded())
	}
}

func batchSizes(srv *semantictest.EmbeddingsServer) string {
	var sizes []int
	for _, r := range srv.Requests() {
		sizes = append(sizes, len(r.Input))
	}
	return fmt.Sprint(sizes)
}

func TestEmbedFailuresAreClassified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fault    semantictest.Fault
		deadline time.Duration
		reason   string
		requests int // 0: not checked
	}{
		{"slow server past the deadline", semantictest.Fault{Failure: semantictest.FailDelay, Delay: 5 * time.Second}, 100 * time.Millisecond, semantic.ReasonTimeout, 1},
		{"rate limited, wait outlasts deadline", semantictest.Fault{Failure: semantictest.FailRateLimited, RetryAfter: "30"}, time.Second, semantic.ReasonRateLimited, 1},
		{"rate limited every time", semantictest.Fault{Failure: semantictest.FailRateLimited}, 0, semantic.ReasonRateLimited, semantic.MaxAttemptsForTest},
		{"server error every time", semantictest.Fault{Failure: semantictest.FailServer}, 0, semantic.ReasonServer, semantic.MaxAttemptsForTest},
		{"wrong key", semantictest.Fault{Failure: semantictest.FailRefused}, 0, semantic.ReasonRefused, 1},
		{"wrong dimension", semantictest.Fault{Failure: semantictest.FailWrongDimension}, 0, semantic.ReasonDimension, 1},
		{"malformed JSON", semantictest.Fault{Failure: semantictest.FailMalformed}, 0, semantic.ReasonMalformed, 1},
		{"one vector short", semantictest.Fault{Failure: semantictest.FailWrongCount}, 0, semantic.ReasonMalformed, 1},
		{"number out of range", semantictest.Fault{Failure: semantictest.FailNaN}, 0, semantic.ReasonMalformed, 1},
		{"reply over the size bound", semantictest.Fault{Failure: semantictest.FailHuge, HugeBytes: 3 << 20}, 0, semantic.ReasonMalformed, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{Dimensions: 16})
			e := newTestEmbedder(t, srv, semantic.EmbedderOptions{MaxReply: 1 << 20})
			// The model's length is known before the failure.
			if _, err := e.Embed(context.Background(), []string{"warm up"}); err != nil {
				t.Fatal(err)
			}
			srv.Reset()
			srv.SetFault(tt.fault)
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			start := time.Now()
			_, err := e.Embed(ctx, []string{"configure tern", "tern tokens"})
			var perr *semantic.Error
			if !errors.As(err, &perr) {
				t.Fatalf("err = %v, want a *semantic.Error", err)
			}
			if perr.Provider != semantic.ProviderEmbeddings || perr.Reason != tt.reason || semantic.Reason(err) != tt.reason {
				t.Errorf("err = %v: provider %q reason %q, want reason %q", err, perr.Provider, perr.Reason, tt.reason)
			}
			if tt.requests > 0 && len(srv.Requests()) != tt.requests {
				t.Errorf("%d requests, want %d", len(srv.Requests()), tt.requests)
			}
			if tt.deadline > 0 && time.Since(start) > tt.deadline+500*time.Millisecond {
				t.Errorf("took %s, past the deadline of %s", time.Since(start), tt.deadline)
			}
		})
	}
}

func TestEmbedUnreachableServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL + "/v1"
	srv.Close()
	e, err := semantic.NewOpenAIEmbedder(semantic.EmbedderOptions{BaseURL: base, Model: "m"}, semantic.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetRetryBaseForTest(time.Millisecond)
	_, err = e.Embed(context.Background(), []string{"tern"})
	if got := semantic.Reason(err); got != semantic.ReasonUnreachable {
		t.Errorf("reason = %q (%v), want unreachable", got, err)
	}
}

func TestEmbedRetriesHonourRetryAfter(t *testing.T) {
	t.Parallel()
	for _, failure := range []semantictest.Failure{semantictest.FailRateLimited, semantictest.FailServer} {
		srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{})
		srv.SetFault(semantictest.Fault{Failure: failure, RetryAfter: "0.3", Times: 1})
		e := newTestEmbedder(t, srv, semantic.EmbedderOptions{})
		start := time.Now()
		vecs, err := e.Embed(context.Background(), []string{"tern"})
		if err != nil || len(vecs) != 1 {
			t.Fatalf("failure %d: Embed = %d vectors, %v", failure, len(vecs), err)
		}
		if took := time.Since(start); took < 300*time.Millisecond {
			t.Errorf("failure %d: retried after %s, before the Retry-After of 300ms", failure, took)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("failure %d: %d requests, want 2", failure, n)
		}
	}
}

func TestEmbedDimensionChangeRefused(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{Dimensions: 8})
	e := newTestEmbedder(t, srv, semantic.EmbedderOptions{})
	if _, err := e.Embed(context.Background(), []string{"first"}); err != nil {
		t.Fatal(err)
	}
	srv.SetFault(semantictest.Fault{Failure: semantictest.FailWrongDimension})
	if _, err := e.Embed(context.Background(), []string{"second"}); semantic.Reason(err) != semantic.ReasonDimension {
		t.Errorf("err = %v, want a dimension error", err)
	}
}

func TestEmbedErrorsNeverShowTheKey(t *testing.T) {
	t.Parallel()
	// A server that echoes the request's authorization in its error.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad key: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	defer srv.Close()
	e, err := semantic.NewOpenAIEmbedder(semantic.EmbedderOptions{BaseURL: srv.URL + "/v1", Model: "m", APIKey: "sk-very-secret-value"}, semantic.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"tern"})
	if err == nil || strings.Contains(err.Error(), "sk-very-secret-value") {
		t.Errorf("err = %v: want an error without the key", err)
	}
}

func TestNewEmbedderFromConfiguration(t *testing.T) {
	t.Parallel()
	if e, err := semantic.NewEmbedder(config.Embeddings{}, semantic.Deps{}); e != nil || err != nil {
		t.Errorf("nothing configured: got %v, %v; want nil, nil", e, err)
	}
	e, err := semantic.NewEmbedder(config.Embeddings{Model: "text-embedding-3-small", Batch: 64, Timeout: time.Second}, semantic.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Model() != "openai/text-embedding-3-small" {
		t.Errorf("Model() on OpenAI's API = %q", e.Model())
	}
	if _, err := semantic.NewEmbedder(config.Embeddings{Model: "m", BaseURL: "ftp://x"}, semantic.Deps{}); err == nil {
		t.Error("an ftp base URL was accepted")
	}
	u, _ := url.Parse("http://Embed.Example:8000/v1")
	e, _ = semantic.NewEmbedder(config.Embeddings{Model: "bge-small", BaseURL: u.String()}, semantic.Deps{})
	if e.Model() != "embed.example:8000/bge-small" {
		t.Errorf("Model() on a self-hosted server = %q", e.Model())
	}
}

func TestEmbedStuckServerBoundedWithoutADeadline(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{})
	srv.SetFault(semantictest.Fault{Failure: semantictest.FailDelay, Delay: time.Minute, Times: 1})
	e := newTestEmbedder(t, srv, semantic.EmbedderOptions{})
	e.SetAttemptLimitForTest(100 * time.Millisecond)
	// The first request is given up on and retried; the second succeeds.
	vecs, err := e.Embed(context.Background(), []string{"tern"})
	if err != nil || len(vecs) != 1 {
		t.Fatalf("Embed = %d vectors, %v", len(vecs), err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestEmbedConcurrentBatchesKeepOrder(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{Dimensions: 16})
	e := newTestEmbedder(t, srv, semantic.EmbedderOptions{Batch: 7, Concurrency: 4})
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = fmt.Sprintf("passage number%d", i)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if fmt.Sprint(vecs[i]) != fmt.Sprint(semantictest.Vector(text, 16)) {
			t.Fatalf("vector %d is not its text's", i)
		}
	}
	if n := len(srv.Requests()); n != 15 {
		t.Errorf("%d requests, want 15 batches of at most 7", n)
	}
}

func TestEmbedConcurrentFailureStopsTheRest(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{})
	srv.SetFault(semantictest.Fault{Failure: semantictest.FailRefused})
	e := newTestEmbedder(t, srv, semantic.EmbedderOptions{Batch: 1, Concurrency: 3})
	texts := make([]string, 50)
	for i := range texts {
		texts[i] = "tern"
	}
	_, err := e.Embed(context.Background(), texts)
	if got := semantic.Reason(err); got != semantic.ReasonRefused {
		t.Errorf("reason = %q (%v), want refused", got, err)
	}
	if n := len(srv.Requests()); n > 6 {
		t.Errorf("%d requests after the first refusal; the rest should stop", n)
	}
}
