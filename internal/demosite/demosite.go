// Package demosite serves the sample docs as a small web site under /demo/
// with the chat widget on every page, so that a new install shows the
// assistant working in a browser in one step. It renders the docs simply:
// the navigation of docs.json, each page's Markdown with the MDX components
// reduced to their text.
package demosite

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/docsmith/docsmith/internal/docs"
)

// Prefix is where the site is served.
const Prefix = "/demo"

// Config is what the demo site needs.
type Config struct {
	// Docs is the docs site to show (docs.json and its pages).
	Docs fs.FS
	// Domain is the assistant domain the widget talks to, and Key an
	// assistant key of its organization (assistant keys are public: they
	// sit in every page that embeds the widget).
	Domain, Key string
	// WidgetPath is the widget script's path on this server.
	WidgetPath string
}

// Site is the demo site's handler.
type Site struct {
	cfg   Config
	title string
	color string
	nav   []navGroup
	pages map[string]page
}

type navGroup struct {
	Title string
	Pages []navLink
}

type navLink struct {
	Path, Title string
}

type page struct {
	Title, Description string
	Body               template.HTML
}

// New reads and renders every page once.
func New(cfg Config) (*Site, error) {
	site, err := docs.Load(cfg.Docs)
	if err != nil {
		return nil, fmt.Errorf("read the demo docs: %w", err)
	}
	s := &Site{cfg: cfg, title: "Docs", color: "#0b7285", pages: map[string]page{}}
	if name, ok := site.Config["name"].(string); ok && name != "" {
		s.title = name
	}
	if colors, ok := site.Config["colors"].(map[string]any); ok {
		if c, ok := colors["primary"].(string); ok && regexp.MustCompile(`^#[0-9A-Fa-f]{3,8}$`).MatchString(c) {
			s.color = c
		}
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for _, np := range site.NavPages() {
		p := site.Pages[np.Path]
		if p == nil || np.NavHidden || p.Hidden {
			continue
		}
		var buf bytes.Buffer
		if err := md.Convert(simplifyMDX(p.Body), &buf); err != nil {
			return nil, fmt.Errorf("render %s: %w", p.File, err)
		}
		title := p.Title
		if title == "" {
			title = np.Path
		}
		s.pages[np.Path] = page{Title: title, Description: p.Description, Body: template.HTML(siteLinks(buf.String()))} //nolint:gosec // goldmark escapes raw HTML (no WithUnsafe)
		group := "Docs"
		if len(np.Groups) > 0 {
			group = np.Groups[len(np.Groups)-1]
		}
		if len(s.nav) == 0 || s.nav[len(s.nav)-1].Title != group {
			s.nav = append(s.nav, navGroup{Title: group})
		}
		g := &s.nav[len(s.nav)-1]
		g.Pages = append(g.Pages, navLink{Path: np.Path, Title: title})
	}
	if _, ok := s.pages["index"]; !ok {
		return nil, fmt.Errorf("the demo docs have no index page")
	}
	return s, nil
}

var (
	// jsxLine is a line holding only an MDX component's opening or closing tag.
	jsxLine = regexp.MustCompile(`(?m)^[ \t]*</?[A-Z][A-Za-z0-9.]*(?:\s[^>]*)?/?>[ \t]*$`)
	// cardTag is a <Card title="…" href="…"> opening tag.
	cardTag   = regexp.MustCompile(`(?m)^[ \t]*<Card\b([^>]*)>[ \t]*$`)
	attrTitle = regexp.MustCompile(`\btitle="([^"]*)"`)
	attrHref  = regexp.MustCompile(`\bhref="(/[^"]*)"`)
	importExp = regexp.MustCompile(`(?m)^(?:import|export)\s.*$`)
	siteHref  = regexp.MustCompile(`href="/`)
)

// simplifyMDX keeps a page's Markdown and drops its components: a card
// becomes a link line, other component tags disappear and their content
// stays as Markdown.
func simplifyMDX(body []byte) []byte {
	s := importExp.ReplaceAllString(string(body), "")
	s = cardTag.ReplaceAllStringFunc(s, func(tag string) string {
		title := attrTitle.FindStringSubmatch(tag)
		href := attrHref.FindStringSubmatch(tag)
		if title == nil {
			return ""
		}
		if href == nil {
			return "\n**" + title[1] + "**  "
		}
		return "\n**[" + title[1] + "](" + href[1] + ")**  "
	})
	s = jsxLine.ReplaceAllString(s, "")
	// Component content is indented for readability; unindented, it does
	// not turn into code blocks. A fenced block loses its fence's indent.
	var out strings.Builder
	fence := "" // the open fence's indent, or "" outside a fence
	inFence := false
	for _, line := range strings.Split(s, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		switch {
		case strings.HasPrefix(trimmed, "```"):
			if !inFence {
				fence = line[:len(line)-len(trimmed)]
			}
			inFence = !inFence
			line = trimmed
		case inFence:
			line = strings.TrimPrefix(line, fence)
		case !strings.HasPrefix(trimmed, "-") && !strings.HasPrefix(trimmed, "*") && !startsNumbered(trimmed):
			line = trimmed
		}
		out.WriteString(line + "\n")
	}
	return []byte(out.String())
}

func startsNumbered(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i < len(s) && s[i] == '.'
}

// siteLinks points the docs' root-relative links into the demo site, and
// lets readers ask about any code block.
func siteLinks(html string) string {
	html = siteHref.ReplaceAllString(html, `href="`+Prefix+`/`)
	return strings.ReplaceAll(html, "<pre>", "<pre data-docsmith-ask>")
}

// ServeHTTP serves /demo/ (the index page) and /demo/PAGE.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.Trim(strings.TrimPrefix(r.URL.Path, Prefix), "/")
	if p == "" {
		p = "index"
	}
	pg, ok := s.pages[p]
	status := http.StatusOK
	if !ok {
		status = http.StatusNotFound
		pg = page{Title: "Page not found", Body: template.HTML(`<p>No page at this address. Pick one on the left.</p>`)}
	}
	nonce := newNonce()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'nonce-"+nonce+"'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, map[string]any{
		"Site": s.title, "Color": template.CSS(s.color), "Page": pg, "Current": p, "Nav": s.nav, "Prefix": Prefix,
		"Nonce": nonce, "Widget": s.cfg.WidgetPath, "Domain": s.cfg.Domain, "Key": s.cfg.Key,
	})
}

func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return base64.RawURLEncoding.EncodeToString(b)
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{.Page.Title}} · {{.Site}} docs (docsmith demo)</title>
<style nonce="{{.Nonce}}">
:root { color-scheme: light dark; --accent: {{.Color}}; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; }
@media (prefers-color-scheme: dark) { body { color: #e6e8eb; background: #111417; } .side { background: #171b1f !important; } pre, code { background: #1c2126 !important; } th, td { border-color: #2d333a !important; } .banner { background: #17261f !important; } }
.banner { padding: 10px 20px; background: #eef6f1; font-size: 14px; border-bottom: 1px solid rgba(127,127,127,.25); }
.banner strong { color: var(--accent); }
.wrap { display: flex; min-height: calc(100vh - 44px); }
.side { width: 250px; flex: none; padding: 20px; background: #f7f8f9; border-right: 1px solid rgba(127,127,127,.2); }
.side h1 { margin: 0 0 16px; font-size: 20px; color: var(--accent); }
.side h2 { margin: 18px 0 6px; font-size: 12px; text-transform: uppercase; letter-spacing: .06em; opacity: .7; }
.side ul { list-style: none; margin: 0; padding: 0; }
.side a { display: block; padding: 3px 8px; border-radius: 6px; color: inherit; text-decoration: none; font-size: 15px; }
.side a[aria-current] { background: color-mix(in srgb, var(--accent) 15%, transparent); color: var(--accent); font-weight: 600; }
main { flex: 1; min-width: 0; max-width: 780px; padding: 28px 36px 120px; }
main h1 { margin-top: 0; font-size: 30px; }
.lead { margin-top: -8px; font-size: 18px; opacity: .75; }
a { color: var(--accent); }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f2f4f6; padding: 1px 5px; border-radius: 5px; }
pre { position: relative; background: #f2f4f6; padding: 14px 16px; border-radius: 8px; overflow-x: auto; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; } th, td { border: 1px solid #d0d7de; padding: 5px 10px; text-align: left; }
@media (max-width: 760px) { .wrap { display: block; } .side { width: auto; border-right: 0; } main { padding: 20px 18px 120px; } }
</style>
</head>
<body>
<div class="banner"><strong>docsmith demo.</strong> These are the sample docs of the demo project. Ask them a question with the chat button at the bottom right, select text to ask about it, or use “Ask about this code” on a code block.</div>
<div class="wrap">
<nav class="side" aria-label="Docs">
<h1>{{.Site}}</h1>
{{range .Nav}}<h2>{{.Title}}</h2>
<ul>{{range .Pages}}<li><a href="{{$.Prefix}}/{{if ne .Path "index"}}{{.Path}}{{end}}"{{if eq .Path $.Current}} aria-current="page"{{end}}>{{.Title}}</a></li>{{end}}</ul>
{{end}}</nav>
<main>
<h1>{{.Page.Title}}</h1>
{{with .Page.Description}}<p class="lead">{{.}}</p>{{end}}
{{.Page.Body}}
</main>
</div>
<script async src="{{.Widget}}" data-domain="{{.Domain}}" data-key="{{.Key}}" data-title="{{.Site}} docs" data-color="{{.Color}}"
  data-base-path="{{.Prefix}}" data-examples="How do I install Quill?|How do I preview my site while I write?|How do I change the theme?"
  data-disclaimer="Demo: answers quote the sample docs (extractive mode, no LLM)."></script>
</body>
</html>
`))
