package semantictest

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// EmbeddingsOptions configure an embeddings server.
type EmbeddingsOptions struct {
	Dimensions int    // default 64
	APIKey     string // when set, requests must carry it as a bearer token
}

// EmbeddingsRequest is one request the server received.
type EmbeddingsRequest struct {
	Model          string
	Input          []string
	EncodingFormat string
	Authorization  string
}

// EmbeddingsServer speaks the OpenAI embeddings protocol on
// POST /v1/embeddings.
type EmbeddingsServer struct {
	// URL is the base URL to configure, ending in /v1.
	URL  string
	dims int
	key  string
	faults

	mu       sync.Mutex
	requests []EmbeddingsRequest
}

// NewEmbeddingsServer starts a server that t closes at its end.
func NewEmbeddingsServer(t testing.TB, opts EmbeddingsOptions) *EmbeddingsServer {
	t.Helper()
	s := &EmbeddingsServer{dims: opts.Dimensions, key: opts.APIKey}
	if s.dims <= 0 {
		s.dims = 64
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", s.serve)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

// Dimensions is the length of the server's vectors.
func (s *EmbeddingsServer) Dimensions() int { return s.dims }

// SetFault makes the next requests fail as fault says (Fault{} heals).
func (s *EmbeddingsServer) SetFault(fault Fault) { s.set(fault) }

// Requests are the requests received so far, failed ones included.
func (s *EmbeddingsServer) Requests() []EmbeddingsRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]EmbeddingsRequest(nil), s.requests...)
}

// TextsEmbedded is how many texts the requests so far asked for.
func (s *EmbeddingsServer) TextsEmbedded() int {
	n := 0
	for _, r := range s.Requests() {
		n += len(r.Input)
	}
	return n
}

// Reset forgets the requests received so far.
func (s *EmbeddingsServer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

type embeddingDatum struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float64 `json:"embedding"`
}

func (s *EmbeddingsServer) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 32<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"request is not JSON"}}`, http.StatusBadRequest)
		return
	}
	var input []string
	if err := json.Unmarshal(req.Input, &input); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			http.Error(w, `{"error":{"message":"input must be a string or a list of strings"}}`, http.StatusBadRequest)
			return
		}
		input = []string{one}
	}
	s.mu.Lock()
	s.requests = append(s.requests, EmbeddingsRequest{Model: req.Model, Input: input, EncodingFormat: req.EncodingFormat, Authorization: r.Header.Get("Authorization")})
	s.mu.Unlock()
	if !authorized(w, r, s.key) {
		return
	}
	for _, in := range input {
		if in == "" {
			http.Error(w, `{"error":{"message":"input must not contain empty strings"}}`, http.StatusBadRequest)
			return
		}
	}
	fault := s.next()
	if answerFault(w, r, fault) {
		return
	}
	data := make([]embeddingDatum, 0, len(input))
	for i, text := range input {
		dims := s.dims
		if fault.Failure == FailWrongDimension {
			dims--
		}
		vec := Vector(text, dims)
		d := embeddingDatum{Object: "embedding", Index: i, Embedding: make([]float64, dims)}
		for j, x := range vec {
			d.Embedding[j] = float64(x)
		}
		data = append(data, d)
	}
	// Servers may answer out of order; the index is what counts.
	for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
		data[i], data[j] = data[j], data[i]
	}
	switch fault.Failure {
	case FailWrongCount:
		data = data[:len(data)-1]
	case FailNaN:
		// JSON has no NaN; a number too large for a float32 is what
		// slips through a careless decoder.
		data[0].Embedding[0] = math.MaxFloat64
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": len(input), "total_tokens": len(input)},
	})
}
