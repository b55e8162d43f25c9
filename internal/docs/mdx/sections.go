package mdx

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// maxSnippetDepth bounds snippets inlined inside snippets, and maxSnippets the
// snippets inlined into one page, so that snippets using each other many
// times cannot blow a page up exponentially.
const (
	maxSnippetDepth = 8
	maxSnippets     = 256
)

// builder turns tokens into sections.
type builder struct {
	resolve func(string) ([]byte, bool)

	secs    []Section
	text    strings.Builder // text of the current section
	line    []byte          // the line of text being built
	heading bool            // collecting a heading's text
	head    []byte
	level   int
	id      string // custom id of the heading being collected
	seen    map[string]int
	hidden  int // depth inside <style> and <script>

	imports map[string]string  // component name → snippet path, in the current file
	props   map[string]string  // string props of the snippet being inlined
	chain   []string           // snippets being inlined, to stop cycles
	cache   map[string][]token // scanned snippets
	inlined int

	// Markdown, built beside the text by Render (see markdown.go).
	md        bool
	link      func(string) string // makes link targets absolute; nil keeps them
	mdLine    []byte              // the block being built
	kind      blockKind           // its kind; 0 when none has started
	delim     string              // the delimiter row of the table being read
	stack     []container
	nextID    int
	lines     []Line // the current section's
	seg       int    // offset in text where the next Line's text starts
	prevIDs   []int  // the containers around the last Line
	ids       []int  // spare room for the next prevIDs
	prevItem  bool   // the last Line was in a Markdown list item
	code      *codeBlock
	group     int
	table     int    // group of the table being written; 0 outside one
	tableOpen string // its header and delimiter rows
	hrefs     []string
	quoteBase int // quotes open where the snippet being inlined is used
}

func newBuilder(resolve func(string) ([]byte, bool)) *builder {
	return &builder{resolve: resolve, secs: []Section{{}}, seen: map[string]int{}}
}

func (b *builder) run(toks []token) {
	imports := map[string]string{}
	for _, t := range toks {
		if t.kind == tImport {
			imports[t.text] = t.extra
		}
	}
	saved := b.imports
	b.imports = imports
	defer func() { b.imports = saved }()

	for _, t := range toks {
		switch t.kind {
		case tText:
			if b.hidden == 0 {
				b.add(t.text)
				b.addMD(t.extra)
			}
		case tBreak:
			b.endLine()
			b.mdEnd()
		case tHeading:
			b.endLine()
			b.mdHeading()
			b.heading, b.level, b.head, b.id = true, t.level, b.head[:0], ""
		case tAnchor:
			b.id = t.text
		case tOpen:
			b.open(t)
		case tClose:
			if t.text == "style" || t.text == "script" {
				b.hidden = max(0, b.hidden-1)
			} else if t.flow && !b.heading {
				b.endLine()
			}
			b.mdClose(t)
		case tExpr:
			b.expr(t.text)
		case tBlock:
			b.mdBlock(t)
		case tListEnd:
			if b.md {
				b.mdEnd()
				b.popList(t.level)
			}
		case tQuote:
			if b.md {
				b.mdEnd()
				b.setQuote(b.quoteBase + t.level)
			}
		}
	}
	b.endLine()
}

func (b *builder) open(t token) {
	if t.text == "style" || t.text == "script" {
		if !t.self {
			b.hidden++
		}
		return
	}
	if b.hidden > 0 {
		return
	}
	if t.text == "Snippet" {
		if file, ok := attrString(t.attrs, "file"); ok {
			b.inline(file, t.attrs)
			return
		}
	}
	if path, ok := b.imports[t.text]; ok {
		b.inline(path, t.attrs)
		return
	}
	if b.heading {
		return
	}
	if t.flow {
		b.endLine()
	}
	defer b.mdOpen(t)
	var parts []string
	for _, name := range propsAsText(t.text) {
		if v, ok := attrString(t.attrs, name); ok && v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) > 0 {
		b.endLine()
		b.add(strings.Join(parts, " "))
		b.endLine()
	}
}

// propsAsText lists the props of a component whose values are shown as text.
func propsAsText(name string) []string {
	if strings.HasSuffix(name, "Field") {
		return []string{"name", "path", "query", "body", "header", "type", "title", "description"}
	}
	return []string{"title", "description", "tip"}
}

// expr keeps the value of an expression that is a string literal ({'<'}) or,
// inside a snippet, a prop passed to it ({name}).
func (b *builder) expr(src string) {
	if b.hidden > 0 {
		return
	}
	if v, ok := jsStringLiteral(src); ok {
		b.add(v)
		b.addMD(v)
		return
	}
	if v, ok := b.props[trimSpace(src)]; ok {
		b.add(v)
		b.addMD(v)
	}
}

// inline adds the text of a snippet where it is used.
func (b *builder) inline(path string, attrs []attr) {
	if b.resolve == nil || len(b.chain) >= maxSnippetDepth || b.inlined >= maxSnippets || slices.Contains(b.chain, path) {
		return
	}
	toks, ok := b.cache[path]
	if !ok {
		body, found := b.resolve(path)
		if found {
			toks = b.scan(body)
		}
		if b.cache == nil {
			b.cache = map[string][]token{}
		}
		b.cache[path] = toks
		if !found {
			return
		}
	}
	b.inlined++
	props := map[string]string{}
	for _, a := range attrs {
		if v, ok := attrString(attrs, a.name); ok && a.name != "" && a.name != "file" {
			props[a.name] = v
		}
	}
	savedProps, savedHeading, savedQuotes := b.props, b.heading, b.quoteBase
	b.props, b.heading = props, false
	b.chain = append(b.chain, path)
	b.endLine()
	if b.md {
		b.mdEnd()
		b.quoteBase = 0
		for _, c := range b.stack {
			if c.quote {
				b.quoteBase++
			}
		}
	}
	b.run(toks)
	b.chain = b.chain[:len(b.chain)-1]
	b.props, b.heading, b.quoteBase = savedProps, savedHeading, savedQuotes
}

// add appends text to the current line (or heading), collapsing whitespace.
func (b *builder) add(s string) {
	dst := &b.line
	if b.heading {
		dst = &b.head
	}
	*dst = appendCollapsed(*dst, s)
}

// appendCollapsed appends s to dst with runs of whitespace as one space and no
// leading space on an empty line.
func appendCollapsed(dst []byte, s string) []byte {
	space := len(dst) > 0 && dst[len(dst)-1] == ' '
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isSpace(c) {
			if !space && len(dst) > 0 {
				dst = append(dst, ' ')
			}
			space = true
			continue
		}
		dst = append(dst, c)
		space = false
	}
	return dst
}

// endLine ends the current line of text, or the heading being collected.
func (b *builder) endLine() {
	if b.heading {
		b.heading = false
		b.closeSection()
		h := strings.TrimSpace(string(b.head))
		anchor := b.id
		if anchor == "" {
			anchor = Slug(h)
		}
		b.secs = append(b.secs, Section{Heading: h, Level: b.level, Anchor: b.unique(anchor)})
		return
	}
	line := strings.TrimSpace(string(b.line))
	b.line = b.line[:0]
	line = strings.TrimSpace(strings.Trim(line, "|"))
	if line == "" {
		return
	}
	if b.text.Len() > 0 {
		b.text.WriteByte('\n')
	}
	b.text.WriteString(line)
}

func (b *builder) closeSection() {
	sec := &b.secs[len(b.secs)-1]
	sec.Text = b.text.String()
	b.closeMarkdown(sec)
	b.text.Reset()
}

// unique makes an anchor unique within the page the way Mintlify does: the
// second "overview" becomes "overview-2", the third "overview-3".
func (b *builder) unique(a string) string {
	n, ok := b.seen[a]
	if !ok {
		b.seen[a] = 1
		return a
	}
	for {
		n++
		c := a + "-" + strconv.Itoa(n)
		if _, taken := b.seen[c]; !taken {
			b.seen[a] = n
			b.seen[c] = 1
			return c
		}
	}
}

func (b *builder) finish() []Section {
	b.endLine()
	if b.md {
		b.mdEnd()
		b.closeCode()
		b.popTo(0)
	}
	b.closeSection()
	return b.secs
}

// Slug returns the anchor Mintlify generates for a heading: letters
// (any script) and digits lowercased, whitespace runs to '-', '.' to '-',
// apostrophes to '’', and '-', '_', '/', '&', ':', '$' kept; other
// punctuation and symbols (emoji included) are dropped.
func Slug(heading string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(heading) {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte('-')
			}
			space = true
			continue
		}
		space = false
		switch {
		case r == '.':
			b.WriteByte('-')
		case r == '\'' || r == '’':
			b.WriteRune('’')
		case r == '-' || r == '_' || r == '/' || r == '&' || r == ':' || r == '$':
			b.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nl, unicode.No):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// collapse returns s with runs of whitespace as one space, trimmed.
func collapse(s string) string {
	return strings.TrimSpace(string(appendCollapsed(nil, s)))
}
