package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestPageByPath(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	posted := s.post("/discovery/v1/page/tern", s.assistant, `{"path":"guides/sync"}`)
	var want pageJSON
	if err := json.Unmarshal([]byte(posted.body), &want); err != nil || posted.status != http.StatusOK || want.Content == "" {
		t.Fatalf("POST page: %d %s", posted.status, posted.body)
	}

	md := s.do(http.MethodGet, "/discovery/v1/page/tern/guides/sync.md", s.assistant, "", "Origin", "https://tern.example")
	if md.status != http.StatusOK || md.header.Get("Content-Type") != MarkdownContentType || md.body != want.Content {
		t.Errorf("GET .md: %d %q\n%s\nwant the POST page's content\n%s", md.status, md.header.Get("Content-Type"), md.body, want.Content)
	}
	if md.header.Get("Access-Control-Allow-Origin") != "https://tern.example" || !strings.Contains(strings.Join(md.header.Values("Vary"), ","), "Accept") {
		t.Errorf("GET .md headers: %v", md.header)
	}
	accepted := s.do(http.MethodGet, "/discovery/v1/page/tern/guides/sync", s.assistant, "", "Accept", "text/plain;q=0.5, text/markdown")
	if accepted.status != http.StatusOK || accepted.header.Get("Content-Type") != MarkdownContentType || accepted.body != want.Content {
		t.Errorf("GET with Accept: text/markdown: %d %q %s", accepted.status, accepted.header.Get("Content-Type"), accepted.body)
	}
	plain := s.do(http.MethodGet, "/discovery/v1/page/tern/guides/sync", s.assistant, "", "Accept", "text/markdown;q=0, application/json")
	var got pageJSON
	if err := json.Unmarshal([]byte(plain.body), &got); err != nil || got != want {
		t.Errorf("GET without Markdown asked: %d %s, want the POST page's JSON", plain.status, plain.body)
	}
	if root := s.do(http.MethodGet, "/discovery/v1/page/tern/index.md", s.assistant, ""); root.status != http.StatusOK || !strings.HasPrefix(root.body, "# ") {
		t.Errorf("GET index.md: %d %s", root.status, root.body)
	}
	head := s.do(http.MethodHead, "/discovery/v1/page/tern/guides/sync.md", s.assistant, "")
	if head.status != http.StatusOK || head.body != "" || head.header.Get("Content-Length") == "" {
		t.Errorf("HEAD .md: %d %q %v", head.status, head.body, head.header)
	}

	missing := s.do(http.MethodGet, "/discovery/v1/page/tern/guides/nope.md", s.assistant, "")
	var nf pageNotFound
	if err := json.Unmarshal([]byte(missing.body), &nf); err != nil || missing.status != http.StatusNotFound || !strings.Contains(nf.Message, `"guides/nope" not found`) {
		t.Errorf("unknown page: %d %s", missing.status, missing.body)
	}
	if r := s.do(http.MethodGet, "/discovery/v1/page/tern/"+strings.Repeat("a/", 600)+"x.md", s.assistant, ""); r.status != http.StatusBadRequest || !strings.Contains(r.body, "over the limit") {
		t.Errorf("a page path of 1,200 bytes: %d %s", r.status, r.body)
	}
	// Without a key the endpoint is public, as llms.txt is: pages without
	// access groups only.
	if r := s.do(http.MethodGet, "/discovery/v1/page/tern/guides/sync.md", "", ""); r.status != http.StatusOK || r.body != md.body {
		t.Errorf("a public page without a key: %d %s", r.status, r.body)
	}
	if r := s.do(http.MethodGet, "/discovery/v1/page/tern/guides/audit.md", "", ""); r.status != http.StatusNotFound || strings.Contains(r.body, "tern audit") {
		t.Errorf("a page with access groups without a key: %d %s", r.status, r.body)
	}
	if r := s.do(http.MethodGet, "/discovery/v1/page/tern/guides/sync.md", "", "", readerTokenHeader, "x.y.z"); r.status != http.StatusUnauthorized {
		t.Errorf("a reader token without a key: %d %s", r.status, r.body)
	}
	if r := s.do(http.MethodGet, "/discovery/v1/page/globex-site/guides/sync.md", s.assistant, ""); r.status != http.StatusNotFound {
		t.Errorf("another organization's domain: %d %s", r.status, r.body)
	}
	pre := s.do(http.MethodOptions, "/discovery/v1/page/tern/guides/sync.md", "", "", "Origin", "https://tern.example", "Access-Control-Request-Method", "GET")
	if pre.status != http.StatusNoContent || pre.header.Get("Access-Control-Allow-Methods") != "GET, OPTIONS" {
		t.Errorf("preflight: %d %v", pre.status, pre.header)
	}
	if r := s.post("/discovery/v1/page/tern/guides/sync.md", s.assistant, `{}`); r.status != http.StatusMethodNotAllowed || !strings.Contains(r.header.Get("Allow"), "GET") {
		t.Errorf("POST to a page's URL: %d %v", r.status, r.header)
	}
}

func TestAcceptsMarkdown(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]bool{
		"text/markdown":                      true,
		"text/html, text/markdown;q=0.9":     true,
		"text/markdown; charset=utf-8":       true,
		"text/markdown;q=0":                  false,
		"*/*":                                false,
		"application/json":                   false,
		"text/markdownx, text/x-markdown":    false,
		"":                                   false,
		"text/markdown;q=0.0, text/markdown": true,
	} {
		if got := acceptsMarkdown([]string{header}); got != want {
			t.Errorf("acceptsMarkdown(%q) = %v, want %v", header, got, want)
		}
	}
}
