package semantictest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
)

// Shape is the reply shape a rerank server speaks.
type Shape int

const (
	// ShapeCohere is {"results":[{"index","relevance_score"}]}, as Cohere,
	// Jina and vLLM answer.
	ShapeCohere Shape = iota
	// ShapeVoyage is {"data":[{"index","relevance_score"}]}.
	ShapeVoyage
	// ShapeTEI is the bare [{"index","score"}] of text-embeddings-inference,
	// served on /rerank and reading "texts".
	ShapeTEI
)

// RerankOptions configure a rerank server.
type RerankOptions struct {
	Shape  Shape
	APIKey string // when set, requests must carry it as a bearer token
}

// RerankRequest is one request the server received.
type RerankRequest struct {
	Model         string
	Query         string
	Documents     []string
	Authorization string
}

// RerankServer scores documents by the query words they hold.
type RerankServer struct {
	// URL is the endpoint to configure: .../v1/rerank, or .../rerank for
	// ShapeTEI.
	URL   string
	shape Shape
	key   string
	faults

	mu       sync.Mutex
	requests []RerankRequest
}

// NewRerankServer starts a server that t closes at its end.
func NewRerankServer(t testing.TB, opts RerankOptions) *RerankServer {
	t.Helper()
	s := &RerankServer{shape: opts.Shape, key: opts.APIKey}
	path := "/v1/rerank"
	if opts.Shape == ShapeTEI {
		path = "/rerank"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+path, s.serve)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL + path
	return s
}

// SetFault makes the next requests fail as fault says (Fault{} heals).
func (s *RerankServer) SetFault(fault Fault) { s.set(fault) }

// Requests are the requests received so far, failed ones included.
func (s *RerankServer) Requests() []RerankRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RerankRequest(nil), s.requests...)
}

type rerankResult struct {
	Index          int      `json:"index"`
	RelevanceScore *float64 `json:"relevance_score,omitempty"`
	Score          *float64 `json:"score,omitempty"`
}

func (s *RerankServer) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model     string   `json:"model"`
		Query     string   `json:"query"`
		Documents []string `json:"documents"`
		Texts     []string `json:"texts"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":"request is not JSON"}`, http.StatusBadRequest)
		return
	}
	docs := req.Documents
	if s.shape == ShapeTEI {
		docs = req.Texts
	}
	s.mu.Lock()
	s.requests = append(s.requests, RerankRequest{Model: req.Model, Query: req.Query, Documents: docs, Authorization: r.Header.Get("Authorization")})
	s.mu.Unlock()
	if !authorized(w, r, s.key) {
		return
	}
	if req.Query == "" || len(docs) == 0 {
		http.Error(w, `{"error":"query and documents are required"}`, http.StatusUnprocessableEntity)
		return
	}
	fault := s.next()
	if answerFault(w, r, fault) {
		return
	}
	results := make([]rerankResult, len(docs))
	for i, d := range docs {
		score := Score(req.Query, d)
		results[i] = rerankResult{Index: i}
		if s.shape == ShapeTEI {
			results[i].Score = &score
		} else {
			results[i].RelevanceScore = &score
		}
	}
	// Providers answer best first.
	sort.SliceStable(results, func(i, j int) bool { return s.score(results[i]) > s.score(results[j]) })
	switch fault.Failure {
	case FailWrongCount:
		results = results[:len(results)-1]
	case FailNaN:
		results[0].RelevanceScore, results[0].Score = nil, nil
	case FailWrongDimension:
		results[0].Index = len(docs)
	}
	var reply any
	switch s.shape {
	case ShapeVoyage:
		reply = map[string]any{"object": "list", "data": results, "model": req.Model}
	case ShapeTEI:
		reply = results
	default:
		reply = map[string]any{"id": "rerank-test", "results": results, "meta": map[string]any{}}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

func (s *RerankServer) score(r rerankResult) float64 {
	if r.Score != nil {
		return *r.Score
	}
	if r.RelevanceScore != nil {
		return *r.RelevanceScore
	}
	return 0
}
