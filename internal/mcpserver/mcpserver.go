// Package mcpserver serves a domain's docs to AI tools over the Model
// Context Protocol (Streamable HTTP, stateless): a search tool, a get_page
// tool and the pages as resources, and a submit_feedback tool with which
// an agent says whether a page helped. It retrieves through the
// assistant's own search and page functions, so an MCP client sees exactly
// what the search and page endpoints return. Authentication, the domain and
// the rate limits are the HTTP layer's; this package is handed what a
// request may do (Access: the domain, the access groups of its reader, and
// whether it may write), and makes sure a request is one message, so that
// the HTTP layer's count of requests is a count of calls.
package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Docs is what the server reads and writes: assistant.Service's search and
// page, and its feedback on pages.
type Docs interface {
	Search(ctx context.Context, d tenant.Domain, q assistant.SearchRequest) ([]assistant.SearchResult, error)
	Page(ctx context.Context, d tenant.Domain, path string, groups []string) (search.PageText, error)
	RatePage(ctx context.Context, d tenant.Domain, f assistant.PageFeedback, groups []string) (assistant.PageFeedback, error)
}

// Access is what one request may do: read the pages of Domain that a
// reader in Groups may see and, unless ReadOnly, give feedback. A request
// without a key, to a domain that serves its public pages to such
// requests (tenant.DomainSettings.MCPPublic), is ReadOnly with no groups.
type Access struct {
	Domain   tenant.Domain
	Groups   []string
	ReadOnly bool
}

// Tool names, and the scheme of the pages' resource URIs.
const (
	ToolSearch         = "search"
	ToolGetPage        = "get_page"
	ToolSubmitFeedback = "submit_feedback"
	// PageURIPrefix starts a page's resource URI: PageURIPrefix + its path.
	PageURIPrefix = "docs://page/"
)

// What one request may cost: its body is one client message, and each
// answer is cut to a size (search returns at most search.MaxPageSize
// passages), so that no request makes the server hold more than about a
// megabyte for it.
const (
	// MaxRequestBytes bounds a request body: a tool call's arguments fit
	// many times over.
	MaxRequestBytes = 64 << 10
	// MaxPassageBytes bounds the text of one search passage. Index chunks
	// are far smaller; this holds whatever an index holds.
	MaxPassageBytes = 4 << 10
	// MaxPageBytes bounds the page get_page and a resource read return;
	// the rest of a longer page is left out, after a marker.
	MaxPageBytes = 256 << 10
)

// Server answers MCP requests for one domain at a time: ServeMCP is given
// what the request may do.
type Server struct {
	docs    Docs
	log     *slog.Logger
	handler http.Handler
}

// What tools/list tells an agent about each tool: when to use it, before
// what it does, as agents pick tools by these sentences.
const (
	instructions = "This server answers from one documentation site. For a question about it, call search first " +
		"(in words or as a question; search again with other words when nothing fits). When a passage is not enough, " +
		"read its whole page with get_page, by the path search returned; never guess paths. Cite pages by their URL. " +
		"After you used a page for your task, tell the docs team with submit_feedback whether it helped."
	instructionsReadOnly = "This server answers from one documentation site's public pages. For a question about it, call search first " +
		"(in words or as a question; search again with other words when nothing fits). When a passage is not enough, " +
		"read its whole page with get_page, by the path search returned; never guess paths. Cite pages by their URL. " +
		"Feedback on pages (submit_feedback) needs an assistant key."
	searchDescription = "Use this first for any question about these docs: it finds the passages that answer a query, best first, " +
		"each with its page's title, path and URL, and its text as Markdown. Search again with other words when nothing fits. " +
		"To read more than a passage, pass its path to get_page."
	getPageDescription = "Use this after search, to read a whole page as Markdown when a passage is not enough (the steps " +
		"around it, a complete example, a whole table). Give the page's path exactly as search returned it (for example " +
		"guides/setup); do not guess paths."
	feedbackDescription = "Use this after you used a page of these docs for a task, once per page: say whether it helped " +
		"(helpful true) or not (helpful false: it was wrong, outdated, unclear or missing what you needed), and in the " +
		"comment what was missing or wrong. The docs team reads it to fix the docs. Write no secrets or personal data."
)

// New returns a Server; version is the server version clients are told.
func New(docs Docs, log *slog.Logger, version string) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{docs: docs, log: log}
	// The SDK logs every stateless request's session at Info; the request
	// log already has them, so it gets warnings and errors only.
	sdkLog := slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn})
	impl := &mcp.Implementation{Name: "docsmith", Title: "docsmith docs", Version: version}
	// Two servers with the same reading tools: one for requests with a
	// key, which also takes feedback, and one for requests without, whose
	// tools/list does not offer what they may not call.
	full := mcp.NewServer(impl, &mcp.ServerOptions{Instructions: instructions, Logger: sdkLog})
	s.addReadTools(full)
	mcp.AddTool(full, &mcp.Tool{
		Name:        ToolSubmitFeedback,
		Title:       "Say whether a docs page helped",
		Description: feedbackDescription,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, s.submitFeedback)
	readOnly := mcp.NewServer(impl, &mcp.ServerOptions{Instructions: instructionsReadOnly, Logger: sdkLog})
	s.addReadTools(readOnly)
	serverFor := func(r *http.Request) *mcp.Server {
		if a, err := accessFrom(r.Context()); err == nil && !a.ReadOnly {
			return full
		}
		return readOnly
	}
	s.handler = mcp.NewStreamableHTTPHandler(serverFor, &mcp.StreamableHTTPOptions{
		// Stateless: any replica answers any request, and nothing is kept
		// between requests; the tools need no session.
		Stateless:    true,
		JSONResponse: true,
		Logger:       sdkLog,
		// ServeMCP has read the body already; this holds for any other
		// way in.
		MaxRequestBodyBytes: MaxRequestBytes,
		// A request carries an assistant key, which a page rebinding a
		// name to 127.0.0.1 does not have, or has none and reads only the
		// pages a domain publishes anyway (as llms.txt does); and docsmith
		// usually sits on loopback behind a proxy that sends the public
		// Host.
		DisableLocalhostProtection: true,
	})
	return s
}

// addReadTools adds the tools and resources that read the docs.
func (s *Server) addReadTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolSearch,
		Title:       "Search the docs",
		Description: searchDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.search)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolGetPage,
		Title:       "Read a docs page",
		Description: getPageDescription,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.getPage)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "page",
		Title:       "Docs page",
		Description: "A documentation page as Markdown, by its path as search returns it (docs://page/guides/setup).",
		MIMEType:    "text/markdown",
		URITemplate: PageURIPrefix + "{+path}",
	}, s.readPage)
}

func ptr[T any](v T) *T { return &v }

type accessKey struct{}

// ServeMCP answers one MCP request over Streamable HTTP with access a (the
// reader's groups from its token, which the caller checked). The SDK hands
// the request's context to the tools, which read a from it; groups named
// in a tool's arguments are ignored.
//
// A request carries exactly one JSON-RPC message. A batch, or a body that is
// not one JSON object, is refused with an apperr error before anything is
// written: the SDK still runs the batches of protocol versions before
// 2025-06-18, one call per element, and a request without an
// Mcp-Protocol-Version header is taken as of 2025-03-26.
func (s *Server) ServeMCP(w http.ResponseWriter, r *http.Request, a Access) error {
	body, err := readMessage(w, r)
	if err != nil {
		return err
	}
	r = r.WithContext(context.WithValue(r.Context(), accessKey{}, a))
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	s.handler.ServeHTTP(w, r)
	return nil
}

// readMessage reads a request's body, at most MaxRequestBytes, if it is one
// JSON-RPC message: a JSON object and nothing after it. A batch is refused
// on its first byte, before the rest is read.
func readMessage(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return nil, apperr.New(apperr.MethodNotAllowed, "send MCP requests as POST: this server keeps no session and opens no event stream")
	}
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		return nil, apperr.New(apperr.UnsupportedType, "an MCP request is JSON; send Content-Type: application/json")
	}
	body := bufio.NewReader(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	first, err := firstNonSpace(body)
	switch {
	case errors.Is(err, io.EOF):
		return nil, apperr.New(apperr.Invalid, "the request body is empty; send one JSON-RPC message")
	case err != nil:
		return nil, readError(err)
	case first == '[':
		return nil, apperr.New(apperr.Invalid, "JSON-RPC batches are not supported: send one message per request (MCP has no batches since protocol version 2025-06-18)")
	case first != '{':
		return nil, apperr.New(apperr.Invalid, "the request body must be one JSON-RPC message, a JSON object")
	}
	msg, err := io.ReadAll(body)
	if err != nil {
		return nil, readError(err)
	}
	if !json.Valid(msg) {
		return nil, apperr.New(apperr.Invalid, "the request body is not valid JSON; send one JSON-RPC message and nothing after it")
	}
	return msg, nil
}

// firstNonSpace returns the first byte after JSON whitespace, and leaves it
// to be read again.
func firstNonSpace(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b, r.UnreadByte()
	}
}

func readError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return apperr.New(apperr.TooLarge, "the request body is larger than the limit of %d bytes; send one JSON-RPC message", tooLarge.Limit)
	}
	return apperr.Wrap(err, apperr.Invalid, "the request body could not be read")
}

func accessFrom(ctx context.Context) (Access, error) {
	a, ok := ctx.Value(accessKey{}).(Access)
	if !ok {
		return Access{}, errors.New("no domain in the request context")
	}
	return a, nil
}

// Filter narrows a search, as the search endpoint's filter does.
type Filter struct {
	Version  string `json:"version,omitempty" jsonschema:"keep passages of this docs version (and those with none)"`
	Language string `json:"language,omitempty" jsonschema:"keep passages of this language (and those with none)"`
	// Groups is ignored, kept so that clients that send it are not
	// refused: the reader's groups come from its reader token.
	Groups []string `json:"groups,omitempty" jsonschema:"ignored: the reader's access groups come from the reader token the client sends in the X-Docsmith-Reader-Token header"`
}

// SearchInput is the search tool's arguments.
type SearchInput struct {
	Query    string  `json:"query" jsonschema:"what to look for, in words or as a question"`
	PageSize int     `json:"pageSize,omitempty" jsonschema:"how many passages to return, 1 to 50 (default 10)"`
	Filter   *Filter `json:"filter,omitempty" jsonschema:"optional version and language"`
}

// Passage is one search result.
type Passage struct {
	// Title is the citation title: the page title, and the section's
	// heading when the passage is a section.
	Title      string   `json:"title"`
	PageTitle  string   `json:"pageTitle"`
	Path       string   `json:"path" jsonschema:"the page's path, for get_page"`
	URL        string   `json:"url"`
	Heading    string   `json:"heading,omitempty"`
	Text       string   `json:"text" jsonschema:"the passage as Markdown"`
	Score      float64  `json:"score" jsonschema:"relevance from 0 to 1"`
	Breadcrumb []string `json:"breadcrumb,omitempty"`
}

// SearchOutput is the search tool's structured result.
type SearchOutput struct {
	Passages []Passage `json:"passages"`
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	rd, err := accessFrom(ctx)
	if err != nil {
		return nil, SearchOutput{}, s.toolError(ctx, ToolSearch, err)
	}
	if strings.TrimSpace(in.Query) == "" {
		return nil, SearchOutput{}, errors.New(`"query" is required: the text to search for`)
	}
	if in.PageSize == 0 {
		in.PageSize = search.DefaultPageSize
	}
	if in.PageSize < 1 || in.PageSize > search.MaxPageSize {
		return nil, SearchOutput{}, fmt.Errorf(`"pageSize" must be a whole number from 1 to %d, not %d`, search.MaxPageSize, in.PageSize)
	}
	q := assistant.SearchRequest{Query: in.Query, PageSize: in.PageSize, Filter: search.Filter{Groups: rd.Groups}}
	if in.Filter != nil {
		q.Filter.Version, q.Filter.Language = in.Filter.Version, in.Filter.Language
	}
	results, err := s.docs.Search(ctx, rd.Domain, q)
	if err != nil {
		return nil, SearchOutput{}, s.toolError(ctx, ToolSearch, err)
	}
	out := SearchOutput{Passages: make([]Passage, len(results))}
	var text strings.Builder
	if len(results) == 0 {
		text.WriteString("No passage of the docs matches this query; try other words.")
	}
	for i, r := range results {
		shown, _ := r.Display()
		passage := mdblock.Cut(shown, MaxPassageBytes, "\n[passage cut here; read the whole page with get_page]")
		out.Passages[i] = Passage{Title: r.Title, PageTitle: r.PageTitle, Path: r.PagePath, URL: r.URL, Heading: r.Heading,
			Text: passage, Score: r.Score, Breadcrumb: r.Breadcrumb}
		if i > 0 {
			text.WriteString("\n\n")
		}
		fmt.Fprintf(&text, "## %s\npath: %s\nurl: %s\n\n%s", r.Title, r.PagePath, r.URL, passage)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text.String()}}}, out, nil
}

// GetPageInput is the get_page tool's arguments.
type GetPageInput struct {
	Path string `json:"path" jsonschema:"the page's path as search returns it, for example guides/setup"`
	// Groups is ignored, as SearchInput.Filter.Groups is.
	Groups []string `json:"groups,omitempty" jsonschema:"ignored: the reader's access groups come from the reader token the client sends in the X-Docsmith-Reader-Token header"`
}

// PageOutput is a page as get_page returns it.
type PageOutput struct {
	Path    string `json:"path"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	Content string `json:"content" jsonschema:"the page as Markdown"`
	// Truncated is true when the page was longer than MaxPageBytes and
	// Content ends in a marker saying so.
	Truncated bool `json:"truncated,omitempty" jsonschema:"true when the page was too long to return whole: content ends where it was cut"`
}

func (s *Server) getPage(ctx context.Context, _ *mcp.CallToolRequest, in GetPageInput) (*mcp.CallToolResult, PageOutput, error) {
	rd, err := accessFrom(ctx)
	if err != nil {
		return nil, PageOutput{}, s.toolError(ctx, ToolGetPage, err)
	}
	if strings.TrimSpace(in.Path) == "" {
		return nil, PageOutput{}, errors.New(`"path" is required: a page path as search results give it`)
	}
	pt, err := s.docs.Page(ctx, rd.Domain, in.Path, rd.Groups)
	if err != nil {
		return nil, PageOutput{}, s.toolError(ctx, ToolGetPage, err)
	}
	content, cut := pageContent(pt.Content)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: content}}},
		PageOutput{Path: pt.Path, Title: pt.Title, URL: pt.URL, Content: content, Truncated: cut}, nil
}

// pageContent is a page's Markdown as get_page and a resource read return
// it: at most MaxPageBytes of it, cut between lines with a fence it leaves
// open closed, then a marker if the page is longer; cut says which.
func pageContent(text string) (content string, cut bool) {
	if len(text) <= MaxPageBytes {
		return text, false
	}
	return mdblock.Cut(text, MaxPageBytes, fmt.Sprintf("\n\n[page cut here: it is %d bytes, over the limit of %d; search for a passage to find the rest]", len(text), MaxPageBytes)), true
}

// readPage serves docs://page/{path}, a page the reader may see.
func (s *Server) readPage(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rd, err := accessFrom(ctx)
	if err != nil {
		return nil, s.toolError(ctx, "resources/read", err)
	}
	uri := req.Params.URI
	path, ok := strings.CutPrefix(uri, PageURIPrefix)
	if unescaped, err := url.PathUnescape(path); err == nil {
		path = unescaped
	}
	if !ok || strings.TrimSpace(path) == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	pt, err := s.docs.Page(ctx, rd.Domain, path, rd.Groups)
	if apperr.Is(err, apperr.NotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, s.toolError(ctx, "resources/read", err)
	}
	content, _ := pageContent(pt.Content)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: content}}}, nil
}

// FeedbackInput is the submit_feedback tool's arguments.
type FeedbackInput struct {
	Path    string `json:"path" jsonschema:"the path of the page you used, exactly as search or get_page returned it, for example guides/setup"`
	Helpful bool   `json:"helpful" jsonschema:"true when the page helped with your task; false when it was wrong, outdated, unclear or missing what you needed"`
	Comment string `json:"comment,omitempty" jsonschema:"optional, at most 2000 characters: what was missing, wrong or unclear, or what helped; no secrets or personal data"`
}

// FeedbackOutput is what submit_feedback recorded.
type FeedbackOutput struct {
	Recorded bool   `json:"recorded"`
	Path     string `json:"path"`
	Helpful  bool   `json:"helpful"`
}

// submitFeedback stores an agent's feedback on a page it may read, marked
// as coming over MCP. A read-only request never gets here: its server has
// no such tool.
func (s *Server) submitFeedback(ctx context.Context, _ *mcp.CallToolRequest, in FeedbackInput) (*mcp.CallToolResult, FeedbackOutput, error) {
	a, err := accessFrom(ctx)
	if err != nil {
		return nil, FeedbackOutput{}, s.toolError(ctx, ToolSubmitFeedback, err)
	}
	if a.ReadOnly {
		return nil, FeedbackOutput{}, errors.New("feedback needs an assistant key: send Authorization: Bearer svc_dsc_…")
	}
	if strings.TrimSpace(in.Path) == "" {
		return nil, FeedbackOutput{}, errors.New(`"path" is required: the path of the page you used, as search or get_page returned it`)
	}
	rating := assistant.RatingDown
	if in.Helpful {
		rating = assistant.RatingUp
	}
	f, err := s.docs.RatePage(ctx, a.Domain, assistant.PageFeedback{Path: in.Path, Rating: rating, Comment: in.Comment, Source: assistant.FeedbackFromMCP}, a.Groups)
	if err != nil {
		return nil, FeedbackOutput{}, s.toolError(ctx, ToolSubmitFeedback, err)
	}
	verdict := "helped"
	if !in.Helpful {
		verdict = "did not help"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Thank you: recorded that %s %s. The docs team will read it.", f.Path, verdict)}}},
		FeedbackOutput{Recorded: true, Path: f.Path, Helpful: in.Helpful}, nil
}

// toolError is what a client sees of a failure: the message of an error
// meant for it (a page not found, a bad argument), and otherwise a generic
// sentence, the cause going to the log only.
func (s *Server) toolError(ctx context.Context, what string, err error) error {
	switch apperr.CodeOf(err) {
	case apperr.Internal, apperr.Unavailable:
		s.log.ErrorContext(ctx, "mcp request failed", "op", what, "err", err)
		return errors.New("the docs could not be read this time; try again in a moment")
	}
	return errors.New(apperr.MessageOf(err))
}

// minLevel passes on the records of at least min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(attrs), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
