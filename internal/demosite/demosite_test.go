package demosite_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/examples"
	"github.com/docsmith/docsmith/internal/demosite"
)

func TestPages(t *testing.T) {
	t.Parallel()
	site, err := demosite.New(demosite.Config{Docs: examples.DemoDocs(), Domain: "demo", Key: "svc_dsc_k", WidgetPath: "/widget/0123456789abcdef.js"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		status int
		want   []string
		not    []string
	}{
		{path: "/demo/", status: 200, want: []string{
			"<h1>Quill</h1>",
			`<a href="/demo/guides/install">Install Quill</a>`, // a card, as a link into the demo site
			`<a href="/demo/" aria-current="page">`,
			`<script async src="/widget/0123456789abcdef.js" data-domain="demo" data-key="svc_dsc_k"`,
			`data-base-path="/demo"`,
		}, not: []string{"<Card", "CardGroup"}},
		{path: "/demo/guides/pages", status: 200, want: []string{
			"<table>", "<td><code>draft</code></td>", "Drafts still appear in <code>quill serve</code>",
		}, not: []string{"<Note>", "raw HTML omitted"}},
		{path: "/demo/reference/serve", status: 200, want: []string{"<pre data-docsmith-ask><code"}},
		// Fenced code inside a component keeps its own indentation only.
		{path: "/demo/guides/install", status: 200, want: []string{"<code class=\"language-bash\">brew install quill\n"}},
		{path: "/demo/nope", status: 404, want: []string{"Page not found"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			site.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			res := rec.Result()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
			}
			csp := res.Header.Get("Content-Security-Policy")
			if !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "style-src 'nonce-") || strings.Contains(csp, "unsafe") {
				t.Errorf("CSP %q", csp)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("no %q in\n%s", w, body)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(body), n) {
					t.Errorf("%q in the page", n)
				}
			}
		})
	}
	// Each page gets its own nonce.
	a, b := httptest.NewRecorder(), httptest.NewRecorder()
	site.ServeHTTP(a, httptest.NewRequest(http.MethodGet, "/demo/", nil))
	site.ServeHTTP(b, httptest.NewRequest(http.MethodGet, "/demo/", nil))
	if a.Header().Get("Content-Security-Policy") == b.Header().Get("Content-Security-Policy") {
		t.Error("two pages share a CSP nonce")
	}
}
