package semantic_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

var rerankDocs = []string{
	"Rotate a workspace token from the settings page",
	"Install the tern CLI with the package manager",
	"Workspace tokens expire after ninety days; rotate them before",
}

func newTestReranker(t *testing.T, srv *semantictest.RerankServer, key string) *semantic.HTTPReranker {
	t.Helper()
	r, err := semantic.NewHTTPReranker(semantic.RerankerOptions{URL: srv.URL, Model: "tern-rerank", APIKey: key}, semantic.Deps{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r.SetRetryBaseForTest(time.Millisecond)
	return r
}

func TestRerankLocalServerReplyShapes(t *testing.T) {
	t.Parallel()
	shapes := map[string]semantictest.Shape{
		"cohere-jina-vllm": semantictest.ShapeCohere,
		"voyage":           semantictest.ShapeVoyage,
		"tei":              semantictest.ShapeTEI,
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := semantictest.NewRerankServer(t, semantictest.RerankOptions{Shape: shape, APIKey: "rk-test"})
			r := newTestReranker(t, srv, "rk-test")
			query := "how do I rotate a workspace token"
			scores, err := r.Rerank(context.Background(), query, rerankDocs)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range rerankDocs {
				if want := semantictest.Score(query, d); scores[i] != want {
					t.Errorf("score %d = %v, want %v (input order)", i, scores[i], want)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Query != query || len(reqs[0].Documents) != len(rerankDocs) ||
				reqs[0].Model != "tern-rerank" || reqs[0].Authorization != "Bearer rk-test" {
				t.Errorf("requests = %+v", reqs)
			}
		})
	}
}

func TestRerankMissingDocumentScoresLowest(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewRerankServer(t, semantictest.RerankOptions{})
	srv.SetFault(semantictest.Fault{Failure: semantictest.FailWrongCount})
	r := newTestReranker(t, srv, "")
	scores, err := r.Rerank(context.Background(), "rotate workspace token", rerankDocs)
	if err != nil {
		t.Fatal(err)
	}
	// The server drops its worst-scored document: the install page.
	if !math.IsInf(scores[1], -1) || math.IsInf(scores[0], -1) || math.IsInf(scores[2], -1) {
		t.Errorf("scores = %v, want only the left-out document at -Inf", scores)
	}
}

func TestRerankNoDocumentsAsksNothing(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewRerankServer(t, semantictest.RerankOptions{})
	r := newTestReranker(t, srv, "")
	if scores, err := r.Rerank(context.Background(), "tern", nil); scores != nil || err != nil {
		t.Errorf("Rerank(no documents) = %v, %v", scores, err)
	}
	if len(srv.Requests()) != 0 {
		t.Error("a request was sent for no documents")
	}
}

func TestRerankFailuresAreClassified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fault    semantictest.Fault
		budget   time.Duration
		reason   string
		requests int
	}{
		{"slow past the budget", semantictest.Fault{Failure: semantictest.FailDelay, Delay: 5 * time.Second}, 100 * time.Millisecond, semantic.ReasonTimeout, 1},
		{"rate limited within a budget", semantictest.Fault{Failure: semantictest.FailRateLimited, RetryAfter: "2"}, 300 * time.Millisecond, semantic.ReasonRateLimited, 1},
		{"server error every time", semantictest.Fault{Failure: semantictest.FailServer}, 0, semantic.ReasonServer, semantic.MaxAttemptsForTest},
		{"wrong key", semantictest.Fault{Failure: semantictest.FailRefused}, 0, semantic.ReasonRefused, 1},
		{"malformed JSON", semantictest.Fault{Failure: semantictest.FailMalformed}, 0, semantic.ReasonMalformed, 1},
		{"result without score", semantictest.Fault{Failure: semantictest.FailNaN}, 0, semantic.ReasonMalformed, 1},
		{"index out of range", semantictest.Fault{Failure: semantictest.FailWrongDimension}, 0, semantic.ReasonMalformed, 1},
		{"reply over the size bound", semantictest.Fault{Failure: semantictest.FailHuge, HugeBytes: 5 << 20}, 0, semantic.ReasonMalformed, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := semantictest.NewRerankServer(t, semantictest.RerankOptions{})
			srv.SetFault(tt.fault)
			r := newTestReranker(t, srv, "")
			ctx := context.Background()
			if tt.budget > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.budget)
				defer cancel()
			}
			start := time.Now()
			_, err := r.Rerank(ctx, "rotate token", rerankDocs)
			var perr *semantic.Error
			if !errors.As(err, &perr) || perr.Provider != semantic.ProviderRerank || perr.Reason != tt.reason {
				t.Fatalf("err = %v, want a rerank error of reason %q", err, tt.reason)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if tt.budget > 0 && time.Since(start) > tt.budget+500*time.Millisecond {
				t.Errorf("took %s, past the budget of %s", time.Since(start), tt.budget)
			}
		})
	}
}

func TestRerankCanceledByCaller(t *testing.T) {
	t.Parallel()
	srv := semantictest.NewRerankServer(t, semantictest.RerankOptions{})
	srv.SetFault(semantictest.Fault{Failure: semantictest.FailDelay, Delay: 5 * time.Second})
	r := newTestReranker(t, srv, "")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := r.Rerank(ctx, "tern", rerankDocs)
	if got := semantic.Reason(err); got != semantic.ReasonCanceled {
		t.Errorf("reason = %q (%v), want canceled", got, err)
	}
}

func TestNewRerankerFromConfiguration(t *testing.T) {
	t.Parallel()
	if r, err := semantic.NewReranker(config.Rerank{}, semantic.Deps{}); r != nil || err != nil {
		t.Errorf("nothing configured: got %v, %v; want nil, nil", r, err)
	}
	srv := semantictest.NewRerankServer(t, semantictest.RerankOptions{})
	r, err := semantic.NewReranker(config.Rerank{URL: srv.URL, Model: "m", Budget: 300 * time.Millisecond}, semantic.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Rerank(context.Background(), "tern", []string{"tern"}); err != nil {
		t.Error(err)
	}
	if _, err := semantic.NewReranker(config.Rerank{URL: "not a url"}, semantic.Deps{}); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("a bad URL: err = %v", err)
	}
}
