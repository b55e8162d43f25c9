package httpapi

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/mcpserver"
	"github.com/docsmith/docsmith/internal/pow"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// fixtureSite is the docs site the assistant's own tests use.
const fixtureSite = "../assistant/testdata/site"

// assistantServer is a real Server over SQLite with two organizations:
// acme has the domain "tern" (browsers from https://tern.example) and
// "open" (any origin; MCP without a key), globex has "globex-site".
type assistantServer struct {
	t          *testing.T
	url        string
	store      *sqlite.Store
	assistant  string // acme's assistant key
	admin      string // acme's admin key
	globex     string // globex's assistant key
	globexAdm  string // globex's admin key
	indexCalls []string

	// readerSecret signs tern's reader tokens; open has none.
	readerSecret []byte
}

type fakeIndexer struct{ s *assistantServer }

func (f fakeIndexer) Index(_ context.Context, d tenant.Domain) (indexer.IndexResult, error) {
	f.s.indexCalls = append(f.s.indexCalls, d.ID)
	return indexer.IndexResult{Domain: d.ID, ProjectID: d.ProjectID, Ref: "main", Commit: strings.Repeat("a", 40),
		BuildStats: search.BuildStats{Pages: 6, Chunks: 6, Unchanged: 6, Duration: 12 * time.Millisecond}}, nil
}

func newAssistantServer(t *testing.T, limits Limits) *assistantServer {
	t.Helper()
	return newAssistantServerWith(t, limits, 64<<10, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) })
}

// newAssistantServerBody is newAssistantServer with a body limit of
// maxBody bytes.
func newAssistantServerBody(t *testing.T, limits Limits, maxBody int64) *assistantServer {
	return newAssistantServerWith(t, limits, maxBody, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) })
}

// newAssistantServerAt is newAssistantServer on the clock now.
func newAssistantServerAt(t *testing.T, limits Limits, now func() time.Time) *assistantServer {
	return newAssistantServerWith(t, limits, 64<<10, now)
}

// newAssistantServerWith is newAssistantServer with a body limit of
// maxBody bytes, on the clock now.
func newAssistantServerWith(t *testing.T, limits Limits, maxBody int64, now func() time.Time) *assistantServer {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	tenants := tenant.NewService(store, now)
	site, err := docs.Load(os.DirFS(fixtureSite))
	if err != nil {
		t.Fatal(err)
	}
	s := &assistantServer{t: t, store: store, readerSecret: []byte("tern-reader-secret-0123456789abcdef")}
	secretFile := filepath.Join(t.TempDir(), "reader-secret")
	if err := os.WriteFile(secretFile, append(s.readerSecret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	index := search.NewMemory(store, search.MemoryConfig{})
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	key := func(org string, kind apikey.Kind) string {
		_, secret, err := tenants.CreateKey(ctx, org, kind, "test")
		check(err)
		return secret
	}
	domain := func(d tenant.Domain) {
		_, err := tenants.CreateDomain(ctx, d)
		check(err)
		_, err = search.Build(ctx, index, d.ID, site, d.SiteURL)
		check(err)
		check(store.PutCatalog(ctx, d.ID, search.Catalog(site, d.SiteURL)))
	}
	for _, org := range []string{"acme", "globex"} {
		_, err := tenants.CreateOrg(ctx, org)
		check(err)
		_, err = tenants.CreateProject(ctx, tenant.Project{ID: org + "-docs", OrgID: org, RepoURL: "docs"})
		check(err)
	}
	domain(tenant.Domain{ID: "tern", OrgID: "acme", ProjectID: "acme-docs", SiteURL: "https://tern.example/docs", AllowedOrigins: []string{"https://tern.example"}, FinishThreadID: true,
		Settings: tenant.DomainSettings{ReaderSecretFile: secretFile}})
	domain(tenant.Domain{ID: "open", OrgID: "acme", ProjectID: "acme-docs", AllowedOrigins: []string{"*"}, Settings: tenant.DomainSettings{MCPPublic: true}})
	domain(tenant.Domain{ID: "guarded", OrgID: "acme", ProjectID: "acme-docs", AllowedOrigins: []string{"https://tern.example"}, Settings: tenant.DomainSettings{ProofOfWork: true}})
	domain(tenant.Domain{ID: "globex-site", OrgID: "globex", ProjectID: "globex-docs", AllowedOrigins: []string{"https://tern.example"}})
	s.assistant, s.admin = key("acme", apikey.Assistant), key("acme", apikey.Admin)
	s.globex, s.globexAdm = key("globex", apikey.Assistant), key("globex", apikey.Admin)

	svc := assistant.New(assistant.Config{Index: index, Threads: store, Catalogs: store, PageFeedback: store, Now: now})
	proofOfWork, err := pow.New(pow.Config{HMACKey: []byte("a test key of 32 bytes, not more"), MaxNumber: 1000, Spent: ratelimit.New(store, now), Now: now})
	check(err)
	srv := New(Deps{
		ProofOfWork:  proofOfWork,
		Tenants:      tenants,
		Assistant:    svc,
		MCP:          mcpserver.New(svc, slog.New(slog.DiscardHandler), "test"),
		Indexer:      fakeIndexer{s},
		Limiter:      ratelimit.New(store, now),
		Limits:       limits,
		Log:          slog.New(slog.DiscardHandler),
		Ready:        store.Ping,
		MaxBodyBytes: maxBody,
		// The test client is the proxy: X-Forwarded-For names the reader.
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
	})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

type response struct {
	status int
	header http.Header
	body   string
}

func (r response) errorMessage(t *testing.T) string {
	t.Helper()
	var e map[string]string
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || len(e) != 1 || e["error"] == "" {
		t.Fatalf("body is not {\"error\"}: %d %s", r.status, r.body)
	}
	return e["error"]
}

func (s *assistantServer) post(path, key, body string, header ...string) response {
	s.t.Helper()
	return s.do(http.MethodPost, path, key, body, header...)
}

func (s *assistantServer) do(method, path, key, body string, header ...string) response {
	s.t.Helper()
	req, err := http.NewRequestWithContext(s.t.Context(), method, s.url+path, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

const (
	v2Path = "/discovery/v2/assistant/tern/message"
	v1Path = "/discovery/v1/assistant/tern/message"
	// question is a valid v2 body.
	question = `{"fp":"anonymous","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How do I exclude files from a sync?"}]}]}`
)

func TestAssistantRequestErrors(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	msgs := `"messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How?"}]}]`
	body := func(fields string) string { return `{"fp":"anonymous",` + msgs + `,` + fields + `}` }
	tests := []struct {
		name, path, key, body string
		contentType           string
		status                int
		message               string
	}{
		{name: "no key", key: "-", body: question, status: 401, message: "Authorization header is missing"},
		{name: "unknown key", key: "svc_dsc_abc_def", body: question, status: 401, message: "not valid"},
		{name: "admin key", key: "admin", body: question, status: 403, message: "assistant key"},
		{name: "unknown domain", path: "/discovery/v2/assistant/nope/message", body: question, status: 404, message: `domain "nope" not found`},
		{name: "other organization's domain", path: "/discovery/v2/assistant/globex-site/message", body: question, status: 404, message: `domain "globex-site" not found`},
		{name: "not JSON", contentType: "text/plain", body: question, status: 415, message: "Content-Type: application/json"},
		{name: "too large", body: `{"fp":"` + strings.Repeat("a", 70<<10) + `"}`, status: 413, message: "limit of 65536 bytes"},
		{name: "not an object", body: `[]`, status: 400, message: "must be a JSON object"},
		{name: "no fp", body: `{` + msgs + `}`, status: 400, message: `field "fp" is required`},
		{name: "empty fp", body: `{"fp":"",` + msgs + `}`, status: 400, message: `field "fp" is required`},
		{name: "fp not a string", body: `{"fp":7,` + msgs + `}`, status: 400, message: `field "fp" must be a string`},
		{name: "no messages", body: `{"fp":"anonymous"}`, status: 400, message: `field "messages" is required`},
		{name: "empty messages", body: `{"fp":"anonymous","messages":[]}`, status: 400, message: `field "messages" is required`},
		{name: "messages not an array", body: `{"fp":"anonymous","messages":{}}`, status: 400, message: `field "messages" must be an array`},
		{name: "message not an object", body: `{"fp":"anonymous","messages":["hi"]}`, status: 400, message: `field "messages[0]" must be an object`},
		{name: "text not a string", body: `{"fp":"anonymous","messages":[{"role":"user","parts":[{"type":"text","text":1}]}]}`, status: 400, message: `field "messages[0]"`},
		{name: "last from the assistant", body: `{"fp":"anonymous","messages":[{"role":"assistant","content":"hi"}]}`, status: 400, message: `role "user"`},
		{name: "question without text", body: `{"fp":"anonymous","messages":[{"role":"user","parts":[{"type":"file","url":"x"}]}]}`, status: 400, message: "no text"},
		{name: "page size 0", body: body(`"retrievalPageSize":0`), status: 400, message: `field "retrievalPageSize" must be a whole number from 1 to 50`},
		{name: "page size 51", body: body(`"retrievalPageSize":51`), status: 400, message: `"retrievalPageSize"`},
		{name: "page size fraction", body: body(`"retrievalPageSize":2.5`), status: 400, message: `"retrievalPageSize"`},
		{name: "page size string", body: body(`"retrievalPageSize":"5"`), status: 400, message: `"retrievalPageSize"`},
		{name: "page size bool", body: body(`"retrievalPageSize":true`), status: 400, message: `"retrievalPageSize"`},
		{name: "long current path", body: body(`"currentPath":"/` + strings.Repeat("a", 200) + `"`), status: 400, message: `"currentPath" is 201 characters`},
		{name: "current path not a string", body: body(`"currentPath":3`), status: 400, message: `field "currentPath" must be a string`},
		{name: "thread id not a string", body: body(`"threadId":3`), status: 400, message: `field "threadId" must be a string`},
		{name: "filter not an object", body: body(`"filter":"v2"`), status: 400, message: `field "filter" must be an object`},
		{name: "filter groups not an array", body: body(`"filter":{"groups":"admins"}`), status: 400, message: `field "filter.groups" must be an array of strings`},
		{name: "filter group not a string", body: body(`"filter":{"groups":[1]}`), status: 400, message: `field "filter.groups" must be an array of strings`},
		{name: "filter version not a string", body: body(`"filter":{"version":2}`), status: 400, message: `field "filter.version" must be a string`},
		{name: "context not an array", body: body(`"context":{}`), status: 400, message: `field "context" must be an array`},
		{name: "context item not an object", body: body(`"context":["x"]`), status: 400, message: `field "context[0]" must be an object`},
		{name: "context without value", body: body(`"context":[{"type":"code"}]`), status: 400, message: `field "context[0].value" is required`},
		{name: "context value not a string", body: body(`"context":[{"value":1}]`), status: 400, message: `field "context[0].value" must be a string`},
		{name: "context type", body: body(`"context":[{"type":"image","value":"x"}]`), status: 400, message: `field "context[0].type" must be "code" or "textSelection"`},
		{name: "v1 too", path: v1Path, body: `{"fp":"anonymous","messages":[]}`, status: 400, message: `field "messages" is required`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tc.path
			if path == "" {
				path = v2Path
			}
			key := s.assistant
			switch tc.key {
			case "-":
				key = ""
			case "admin":
				key = s.admin
			case "":
			default:
				key = tc.key
			}
			var header []string
			if tc.contentType != "" {
				header = []string{"Content-Type", tc.contentType}
			}
			r := s.post(path, key, tc.body, header...)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if msg := r.errorMessage(t); !strings.Contains(msg, tc.message) {
				t.Fatalf("message %q does not contain %q", msg, tc.message)
			}
			if r.header.Get("X-Thread-Id") != "" {
				t.Error("a refused request got a thread")
			}
		})
	}
}

func TestAssistantAcceptsWhatClientsSend(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	bodies := map[string]string{
		"v2 as DefaultChatTransport sends it": `{"fp":"anonymous","retrievalPageSize":5,"id":"chat1","trigger":"submit-message","messageId":null,
			"messages":[{"id":"m1","role":"user","metadata":{"x":1},"parts":[{"type":"step-start"},{"type":"file","mediaType":"image/png","url":"data:,"},{"type":"text","text":"How do I exclude files?","state":"done"}]}],
			"unknown":{"nested":[1,2]}}`,
		"nulls for optional fields": `{"fp":"u-1","threadId":null,"retrievalPageSize":null,"filter":null,"context":null,"currentPath":null,"messages":[{"role":"user","content":"conflicts"}]}`,
		"whole number as a float":   `{"fp":"u-1","retrievalPageSize":5.0,"messages":[{"role":"user","content":"conflicts"}]}`,
		"filter with unknown keys":  `{"fp":"u-1","filter":{"version":"v2","tag":"x"},"context":[{"value":"tern sync","elementId":"e1","path":"/guides/sync"}],"messages":[{"role":"user","content":"what is this"}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := s.post(v2Path, s.assistant, body)
			if r.status != http.StatusOK || !strings.Contains(r.body, `"type":"finish"`) || r.header.Get("X-Thread-Id") == "" {
				t.Fatalf("%d %v\n%s", r.status, r.header, r.body)
			}
		})
	}
	// An AI SDK 4 body with extra message fields, on v1.
	r := s.post(v1Path, s.assistant, `{"id":"c1","fp":"anonymous","messages":[{"id":"a","createdAt":"2026-01-01T00:00:00.000Z","role":"user","content":"How do I exclude files?","parts":[{"type":"text","text":"How do I exclude files?"}]}]}`)
	if r.status != http.StatusOK || !strings.Contains(r.body, "\nd:{") {
		t.Fatalf("v1: %d %s", r.status, r.body)
	}
}

// normalizeIDs replaces the random thread and message ids with fixed ones.
func normalizeIDs(s string) string {
	s = regexp.MustCompile(`thr_[0-9a-f]{32}`).ReplaceAllString(s, "thr_THREAD")
	return regexp.MustCompile(`msg_[0-9a-f]{32}`).ReplaceAllString(s, "msg_MESSAGE")
}

// TestAssistantGoldenStreams keeps the wire transcript of a full extractive
// answer in both protocols; go test -update rewrites them.
func TestAssistantGoldenStreams(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	for _, tc := range []struct {
		name, path, body, contentType string
	}{
		{"assistant_v2_extractive", v2Path, question, "text/event-stream"},
		{"assistant_v1_extractive", v1Path, `{"fp":"anonymous","messages":[{"role":"user","content":"How do I exclude files from a sync?"}]}`, "text/plain; charset=utf-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.post(tc.path, s.assistant, tc.body)
			if r.status != http.StatusOK || r.header.Get("Content-Type") != tc.contentType {
				t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			thread := r.header.Get("X-Thread-Id")
			if !regexp.MustCompile(`^thr_[0-9a-f]{32}$`).MatchString(thread) || strings.Count(r.body, thread) < 2 {
				t.Fatalf("x-thread-id %q is not the stream's thread:\n%s", thread, r.body)
			}
			got := normalizeIDs(r.body)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("stream differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

func TestAssistantThreadContinuity(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	first := s.post(v2Path, s.assistant, question)
	thread := first.header.Get("X-Thread-Id")
	next := func(path, key, threadID string) string {
		r := s.post(path, key, `{"fp":"anonymous","threadId":"`+threadID+`","messages":[{"role":"user","content":"And conflicts?"}]}`)
		if r.status != http.StatusOK {
			t.Fatalf("%d %s", r.status, r.body)
		}
		return r.header.Get("X-Thread-Id")
	}
	if got := next(v2Path, s.assistant, thread); got != thread {
		t.Fatalf("second turn in %s, want %s", got, thread)
	}
	if got := next(v1Path, s.assistant, thread); got != thread {
		t.Fatalf("the v1 endpoint did not continue the thread: %s", got)
	}
	// globex cannot join acme's thread, and learns nothing: a new thread.
	if got := next("/discovery/v2/assistant/globex-site/message", s.globex, thread); got == thread || got == "" {
		t.Fatalf("foreign thread continued: %s", got)
	}
	if got := next("/discovery/v2/assistant/open/message", s.assistant, thread); got == thread {
		t.Fatalf("another domain's thread continued: %s", got)
	}
	turns, err := s.store.RecentTurns(t.Context(), thread, 10)
	if err != nil || len(turns) != 3 {
		t.Fatalf("thread has %d turns: %v", len(turns), err)
	}
}

func TestSearchAndPageEndpoints(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	r := s.post("/discovery/v1/search/tern", s.assistant, `{"query":"bandwidth limit","pageSize":2,"filter":{"version":"v2"}}`)
	var results []searchResultJSON
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &results) != nil || len(results) == 0 || len(results) > 2 {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	if res := results[0]; res.Path != "guides/schedules" || !strings.Contains(res.Content, "--max-rate") ||
		res.Metadata.URL != "https://tern.example/docs/guides/schedules" || res.Metadata.Title != "Schedules" || res.Metadata.Score <= 0 {
		t.Fatalf("search result = %+v", res)
	}
	if r := s.post("/discovery/v1/search/tern", s.assistant, `{"query":"zebra quantum"}`); r.status != http.StatusOK || r.body != "[]\n" {
		t.Fatalf("no match: %d %q", r.status, r.body)
	}
	for body, want := range map[string]string{
		`{}`:                                    `field "query" is required`,
		`{"query":"  "}`:                        `field "query" is required`,
		`{"query":"x","pageSize":0}`:            `"pageSize" must be a whole number from 1 to 50`,
		`{"query":"x","pageSize":51}`:           `"pageSize"`,
		`{"query":"x","scoreThreshold":1.5}`:    `"scoreThreshold" must be a number from 0 to 1`,
		`{"query":"x","filter":{"groups":[3]}}`: `"filter.groups"`,
	} {
		r := s.post("/discovery/v1/search/tern", s.assistant, body)
		if r.status != 400 || !strings.Contains(r.errorMessage(t), want) {
			t.Errorf("search %s: %d %s", body, r.status, r.body)
		}
	}
	if r := s.post("/discovery/v1/search/globex-site", s.assistant, `{"query":"x"}`); r.status != 404 {
		t.Errorf("foreign search: %d", r.status)
	}
	if r := s.post("/discovery/v1/search/tern", s.admin, `{"query":"x"}`); r.status != 403 {
		t.Errorf("admin search: %d", r.status)
	}

	r = s.post("/discovery/v1/page/tern", s.assistant, `{"path":"/guides/schedules"}`)
	var page pageJSON
	if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil || page.Path != "guides/schedules" || !strings.Contains(page.Content, "# Schedules") {
		t.Fatalf("page: %d %s", r.status, r.body)
	}
	// The page endpoint's 404 is {"message"}, for a page and for a domain.
	for _, path := range []string{"/discovery/v1/page/tern", "/discovery/v1/page/globex-site"} {
		r := s.post(path, s.assistant, `{"path":"guides/nope"}`)
		var nf map[string]string
		if r.status != 404 || json.Unmarshal([]byte(r.body), &nf) != nil || len(nf) != 1 || nf["message"] == "" {
			t.Errorf("%s: %d %s", path, r.status, r.body)
		}
	}
	if r := s.post("/discovery/v1/page/tern", s.assistant, `{"path":""}`); r.status != 400 || !strings.Contains(r.errorMessage(t), `"path" is required`) {
		t.Errorf("empty path: %d %s", r.status, r.body)
	}
	// A page restricted to groups needs a reader token for one of them;
	// filter.groups asserts nothing (reader_test.go has the rest).
	if r := s.post("/discovery/v1/page/tern", s.assistant, `{"path":"guides/audit"}`, readerTokenHeader, s.readerToken(nil)); r.status != 200 || !strings.Contains(r.body, "tern audit") {
		t.Errorf("restricted page for its group: %d %s", r.status, r.body)
	}
	if r := s.post("/discovery/v1/page/tern", s.assistant, `{"path":"guides/audit","filter":{"groups":["admins"]}}`); r.status != 404 {
		t.Errorf("restricted page for groups named in the body: %d %s", r.status, r.body)
	}
	if r := s.post("/discovery/v1/page/tern", s.assistant, `{"path":"guides/audit"}`); r.status != 404 {
		t.Errorf("restricted page without groups: %d %s", r.status, r.body)
	}
	if r := s.post("/discovery/v1/page/tern", s.assistant, `{"path":"guides/audit","filter":{"groups":"admins"}}`); r.status != 400 || !strings.Contains(r.errorMessage(t), "groups") {
		t.Errorf("groups not an array: %d %s", r.status, r.body)
	}
}

func TestIndexEndpoint(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	r := s.post("/v2/domains/tern/index", s.admin, "")
	var stats indexJSON
	if r.status != 200 || json.Unmarshal([]byte(r.body), &stats) != nil || stats.Domain != "tern" || stats.Pages != 6 || stats.DurationMs != 12 {
		t.Fatalf("index: %d %s", r.status, r.body)
	}
	if r := s.post("/v2/domains/tern/index", s.assistant, ""); r.status != 403 {
		t.Errorf("assistant key: %d %s", r.status, r.body)
	}
	if r := s.post("/v2/domains/tern/index", s.globexAdm, ""); r.status != 404 {
		t.Errorf("other organization: %d %s", r.status, r.body)
	}
	if r := s.post("/v2/domains/tern/index", "", ""); r.status != 401 {
		t.Errorf("no key: %d %s", r.status, r.body)
	}
	if len(s.indexCalls) != 1 {
		t.Errorf("index ran %d times", len(s.indexCalls))
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	preflight := func(path, origin string) response {
		return s.do(http.MethodOptions, path, "", "", "Origin", origin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization, content-type")
	}
	for _, path := range []string{v2Path, v1Path, "/discovery/v1/search/tern", "/discovery/v1/page/tern"} {
		r := preflight(path, "https://tern.example")
		h := r.header
		if r.status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "https://tern.example" ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") ||
			h.Get("Access-Control-Max-Age") == "" {
			t.Errorf("preflight %s: %d %v", path, r.status, h)
		}
	}
	// A disallowed origin and an unknown domain look the same: no CORS.
	for _, c := range []struct{ path, origin string }{
		{v2Path, "https://evil.example"},
		{v2Path, "https://tern.example.evil.example"},
		{"/discovery/v2/assistant/nope/message", "https://tern.example"},
	} {
		r := preflight(c.path, c.origin)
		if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Headers") != "" {
			t.Errorf("preflight %s from %s: %d %v", c.path, c.origin, r.status, r.header)
		}
	}
	// "*" allows any origin.
	if r := preflight("/discovery/v2/assistant/open/message", "http://localhost:3000"); r.header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Errorf("open domain: %v", r.header)
	}
	// The answer itself, errors included, tells an allowed origin what it may read.
	r := s.post(v2Path, s.assistant, question, "Origin", "https://tern.example")
	if r.header.Get("Access-Control-Allow-Origin") != "https://tern.example" || !strings.Contains(strings.ToLower(r.header.Get("Access-Control-Expose-Headers")), "x-thread-id") {
		t.Errorf("answer headers: %v", r.header)
	}
	r = s.post(v2Path, "", question, "Origin", "https://tern.example")
	if r.status != 401 || r.header.Get("Access-Control-Allow-Origin") != "https://tern.example" {
		t.Errorf("401 to an allowed origin: %d %v", r.status, r.header)
	}
	r = s.post(v2Path, s.assistant, question, "Origin", "https://evil.example")
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("answer to a disallowed origin: %d %v", r.status, r.header)
	}
	// Other methods are 405 with Allow.
	r = s.do(http.MethodGet, v2Path, s.assistant, "")
	if r.status != 405 || r.header.Get("Allow") != "POST, OPTIONS" {
		t.Errorf("GET: %d %v", r.status, r.header)
	}
}

func TestAssistantRateLimits(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{AssistantPerKeyMonth: 100, AssistantPerOrgHour: 3, AssistantPerIPDay: 100})
	// Refused requests are not counted: bad key, bad body.
	for range 3 {
		if r := s.post(v2Path, "svc_dsc_abc_def", question); r.status != 401 {
			t.Fatalf("bad key: %d", r.status)
		}
		if r := s.post(v2Path, s.assistant, `{"fp":""}`); r.status != 400 {
			t.Fatalf("bad body: %d", r.status)
		}
	}
	// The three endpoints share the organization's budget.
	for i, c := range []struct{ path, body string }{
		{v2Path, question},
		{"/discovery/v1/search/tern", `{"query":"sync"}`},
		{"/discovery/v1/page/tern", `{"path":"guides/sync"}`},
	} {
		r := s.post(c.path, s.assistant, c.body)
		if r.status != 200 || r.header.Get("RateLimit-Limit") == "" {
			t.Fatalf("request %d: %d %v %s", i, r.status, r.header, r.body)
		}
	}
	r := s.post(v1Path, s.assistant, question)
	if r.status != 429 || !strings.Contains(r.errorMessage(t), "per organization") {
		t.Fatalf("fourth request: %d %s", r.status, r.body)
	}
	for _, h := range []string{"Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
		if r.header.Get(h) == "" {
			t.Errorf("429 without %s", h)
		}
	}
	// Another organization has its own budget.
	if r := s.post("/discovery/v2/assistant/globex-site/message", s.globex, question); r.status != 200 {
		t.Fatalf("globex: %d %s", r.status, r.body)
	}
}

// FuzzParseAssistantBody checks that no body makes the decoder panic, and
// that every refusal is a client error with a message.
func FuzzParseAssistantBody(f *testing.F) {
	for _, s := range []string{
		question,
		`{"fp":"a","messages":[{"role":"user","content":"x"}],"retrievalPageSize":1e400}`,
		`{"fp":"a","messages":[{"role":"user","parts":[{"type":"text","text":"x"},{"type":"text"}]}],"filter":{"groups":[null]}}`,
		`{"fp":"a","messages":[{"role":"assistant","metadata":{"threadId":"thr_1"},"annotations":[{"threadId":2}]},{"role":"user","content":"\u0000"}],"context":[null,{"value":""}]}`,
		`{"fp":"a","messages":[{}],"retrievalPageSize":-0,"currentPath":"\ud800"}`,
		`{"messages":null}`, `[]`, `nul`, `{"fp":"a"} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseAssistantBody(body)
		if err != nil {
			if apperr.CodeOf(err) != apperr.Invalid || apperr.MessageOf(err) == "" {
				t.Fatalf("parseAssistantBody(%q) = %v: want an Invalid error with a message", body, err)
			}
			return
		}
		if req.FP == "" || len(req.Messages) == 0 || req.PageSize < 1 || req.PageSize > assistant.MaxPageSize || req.Question() == "" {
			t.Fatalf("parseAssistantBody(%q) accepted %+v", body, req)
		}
	})
}
