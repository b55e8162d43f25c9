// Package semantic holds the clients docsmith uses to ask an embeddings
// provider for vectors and a reranker for relevance scores: their
// configuration, their errors and their metrics. Search works without them;
// a caller that gets an error from them falls back to keyword ranking, so
// every failure is classified (Error.Reason) for its logs and metrics.
package semantic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// Embedder turns texts into vectors. Vectors of different models never mix.
type Embedder interface {
	// Model is a stable identity of the vectors, used as a storage key:
	// "openai/MODEL" on OpenAI's API, "HOST/MODEL" on any other base URL.
	Model() string
	// Embed returns one vector per text, in order, all the same length. It
	// batches internally.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Reranker scores documents against a query.
type Reranker interface {
	// Rerank returns one score per document, in input order; higher is more
	// relevant. A document the provider left out of its reply scores
	// math.Inf(-1), below every scored one.
	Rerank(ctx context.Context, query string, documents []string) ([]float64, error)
}

// Providers, as Error.Provider and the metrics' provider label name them.
const (
	ProviderEmbeddings = "embeddings"
	ProviderRerank     = "rerank"
)

// Reasons a provider call failed, as Error.Reason and the metrics' reason
// label name them.
const (
	ReasonTimeout     = "timeout"      // the caller's deadline (or the client's timeout) ran out
	ReasonCanceled    = "canceled"     // the caller gave up (the reader left)
	ReasonRateLimited = "rate_limited" // 429 after the retries the deadline allowed
	ReasonServer      = "server"       // 5xx after the retries the deadline allowed
	ReasonMalformed   = "malformed"    // a reply we cannot use: not JSON, wrong count, NaN, too large
	ReasonDimension   = "dimension"    // vectors of a length other than the model's
	ReasonUnreachable = "unreachable"  // no HTTP reply at all: DNS, connection, TLS
	ReasonRefused     = "refused"      // 4xx other than 429: key, model name, request shape
)

// Error classifies a provider failure for logs and metrics. Its text never
// holds an API key.
type Error struct {
	Provider string // ProviderEmbeddings or ProviderRerank
	Reason   string // one of the Reason constants
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s provider: %s: %v", e.Provider, e.Reason, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Reason is err's classification: the Reason of the *Error it wraps, or, for
// an error that did not come from a provider client, timeout or canceled
// when a context ended and unreachable otherwise.
func Reason(err error) string {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e.Reason
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	default:
		return ReasonUnreachable
	}
}

// Deps are what the clients need beside their configuration. Every field
// may be left zero.
type Deps struct {
	// Client makes the HTTP requests; nil: a client with bounded dial,
	// TLS-handshake and response-header timeouts.
	Client *http.Client
	// Metrics counts requests and their latency; nil: not counted.
	Metrics *Metrics
	// Log receives a warning per retried request; nil: discarded.
	Log *slog.Logger
}
