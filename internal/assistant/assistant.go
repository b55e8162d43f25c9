// Package assistant answers a docs site's readers: it retrieves the passages
// of the site's docs that bear on a question, decides whether they cover
// it, cites them, and emits the answer as events to a Sink (which the HTTP
// layer writes in the AI SDK wire formats), either written by a model from
// the numbered passages or, with no model, quoted from the best passages. Every answer belongs to a thread, kept with its turns in a
// ThreadStore. The package also builds a domain's search index from its
// project's repository (Indexer).
package assistant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Request limits (SPEC §4).
const (
	DefaultPageSize  = 5
	MaxPageSize      = search.MaxPageSize
	MaxCurrentPath   = 200
	DefaultHeartbeat = 5 * time.Second
	// DefaultMinScore is the relevance (search.Hit.Score, in [0, 1]) below
	// which a passage is not taken as evidence: with nothing above it the
	// answer says that the docs do not cover the question. It is low on
	// purpose: on the evaluation corpora, questions the docs do not answer
	// still score 0.3–0.5 on large sites while answerable ones on a small
	// site score from 0.2, so a score cannot tell them apart. The threshold
	// only catches questions with nothing in common with the docs; the
	// model is told to say when its passages do not answer.
	DefaultMinScore = 0.1
)

// Model names that need no model.
const (
	ModelExtractive = "extractive"
	modelBuiltin    = "builtin"
)

// Context types a reader can point at.
const (
	ContextCode          = "code"
	ContextTextSelection = "textSelection"
)

// ContextItem is code or text the reader points at.
type ContextItem struct {
	Type      string // ContextCode, ContextTextSelection or ""
	Value     string
	Path      string
	ElementID string
}

// Request is one question to a domain's assistant.
type Request struct {
	// FP is the reader's fingerprint: "anonymous" or a user id.
	FP string
	// Messages is the conversation so far; the last one is the question.
	Messages []Message
	// ThreadID continues a thread; empty for a new one.
	ThreadID string
	// PageSize is how many passages to retrieve, 1–50 (0: 5).
	PageSize    int
	Filter      search.Filter
	Context     []ContextItem
	CurrentPath string
}

// Validate checks what the wire decoder cannot, returning an apperr Invalid
// error that names the field, and fills in the default page size.
func (r *Request) Validate() error {
	if strings.TrimSpace(r.FP) == "" {
		return apperr.New(apperr.Invalid, `field "fp" is required: "anonymous" or a user id`)
	}
	if len(r.Messages) == 0 {
		return apperr.New(apperr.Invalid, `field "messages" is required: the conversation, ending with the user's question`)
	}
	last := r.Messages[len(r.Messages)-1]
	if last.Role != "user" {
		return apperr.New(apperr.Invalid, `field "messages": the last message must be the user's question (role "user"), not role %q`, last.Role)
	}
	if strings.TrimSpace(last.Text) == "" {
		return apperr.New(apperr.Invalid, `field "messages": the last message has no text; send the question as a text part (or content)`)
	}
	if r.PageSize == 0 {
		r.PageSize = DefaultPageSize
	}
	if r.PageSize < 1 || r.PageSize > MaxPageSize {
		return apperr.New(apperr.Invalid, `field "retrievalPageSize" must be a whole number from 1 to %d, not %d`, MaxPageSize, r.PageSize)
	}
	if n := utf8.RuneCountInString(r.CurrentPath); n > MaxCurrentPath {
		return apperr.New(apperr.Invalid, `field "currentPath" is %d characters long; the limit is %d`, n, MaxCurrentPath)
	}
	for i, c := range r.Context {
		switch c.Type {
		case "", ContextCode, ContextTextSelection:
		default:
			return apperr.New(apperr.Invalid, `field "context[%d].type" must be "code" or "textSelection", not %q`, i, c.Type)
		}
	}
	return nil
}

// Question is the text of the last message.
func (r *Request) Question() string { return strings.TrimSpace(r.Messages[len(r.Messages)-1].Text) }

// contextValues are the texts the reader pointed at (a selection, a code
// block) beside the question: they are part of what the turn asks about.
func (r *Request) contextValues() []string {
	var vs []string
	for _, c := range r.Context {
		if v := strings.TrimSpace(c.Value); v != "" {
			vs = append(vs, v)
		}
	}
	return vs
}

// Config is what a Service needs.
type Config struct {
	Index   search.Index
	Threads ThreadStore
	// Turns stores finished turns (a TurnWriter); nil stores each one in
	// Threads directly.
	Turns TurnRecorder
	// Catalogs holds the domains' page catalogs (for Catalog); nil serves
	// none.
	Catalogs CatalogStore
	// OpenModel opens a model by its PROVIDER/MODEL name (llm.Open with the
	// configured providers).
	OpenModel func(name string) (llm.Model, error)
	Log       *slog.Logger
	Now       func() time.Time
	// Heartbeat is how often a keep-alive is written while the answer is
	// not flowing yet (0: DefaultHeartbeat).
	Heartbeat time.Duration
	// MinScore is the relevance a passage needs (0: DefaultMinScore; a
	// negative value takes every passage found).
	MinScore float64
	// Spend reads a domain's model spend for its daily budget; nil counts
	// none, so no budget is ever spent.
	Spend SpendStore
	// Budget is the server's daily budget of a domain that sets none of
	// its own (tenant.DomainSettings); 0 in a field is no bound.
	Budget Budget
	// Registerer takes the spend metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// PageFeedback keeps agents' feedback on pages (RatePage); nil
	// refuses it.
	PageFeedback PageFeedbackStore
	// Hybrid fuses dense retrieval and reranking with BM25 in every
	// search the Service runs (the assistant's, the search endpoint's,
	// MCP's); the zero value is BM25 alone.
	Hybrid search.Hybrid
}

// Service answers questions and serves search and page requests over the
// domains' indexes.
type Service struct {
	index     search.Index
	retriever *search.Retriever
	threads   ThreadStore
	turns     TurnRecorder
	catalogs  CatalogStore
	openModel func(string) (llm.Model, error)
	log       *slog.Logger
	now       func() time.Time
	heartbeat time.Duration
	minScore  float64
	spend     SpendStore
	budget    Budget
	metrics   spendMetrics
	grounding groundingMetrics
	// pageFeedback keeps feedback on pages; nil refuses it.
	pageFeedback PageFeedbackStore

	mu     sync.Mutex
	models map[string]llm.Model
}

// New returns a Service.
func New(cfg Config) *Service {
	s := &Service{
		index:     cfg.Index,
		retriever: search.NewRetriever(cfg.Index).WithHybrid(cfg.Hybrid),
		threads:   cfg.Threads,
		turns:     cfg.Turns,
		catalogs:  cfg.Catalogs,
		openModel: cfg.OpenModel,
		log:       cfg.Log,
		now:       cfg.Now,
		heartbeat: cfg.Heartbeat,
		minScore:  cfg.MinScore,
		spend:     cfg.Spend,
		budget:    cfg.Budget,
		metrics:   newSpendMetrics(cfg.Registerer),
		grounding: newGroundingMetrics(cfg.Registerer),
		models:    map[string]llm.Model{},

		pageFeedback: cfg.PageFeedback,
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if s.turns == nil {
		s.turns = directRecorder{store: s.threads}
	}
	if s.heartbeat <= 0 {
		s.heartbeat = DefaultHeartbeat
	}
	switch {
	case s.minScore == 0:
		s.minScore = DefaultMinScore
	case s.minScore < 0:
		s.minScore = 0
	}
	if s.openModel == nil {
		s.openModel = func(name string) (llm.Model, error) {
			return nil, fmt.Errorf("no model provider is configured for %q", name)
		}
	}
	return s
}

// model returns the open model of that name, opening it once.
func (s *Service) model(name string) (llm.Model, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.models[name]; ok {
		return m, nil
	}
	m, err := s.openModel(name)
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", name, err)
	}
	s.models[name] = m
	return m, nil
}

// SearchRequest is a search of a domain's docs.
type SearchRequest struct {
	Query string
	// PageSize is 1–50 (0: search.DefaultPageSize).
	PageSize       int
	ScoreThreshold float64
	Filter         search.Filter
}

// SearchResult is a passage found by Search, with its citation link and
// title as the assistant would cite it.
type SearchResult struct {
	search.Hit
	URL   string
	Title string
}

// Search returns the passages that match a query, best first.
func (s *Service) Search(ctx context.Context, d tenant.Domain, q SearchRequest) ([]SearchResult, error) {
	hits, err := s.retriever.Retrieve(ctx, d.ID, search.Request{
		Query:          q.Query,
		PageSize:       q.PageSize,
		ScoreThreshold: q.ScoreThreshold,
		Filter:         q.Filter,
		Synonyms:       d.Settings.Synonyms,
	})
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", d.ID, err)
	}
	out := make([]SearchResult, len(hits))
	for i, h := range hits {
		out[i] = SearchResult{Hit: h, URL: citeURL(d.SiteURL, h.PagePath, h.Anchor), Title: citeTitle(h)}
	}
	return out, nil
}

// Page returns one indexed page of the domain as text, if a reader in
// groups may see it; an unknown page, or one restricted to other groups,
// is an apperr NotFound error, the same for both.
func (s *Service) Page(ctx context.Context, d tenant.Domain, path string, groups []string) (search.PageText, error) {
	p := search.PagePath(path)
	if p == "" {
		return search.PageText{}, apperr.New(apperr.NotFound, "page %q not found", path)
	}
	pt, err := s.index.Page(ctx, d.ID, p)
	if err == nil && !pt.VisibleTo(groups) {
		err = search.ErrPageNotFound
	}
	if errors.Is(err, search.ErrPageNotFound) {
		return search.PageText{}, apperr.New(apperr.NotFound, "page %q not found in the docs of %s", path, d.ID)
	}
	if err != nil {
		return search.PageText{}, fmt.Errorf("page %s of %s: %w", p, d.ID, err)
	}
	return pt, nil
}

// CatalogStore keeps each domain's page catalog, written by each index
// build. GetCatalog returns an apperr NotFound error for a domain that has
// none.
type CatalogStore interface {
	PutCatalog(ctx context.Context, domain string, c search.SiteCatalog) error
	GetCatalog(ctx context.Context, domain string) (search.SiteCatalog, error)
}

// Catalog returns the domain's indexed pages in navigation order, all of
// them: a caller that shows them to the public keeps the Public ones. A
// domain not indexed yet is an apperr NotFound error.
func (s *Service) Catalog(ctx context.Context, d tenant.Domain) (search.SiteCatalog, error) {
	if s.catalogs == nil {
		return search.SiteCatalog{}, apperr.New(apperr.NotFound, "the pages of %s are not listed on this server", d.ID)
	}
	c, err := s.catalogs.GetCatalog(ctx, d.ID)
	if apperr.Is(err, apperr.NotFound) {
		return search.SiteCatalog{}, apperr.New(apperr.NotFound, "the docs of %s are not indexed yet; run docsmith index %s", d.ID, d.ID)
	}
	if err != nil {
		return search.SiteCatalog{}, fmt.Errorf("catalog of %s: %w", d.ID, err)
	}
	// Links as citations give them, with the domain's site URL of now.
	for i, p := range c.Pages {
		c.Pages[i].URL = citeURL(d.SiteURL, p.Path, "")
	}
	return c, nil
}
