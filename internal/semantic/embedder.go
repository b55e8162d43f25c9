package semantic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/docsmith/docsmith/internal/config"
)

// OpenAIBaseURL is OpenAI's API, used when no base URL is configured.
const OpenAIBaseURL = "https://api.openai.com/v1"

// Defaults and bounds of the embeddings client.
const (
	DefaultEmbeddingsBatch = 64
	// DefaultEmbeddingsBatchBytes keeps one request's texts well under the
	// token limits providers put on a request (OpenAI: 300,000 tokens).
	DefaultEmbeddingsBatchBytes = 1 << 20
	// DefaultEmbeddingsReplyBytes bounds one reply: 64 texts of 3,072
	// dimensions as JSON numbers take about 5 MiB, so this leaves room
	// without letting a broken server fill the memory.
	DefaultEmbeddingsReplyBytes = 64 << 20
	// maxDimensions refuses vectors no embeddings model produces.
	maxDimensions = 16384
)

// EmbedderOptions configure an OpenAI-compatible embeddings client.
type EmbedderOptions struct {
	BaseURL    string // up to /v1; empty: OpenAIBaseURL
	Model      string // the provider's model name
	APIKey     string // empty: no Authorization header (local servers)
	Batch      int    // texts per request; 0: DefaultEmbeddingsBatch
	BatchBytes int    // text bytes per request; 0: DefaultEmbeddingsBatchBytes
	MaxReply   int64  // reply bytes; 0: DefaultEmbeddingsReplyBytes
	// Concurrency is how many requests one Embed call has in flight; 0: 1.
	Concurrency int
}

// OpenAIEmbedder asks an OpenAI-compatible POST /embeddings for vectors.
// It is safe for concurrent use.
type OpenAIEmbedder struct {
	endpoint   string
	model      string
	identity   string
	batch      int
	batchBytes int
	parallel   int
	post       poster
	// dims is the length of the model's vectors once one reply showed it;
	// a later reply of another length is refused, as the vectors could not
	// be compared.
	dims atomic.Int64
}

// NewEmbedder builds the embeddings client the configuration asks for, or
// returns nil, nil when it asks for none.
func NewEmbedder(cfg config.Embeddings, deps Deps) (Embedder, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	e, err := NewOpenAIEmbedder(EmbedderOptions{BaseURL: cfg.BaseURL, Model: cfg.Model, APIKey: cfg.APIKey, Batch: cfg.Batch, Concurrency: cfg.Concurrency}, deps)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// NewOpenAIEmbedder builds an embeddings client from explicit options.
func NewOpenAIEmbedder(opts EmbedderOptions, deps Deps) (*OpenAIEmbedder, error) {
	if opts.Model == "" {
		return nil, errors.New("embeddings: no model named")
	}
	base := opts.BaseURL
	if base == "" {
		base = OpenAIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("embeddings: base URL %q is not an http(s) URL", base)
	}
	e := &OpenAIEmbedder{
		endpoint:   strings.TrimSuffix(base, "/") + "/embeddings",
		model:      opts.Model,
		identity:   embedderIdentity(u, opts.Model),
		batch:      opts.Batch,
		batchBytes: opts.BatchBytes,
		parallel:   max(opts.Concurrency, 1),
	}
	if e.batch <= 0 {
		e.batch = DefaultEmbeddingsBatch
	}
	if e.batchBytes <= 0 {
		e.batchBytes = DefaultEmbeddingsBatchBytes
	}
	maxReply := opts.MaxReply
	if maxReply <= 0 {
		maxReply = DefaultEmbeddingsReplyBytes
	}
	e.post = newPoster(ProviderEmbeddings, opts.APIKey, maxReply, deps)
	return e, nil
}

// embedderIdentity names the vectors: the same model name on two servers
// may be two models, so the host is part of the name unless it is OpenAI's.
func embedderIdentity(u *url.URL, model string) string {
	if strings.EqualFold(u.Hostname(), "api.openai.com") {
		return "openai/" + model
	}
	return strings.ToLower(u.Host) + "/" + model
}

// Model is the vectors' identity: "openai/MODEL" or "HOST/MODEL".
func (e *OpenAIEmbedder) Model() string { return e.identity }

// Embed returns one vector per text, in order, asking for at most Batch
// texts (and BatchBytes of text) per request, Concurrency requests at once.
// The first failure stops the requests not yet sent.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var batches [][2]int
	for start := 0; start < len(texts); {
		end := e.batchEnd(texts, start)
		batches = append(batches, [2]int{start, end})
		start = end
	}
	out := make([][]float32, len(texts))
	if len(batches) <= 1 || e.parallel == 1 {
		for _, b := range batches {
			if err := e.embedInto(ctx, texts, out, b); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return out, e.embedParallel(ctx, texts, out, batches)
}

// embedParallel runs the batches on e.parallel workers.
func (e *OpenAIEmbedder) embedParallel(ctx context.Context, texts []string, out [][]float32, batches [][2]int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan [2]int)
	errs := make(chan error, e.parallel)
	var wg sync.WaitGroup
	for range min(e.parallel, len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				if err := e.embedInto(ctx, texts, out, b); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for _, b := range batches {
		select {
		case next <- b:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	// The first error is the cause; the others are its cancellation.
	if err := <-errs; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return &Error{Provider: ProviderEmbeddings, Reason: Reason(err), Err: err}
	}
	return nil
}

// embedInto embeds texts[b[0]:b[1]] into out at the same positions.
func (e *OpenAIEmbedder) embedInto(ctx context.Context, texts []string, out [][]float32, b [2]int) error {
	vecs, err := e.embedBatch(ctx, texts[b[0]:b[1]])
	if err != nil {
		return err
	}
	copy(out[b[0]:b[1]], vecs)
	return nil
}

// batchEnd is the end of the batch that starts at start: at most batch
// texts and batchBytes of text, and never empty, so a single text larger
// than batchBytes goes alone.
func (e *OpenAIEmbedder) batchEnd(texts []string, start int) int {
	end, size := start, 0
	for end < len(texts) && end-start < e.batch {
		size += len(texts[end])
		if end > start && size > e.batchBytes {
			break
		}
		end++
	}
	return end
}

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingsReply struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
}

func (e *OpenAIEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	input := make([]string, len(texts))
	for i, t := range texts {
		// OpenAI refuses an empty input; a blank one embeds as nothing.
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		input[i] = t
	}
	body, err := json.Marshal(embeddingsRequest{Model: e.model, Input: input, EncodingFormat: "float"})
	if err != nil {
		return nil, &Error{Provider: ProviderEmbeddings, Reason: ReasonRefused, Err: fmt.Errorf("encode request: %w", err)}
	}
	var vecs [][]float32
	err = e.post.post(ctx, e.endpoint, body, func(reply []byte) (reason string, err error) {
		vecs, reason, err = e.parse(reply, len(texts))
		return reason, err
	})
	if err != nil {
		return nil, err
	}
	return vecs, nil
}

// parse checks a reply against the request: one vector per text, each
// index once, every vector of the model's length and finite.
func (e *OpenAIEmbedder) parse(reply []byte, want int) ([][]float32, string, error) {
	var r embeddingsReply
	if err := decode(reply, &r); err != nil {
		return nil, ReasonMalformed, err
	}
	if len(r.Data) != want {
		return nil, ReasonMalformed, fmt.Errorf("reply has %d vectors for %d texts", len(r.Data), want)
	}
	out := make([][]float32, want)
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= want || out[i] != nil {
			return nil, ReasonMalformed, fmt.Errorf("reply's vector %d has index %d, missing or repeated among %d", pos, i, want)
		}
		v, reason, err := e.vector(d.Embedding)
		if err != nil {
			return nil, reason, fmt.Errorf("vector %d: %w", i, err)
		}
		out[i] = v
	}
	return out, "", nil
}

func (e *OpenAIEmbedder) vector(raw []float64) ([]float32, string, error) {
	n := int64(len(raw))
	if n == 0 || n > maxDimensions {
		return nil, ReasonDimension, fmt.Errorf("has %d dimensions", n)
	}
	if !e.dims.CompareAndSwap(0, n) && e.dims.Load() != n {
		return nil, ReasonDimension, fmt.Errorf("has %d dimensions, the model's earlier vectors %d", n, e.dims.Load())
	}
	v := make([]float32, n)
	for j, x := range raw {
		f := float32(x)
		if math.IsNaN(x) || math.IsInf(float64(f), 0) {
			return nil, ReasonMalformed, fmt.Errorf("dimension %d is not a finite number", j)
		}
		v[j] = f
	}
	return v, "", nil
}
