package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/tenant"
)

func TestLLMsTxt(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	for _, c := range []struct {
		path  string
		wants []string
	}{
		{"/discovery/v1/llms.txt/tern", []string{"# Tern\n\n> ", "\n## Start here (v2)\n\n- [", "(https://tern.example/docs/guides/sync.md)", "(https://tern.example/docs/index.md)", "\n## Legacy (v1)\n"}},
		{"/discovery/v1/llms-full.txt/tern", []string{"# Tern\n\n> ", "\n---\n\n# Schedules\n\nSource: https://tern.example/docs/guides/schedules\n", "--max-rate"}},
	} {
		t.Run(c.path, func(t *testing.T) {
			// No key: the files are as public as the docs site.
			r := s.do(http.MethodGet, c.path, "", "")
			if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/plain; charset=utf-8" ||
				r.header.Get("Cache-Control") != "public, max-age=300" || r.header.Get("ETag") == "" {
				t.Fatalf("%d %v\n%s", r.status, r.header, r.body)
			}
			for _, want := range c.wants {
				if !strings.Contains(r.body, want) {
					t.Errorf("no %q in\n%s", want, r.body)
				}
			}
			// guides/audit is restricted to the admins group.
			if strings.Contains(r.body, "guides/audit") || strings.Contains(r.body, "tern audit") {
				t.Errorf("a page with access groups is listed:\n%s", r.body)
			}
			again := s.do(http.MethodGet, c.path, "", "", "If-None-Match", r.header.Get("ETag"))
			if again.status != http.StatusNotModified || again.body != "" {
				t.Errorf("If-None-Match: %d %q", again.status, again.body)
			}
			head := s.do(http.MethodHead, c.path, "", "")
			if head.status != http.StatusOK || head.body != "" || head.header.Get("Content-Length") != r.header.Get("Content-Length") {
				t.Errorf("HEAD: %d %v", head.status, head.header)
			}
		})
	}
	if r := s.do(http.MethodGet, "/discovery/v1/llms.txt/nope", "", ""); r.status != http.StatusNotFound || !strings.Contains(r.errorMessage(t), `"nope" not found`) {
		t.Errorf("unknown domain: %d %s", r.status, r.body)
	}
	if r := s.do(http.MethodPost, "/discovery/v1/llms.txt/tern", "", ""); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", r.status)
	}
}

func TestLLMsTxtNotIndexedYet(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	// A domain whose docs were never indexed has no catalog.
	if err := s.store.CreateDomain(t.Context(), tenant.Domain{ID: "fresh", OrgID: "acme", ProjectID: "acme-docs", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r := s.do(http.MethodGet, "/discovery/v1/llms.txt/fresh", "", "")
	if r.status != http.StatusNotFound || !strings.Contains(r.errorMessage(t), "not indexed yet; run docsmith index fresh") {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

func TestLLMsTxtCountsPerIP(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{AssistantPerIPDay: 2})
	for i := range 2 {
		if r := s.do(http.MethodGet, "/discovery/v1/llms.txt/tern", "", ""); r.status != http.StatusOK {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := s.do(http.MethodGet, "/discovery/v1/llms-full.txt/tern", "", "")
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.errorMessage(t), "per client IP") {
		t.Fatalf("third request: %d %s", r.status, r.body)
	}
}
