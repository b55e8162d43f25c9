package semantic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"

	"github.com/docsmith/docsmith/internal/config"
)

// DefaultRerankReplyBytes bounds one rerank reply: scores of a few dozen
// documents take a few KiB, and some providers echo the documents back.
const DefaultRerankReplyBytes = 4 << 20

// RerankerOptions configure a rerank client.
type RerankerOptions struct {
	URL      string // the full endpoint, such as https://host/v1/rerank
	Model    string // may be empty for a server of one model
	APIKey   string // empty: no Authorization header
	MaxReply int64  // reply bytes; 0: DefaultRerankReplyBytes
}

// HTTPReranker asks a rerank endpoint for scores. It speaks the request
// Cohere, Jina, Voyage and vLLM share, {"model","query","documents"}, and
// reads their replies: {"results":[{"index","relevance_score"}]}, Voyage's
// "data" in place of "results", and the bare [{"index","score"}] array of
// Hugging Face's text-embeddings-inference. That server reads its texts
// from "texts" on its own /rerank route, so a URL whose path is /rerank gets
// the documents under both names. It is safe for concurrent use.
type HTTPReranker struct {
	url       string
	model     string
	bothNames bool
	post      poster
}

// NewReranker builds the rerank client the configuration asks for, or
// returns nil, nil when it asks for none.
func NewReranker(cfg config.Rerank, deps Deps) (Reranker, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	r, err := NewHTTPReranker(RerankerOptions{URL: cfg.URL, Model: cfg.Model, APIKey: cfg.APIKey}, deps)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// NewHTTPReranker builds a rerank client from explicit options.
func NewHTTPReranker(opts RerankerOptions, deps Deps) (*HTTPReranker, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("rerank: URL %q is not an http(s) URL", opts.URL)
	}
	maxReply := opts.MaxReply
	if maxReply <= 0 {
		maxReply = DefaultRerankReplyBytes
	}
	return &HTTPReranker{
		url:       opts.URL,
		model:     opts.Model,
		bothNames: u.Path == "/rerank",
		post:      newPoster(ProviderRerank, opts.APIKey, maxReply, deps),
	}, nil
}

type rerankRequest struct {
	Model     string   `json:"model,omitempty"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	Texts     []string `json:"texts,omitempty"`
}

type rerankResult struct {
	Index          *int     `json:"index"`
	RelevanceScore *float64 `json:"relevance_score"`
	Score          *float64 `json:"score"`
}

// Rerank returns one score per document, in input order. Documents the
// reply leaves out score math.Inf(-1).
func (r *HTTPReranker) Rerank(ctx context.Context, query string, documents []string) ([]float64, error) {
	if len(documents) == 0 {
		return nil, nil
	}
	req := rerankRequest{Model: r.model, Query: query, Documents: documents}
	if r.bothNames {
		req.Texts = documents
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, &Error{Provider: ProviderRerank, Reason: ReasonRefused, Err: fmt.Errorf("encode request: %w", err)}
	}
	var scores []float64
	err = r.post.post(ctx, r.url, body, func(reply []byte) (string, error) {
		var perr error
		scores, perr = parseRerank(reply, len(documents))
		return ReasonMalformed, perr
	})
	if err != nil {
		return nil, err
	}
	return scores, nil
}

// parseRerank reads any of the reply shapes into one score per document.
func parseRerank(reply []byte, n int) ([]float64, error) {
	results, err := rerankResults(reply)
	if err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("reply scores none of the %d documents", n)
	}
	scores := make([]float64, n)
	seen := make([]bool, n)
	for i := range scores {
		scores[i] = math.Inf(-1)
	}
	for pos, res := range results {
		if res.Index == nil || *res.Index < 0 || *res.Index >= n || seen[*res.Index] {
			return nil, fmt.Errorf("reply's result %d has no index, or one out of range or repeated among %d documents", pos, n)
		}
		score := res.RelevanceScore
		if score == nil {
			score = res.Score
		}
		if score == nil || math.IsNaN(*score) || math.IsInf(*score, 0) {
			return nil, fmt.Errorf("reply's result %d has no finite score", pos)
		}
		seen[*res.Index] = true
		scores[*res.Index] = *score
	}
	return scores, nil
}

// rerankResults finds the list of results in whichever shape the reply has.
func rerankResults(reply []byte) ([]rerankResult, error) {
	var bare []rerankResult
	if err := json.Unmarshal(reply, &bare); err == nil {
		return bare, nil
	}
	var wrapped struct {
		Results []rerankResult `json:"results"`
		Data    []rerankResult `json:"data"`
	}
	if err := decode(reply, &wrapped); err != nil {
		return nil, err
	}
	if wrapped.Results == nil && wrapped.Data == nil {
		return nil, errors.New("reply has neither results nor data")
	}
	if wrapped.Results != nil {
		return wrapped.Results, nil
	}
	return wrapped.Data, nil
}
