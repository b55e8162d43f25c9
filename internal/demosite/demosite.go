// Package demosite serves a docs site as a small web site under /demo/ with
// the chat widget on every page, so that a new install shows the assistant
// working in a browser in one step. It renders the docs simply: the tabs and
// groups of docs.json, each page's Markdown with Mintlify's common
// components (callouts, steps, cards, tabs, code groups, accordions, fields)
// drawn plainly, and API pages from their OpenAPI operation.
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
	// Examples are the questions the widget offers; none when empty.
	Examples []string
}

// Site is the demo site's handler.
type Site struct {
	cfg   Config
	title string
	color string
	tabs  []navTab
	pages map[string]page
}

type navTab struct {
	Title  string
	First  string // the tab's first page
	Groups []navGroup
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
	Tab                int
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
		r := &renderer{}
		src := r.markdown(p.Body)
		if op, ok := site.Operation(p); ok {
			src = append(r.operation(op), src...)
		}
		var buf bytes.Buffer
		if err := md.Convert(src, &buf); err != nil {
			return nil, fmt.Errorf("render %s: %w", p.File, err)
		}
		title := p.Title
		if title == "" {
			title = np.Path
		}
		navTitle := title
		if p.SidebarTitle != "" {
			navTitle = p.SidebarTitle
		}
		// The tab is the outermost entry above the page that is not one
		// of its groups.
		tab := ""
		if len(np.Breadcrumb) > len(np.Groups) {
			tab = np.Breadcrumb[0]
		}
		if len(s.tabs) == 0 || s.tabs[len(s.tabs)-1].Title != tab {
			s.tabs = append(s.tabs, navTab{Title: tab, First: np.Path})
		}
		t := &s.tabs[len(s.tabs)-1]
		group := "Docs"
		if len(np.Groups) > 0 {
			group = np.Groups[len(np.Groups)-1]
		}
		if len(t.Groups) == 0 || t.Groups[len(t.Groups)-1].Title != group {
			t.Groups = append(t.Groups, navGroup{Title: group})
		}
		g := &t.Groups[len(t.Groups)-1]
		g.Pages = append(g.Pages, navLink{Path: np.Path, Title: navTitle})
		s.pages[np.Path] = page{Title: title, Description: p.Description, Body: template.HTML(siteLinks(r.fill(buf.String()))), Tab: len(s.tabs) - 1} //nolint:gosec // goldmark escapes raw HTML (no WithUnsafe); the components' HTML is ours, its values escaped
	}
	if _, ok := s.pages["index"]; !ok {
		return nil, fmt.Errorf("the demo docs have no index page")
	}
	return s, nil
}

var siteHref = regexp.MustCompile(`href="/`)

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
		pg.Tab = 0
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
		"Site": s.title, "Color": template.CSS(s.color), "Page": pg, "Current": p, "Tabs": s.tabs, "Nav": s.tabs[pg.Tab].Groups, "Prefix": Prefix,
		"Nonce": nonce, "Widget": s.cfg.WidgetPath, "Domain": s.cfg.Domain, "Key": s.cfg.Key, "Examples": strings.Join(s.cfg.Examples, "|"),
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
:root { color-scheme: light dark; --accent: {{.Color}}; --line: rgba(127,127,127,.25); --soft: #f2f4f6; --side: #f7f8f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.6 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; }
@media (prefers-color-scheme: dark) { :root { --soft: #1c2126; --side: #171b1f; } body { color: #e6e8eb; background: #111417; } .banner { background: #17261f !important; } }
.banner { padding: 10px 20px; background: #eef6f1; font-size: 14px; border-bottom: 1px solid var(--line); }
.banner strong { color: var(--accent); }
header { display: flex; align-items: center; gap: 24px; padding: 0 20px; border-bottom: 1px solid var(--line); }
header .name { margin: 0; padding: 12px 0; font-size: 20px; font-weight: 700; color: var(--accent); text-decoration: none; }
.tabs-nav { display: flex; gap: 4px; overflow-x: auto; }
.tabs-nav a { padding: 14px 10px 12px; color: inherit; text-decoration: none; font-size: 15px; border-bottom: 2px solid transparent; white-space: nowrap; }
.tabs-nav a[aria-current] { border-bottom-color: var(--accent); color: var(--accent); font-weight: 600; }
.wrap { display: flex; min-height: calc(100vh - 100px); }
.side { width: 260px; flex: none; padding: 12px 16px 40px; background: var(--side); border-right: 1px solid var(--line); }
.side h2 { margin: 18px 0 6px; font-size: 12px; text-transform: uppercase; letter-spacing: .06em; opacity: .7; }
.side ul { list-style: none; margin: 0; padding: 0; }
.side a { display: block; padding: 3px 8px; border-radius: 6px; color: inherit; text-decoration: none; font-size: 15px; }
.side a[aria-current] { background: color-mix(in srgb, var(--accent) 15%, transparent); color: var(--accent); font-weight: 600; }
#menu, .menu-label { display: none; }
main { flex: 1; min-width: 0; max-width: 800px; padding: 28px 36px 120px; }
main h1 { margin-top: 0; font-size: 30px; }
.lead { margin-top: -8px; font-size: 18px; opacity: .75; }
a { color: var(--accent); }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft); padding: 1px 5px; border-radius: 5px; }
pre { position: relative; background: var(--soft); padding: 14px 16px; border-radius: 8px; overflow-x: auto; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; display: block; overflow-x: auto; } th, td { border: 1px solid var(--line); padding: 5px 10px; text-align: left; vertical-align: top; }
.callout { margin: 16px 0; padding: 2px 16px; border-left: 4px solid var(--accent); border-radius: 6px; background: color-mix(in srgb, var(--accent) 8%, transparent); }
.callout-warning, .callout-danger { border-left-color: #d97706; background: color-mix(in srgb, #d97706 10%, transparent); }
.callout-tip, .callout-check { border-left-color: #16a34a; background: color-mix(in srgb, #16a34a 9%, transparent); }
.callout-label { margin: 10px 0 0; font-size: 13px; font-weight: 700; text-transform: uppercase; letter-spacing: .05em; opacity: .8; }
ol.steps { list-style: none; counter-reset: step; padding-left: 0; margin: 20px 0; }
li.step { counter-increment: step; position: relative; padding: 0 0 8px 44px; border-left: 1px solid var(--line); margin-left: 14px; }
li.step::before { content: counter(step); position: absolute; left: -15px; top: 0; width: 30px; height: 30px; border-radius: 50%; background: var(--accent); color: #fff; font-weight: 700; text-align: center; line-height: 30px; }
.step-title { margin: 2px 0 4px; font-weight: 650; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 12px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 10px; padding: 4px 16px; margin: 12px 0; }
.cards .card { margin: 0; }
.card-title { font-weight: 650; }
.tab, .codegroup, .tabs, .accordiongroup { margin: 14px 0; }
.tab { border: 1px solid var(--line); border-radius: 8px; padding: 0 14px; }
.tab-title, .code-title { margin: 10px 0 -6px; font-size: 13px; font-weight: 650; opacity: .8; }
.code-title + pre { margin-top: 12px; }
details { border: 1px solid var(--line); border-radius: 8px; padding: 6px 14px; margin: 10px 0; } summary { cursor: pointer; font-weight: 600; }
.field { border-bottom: 1px solid var(--line); padding: 4px 0; } .type { font-size: 13px; opacity: .7; } .required { font-size: 12px; color: #dc2626; }
.endpoint { font-size: 15px; } .method { display: inline-block; padding: 1px 8px; border-radius: 5px; font-weight: 700; font-size: 13px; color: #fff; background: #2563eb; }
.method-post { background: #16a34a; } .method-delete { background: #dc2626; } .method-put, .method-patch { background: #d97706; }
@media (max-width: 760px) {
  header { gap: 8px; padding: 0 12px; } .wrap { display: block; } .banner .more { display: none; }
  .menu-label { display: block; padding: 8px 16px; border-bottom: 1px solid var(--line); font-weight: 600; cursor: pointer; }
  .side { display: none; width: auto; border-right: 0; }
  #menu:checked ~ .wrap .side { display: block; }
  main { padding: 20px 18px 120px; }
}
</style>
</head>
<body>
<div class="banner"><strong>docsmith demo.</strong> This docs site is served by docsmith from the demo project's repository. Ask it a question with the chat button at the bottom right<span class="more">, select text to ask about it, or use “Ask about this code” on a code block</span>.</div>
<header><a class="name" href="{{.Prefix}}/">{{.Site}}</a>
{{if gt (len .Tabs) 1}}<nav class="tabs-nav" aria-label="Sections">{{range $i, $t := .Tabs}}<a href="{{$.Prefix}}/{{if ne $t.First "index"}}{{$t.First}}{{end}}"{{if eq $i $.Page.Tab}} aria-current="true"{{end}}>{{$t.Title}}</a>{{end}}</nav>{{end}}
</header>
<input type="checkbox" id="menu"><label class="menu-label" for="menu">☰ Pages</label>
<div class="wrap">
<nav class="side" aria-label="Docs">
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
  data-base-path="{{.Prefix}}"{{with .Examples}} data-examples="{{.}}"{{end}}
  data-disclaimer="Demo: answers quote the docs (extractive mode, no LLM)."></script>
</body>
</html>
`))
