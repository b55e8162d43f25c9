package app_test

// End-to-end tests of the assistant through the real server: projects over
// a local git repository and a plain local folder, set up and indexed with
// the real CLI, every response checked against openapi.json.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
)

// assistantFixture is the docs site the assistant's tests use (our own).
const assistantFixture = "../assistant/testdata/site"

// seedDocsRepo makes a bare git repository holding the fixture site.
func seedDocsRepo(t *testing.T) string {
	t.Helper()
	git, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Fatalf("git: %v", err)
	}
	repo := filepath.Join(t.TempDir(), "tern-docs.git")
	if err := git.SeedBare(t.Context(), repo, "main", os.DirFS(assistantFixture), gitcli.CommitOptions{Message: "docs", AuthorName: "t", AuthorEmail: "t@example.com"}); err != nil {
		t.Fatal(err)
	}
	return repo
}

// assistantSetup adds to setup's organizations a project over a git
// repository of the fixture site with the domain "tern" (indexed with the
// CLI), and a project over a plain folder with the domain "folder" (not
// indexed yet: created with --index=false).
func assistantSetup(t *testing.T, env ...string) *server {
	t.Helper()
	s := setup(t, env...)
	s.cli("project", "create", "--org", orgA, "--id", "tern", "--repo", seedDocsRepo(t))
	s.cli("domain", "create", "--org", orgA, "--domain", "tern", "--project", "tern",
		"--site-url", "https://tern.example/docs", "--allowed-origin", "https://tern.example")
	out := s.cli("index", "tern")
	if !strings.Contains(out, "indexed tern from tern at main") || !strings.Contains(out, "6 pages") {
		t.Fatalf("docsmith index printed %q", out)
	}
	folder := t.TempDir()
	if err := os.CopyFS(folder, os.DirFS(assistantFixture)); err != nil {
		t.Fatal(err)
	}
	s.cli("project", "create", "--org", orgA, "--id", "folder", "--repo", folder)
	s.cli("domain", "create", "--org", orgA, "--domain", "folder", "--project", "folder", "--finish-thread-id=false", "--index=false")
	return s
}

func askBody(question, threadID string) map[string]any {
	b := map[string]any{
		"fp":                "anonymous",
		"retrievalPageSize": 5,
		"messages":          []any{map[string]any{"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": question}}}},
	}
	if threadID != "" {
		b["threadId"] = threadID
	}
	return b
}

var threadIDPattern = regexp.MustCompile(`^thr_[0-9a-f]{32}$`)

// uiChunks reads a UI message stream's JSON chunks.
func uiChunks(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, event := range strings.Split(string(body), "\n\n") {
		data, ok := strings.CutPrefix(event, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, c)
	}
	return out
}

func TestAssistantEndToEnd(t *testing.T) {
	t.Parallel()
	s := assistantSetup(t)
	const v2 = "/discovery/v2/assistant/tern/message"

	r := s.post(v2, s.assistantA, askBody("How do I exclude files from a sync?", ""))
	expectStatus(t, r, http.StatusOK)
	thread := r.header.Get("X-Thread-Id")
	if !threadIDPattern.MatchString(thread) || r.header.Get("X-Vercel-Ai-Ui-Message-Stream") != "v1" {
		t.Fatalf("headers %v", r.header)
	}
	var sources, text []string
	for _, c := range uiChunks(t, r.body) {
		switch c["type"] {
		case "source-url":
			sources = append(sources, c["url"].(string))
		case "text-delta":
			text = append(text, c["delta"].(string))
		case "start", "finish":
			if md := c["messageMetadata"].(map[string]any); md["threadId"] != thread {
				t.Errorf("%s metadata %v, want thread %s", c["type"], md, thread)
			}
		}
	}
	if len(sources) == 0 || pageOf(sources[0]) != "https://tern.example/docs/guides/sync" || !strings.Contains(strings.Join(text, ""), ".ternignore") {
		t.Fatalf("sources %v text %q", sources, text)
	}

	// The next question continues the thread, on either protocol.
	r = s.post(v2, s.assistantA, askBody("And conflicts?", thread))
	expectStatus(t, r, http.StatusOK)
	if got := r.header.Get("X-Thread-Id"); got != thread {
		t.Fatalf("second turn in thread %s, want %s", got, thread)
	}
	r = s.post("/discovery/v1/assistant/tern/message", s.assistantA, map[string]any{
		"fp": "anonymous", "threadId": thread,
		"messages": []any{map[string]any{"role": "user", "content": "How do I limit the bandwidth?"}},
	})
	expectStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), `8:[{"threadId":"`+thread+`"}]`) || !strings.Contains(string(r.body), `h:{"sourceType":"url","id":"src_1","url":"https://tern.example/docs/guides/schedules#`) {
		t.Fatalf("v1 stream:\n%s", r.body)
	}

	// Search and page.
	r = s.post("/discovery/v1/search/tern", s.assistantA, map[string]any{"query": "bandwidth", "pageSize": 3})
	expectStatus(t, r, http.StatusOK)
	if hits := decode[[]map[string]any](t, r); len(hits) == 0 || hits[0]["path"] != "guides/schedules" {
		t.Fatalf("search: %s", r)
	}
	r = s.post("/discovery/v1/page/tern", s.assistantA, map[string]any{"path": "guides/schedules"})
	expectStatus(t, r, http.StatusOK)
	if page := decode[map[string]string](t, r); !strings.Contains(page["content"], "--max-rate") {
		t.Fatalf("page: %s", r)
	}
	r = s.post("/discovery/v1/page/tern", s.assistantA, map[string]any{"path": "guides/none"})
	if r.status != http.StatusNotFound || !strings.Contains(string(r.body), `"message"`) {
		t.Fatalf("missing page: %s", r)
	}

	// Keys and organizations.
	expectError(t, "admin key", s.post(v2, s.adminA, askBody("x", "")), http.StatusForbidden, "assistant key")
	expectError(t, "no key", s.post(v2, "", askBody("x", "")), http.StatusUnauthorized)
	expectError(t, "unknown domain", s.post("/discovery/v2/assistant/nope/message", s.assistantA, askBody("x", "")), http.StatusNotFound, `domain "nope" not found`)
	expectError(t, "bad body", s.post(v2, s.assistantA, map[string]any{"fp": "anonymous", "messages": []any{}}), http.StatusBadRequest, `"messages"`)

	// CORS for the domain's site.
	pre := s.do(request{method: http.MethodOptions, path: v2, header: map[string]string{"Origin": "https://tern.example", "Access-Control-Request-Method": "POST"}})
	if pre.status != http.StatusNoContent || pre.header.Get("Access-Control-Allow-Origin") != "https://tern.example" {
		t.Fatalf("preflight: %d %v", pre.status, pre.header)
	}
}

func TestIndexEndpointAndLocalFolder(t *testing.T) {
	t.Parallel()
	s := assistantSetup(t)
	const v1 = "/discovery/v1/assistant/folder/message"

	// Not indexed yet (created with --index=false): the answer says so and
	// how to build the index.
	r := s.post(v1, s.assistantA, map[string]any{"fp": "anonymous", "messages": []any{map[string]any{"role": "user", "content": "How do I exclude files?"}}})
	expectStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), "no index of the documentation yet") || !strings.Contains(string(r.body), "docsmith index folder") {
		t.Fatalf("unindexed domain answered:\n%s", r.body)
	}

	expectError(t, "assistant key", s.post("/v2/domains/folder/index", s.assistantA, nil), http.StatusForbidden)
	expectError(t, "other organization", s.post("/v2/domains/folder/index", s.adminB, nil), http.StatusNotFound)
	r = s.post("/v2/domains/folder/index", s.adminA, nil)
	expectStatus(t, r, http.StatusOK)
	stats := decode[map[string]any](t, r)
	if stats["pages"] != float64(6) || stats["changed"] != float64(6) || stats["ref"] != "" || stats["commit"] != "" {
		t.Fatalf("index of a plain folder: %s", r)
	}
	r = s.post(v1, s.assistantA, map[string]any{"fp": "anonymous", "messages": []any{map[string]any{"role": "user", "content": "How do I exclude files?"}}})
	expectStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.body), `h:{"sourceType":"url","id":"src_1","url":"/guides/sync#exclude-files","title":"Sync a folder › Exclude files",`) {
		t.Fatalf("indexed folder domain (no site URL: relative links):\n%s", r.body)
	}
	// The domain's top-level finish threadId is off; v2 still carries the
	// thread in the metadata.
	r = s.post("/discovery/v2/assistant/folder/message", s.assistantA, askBody("conflicts", ""))
	for _, c := range uiChunks(t, r.body) {
		if c["type"] == "finish" {
			if _, ok := c["threadId"]; ok || c["messageMetadata"].(map[string]any)["threadId"] != r.header.Get("X-Thread-Id") {
				t.Fatalf("finish chunk %v", c)
			}
		}
	}
	// A second build of an unchanged repository rewrites nothing.
	r = s.post("/v2/domains/tern/index", s.adminA, nil)
	expectStatus(t, r, http.StatusOK)
	if stats := decode[map[string]any](t, r); stats["unchanged"] != float64(6) || stats["changed"] != float64(0) || len(stats["commit"].(string)) != 40 {
		t.Fatalf("rebuild: %s", r)
	}
}

func TestAssistantLimitsEndToEnd(t *testing.T) {
	t.Parallel()
	s := assistantSetup(t, "DOCSMITH_LIMIT_ASSISTANT_PER_IP_DAY=2")
	const v2 = "/discovery/v2/assistant/tern/message"
	expectError(t, "invalid", s.post(v2, s.assistantA, map[string]any{"fp": ""}), http.StatusBadRequest)
	for i := range 2 {
		if r := s.post(v2, s.assistantA, askBody("conflicts", "")); r.status != http.StatusOK || r.header.Get("RateLimit-Limit") != "2" {
			t.Fatalf("request %d: %s %v", i, r, r.header)
		}
	}
	r := s.post("/discovery/v1/search/tern", s.assistantA, map[string]any{"query": "sync"})
	expectError(t, "over the limit", r, http.StatusTooManyRequests, "per client IP")
	if r.header.Get("Retry-After") == "" || r.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("429 headers %v", r.header)
	}
}

// pageOf is a citation's page: its URL without the anchor of the section
// an extractive answer quotes.
func pageOf(url string) string {
	page, _, _ := strings.Cut(url, "#")
	return page
}
