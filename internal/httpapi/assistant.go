package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/answerstream"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// The assistant's wire bodies (SPEC §4). Pointers and raw values tell a
// missing field from a zero one and let each field's error name it.
type (
	assistantBody struct {
		FP                *string           `json:"fp"`
		Messages          []json.RawMessage `json:"messages"`
		ThreadID          *string           `json:"threadId"`
		RetrievalPageSize json.RawMessage   `json:"retrievalPageSize"`
		Filter            json.RawMessage   `json:"filter"`
		Context           []json.RawMessage `json:"context"`
		CurrentPath       *string           `json:"currentPath"`
	}
	filterBody struct {
		Version  *string  `json:"version"`
		Language *string  `json:"language"`
		Groups   []string `json:"groups"`
	}
	contextBody struct {
		Type      *string `json:"type"`
		Value     *string `json:"value"`
		Path      *string `json:"path"`
		ElementID *string `json:"elementId"`
	}
	searchBody struct {
		Query          *string         `json:"query"`
		PageSize       json.RawMessage `json:"pageSize"`
		ScoreThreshold *float64        `json:"scoreThreshold"`
		Filter         json.RawMessage `json:"filter"`
	}
	pageBody struct {
		Path *string `json:"path"`
		// Filter's version and language do not apply to a page asked
		// for by path, and its groups are ignored: the reader's come
		// from a reader token.
		Filter json.RawMessage `json:"filter"`
	}
)

// decodeAssistantRequest reads and checks an assistant message body; every
// refusal names the field.
func decodeAssistantRequest(w http.ResponseWriter, r *http.Request, limit int64) (assistant.Request, error) {
	var body assistantBody
	if err := decodeJSON(w, r, limit, &body); err != nil {
		return assistant.Request{}, err
	}
	return body.request()
}

// parseAssistantBody is decodeAssistantRequest without the HTTP, for the
// fuzzer.
func parseAssistantBody(raw []byte) (assistant.Request, error) {
	var body assistantBody
	if err := decodeBody(raw, &body); err != nil {
		return assistant.Request{}, err
	}
	return body.request()
}

func (b *assistantBody) request() (assistant.Request, error) {
	req := assistant.Request{}
	if b.FP == nil || strings.TrimSpace(*b.FP) == "" {
		return req, apperr.New(apperr.Invalid, `field "fp" is required: "anonymous" or a user id`)
	}
	req.FP = *b.FP
	for i, raw := range b.Messages {
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return req, apperr.New(apperr.Invalid, `field "messages[%d]" must be an object {id, role, parts}`, i)
		}
		var m aisdk.Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return req, apperr.New(apperr.Invalid, `field "messages[%d]": %s`, i, err.Error())
		}
		req.Messages = append(req.Messages, assistant.Message{Role: m.Role, Text: m.Text, ThreadID: m.ThreadID})
	}
	if b.ThreadID != nil {
		req.ThreadID = strings.TrimSpace(*b.ThreadID)
	}
	n, err := wholeNumber("retrievalPageSize", b.RetrievalPageSize, 1, assistant.MaxPageSize)
	if err != nil {
		return req, err
	}
	req.PageSize = n
	if req.Filter, err = decodeFilter(b.Filter); err != nil {
		return req, err
	}
	for i, raw := range b.Context {
		item, err := decodeContextItem(i, raw)
		if err != nil {
			return req, err
		}
		req.Context = append(req.Context, item)
	}
	req.CurrentPath = deref(b.CurrentPath)
	if err := req.Validate(); err != nil { // fills the default page size
		return assistant.Request{}, err
	}
	return req, nil
}

// decodeFilter reads {version?, language?, groups?: [string]}; absent or
// null is no filter, unknown keys are ignored. The groups are what the
// caller asserts: readerFilter replaces them with the reader token's.
func decodeFilter(raw json.RawMessage) (search.Filter, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return search.Filter{}, nil
	}
	if t[0] != '{' {
		return search.Filter{}, apperr.New(apperr.Invalid, `field "filter" must be an object {version?, language?, groups?}`)
	}
	var f filterBody
	if err := json.Unmarshal(t, &f); err != nil {
		return search.Filter{}, fieldError("filter", err, map[string]string{"groups": "an array of strings"})
	}
	return search.Filter{Version: deref(f.Version), Language: deref(f.Language), Groups: f.Groups}, nil
}

// decodeContextItem reads one {type?, value, path?, elementId?}.
func decodeContextItem(i int, raw json.RawMessage) (assistant.ContextItem, error) {
	name := "context[" + strconv.Itoa(i) + "]"
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return assistant.ContextItem{}, apperr.New(apperr.Invalid, `field %q must be an object {type?, value, path?, elementId?}`, name)
	}
	var c contextBody
	if err := json.Unmarshal(raw, &c); err != nil {
		return assistant.ContextItem{}, fieldError(name, err, nil)
	}
	if c.Value == nil {
		return assistant.ContextItem{}, apperr.New(apperr.Invalid, `field "%s.value" is required: the code or selected text`, name)
	}
	return assistant.ContextItem{Type: deref(c.Type), Value: *c.Value, Path: deref(c.Path), ElementID: deref(c.ElementID)}, nil
}

// fieldError names the member of an object field that had the wrong type;
// want overrides the wording for members that are not strings.
func fieldError(parent string, err error, want map[string]string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		first, _, _ := strings.Cut(te.Field, ".")
		kind, ok := want[first]
		if !ok {
			kind = "a string"
		}
		return apperr.New(apperr.Invalid, `field "%s.%s" must be %s, not %s`, parent, first, kind, te.Value)
	}
	return apperr.New(apperr.Invalid, `field %q is not valid: %s`, parent, err.Error())
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// wholeNumber reads an optional integer field within [lo, hi]; absent or
// null gives 0. A JSON number with no fraction (5 or 5.0) is whole; a string
// is not a number.
func wholeNumber(field string, raw json.RawMessage, lo, hi int) (int, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return 0, nil
	}
	bad := apperr.New(apperr.Invalid, "field %q must be a whole number from %d to %d", field, lo, hi)
	if t[0] != '-' && (t[0] < '0' || t[0] > '9') {
		return 0, bad
	}
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, bad
	}
	return int(f), nil
}

// assistantMessage answers POST /discovery/{v1,v2}/assistant/{domain}/message
// with the stream newStream makes: everything is checked before the first
// byte; after it, failures go in-band.
func (s *Server) assistantMessage(newStream func(http.ResponseWriter) aisdk.Stream) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, d, err := s.assistantDomain(r)
		if err != nil {
			return err
		}
		// Answers are what spends the team's model tokens: a domain
		// under abuse may ask each of them for a proof of work.
		if err := s.requireProofOfWork(w, r, d); err != nil {
			return err
		}
		req, err := decodeAssistantRequest(w, r, s.MaxBodyBytes)
		if err != nil {
			return err
		}
		if err := s.readerFilter(r, d, &req.Filter); err != nil {
			return err
		}
		if err := s.limit(w, r, s.assistantRules(p, s.clientIP(r))...); err != nil {
			return err
		}
		ctx, done := s.answerContext(r.Context())
		defer done()
		answer, err := s.Assistant.Begin(ctx, d, req)
		if err != nil {
			return err
		}
		w.Header().Set("X-Thread-Id", answer.Thread.ID)
		return answer.Stream(ctx, answerstream.New(newStream(w)))
	}
}

func newUIMessageStream(w http.ResponseWriter) aisdk.Stream { return aisdk.NewUIMessageStream(w) }
func newDataStream(w http.ResponseWriter) aisdk.Stream      { return aisdk.NewDataStream(w) }

// assistantDomain authenticates an assistant key and loads the path's domain
// of its organization.
func (s *Server) assistantDomain(r *http.Request) (tenant.Principal, tenant.Domain, error) {
	if s.Assistant == nil {
		return tenant.Principal{}, tenant.Domain{}, apperr.New(apperr.Unavailable, "the assistant is not available on this server")
	}
	p, err := s.authenticate(r, apikey.Assistant)
	if err != nil {
		return tenant.Principal{}, tenant.Domain{}, err
	}
	d, err := s.Tenants.DomainFor(r.Context(), p, r.PathValue("domain"))
	return p, d, err
}

type searchResultJSON struct {
	Content  string             `json:"content"`
	Path     string             `json:"path"`
	Metadata searchMetadataJSON `json:"metadata"`
}

type searchMetadataJSON struct {
	Title      string   `json:"title"`
	PageTitle  string   `json:"pageTitle"`
	Heading    string   `json:"heading"`
	Anchor     string   `json:"anchor"`
	URL        string   `json:"url"`
	Breadcrumb []string `json:"breadcrumb"`
	Score      float64  `json:"score"`
	Version    string   `json:"version"`
	Language   string   `json:"language"`
}

func (s *Server) searchDocs(w http.ResponseWriter, r *http.Request) error {
	p, d, err := s.assistantDomain(r)
	if err != nil {
		return err
	}
	var body searchBody
	if err := decodeJSON(w, r, s.MaxBodyBytes, &body); err != nil {
		return err
	}
	q, err := body.request()
	if err != nil {
		return err
	}
	if err := s.readerFilter(r, d, &q.Filter); err != nil {
		return err
	}
	if err := s.limit(w, r, s.assistantRules(p, s.clientIP(r))...); err != nil {
		return err
	}
	results, err := s.Assistant.Search(r.Context(), d, q)
	if err != nil {
		return err
	}
	out := make([]searchResultJSON, len(results))
	for i, res := range results {
		crumbs := res.Breadcrumb
		if crumbs == nil {
			crumbs = []string{}
		}
		// content is the passage as Markdown (see search.Chunk.Display),
		// the field the seed names for what a result shows.
		content, _ := res.Display()
		out[i] = searchResultJSON{
			Content: content,
			Path:    res.PagePath,
			Metadata: searchMetadataJSON{
				Title: res.Title, PageTitle: res.PageTitle, Heading: res.Heading, Anchor: res.Anchor, URL: res.URL,
				Breadcrumb: crumbs, Score: res.Score, Version: res.Version, Language: res.Language,
			},
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (b *searchBody) request() (assistant.SearchRequest, error) {
	if b.Query == nil || strings.TrimSpace(*b.Query) == "" {
		return assistant.SearchRequest{}, apperr.New(apperr.Invalid, `field "query" is required: the text to search for`)
	}
	n, err := wholeNumber("pageSize", b.PageSize, 1, search.MaxPageSize)
	if err != nil {
		return assistant.SearchRequest{}, err
	}
	filter, err := decodeFilter(b.Filter)
	if err != nil {
		return assistant.SearchRequest{}, err
	}
	q := assistant.SearchRequest{Query: *b.Query, PageSize: n, Filter: filter}
	if q.PageSize == 0 {
		q.PageSize = search.DefaultPageSize
	}
	if b.ScoreThreshold != nil {
		if *b.ScoreThreshold < 0 || *b.ScoreThreshold > 1 {
			return assistant.SearchRequest{}, apperr.New(apperr.Invalid, `field "scoreThreshold" must be a number from 0 to 1`)
		}
		q.ScoreThreshold = *b.ScoreThreshold
	}
	return q, nil
}

type pageJSON struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// pageNotFound is the one body that is not {"error"}: the page endpoint's
// 404 is {"message"}, as the API it follows has it.
type pageNotFound struct {
	Message string `json:"message"`
}

func (s *Server) pageContent(w http.ResponseWriter, r *http.Request) error {
	err := s.servePage(w, r)
	if apperr.Is(err, apperr.NotFound) {
		writeJSON(w, http.StatusNotFound, pageNotFound{Message: apperr.MessageOf(err)})
		return nil
	}
	return err
}

func (s *Server) servePage(w http.ResponseWriter, r *http.Request) error {
	p, d, err := s.assistantDomain(r)
	if err != nil {
		return err
	}
	var body pageBody
	if err := decodeJSON(w, r, s.MaxBodyBytes, &body); err != nil {
		return err
	}
	if body.Path == nil || strings.TrimSpace(*body.Path) == "" {
		return apperr.New(apperr.Invalid, `field "path" is required: a page path as search results give it`)
	}
	filter, err := decodeFilter(body.Filter)
	if err != nil {
		return err
	}
	if err := s.readerFilter(r, d, &filter); err != nil {
		return err
	}
	if err := s.limit(w, r, s.assistantRules(p, s.clientIP(r))...); err != nil {
		return err
	}
	page, err := s.Assistant.Page(r.Context(), d, *body.Path, filter.Groups)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pageJSON{Path: page.Path, Content: page.Content})
	return nil
}

type indexJSON struct {
	Domain        string `json:"domain"`
	ProjectID     string `json:"projectId"`
	Ref           string `json:"ref"`
	Commit        string `json:"commit"`
	Pages         int    `json:"pages"`
	Chunks        int    `json:"chunks"`
	Changed       int    `json:"changed"`
	Removed       int    `json:"removed"`
	Unchanged     int    `json:"unchanged"`
	ChunksWritten int    `json:"chunksWritten"`
	DurationMs    int64  `json:"durationMs"`
}

// indexDomain builds the domain's search index now, with an admin key of
// the domain's organization, and answers with what changed.
func (s *Server) indexDomain(w http.ResponseWriter, r *http.Request) error {
	if s.Indexer == nil {
		return apperr.New(apperr.Unavailable, "indexing is not available on this server")
	}
	p, err := s.authenticate(r, apikey.Admin)
	if err != nil {
		return err
	}
	d, err := s.Tenants.DomainFor(r.Context(), p, r.PathValue("domain"))
	if err != nil {
		return err
	}
	// A clone can outlast the server's write timeout.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	res, err := s.Indexer.Index(r.Context(), d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, indexJSON{
		Domain: res.Domain, ProjectID: res.ProjectID, Ref: res.Ref, Commit: res.Commit,
		Pages: res.Pages, Chunks: res.Chunks, Changed: res.Changed, Removed: res.Removed, Unchanged: res.Unchanged,
		ChunksWritten: res.ChunksWritten, DurationMs: res.Duration.Milliseconds(),
	})
	return nil
}
