// Package llmstxt writes a docs site's llms.txt (the pages' titles, links
// and descriptions, in navigation order, under the navigation's sections)
// and llms-full.txt (every page as Markdown), following the llms.txt
// convention: a "# Title" line, a "> summary" line, then "## Section"
// headings over "- [Title](url): description" lists. Only public pages (no
// access groups) are written: both files are served without a key.
package llmstxt

import (
	"context"
	"fmt"
	"strings"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// ContentType is the media type both files are served with.
const ContentType = "text/plain; charset=utf-8"

// File names, as a docs site serves them at its root.
const (
	IndexFile = "llms.txt"
	FullFile  = "llms-full.txt"
)

// Index renders llms.txt from a catalog; name stands in for a site that
// has no name of its own.
func Index(c search.SiteCatalog, name string) []byte {
	var b strings.Builder
	header(&b, c, name)
	section := "\x00" // no section yet
	for _, p := range c.Pages {
		if !p.Public() {
			continue
		}
		if s := sectionOf(p); s != section {
			section = s
			fmt.Fprintf(&b, "\n## %s\n\n", s)
		}
		fmt.Fprintf(&b, "- [%s](%s)", linkText(p.Title), linkURL(MarkdownURL(p)))
		if p.Description != "" {
			b.WriteString(": " + p.Description)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// MarkdownURL is where a page's Markdown is read, the link llms.txt gives:
// its URL with ".md" added, as agents look for it, and its path's
// "index.md" for an index page, whose URL is its folder's. A docs site
// sends these URLs to the page endpoint (GET /discovery/v1/page/{domain}/
// {path}.md; docs/assistant/mcp-and-llms-txt.mdx has the proxy rule).
func MarkdownURL(p search.CatalogPage) string {
	if p.Path == "index" || strings.HasSuffix(p.Path, "/index") {
		return strings.TrimRight(p.URL, "/") + "/index.md"
	}
	return strings.TrimRight(p.URL, "/") + ".md"
}

// PageFunc returns a page's Markdown by its path.
type PageFunc func(ctx context.Context, path string) (string, error)

// Full renders llms-full.txt: the header, then every public page of the
// catalog as Markdown, with its URL under its title, in navigation order.
func Full(ctx context.Context, c search.SiteCatalog, name string, page PageFunc) ([]byte, error) {
	var b strings.Builder
	header(&b, c, name)
	for _, p := range c.Pages {
		if !p.Public() {
			continue
		}
		text, err := page(ctx, p.Path)
		if err != nil {
			return nil, fmt.Errorf("page %s: %w", p.Path, err)
		}
		// The page's Markdown goes in as it is, but for the blank lines
		// around it: trimming spaces would take the indentation of a code
		// block that starts or ends it.
		text = trimBlankLines(text)
		title, rest, _ := strings.Cut(text, "\n")
		if !strings.HasPrefix(title, "# ") {
			title, rest = "# "+p.Title, text
		}
		fmt.Fprintf(&b, "\n---\n\n%s\n\nSource: %s\n", title, p.URL)
		if rest = trimBlankLines(rest); rest != "" {
			b.WriteString("\n" + rest + "\n")
		}
	}
	return []byte(b.String()), nil
}

func header(b *strings.Builder, c search.SiteCatalog, name string) {
	if c.Name != "" {
		name = c.Name
	}
	summary := c.Description
	if summary == "" {
		summary = "The documentation of " + name + "."
	}
	fmt.Fprintf(b, "# %s\n\n> %s\n", oneLine(name), oneLine(summary))
}

// sectionOf is the heading a page is listed under: the tabs and groups
// above it, and its version and language when it has them.
func sectionOf(p search.CatalogPage) string {
	label := strings.Join(p.Section, " > ")
	var tags []string
	for _, t := range []string{p.Version, p.Language} {
		if t != "" {
			tags = append(tags, t)
		}
	}
	switch {
	case label == "" && len(tags) == 0:
		return "Docs"
	case label == "":
		return strings.Join(tags, ", ")
	case len(tags) > 0:
		return label + " (" + strings.Join(tags, ", ") + ")"
	}
	return oneLine(label)
}

// trimBlankLines removes the blank lines before and after text, and the
// spaces ending its last line.
func trimBlankLines(text string) string {
	for {
		line, rest, found := strings.Cut(text, "\n")
		if !found || strings.TrimSpace(line) != "" {
			break
		}
		text = rest
	}
	return strings.TrimRight(text, " \t\r\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// linkText escapes what would end a Markdown link's text early.
func linkText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(oneLine(s))
}

// linkURL escapes what would end a Markdown link's destination early.
func linkURL(s string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(s)
}

// Docs is where a domain's files come from: assistant.Service's catalog and
// pages.
type Docs interface {
	Catalog(ctx context.Context, d tenant.Domain) (search.SiteCatalog, error)
	Page(ctx context.Context, d tenant.Domain, path string, groups []string) (search.PageText, error)
}

// IndexOf renders the domain's llms.txt.
func IndexOf(ctx context.Context, docs Docs, d tenant.Domain) ([]byte, error) {
	c, err := docs.Catalog(ctx, d)
	if err != nil {
		return nil, err
	}
	return Index(c, d.ID), nil
}

// FullOf renders the domain's llms-full.txt, reading each public page as
// a reader without access groups would.
func FullOf(ctx context.Context, docs Docs, d tenant.Domain) ([]byte, error) {
	c, err := docs.Catalog(ctx, d)
	if err != nil {
		return nil, err
	}
	return Full(ctx, c, d.ID, func(ctx context.Context, path string) (string, error) {
		pt, err := docs.Page(ctx, d, path, nil)
		return pt.Content, err
	})
}
