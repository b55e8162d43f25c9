package demosite_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docsmith/docsmith"
	"github.com/docsmith/docsmith/examples"
	"github.com/docsmith/docsmith/internal/demosite"
	"github.com/docsmith/docsmith/internal/docs"
)

func get(t *testing.T, site http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	site.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

// TestDocsmithDocs: docsmith's own docs as make run's demo shows them: the
// tabs of docs.json, Mintlify's components drawn as HTML, the API pages
// made from their OpenAPI operation, and no component left as text.
func TestDocsmithDocs(t *testing.T) {
	t.Parallel()
	questions := []string{"How do I add the widget to my site?", "How do I back up docsmith?"}
	site, err := demosite.New(demosite.Config{Docs: docsmith.Docs(), Domain: "demo", Key: "svc_dsc_k", WidgetPath: "/widget/w.js", Examples: questions})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want []string
	}{
		{"/demo/", []string{
			`<nav class="tabs-nav"`, `>Guides</a>`, `>Operations</a>`, `>API reference</a>`,
			`data-examples="How do I add the widget to my site?|How do I back up docsmith?"`,
		}},
		{"/demo/assistant/widget", []string{
			`<ol class="steps">`, `<p class="step-title">Add the script tag to every page</p>`,
			`<div class="callout callout-note"><p class="callout-label">Note</p>`, `<div class="callout callout-tip">`,
			`<div class="codegroup">`, `<p class="code-title">Rebuild</p>`,
			`<pre data-docsmith-ask><code class="language-html">&lt;script async src=`,
			`<a href="/demo/reference/configuration">`,
		}},
		{"/demo/api-reference/agent/create-job", []string{
			`<span class="method method-post">POST</span> <code>/v2/agent/{projectId}/job</code>`,
			`<h2>Responses</h2>`, `<h3>201</h3>`, `<a href="/demo/api-reference/introduction"`,
			`>API reference</a>`, `aria-current="true">API reference</a>`,
		}},
		{"/demo/reference/configuration", []string{`<h3>data_dir</h3>`, `<code>DOCSMITH_DATA_DIR</code>`}},
	}
	for _, tt := range tests {
		code, body := get(t, site, tt.path)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", tt.path, code)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q", tt.path, w)
			}
		}
	}
	// No page shows a component's tag, a placeholder or an MDX comment as
	// text (code blocks may show anything).
	ds, err := docs.Load(docsmith.Docs())
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile(`(?s)<pre.*?</pre>|<code>.*?</code>`)
	leftover := regexp.MustCompile(`&lt;/?[A-Z][A-Za-z]*|DSBLOCK|\{/\*`)
	for _, np := range ds.NavPages() {
		_, body := get(t, site, "/demo/"+np.Path)
		if m := leftover.FindString(code.ReplaceAllString(body, "")); m != "" {
			t.Errorf("/demo/%s shows %q", np.Path, m)
		}
	}
}

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
			"<h1>Quill</h1>", `<a class="name" href="/demo/">Quill</a>`,
			`<a href="/demo/guides/install">Install Quill</a>`, // a card, as a link into the demo site
			`<a href="/demo/" aria-current="page">`,
			`<script async src="/widget/0123456789abcdef.js" data-domain="demo" data-key="svc_dsc_k"`,
			`data-base-path="/demo"`,
		}, not: []string{"<Card", "CardGroup"}},
		{path: "/demo/guides/pages", status: 200, want: []string{
			"<table>", "<td><code>draft</code></td>", "Drafts still appear in <code>quill serve</code>", `<div class="callout callout-note">`,
		}, not: []string{"<Note>", "raw HTML omitted", "data-examples"}},
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

// TestComponents: components become HTML outside code, and stay as
// written inside it.
func TestComponents(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"docs.json": {Data: []byte(`{"name": "T", "navigation": {"groups": [{"group": "G", "pages": ["index"]}]}}`)},
		"index.mdx": {Data: []byte("---\ntitle: Home\n---\n\n{/* a comment\n   on two lines */}\n\n<Tip>Short tip.</Tip>\n\n" +
			"```mdx example.mdx\n<Note>\n  Kept.\n</Note>\n<Tip>Inline kept.</Tip>\n```\n\n" +
			"<Accordion title=\"More <b>\">\n  Hidden text.\n</Accordion>\n\n<ParamField path=\"id\" type=\"string\" required>\n  The id.\n</ParamField>\n")},
	}
	site, err := demosite.New(demosite.Config{Docs: fsys, Domain: "d", Key: "k", WidgetPath: "/w.js"})
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, site, "/demo/")
	for _, w := range []string{
		`<div class="callout callout-tip"><p class="callout-label">Tip</p>`, "<p>Short tip.</p>",
		`<p class="code-title">example.mdx</p>`,
		"<code class=\"language-mdx\">&lt;Note&gt;\n  Kept.\n&lt;/Note&gt;\n&lt;Tip&gt;Inline kept.&lt;/Tip&gt;\n</code>",
		`<details><summary>More &lt;b&gt;</summary>`, "<p>Hidden text.</p>",
		`<div class="field"><p><code>id</code> <span class="type">string</span> <span class="required">required</span></p>`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("no %q in\n%s", w, body)
		}
	}
	if strings.Contains(body, "comment") {
		t.Error("the MDX comment is shown")
	}
}
