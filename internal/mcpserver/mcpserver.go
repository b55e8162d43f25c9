// Package mcpserver serves a domain's docs to AI tools over the Model
// Context Protocol (Streamable HTTP, stateless): a search tool and a
// get_page tool, and the pages as resources. It retrieves through the
// assistant's own search and page functions, so an MCP client sees exactly
// what the search and page endpoints return. Authentication, the domain and
// the rate limits are the HTTP layer's; this package is handed the domain a
// request may read and the access groups of its reader.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Docs is what the server reads: assistant.Service's search and page.
type Docs interface {
	Search(ctx context.Context, d tenant.Domain, q assistant.SearchRequest) ([]assistant.SearchResult, error)
	Page(ctx context.Context, d tenant.Domain, path string, groups []string) (search.PageText, error)
}

// Tool names, and the scheme of the pages' resource URIs.
const (
	ToolSearch  = "search"
	ToolGetPage = "get_page"
	// PageURIPrefix starts a page's resource URI: PageURIPrefix + its path.
	PageURIPrefix = "docs://page/"
)

// Server answers MCP requests for one domain at a time: ServeMCP is given
// the domain the request's key may read.
type Server struct {
	docs    Docs
	log     *slog.Logger
	handler http.Handler
}

// New returns a Server; version is the server version clients are told.
func New(docs Docs, log *slog.Logger, version string) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{docs: docs, log: log}
	// The SDK logs every stateless request's session at Info; the request
	// log already has them, so it gets warnings and errors only.
	sdkLog := slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn})
	srv := mcp.NewServer(&mcp.Implementation{Name: "docsmith", Title: "docsmith docs", Version: version}, &mcp.ServerOptions{
		Instructions: "Search this documentation site with the search tool, then read a whole page with get_page " +
			"(its path as search returns it). Cite pages by their URL.",
		Logger: sdkLog,
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolSearch,
		Title:       "Search the docs",
		Description: "Search the documentation for passages that match a query, best first. Each passage has its page's title, path and URL, and its text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.search)
	mcp.AddTool(srv, &mcp.Tool{
		Name:        ToolGetPage,
		Title:       "Read a docs page",
		Description: "Return one documentation page as Markdown, by its path as search results give it (for example guides/setup).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, s.getPage)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "page",
		Title:       "Docs page",
		Description: "A documentation page as Markdown, by its path (docs://page/guides/setup).",
		MIMEType:    "text/markdown",
		URITemplate: PageURIPrefix + "{+path}",
	}, s.readPage)
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		// Stateless: any replica answers any request, and nothing is kept
		// between requests; the tools need no session.
		Stateless:    true,
		JSONResponse: true,
		Logger:       sdkLog,
		// Every request carries an assistant key, which a page rebinding
		// a name to 127.0.0.1 does not have; and docsmith usually sits on
		// loopback behind a proxy that sends the public Host.
		DisableLocalhostProtection: true,
	})
	return s
}

func ptr[T any](v T) *T { return &v }

type readerKey struct{}

// reader is what a request may read: the domain, and the access groups
// its reader token gave.
type reader struct {
	domain tenant.Domain
	groups []string
}

// ServeMCP answers one MCP request over Streamable HTTP for domain d and a
// reader in groups (from the reader's token, which the caller checked).
// The SDK hands the request's context to the tools, which read both from
// it; groups named in a tool's arguments are ignored.
func (s *Server) ServeMCP(w http.ResponseWriter, r *http.Request, d tenant.Domain, groups []string) {
	s.handler.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), readerKey{}, reader{domain: d, groups: groups})))
}

func readerFrom(ctx context.Context) (reader, error) {
	rd, ok := ctx.Value(readerKey{}).(reader)
	if !ok {
		return reader{}, errors.New("no domain in the request context")
	}
	return rd, nil
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
	Text       string   `json:"text"`
	Score      float64  `json:"score" jsonschema:"relevance from 0 to 1"`
	Breadcrumb []string `json:"breadcrumb,omitempty"`
}

// SearchOutput is the search tool's structured result.
type SearchOutput struct {
	Passages []Passage `json:"passages"`
}

func (s *Server) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, SearchOutput, error) {
	rd, err := readerFrom(ctx)
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
	q := assistant.SearchRequest{Query: in.Query, PageSize: in.PageSize, Filter: search.Filter{Groups: rd.groups}}
	if in.Filter != nil {
		q.Filter.Version, q.Filter.Language = in.Filter.Version, in.Filter.Language
	}
	results, err := s.docs.Search(ctx, rd.domain, q)
	if err != nil {
		return nil, SearchOutput{}, s.toolError(ctx, ToolSearch, err)
	}
	out := SearchOutput{Passages: make([]Passage, len(results))}
	var text strings.Builder
	if len(results) == 0 {
		text.WriteString("No passage of the docs matches this query; try other words.")
	}
	for i, r := range results {
		out.Passages[i] = Passage{Title: r.Title, PageTitle: r.PageTitle, Path: r.PagePath, URL: r.URL, Heading: r.Heading,
			Text: r.Text, Score: r.Score, Breadcrumb: r.Breadcrumb}
		if i > 0 {
			text.WriteString("\n\n")
		}
		fmt.Fprintf(&text, "## %s\npath: %s\nurl: %s\n\n%s", r.Title, r.PagePath, r.URL, r.Text)
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
}

func (s *Server) getPage(ctx context.Context, _ *mcp.CallToolRequest, in GetPageInput) (*mcp.CallToolResult, PageOutput, error) {
	rd, err := readerFrom(ctx)
	if err != nil {
		return nil, PageOutput{}, s.toolError(ctx, ToolGetPage, err)
	}
	if strings.TrimSpace(in.Path) == "" {
		return nil, PageOutput{}, errors.New(`"path" is required: a page path as search results give it`)
	}
	pt, err := s.docs.Page(ctx, rd.domain, in.Path, rd.groups)
	if err != nil {
		return nil, PageOutput{}, s.toolError(ctx, ToolGetPage, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: pt.Content}}},
		PageOutput{Path: pt.Path, Title: pt.Title, URL: pt.URL, Content: pt.Content}, nil
}

// readPage serves docs://page/{path}, a page the reader may see.
func (s *Server) readPage(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rd, err := readerFrom(ctx)
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
	pt, err := s.docs.Page(ctx, rd.domain, path, rd.groups)
	if apperr.Is(err, apperr.NotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, s.toolError(ctx, "resources/read", err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: pt.Content}}}, nil
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
