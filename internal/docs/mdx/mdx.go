// Package mdx reads the body of a Mintlify-style MDX or Markdown page (front
// matter already removed): it reports the structural mistakes that would stop
// an MDX build, lists the page's links, and splits the page into searchable
// sections of plain text.
//
// It is a hand-written line scanner rather than a CommonMark parser such as
// goldmark, because MDX is not CommonMark: indented code is turned off (so
// content indented inside <Steps> is still prose), '<' always starts JSX and
// '{' a JavaScript expression, HTML blocks do not exist, and import/export
// lines are ES modules. A CommonMark parser would turn indented component
// bodies into code blocks and hide JSX inside "raw HTML" nodes without line
// numbers for what is unclosed. The scanner follows the MDX rules that decide
// whether a page builds (those of micromark-extension-mdx-jsx,
// -mdx-expression and -mdxjs-esm) and is forgiving about Markdown details that
// only change how text looks.
package mdx

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Problem is a structural mistake in a page body.
type Problem struct {
	Line    int    // 1-based line within the body
	Message string // what is wrong and how to fix it, without the line number
}

// String formats the problem as "line N: message".
func (p Problem) String() string {
	return "line " + strconv.Itoa(p.Line) + ": " + p.Message
}

// Check reports structural problems that would break an MDX build: code
// fences never closed; JSX elements never closed, closed in the wrong order,
// or closed without being opened; an element opened inside a paragraph and not
// closed there (or the other way round), which MDX refuses; '<' that cannot
// start a tag (write \< or &lt;); '{' never closed; HTML comments, which MDX
// does not support; an import/export statement that never ends. Code fences,
// inline code and JSX attribute values are not looked into. HTML void elements
// (<br>, <img …>, <hr>) need no closing tag. Problems come in line order.
func Check(body []byte) []Problem {
	probs := scan(body).probs
	slices.SortStableFunc(probs, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	return probs
}

// Link is a link target found in a page.
type Link struct {
	Target string // as written, with escapes and character references decoded
	Line   int    // 1-based line within the body
	Text   string // the link text, or the title of a component such as <Card>
}

// Links returns the link targets outside code: Markdown links [text](target
// "title"), reference definitions [label]: target, <a href="…"> and the href
// prop of any component (<Card href="/guides/x">). Images are left out.
func Links(body []byte) []Link {
	toks := scan(body).toks
	var links []Link
	for i, t := range toks {
		switch t.kind {
		case tLink:
			links = append(links, Link{Target: t.text, Line: t.line, Text: t.extra})
		case tOpen:
			href, ok := attrString(t.attrs, "href")
			if !ok {
				continue
			}
			text, _ := attrString(t.attrs, "title")
			if text == "" && !t.self {
				text = innerText(toks[i+1:], t.text)
			}
			links = append(links, Link{Target: href, Line: t.line, Text: text})
		}
	}
	return links
}

// innerText returns the text of an element up to its closing tag.
func innerText(toks []token, name string) string {
	var b strings.Builder
	depth := 0
	for _, t := range toks {
		if b.Len() > 200 {
			break
		}
		switch t.kind {
		case tText:
			b.WriteString(t.text)
			b.WriteByte(' ')
		case tOpen:
			if t.text == name && !t.self {
				depth++
			}
		case tClose:
			if t.text == name {
				if depth == 0 {
					return collapse(b.String())
				}
				depth--
			}
		}
	}
	return collapse(b.String())
}

// attrString returns the value of a string prop: name="…" or name={"…"}.
func attrString(attrs []attr, name string) (string, bool) {
	for _, a := range attrs {
		if a.name != name || !a.set {
			continue
		}
		if !a.expr {
			return a.value, true
		}
		return jsStringLiteral(a.value)
	}
	return "", false
}

// Section is a part of a page under one heading.
type Section struct {
	Heading string // the heading's text without markup; "" for the text before the first heading
	Level   int    // 1–6; 0 for the text before the first heading
	Anchor  string // the heading's id: its custom {#id} or Slug(Heading), made unique within the page
	Text    string // plain text, one line per paragraph, list item, table row or code line
	// Lines is the section's body (without its heading) in units that
	// keep Text and Markdown aligned; JoinLines makes it Markdown. Only
	// Render sets it.
	Lines []Line
}

// Sections splits a page at its headings (# to ######, and setext underlines)
// into plain text for search. Import/export statements, JSX tags, JSX
// comments and expressions, HTML comments and Markdown markup are dropped;
// the text inside components is kept, and so are their title, description and
// tip props (and the name and type of a field); code blocks are kept without
// their fences; table cells are kept, separated by " | "; a link becomes its
// text; an image is dropped; <style> and <script> content is dropped;
// whitespace is collapsed. The first Section always holds the text before the
// first heading (Heading "", Level 0), even when it is empty.
//
// resolve, which may be nil, returns the body (without front matter) of a
// snippet, for <Snippet file="name.mdx" /> (called with "name.mdx") and for a
// component imported from a Markdown file (import X from '/snippets/x.mdx';
// <X />, called with "/snippets/x.mdx"). The snippet's text is inlined where
// it is used, with {prop} replaced by the string props passed to it; its
// headings start sections of the page.
func Sections(body []byte, resolve func(path string) ([]byte, bool)) []Section {
	b := newBuilder(resolve)
	b.run(b.scan(body))
	return b.finish()
}

// Text returns the page's searchable text: each section's heading and text,
// one per line, in order.
func Text(body []byte) string {
	var b strings.Builder
	for _, s := range Sections(body, nil) {
		for _, part := range [...]string{s.Heading, s.Text} {
			if part == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(part)
		}
	}
	return b.String()
}

// Headings returns the page's headings, in order, with Heading, Level and
// Anchor set and Text empty, for checking links to #anchors.
func Headings(body []byte) []Section {
	secs := Sections(body, nil)[1:]
	for i := range secs {
		secs[i].Text = ""
	}
	return secs
}

// Anchors returns every id a link's #fragment can point to on the page: the
// headings' anchors and the id props of elements (<div id="faq">).
func Anchors(body []byte) []string {
	toks := scan(body).toks
	b := newBuilder(nil)
	b.run(toks)
	var ids []string
	for _, s := range b.finish()[1:] {
		ids = append(ids, s.Anchor)
	}
	for _, t := range toks {
		if t.kind == tOpen {
			if id, ok := attrString(t.attrs, "id"); ok && id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}
