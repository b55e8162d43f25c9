package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docsmith/docsmith/internal/mcpserver"
)

// bearer adds an Authorization header to every request, as an MCP client
// configured with the key does.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connectMCP connects the official Go SDK's client to a domain's MCP
// endpoint over Streamable HTTP with key.
func (s *assistantServer) connectMCP(ctx context.Context, domain, key string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "docsmith-test", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   s.url + "/discovery/v1/mcp/" + domain,
		HTTPClient: &http.Client{Transport: bearer{key: key, next: http.DefaultTransport}},
		MaxRetries: -1,
	}, nil)
}

func TestMCPWithTheGoSDKClient(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	ctx := t.Context()
	cs, err := s.connectMCP(ctx, "tern", s.assistant)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if info := cs.InitializeResult().ServerInfo; info.Name != "docsmith" {
		t.Errorf("server info = %+v", info)
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"get_page", "search", "submit_feedback"}) {
		t.Fatalf("tools = %v", names)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{
		"query": "bandwidth limit", "pageSize": 2, "filter": map[string]any{"version": "v2"},
	}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v", err, res)
	}
	var found mcpserver.SearchOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &found); err != nil || len(found.Passages) == 0 || len(found.Passages) > 2 {
		t.Fatalf("search output %s: %v", raw, err)
	}
	if p := found.Passages[0]; p.Path != "guides/schedules" || p.URL != "https://tern.example/docs/guides/schedules" ||
		p.PageTitle != "Schedules" || !strings.Contains(p.Text, "--max-rate") || p.Score <= 0 {
		t.Errorf("first passage = %+v", p)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "url: https://tern.example/docs/guides/schedules") || !strings.Contains(text, "--max-rate") {
		t.Errorf("search text = %q", text)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_page", Arguments: map[string]any{"path": "/guides/schedules"}})
	if err != nil || res.IsError {
		t.Fatalf("get_page: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "# Schedules\n") || !strings.Contains(text, "--max-rate") {
		t.Errorf("get_page text = %q", text)
	}

	// The page as a resource.
	page, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://page/guides/schedules"})
	if err != nil || len(page.Contents) != 1 || !strings.HasPrefix(page.Contents[0].Text, "# Schedules\n") {
		t.Fatalf("read resource: %v %+v", err, page)
	}

	// Failures a model can act on come back as tool errors.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_page", map[string]any{"path": "guides/nope"}, `page "guides/nope" not found`},
		{"get_page", map[string]any{"path": "guides/audit"}, `not found`}, // restricted to a group
		{"search", map[string]any{"query": " "}, `"query" is required`},
		{"search", map[string]any{"query": "sync", "pageSize": 51}, `"pageSize" must be a whole number from 1 to 50`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, c.want) {
			t.Errorf("%s %v: %v %+v", c.tool, c.args, err, res)
		}
	}
	// Groups in the arguments assert nothing: a reader's come from its
	// reader token (reader_test.go).
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_page", Arguments: map[string]any{"path": "guides/audit", "groups": []string{"admins"}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "not found") {
		t.Errorf("restricted page for groups named in the arguments: %v %+v", err, res)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://page/guides/audit"}); err == nil {
		t.Error("a restricted page was readable as a resource")
	}
}

func TestMCPRefusesBadKeysAndForeignDomains(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	for _, c := range []struct {
		name, domain, key string
		status            int
	}{
		{"no key", "tern", "none", http.StatusUnauthorized},
		{"unknown key", "tern", "unknown", http.StatusUnauthorized},
		{"admin key", "tern", "admin", http.StatusForbidden},
		{"other organization's domain", "globex-site", "", http.StatusNotFound},
		{"unknown domain", "nope", "", http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			key := map[string]string{"": s.assistant, "admin": s.admin, "none": "", "unknown": "svc_dsc_abc_def"}[c.key]
			_, err := s.connectMCP(t.Context(), c.domain, key)
			if err == nil {
				t.Fatal("the client connected")
			}
			if !strings.Contains(err.Error(), http.StatusText(c.status)) {
				t.Errorf("client error %q does not say %q", err, http.StatusText(c.status))
			}
			r := s.post("/discovery/v1/mcp/"+c.domain, key, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream")
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if msg := r.errorMessage(t); msg == "" {
				t.Fatal("no message")
			}
		})
	}
	// The server's body limit holds.
	if r := s.post("/discovery/v1/mcp/tern", s.assistant, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`+strings.Repeat("a", 70<<10)+`"}}`,
		"Accept", "application/json, text/event-stream"); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: %d %s", r.status, r.body)
	}
	// The unknown domain and the foreign one answer the same.
	a := s.post("/discovery/v1/mcp/globex-site", s.assistant, `{}`)
	b := s.post("/discovery/v1/mcp/nope", s.assistant, `{}`)
	if a.status != b.status || strings.ReplaceAll(a.body, "globex-site", "X") != strings.ReplaceAll(b.body, "nope", "X") {
		t.Errorf("foreign %d %s, unknown %d %s", a.status, a.body, b.status, b.body)
	}
}

// counting counts the requests that got through (not 429).
type counting struct {
	mu   sync.Mutex
	n    int
	next http.RoundTripper
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && resp.StatusCode != http.StatusTooManyRequests {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
	return resp, err
}

func TestMCPCountsAgainstTheAssistantLimits(t *testing.T) {
	t.Parallel()
	const limit = 6
	s := newAssistantServer(t, Limits{AssistantPerKeyMonth: 100, AssistantPerOrgHour: limit, AssistantPerIPDay: 100})
	ctx := t.Context()
	// Each POST counts once, the protocol's own included.
	count := &counting{next: http.DefaultTransport}
	client := mcp.NewClient(&mcp.Implementation{Name: "docsmith-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   s.url + "/discovery/v1/mcp/tern",
		HTTPClient: &http.Client{Transport: bearer{key: s.assistant, next: count}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The search endpoint draws on the same budget.
	if r := s.post("/discovery/v1/search/tern", s.assistant, `{"query":"sync"}`); r.status != 200 {
		t.Fatalf("search endpoint: %d %s", r.status, r.body)
	}
	var refused error
	for range limit {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "sync"}}); err != nil {
			refused = err
			break
		}
	}
	if refused == nil || !strings.Contains(refused.Error(), "Too Many Requests") {
		t.Fatalf("not refused: %v", refused)
	}
	if count.n+1 != limit {
		t.Errorf("%d MCP requests and 1 search got through, want %d in all", count.n, limit)
	}
	r := s.post("/discovery/v1/mcp/tern", s.assistant, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.errorMessage(t), "per organization") {
		t.Fatalf("over the limit: %d %v %s", r.status, r.header, r.body)
	}
}

// mcpBatch is a JSON-RPC batch of n search calls, each with query.
func mcpBatch(n int, query string) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":%q,"pageSize":50}}}`, i+1, query)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

func TestMCPRefusesBatches(t *testing.T) {
	t.Parallel()
	const limit = 3
	s := newAssistantServer(t, Limits{AssistantPerKeyMonth: 100, AssistantPerOrgHour: limit, AssistantPerIPDay: 100})
	// No Mcp-Protocol-Version header: the SDK would take the request as of
	// 2025-03-26, which had batches, and run every call in it.
	r := s.post("/discovery/v1/mcp/tern", s.assistant, mcpBatch(40, "sync"), "Accept", "application/json, text/event-stream")
	if r.status != http.StatusBadRequest || !strings.Contains(r.errorMessage(t), "JSON-RPC batches are not supported: send one message per request") {
		t.Fatalf("batch: %d %.300s", r.status, r.body)
	}
	// The batch counted once, as one request; each call after it counts.
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"sync"}}}`
	for i := range limit {
		r := s.post("/discovery/v1/mcp/tern", s.assistant, call, "Accept", "application/json, text/event-stream")
		want := http.StatusOK
		if i == limit-1 {
			want = http.StatusTooManyRequests
		}
		if r.status != want {
			t.Fatalf("call %d after the batch: %d, want %d: %.300s", i+1, r.status, want, r.body)
		}
	}
}

// TestMCPConcurrentLargeRequestsStayBounded sends 16 batches of about
// 900 KB at once, under the server's default body limit of 1 MiB, and
// bounds what the server allocated for them. It does not run in parallel,
// so that the allocations it measures are its own.
func TestMCPConcurrentLargeRequestsStayBounded(t *testing.T) {
	const (
		requests = 16
		// All the server may allocate for them: each is refused on its
		// first byte. Run as it was, each batch allocated far more.
		bound = 64 << 20
	)
	s := newAssistantServerBody(t, Limits{}, 1<<20)
	query := strings.Repeat("sync schedule bandwidth limit files exclude ", 100)
	body := mcpBatch(200, query)
	if n := len(body); n < 850<<10 || n > 1<<20 {
		t.Fatalf("the batch is %d bytes", n)
	}
	send := func() (int, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+"/discovery/v1/mcp/tern", strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+s.assistant)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	statuses := make([]int, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			status, err := send()
			if err != nil {
				// The server may close the connection before the client
				// has sent the whole body it refused.
				t.Logf("request %d: %v", i, err)
			}
			statuses[i] = status
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)

	for i, status := range statuses {
		if status != 0 && status != http.StatusBadRequest {
			t.Errorf("request %d: status %d, want 400", i, status)
		}
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d concurrent batches of %d KiB: %d KiB allocated", requests, len(body)>>10, allocated>>10)
	if allocated > bound {
		t.Errorf("%d concurrent batches of %d KiB: %d MiB allocated, want at most %d MiB", requests, len(body)>>10, allocated>>20, bound>>20)
	}
}

// TestMCPSubmitFeedback: an agent's feedback on a page it may read is
// stored with the domain's feedback, from MCP; a page it may not read, a
// page the index does not have and a comment over the limit are refused
// with what to fix.
func TestMCPSubmitFeedback(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	ctx := t.Context()
	cs, err := s.connectMCP(ctx, "tern", s.assistant)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "submit_feedback", Arguments: map[string]any{
		"path": "/guides/schedules", "helpful": false, "comment": "  No example of a weekly schedule.  "}})
	if err != nil || res.IsError {
		t.Fatalf("submit_feedback: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "submit_feedback", Arguments: map[string]any{"path": "guides/schedules", "helpful": true}})
	if err != nil || res.IsError {
		t.Fatalf("submit_feedback: %v %+v", err, res)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path": "guides/audit", "helpful": true}, `page "guides/audit" not found`}, // restricted to a group
		{map[string]any{"path": "guides/nope", "helpful": false}, `page "guides/nope" not found`},
		{map[string]any{"path": "guides/schedules", "helpful": false, "comment": strings.Repeat("é", 2001)}, `"comment" is 2001 characters long; the limit is 2000`},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "submit_feedback", Arguments: c.args})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, c.want) {
			t.Errorf("submit_feedback %.80v: %v %+v", c.args, err, res)
		}
	}
	got, err := s.store.DomainPageFeedback(ctx, "tern", time.Time{}, time.Time{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Path != "guides/schedules" || got[1].Rating != "down" || got[1].Comment != "No example of a weekly schedule." ||
		got[1].Source != "mcp" || got[1].OrgID != "acme" || got[0].Rating != "up" {
		t.Errorf("stored = %+v", got)
	}
}

// connectMCPWithoutKey connects the Go SDK's client with no Authorization
// header, as a client that cannot send one does.
func (s *assistantServer) connectMCPWithoutKey(ctx context.Context, domain string, transport http.RoundTripper) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "docsmith-test", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   s.url + "/discovery/v1/mcp/" + domain,
		HTTPClient: &http.Client{Transport: transport},
		MaxRetries: -1,
	}, nil)
}

// TestMCPWithoutAKey: a domain with mcp_public serves its public pages to
// a client without a key, read-only; any other domain refuses it with the
// message of a missing key that names the setting, the same whether the
// domain exists or not.
func TestMCPWithoutAKey(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	ctx := t.Context()
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	accept := []string{"Accept", "application/json, text/event-stream"}

	off := s.post("/discovery/v1/mcp/tern", "", list, accept...)
	if off.status != http.StatusUnauthorized || !strings.Contains(off.errorMessage(t), "mcp_public (docsmith domain update --domain tern --mcp-public)") ||
		!strings.Contains(off.errorMessage(t), "Authorization header is missing") {
		t.Errorf("without the setting: %d %s", off.status, off.body)
	}
	unknown := s.post("/discovery/v1/mcp/nope", "", list, accept...)
	if unknown.status != off.status || strings.ReplaceAll(unknown.body, "nope", "X") != strings.ReplaceAll(off.body, "tern", "X") {
		t.Errorf("unknown domain %d %s, domain without the setting %d %s", unknown.status, unknown.body, off.status, off.body)
	}
	if _, err := s.connectMCPWithoutKey(ctx, "tern", http.DefaultTransport); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("a client without a key connected to tern: %v", err)
	}

	cs, err := s.connectMCPWithoutKey(ctx, "open", http.DefaultTransport)
	if err != nil {
		t.Fatalf("connect to open without a key: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"get_page", "search"}) {
		t.Errorf("tools without a key = %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "bandwidth limit"}})
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "--max-rate") {
		t.Fatalf("search without a key: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_page", Arguments: map[string]any{"path": "guides/schedules"}})
	if err != nil || res.IsError {
		t.Fatalf("get_page without a key: %v %+v", err, res)
	}
	if page, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://page/guides/schedules"}); err != nil || len(page.Contents) != 1 {
		t.Fatalf("resource without a key: %v %+v", err, page)
	}
	// Pages with access groups stay out.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_page", Arguments: map[string]any{"path": "guides/audit", "groups": []string{"admins"}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "not found") {
		t.Errorf("restricted page without a key: %v %+v", err, res)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://page/guides/audit"}); err == nil {
		t.Error("a restricted page was readable without a key")
	}
	// Read-only: no feedback is taken.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "submit_feedback", Arguments: map[string]any{"path": "guides/schedules", "helpful": true}}); err == nil && !res.IsError {
		t.Errorf("feedback was taken without a key")
	}
	if got, err := s.store.DomainPageFeedback(ctx, "open", time.Time{}, time.Time{}, 10); err != nil || len(got) != 0 {
		t.Errorf("feedback stored without a key: %+v %v", got, err)
	}
	// A reader token needs a key to be read.
	r := s.post("/discovery/v1/mcp/open", "", list, append(accept, "X-Docsmith-Reader-Token", "abc")...)
	if r.status != http.StatusUnauthorized || !strings.Contains(r.errorMessage(t), "a reader token is read only with an assistant key") {
		t.Errorf("reader token without a key: %d %s", r.status, r.body)
	}
	// A key still works on the domain, with its feedback.
	keyed, err := s.connectMCP(ctx, "open", s.assistant)
	if err != nil {
		t.Fatal(err)
	}
	defer keyed.Close()
	if res, err := keyed.CallTool(ctx, &mcp.CallToolParams{Name: "submit_feedback", Arguments: map[string]any{"path": "guides/schedules", "helpful": true}}); err != nil || res.IsError {
		t.Errorf("feedback with a key on open: %v %+v", err, res)
	}
}

// forwardedFor sends every request as the proxy of client.
type forwardedFor struct {
	client string
	next   http.RoundTripper
}

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.client)
	return f.next.RoundTrip(r)
}

// TestMCPWithoutAKeyCountsPerClientIP: requests without a key count
// against the per client IP limit, each client its own.
func TestMCPWithoutAKeyCountsPerClientIP(t *testing.T) {
	t.Parallel()
	const limit = 4
	s := newAssistantServer(t, Limits{AssistantPerKeyMonth: 100, AssistantPerOrgHour: 100, AssistantPerIPDay: limit})
	ctx := t.Context()
	count := &counting{next: forwardedFor{client: "203.0.113.7", next: http.DefaultTransport}}
	cs, err := s.connectMCPWithoutKey(ctx, "open", count)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var refused error
	for range limit {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "sync"}}); err != nil {
			refused = err
			break
		}
	}
	if refused == nil || !strings.Contains(refused.Error(), "Too Many Requests") {
		t.Fatalf("not refused: %v", refused)
	}
	if count.n != limit {
		t.Errorf("%d requests got through, want %d", count.n, limit)
	}
	r := s.post("/discovery/v1/mcp/open", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"Accept", "application/json, text/event-stream", "X-Forwarded-For", "203.0.113.7")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(r.errorMessage(t), "per client IP") {
		t.Errorf("over the limit: %d %s", r.status, r.body)
	}
	// Another client has its own count.
	other, err := s.connectMCPWithoutKey(ctx, "open", forwardedFor{client: "198.51.100.9", next: http.DefaultTransport})
	if err != nil {
		t.Fatalf("another client: %v", err)
	}
	_ = other.Close()
}
