package mcpserver_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/mcpserver"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// brokenDocs fails as a store that is down does, with details that must
// stay in the log.
type brokenDocs struct{ domains chan string }

func (b brokenDocs) Search(_ context.Context, d tenant.Domain, _ assistant.SearchRequest) ([]assistant.SearchResult, error) {
	b.domains <- d.ID
	return nil, errors.New("dial tcp 10.0.0.7:5432: password authentication failed for user docsmith")
}

func (b brokenDocs) Page(_ context.Context, d tenant.Domain, path string, _ []string) (search.PageText, error) {
	b.domains <- d.ID
	return search.PageText{}, apperr.New(apperr.NotFound, "page %q not found in the docs of %s", path, d.ID)
}

func (b brokenDocs) RatePage(_ context.Context, d tenant.Domain, _ assistant.PageFeedback, _ []string) (assistant.PageFeedback, error) {
	b.domains <- d.ID
	return assistant.PageFeedback{}, errors.New("write page_feedback: disk I/O error at /var/lib/docsmith/docsmith.db")
}

// statusOf is the HTTP layer's mapping, for the codes ServeMCP returns.
var statusOf = map[apperr.Code]int{
	apperr.Invalid:          http.StatusBadRequest,
	apperr.MethodNotAllowed: http.StatusMethodNotAllowed,
	apperr.TooLarge:         http.StatusRequestEntityTooLarge,
	apperr.UnsupportedType:  http.StatusUnsupportedMediaType,
}

// serve starts srv over HTTP for the domain acme-docs, writing a refusal as
// the HTTP layer does.
func serve(t *testing.T, srv *mcpserver.Server) string {
	t.Helper()
	return serveAs(t, srv, mcpserver.Access{Domain: tenant.Domain{ID: "acme-docs"}})
}

// serveAs starts srv over HTTP with access a for every request.
func serveAs(t *testing.T, srv *mcpserver.Server, a mcpserver.Access) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := srv.ServeMCP(w, r, a); err != nil {
			http.Error(w, apperr.MessageOf(err), statusOf[apperr.CodeOf(err)])
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func connect(t *testing.T, docs mcpserver.Docs) *mcp.ClientSession {
	t.Helper()
	return connectTo(t, serve(t, mcpserver.New(docs, nil, "test")))
}

func connectTo(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestToolsSeeTheDomainAndHideInternalErrors(t *testing.T) {
	t.Parallel()
	docs := brokenDocs{domains: make(chan string, 4)}
	cs := connect(t, docs)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{"query": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "password") || !strings.Contains(text, "try again") {
		t.Errorf("internal error shown to the client: %q", text)
	}
	if d := <-docs.domains; d != "acme-docs" {
		t.Errorf("the tool searched domain %q", d)
	}
	// A client error keeps its message.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolGetPage, Arguments: map[string]any{"path": "a/b"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `page "a/b" not found in the docs of acme-docs`) {
		t.Errorf("get_page: %v %+v", err, res)
	}
}

func TestSDKInfoLogsStayOut(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	url := serve(t, mcpserver.New(brokenDocs{domains: make(chan string, 4)}, log, "test"))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "level=INFO") {
		t.Errorf("the SDK logged per-request information:\n%s", buf.String())
	}
}

// countingDocs counts the searches and page reads that ran, and returns
// what the fields hold.
type countingDocs struct {
	calls   atomic.Int64
	results []assistant.SearchResult
	page    string
	// rated is the feedback given, with the groups it was given with.
	rated chan ratedPage
}

type ratedPage struct {
	domain string
	f      assistant.PageFeedback
	groups []string
}

func (c *countingDocs) RatePage(_ context.Context, d tenant.Domain, f assistant.PageFeedback, groups []string) (assistant.PageFeedback, error) {
	c.calls.Add(1)
	c.rated <- ratedPage{domain: d.ID, f: f, groups: groups}
	f.Path = strings.TrimPrefix(f.Path, "/")
	return f, nil
}

func (c *countingDocs) Search(context.Context, tenant.Domain, assistant.SearchRequest) ([]assistant.SearchResult, error) {
	c.calls.Add(1)
	return c.results, nil
}

func (c *countingDocs) Page(_ context.Context, _ tenant.Domain, path string, _ []string) (search.PageText, error) {
	c.calls.Add(1)
	return search.PageText{Path: path, Title: "Setup", URL: "https://acme.example/" + path, Content: c.page}, nil
}

// searchCall is a tools/call of the search tool, as a JSON-RPC message.
func searchCall(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"setup"}}}`, id)
}

func batchOf(n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = searchCall(i + 1)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

func TestRequestsAreOneMessage(t *testing.T) {
	t.Parallel()
	batch := batchOf(100)
	for _, c := range []struct {
		name, method, body string
		header             map[string]string
		chunked            bool
		status             int
		want               string
	}{
		{name: "batch", body: batch, status: 400, want: "JSON-RPC batches are not supported"},
		{name: "batch of one", body: batchOf(1), status: 400, want: "JSON-RPC batches are not supported"},
		{name: "batch after whitespace", body: " \r\n\t " + batch, status: 400, want: "JSON-RPC batches are not supported"},
		{name: "batch of a protocol version that had batches", body: batch, header: map[string]string{"Mcp-Protocol-Version": "2025-03-26"},
			status: 400, want: "JSON-RPC batches are not supported"},
		{name: "batch of the current protocol version", body: batch, header: map[string]string{"Mcp-Protocol-Version": "2025-11-25"},
			status: 400, want: "JSON-RPC batches are not supported"},
		{name: "batch in a session", body: batch, header: map[string]string{"Mcp-Session-Id": "abc"}, status: 400, want: "JSON-RPC batches are not supported"},
		{name: "chunked batch", body: batch, chunked: true, status: 400, want: "JSON-RPC batches are not supported"},
		{name: "batch after a byte order mark", body: "\ufeff" + batch, status: 400, want: "must be one JSON-RPC message"},
		{name: "batch as text", body: batch, header: map[string]string{"Content-Type": "text/plain"}, status: 415, want: "Content-Type: application/json"},
		{name: "batch without a content type", body: batch, header: map[string]string{"Content-Type": ""}, status: 415, want: "Content-Type: application/json"},
		{name: "message then batch", body: searchCall(1) + batch, status: 400, want: "nothing after it"},
		{name: "string", body: `"tools/call"`, status: 400, want: "must be one JSON-RPC message"},
		{name: "empty", body: "  ", status: 400, want: "body is empty"},
		{name: "message over the size limit", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"` +
			strings.Repeat("setup ", mcpserver.MaxRequestBytes/6) + `"}}}`, status: 413, want: "larger than the limit of 65536 bytes"},
		{name: "event stream", method: http.MethodGet, header: map[string]string{"Accept": "text/event-stream"}, status: 405, want: "send MCP requests as POST"},
		{name: "session end", method: http.MethodDelete, header: map[string]string{"Mcp-Session-Id": "abc"}, status: 405, want: "send MCP requests as POST"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			docs := &countingDocs{}
			url := serve(t, mcpserver.New(docs, nil, "test"))
			method := cmp.Or(c.method, http.MethodPost)
			var body io.Reader = strings.NewReader(c.body)
			if c.chunked {
				body = io.MultiReader(body) // no length: sent chunked
			}
			req, err := http.NewRequestWithContext(t.Context(), method, url, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || !strings.Contains(string(got), c.want) {
				t.Errorf("%d %.300s, want %d %q", resp.StatusCode, got, c.status, c.want)
			}
			if c.chunked && req.ContentLength != 0 {
				t.Errorf("the request was sent with a length of %d, not chunked", req.ContentLength)
			}
			if n := docs.calls.Load(); n != 0 {
				t.Errorf("%d searches ran", n)
			}
		})
	}
}

func TestOneMessageRunsOneCall(t *testing.T) {
	t.Parallel()
	docs := &countingDocs{}
	url := serve(t, mcpserver.New(docs, nil, "test"))
	for _, body := range []string{searchCall(1), " \n" + searchCall(2) + "\n"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"result"`) {
			t.Errorf("%q: %d %s", body, resp.StatusCode, got)
		}
	}
	if n := docs.calls.Load(); n != 2 {
		t.Errorf("%d searches ran, want 2", n)
	}
}

func TestAnswersAreCut(t *testing.T) {
	t.Parallel()
	// Two-byte characters, so that a cut must find a character's start.
	long := strings.Repeat("é", mcpserver.MaxPageBytes)
	results := make([]assistant.SearchResult, search.MaxPageSize)
	for i := range results {
		results[i] = assistant.SearchResult{Hit: search.Hit{Chunk: search.Chunk{PagePath: "guides/setup", Text: "x" + long[:3*mcpserver.MaxPassageBytes]}}}
	}
	docs := &countingDocs{results: results, page: long}
	cs := connect(t, docs)
	ctx := t.Context()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{"query": "setup", "pageSize": search.MaxPageSize}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	var found mcpserver.SearchOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &found); err != nil || len(found.Passages) != search.MaxPageSize {
		t.Fatalf("search output: %v, %d passages", err, len(found.Passages))
	}
	for _, p := range found.Passages {
		if !passageCut(p.Text) {
			t.Fatalf("passage of %d bytes, not cut to %d with a marker: ...%q", len(p.Text), mcpserver.MaxPassageBytes, p.Text[max(0, len(p.Text)-80):])
		}
	}
	if text := res.Content[0].(*mcp.TextContent).Text; len(text) > search.MaxPageSize*(mcpserver.MaxPassageBytes+200) {
		t.Errorf("search text of %d bytes", len(text))
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolGetPage, Arguments: map[string]any{"path": "guides/setup"}})
	if err != nil || res.IsError {
		t.Fatalf("get_page: %v %+v", err, res)
	}
	var page struct {
		Content   string `json:"content"`
		Truncated bool   `json:"truncated"`
	}
	raw, _ = json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !pageCut(text, len(long)) || page.Content != text || !page.Truncated {
		t.Errorf("get_page: %d bytes (truncated %v), ending %q", len(text), page.Truncated, text[max(0, len(text)-160):])
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpserver.PageURIPrefix + "guides/setup"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != text {
		t.Fatalf("resource read: %v, not the text get_page returned", err)
	}

	// A page within the limit comes back whole.
	docs.page = long[:mcpserver.MaxPageBytes]
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolGetPage, Arguments: map[string]any{"path": "guides/setup"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != docs.page {
		t.Fatalf("a page within the limit was changed: %v", err)
	}
	raw, _ = json.Marshal(res.StructuredContent)
	if strings.Contains(string(raw), `"truncated"`) {
		t.Errorf("a whole page is said to be truncated")
	}
}

// passageCut reports whether a passage was cut to MaxPassageBytes, on a
// character's start, with a marker after it.
func passageCut(text string) bool {
	kept, ok := strings.CutSuffix(text, "\n[passage cut here; read the whole page with get_page]")
	return ok && len(kept) <= mcpserver.MaxPassageBytes && len(kept) > mcpserver.MaxPassageBytes-utf8.UTFMax && utf8.ValidString(kept)
}

// pageCut reports whether a page of size bytes was cut to MaxPageBytes, on
// a character's start, with a marker that says how long it is.
func pageCut(text string, size int) bool {
	i := strings.LastIndex(text, "\n\n[page cut here: ")
	if i < 0 || i > mcpserver.MaxPageBytes || i <= mcpserver.MaxPageBytes-utf8.UTFMax || !utf8.ValidString(text[:i]) {
		return false
	}
	return strings.Contains(text[i:], fmt.Sprintf("it is %d bytes, over the limit of %d", size, mcpserver.MaxPageBytes))
}

// TestMarkdownServed checks that passages are the chunks' Markdown (their
// text for a chunk indexed without it), and that a page cut to the limit
// inside a code block gets the block closed before the marker.
func TestMarkdownServed(t *testing.T) {
	t.Parallel()
	md := "## Configure\n\n```yaml\nkettle:\n  water: soft\n```\n"
	results := []assistant.SearchResult{
		{Hit: search.Hit{Chunk: search.Chunk{PagePath: "guides/setup", Text: "Configure kettle: water: soft", Markdown: md}}},
		{Hit: search.Hit{Chunk: search.Chunk{PagePath: "guides/old", Text: "indexed before Markdown"}}},
	}
	code := "```yaml\n" + strings.Repeat("key:\n  value: 1\n", mcpserver.MaxPageBytes/16) + "```\n"
	docs := &countingDocs{results: results, page: "# Setup\n\n" + code}
	cs := connect(t, docs)
	ctx := t.Context()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSearch, Arguments: map[string]any{"query": "kettle"}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	var found mcpserver.SearchOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &found); err != nil || len(found.Passages) != 2 {
		t.Fatalf("search output: %v, %+v", err, found)
	}
	if found.Passages[0].Text != md || found.Passages[1].Text != "indexed before Markdown" {
		t.Errorf("passages = %q, %q; want the Markdown, then the text", found.Passages[0].Text, found.Passages[1].Text)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, md) {
		t.Errorf("search text %q does not hold the passage's Markdown", text)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolGetPage, Arguments: map[string]any{"path": "guides/setup"}})
	if err != nil || res.IsError {
		t.Fatalf("get_page: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	kept, _, ok := strings.Cut(text, "\n\n[page cut here: ")
	if !ok || !strings.HasSuffix(kept, "\n  value: 1\n```") || strings.Count(kept, "```") != 2 {
		t.Errorf("a page cut inside its code block ends %q", text[max(0, len(text)-200):])
	}
}

// TestToolsTellWhenToUseThem: tools/list says when to use each tool and
// what each argument is; a request with a key gets submit_feedback, one
// without only the reading tools.
func TestToolsTellWhenToUseThem(t *testing.T) {
	t.Parallel()
	docs := &countingDocs{rated: make(chan ratedPage, 1)}
	srv := mcpserver.New(docs, nil, "test")
	ctx := t.Context()
	keyed := connectTo(t, serveAs(t, srv, mcpserver.Access{Domain: tenant.Domain{ID: "acme-docs"}, Groups: []string{"staff"}}))
	public := connectTo(t, serveAs(t, srv, mcpserver.Access{Domain: tenant.Domain{ID: "acme-docs"}, ReadOnly: true}))

	when := map[string]string{
		mcpserver.ToolSearch:         "Use this first for any question",
		mcpserver.ToolGetPage:        "Use this after search",
		mcpserver.ToolSubmitFeedback: "Use this after you used a page",
	}
	tools, err := keyed.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if !strings.HasPrefix(tool.Description, when[tool.Name]) {
			t.Errorf("%s: description %q does not start with %q", tool.Name, tool.Description, when[tool.Name])
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for name, p := range schema.Properties {
			if p.Description == "" {
				t.Errorf("%s: argument %s has no description", tool.Name, name)
			}
		}
		if tool.Name == mcpserver.ToolSubmitFeedback && !reflect.DeepEqual(schema.Required, []string{"path", "helpful"}) {
			t.Errorf("submit_feedback requires %q", schema.Required)
		}
	}
	if !slices.Equal(names, []string{"get_page", "search", "submit_feedback"}) {
		t.Errorf("tools with a key = %q", names)
	}
	if in := keyed.InitializeResult().Instructions; !strings.Contains(in, "call search first") || !strings.Contains(in, "submit_feedback") {
		t.Errorf("instructions = %q", in)
	}

	tools, err = public.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"get_page", "search"}) {
		t.Errorf("tools without a key = %q", names)
	}
	if _, err := public.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSubmitFeedback, Arguments: map[string]any{"path": "guides/setup", "helpful": true}}); err == nil {
		t.Errorf("submit_feedback ran without a key")
	}
	select {
	case r := <-docs.rated:
		t.Fatalf("feedback stored without a key: %+v", r)
	default:
	}

	// With a key: stored as an agent's, over MCP, with the reader's groups.
	res, err := keyed.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSubmitFeedback, Arguments: map[string]any{
		"path": "/guides/setup", "helpful": false, "comment": "the flags of setup are not listed"}})
	if err != nil || res.IsError {
		t.Fatalf("submit_feedback: %v %+v", err, res.Content[0])
	}
	r := <-docs.rated
	if r.domain != "acme-docs" || r.f.Path != "/guides/setup" || r.f.Rating != assistant.RatingDown || r.f.Comment != "the flags of setup are not listed" ||
		r.f.Source != assistant.FeedbackFromMCP || !slices.Equal(r.groups, []string{"staff"}) {
		t.Errorf("stored %+v", r)
	}
	var out mcpserver.FeedbackOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || !out.Recorded || out.Helpful || out.Path != "guides/setup" {
		t.Errorf("output %s: %v", raw, err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "guides/setup did not help") {
		t.Errorf("text = %q", text)
	}
	for _, args := range []map[string]any{{"helpful": true}, {"path": "guides/setup"}, {"path": " ", "helpful": true}} {
		res, err := keyed.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolSubmitFeedback, Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("submit_feedback %v was taken", args)
		}
	}
}

func TestFeedbackFailureStaysInTheLog(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	cs := connectTo(t, serve(t, mcpserver.New(brokenDocs{domains: make(chan string, 4)}, log, "test")))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolSubmitFeedback, Arguments: map[string]any{"path": "a", "helpful": true}})
	if err != nil || !res.IsError {
		t.Fatalf("submit_feedback: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "/var/lib") || !strings.Contains(text, "try again") {
		t.Errorf("the client saw %q", text)
	}
	if !strings.Contains(buf.String(), "disk I/O error") {
		t.Errorf("the cause is not in the log: %s", buf.String())
	}
}
