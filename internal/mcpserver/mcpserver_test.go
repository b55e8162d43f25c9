package mcpserver_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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

func connect(t *testing.T, docs mcpserver.Docs) *mcp.ClientSession {
	t.Helper()
	srv := mcpserver.New(docs, nil, "test")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeMCP(w, r, tenant.Domain{ID: "acme-docs"}, nil)
	}))
	t.Cleanup(ts.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
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
	srv := mcpserver.New(brokenDocs{domains: make(chan string, 4)}, log, "test")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeMCP(w, r, tenant.Domain{ID: "acme-docs"}, nil)
	}))
	t.Cleanup(ts.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
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
