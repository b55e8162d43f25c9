package mdx

import (
	"net/url"
	"strconv"
	"strings"
)

// Options tell Render how to read a page.
type Options struct {
	// Resolve returns a snippet's body, as for Sections; nil inlines none.
	Resolve func(path string) ([]byte, bool)
	// SiteURL is the site's public URL ("https://docs.example"). Links to
	// the site ("/guides/x", "x", "#anchor") are made absolute with it;
	// empty keeps every link as written.
	SiteURL string
	// PagePath is the page's path on the site ("guides/setup"), which
	// relative links and #anchors are read against.
	PagePath string
}

// Line is one unit of a section's content, in reading order: a paragraph,
// the text of a list item, a table row, a line of code, a component's title.
// Cutting a section between Lines keeps its Text and Markdown aligned.
type Line struct {
	// Text is what the Line adds to the section's plain Text: no line,
	// one, or several.
	Text string
	// Markdown is the Line as Markdown, with the prefixes of the blocks
	// around it ("> " of a quote, the indentation of a list item); the
	// first line of a code block carries the opening fence, the last one
	// the closing fence, a table's header row its delimiter row.
	Markdown string
	// Sep goes between the previous Line's Markdown and this one's: a line
	// break inside a list, a table or a code block, otherwise a blank line
	// (with the quote markers of the blocks both Lines are in).
	Sep string
	// Group is the same non-zero number for the Lines of one code block or
	// table, which a cut should not split.
	Group int
	// Open is what a part of the section that starts at this Line writes
	// first, to stay valid Markdown on its own: the code block's opening
	// fence, or the table's header and delimiter rows. It is empty on the
	// first Line of a group.
	Open string
	// Close is what a part that ends at this Line writes last: the code
	// block's closing fence. It is empty on the last Line of a code block.
	Close string
}

// Render splits a page like Sections and also renders each section's body
// as Markdown (Section.Lines, see JoinLines), for readers that want
// the page as written rather than as search text. Text is exactly what
// Sections returns.
//
// Markdown keeps fenced code with its info string and the exact bytes of its
// lines (less the fence's own indentation), tables (rows, cells and the
// delimiter row), lists with their nesting, block quotes, links, inline
// code, emphasis, escapes and character references as written. Links to the
// site are made absolute with Options.SiteURL. An image becomes its alt
// text: the Markdown is read by people and language models in places that do
// not load the site's images. Paragraphs are written on one line; <br> is a
// hard line break (kept as <br> inside a table cell).
//
// Mintlify components become plain Markdown: <Note>, <Warning>, <Tip>,
// <Info>, <Check>, <Danger> a quote starting with the label in bold
// ("> **Note:** …"), <Callout> a quote; <Steps> a numbered list whose items
// start with the step's title in bold; <Tab>, <Accordion>, <Expandable> the
// title as a bold line, then the content; inside <CodeGroup> (and
// <RequestExample>, <ResponseExample>) each code block is preceded by its
// title from the fence's meta; <ParamField>, <ResponseField> (any *Field) a
// list item "**`name`** `type` (path, required, default: `x`) — description",
// nested fields nested; <Card> a link [title](href) (or the title in bold),
// then its body. Other components (<Tabs>, <CardGroup>, <Frame>, <div>, …)
// keep their children's Markdown, with a title prop as a bold line. The
// prefixes of a component or list opened before a heading end at the
// heading, since the heading starts a section that must read on its own.
func Render(body []byte, opts Options) []Section {
	b := newBuilder(opts.Resolve)
	b.md = true
	b.link = opts.linkResolver()
	b.run(b.scan(body))
	return b.finish()
}

// linkResolver returns the function that makes link targets absolute, or nil
// when there is no site URL.
func (o Options) linkResolver() func(string) string {
	site := strings.TrimRight(o.SiteURL, "/")
	if site == "" {
		return nil
	}
	base, err := url.Parse(site + "/" + strings.TrimLeft(o.PagePath, "/"))
	if err != nil {
		return nil
	}
	return func(t string) string {
		switch {
		case t == "" || strings.HasPrefix(t, "//"):
			return t
		case strings.HasPrefix(t, "/"):
			return site + t
		}
		ref, err := url.Parse(t)
		if err != nil || ref.Scheme != "" || ref.Host != "" {
			return t
		}
		return base.ResolveReference(ref).String()
	}
}

// markdownTarget is a link destination as Markdown: made absolute by link
// (when not nil), and in angle brackets when it holds spaces.
func markdownTarget(t string, link func(string) string) string {
	if link != nil {
		t = link(t)
	}
	if strings.ContainsAny(t, " \t") {
		return "<" + t + ">"
	}
	return t
}

// blockKind is the kind of block a tBlock token starts.
type blockKind uint8

const (
	bPara       blockKind = iota + 1
	bItem                 // a list item: text is its marker ("-", "3.", "- [x]"), level its id
	bHeader               // a table's header row: text is its delimiter row
	bRow                  // a table's body row
	bFenceOpen            // text: the info string; extra: the fence ("```")
	bCode                 // one line of code
	bFenceClose           // the end of a code block
	bRule                 // a thematic break
)

// listItem is an open Markdown list item, for the scanner to tell which
// item a line belongs to by its indentation.
type listItem struct {
	id, contentCol, quote int
}

// columns returns the width of src[from:to], a tab reaching the next
// multiple of 4.
func columns(src []byte, from, to int) int {
	n := 0
	for _, c := range src[from:to] {
		if c == '\t' {
			n += 4 - n%4
		} else {
			n++
		}
	}
	return n
}

func (s *scanner) block(kind blockKind, text, extra string) {
	if s.markdown {
		s.emit(token{kind: tBlock, line: s.line, blk: kind, text: text, extra: extra})
	}
}

// blockStart is called where a block starts at column s.col: it ends the
// list items the block is not indented into, and reports a change of quote
// depth.
func (s *scanner) blockStart() {
	if !s.markdown {
		return
	}
	for n := len(s.lists); n > 0 && (s.lists[n-1].contentCol > s.col || s.lists[n-1].quote != s.quote); n-- {
		s.emit(token{kind: tListEnd, line: s.line, level: s.lists[n-1].id})
		s.lists = s.lists[:n-1]
	}
	if s.quote != s.mdQuote {
		s.mdQuote = s.quote
		s.emit(token{kind: tQuote, line: s.line, level: s.quote})
	}
}

// listItem starts a list item whose marker is at src[p] and content at src[q].
func (s *scanner) listItem(p, q int) {
	if !s.markdown {
		return
	}
	s.blockStart()
	marker := "-"
	if c := s.src[p]; c >= '0' && c <= '9' {
		e := p
		for e < q && s.src[e] >= '0' && s.src[e] <= '9' {
			e++
		}
		marker = string(s.src[p:e]) + "."
	}
	if box := strings.IndexByte(string(s.src[p:q]), '['); box >= 0 && p+box+2 < q {
		marker += " [" + string(s.src[p+box+1]) + "]"
	}
	s.nextList++
	content := s.col + columns(s.src, p, q)
	s.lists = append(s.lists, listItem{id: s.nextList, contentCol: content, quote: s.quote})
	s.emit(token{kind: tBlock, line: s.line, blk: bItem, text: marker, level: s.nextList})
	s.col = content
}

// container is a block that prefixes or introduces the Markdown inside it:
// a quote, a list item, or a component.
type container struct {
	id   int
	name string // the component's name; "" for Markdown quotes and list items
	// first prefixes the container's first line, cont the others.
	first, cont string
	started     bool
	hidden      bool // opened before the current section's heading: no prefix
	// lead is written before the content: joined to a first paragraph
	// with join, or on a line of its own when join is "".
	lead, join string
	list       int  // the Markdown list item's id
	quote      bool // a Markdown block quote
	steps      int  // <Steps>: how many steps so far
	inline     bool // opened inside a paragraph
	closing    bool // closed inside a paragraph: removed once it is written
}

// codeBlock is the fenced code block being written.
type codeBlock struct {
	open, close string
	group       int
	lines       int
}

// scan scans a body, keeping Markdown when the builder renders it.
func (b *builder) scan(body []byte) []token {
	return scanWith(body, b.md, b.link).toks
}

// addMD appends Markdown to the block being built.
func (b *builder) addMD(s string) {
	if b.md && !b.heading && b.hidden == 0 {
		b.mdLine = append(b.mdLine, s...)
	}
}

// mdBlock starts a block.
func (b *builder) mdBlock(t token) {
	if !b.md || b.hidden > 0 {
		return
	}
	b.mdEnd()
	switch t.blk {
	case bItem:
		// The lines after the first line up with the item's content, which
		// starts after the marker (a task box is part of the content).
		marker, _, _ := strings.Cut(t.text, " ")
		b.push(container{first: t.text + " ", cont: strings.Repeat(" ", len(marker)+1), list: t.level})
		b.kind = bPara
	case bFenceOpen:
		b.openCode(t.text, t.extra)
	case bFenceClose:
		b.closeCode()
	case bRule:
		b.leads(nil)
		b.writeLine("---", Line{})
	case bHeader:
		b.kind, b.delim = bHeader, t.text
	default:
		b.kind = t.blk
	}
}

// mdEnd writes the block being built.
func (b *builder) mdEnd() {
	if !b.md {
		return
	}
	kind := b.kind
	content := string(b.mdLine)
	b.kind, b.mdLine = 0, b.mdLine[:0]
	switch {
	case kind == bCode && b.code != nil:
		b.codeLine(content)
	case (kind == bHeader || kind == bRow) && strings.TrimSpace(content) != "":
		b.tableRow(kind == bHeader, content)
	default:
		// A hard break at the end of a paragraph breaks nothing.
		c := strings.TrimRight(content, " \t")
		for strings.HasSuffix(c, "\\\n") {
			c = strings.TrimRight(c[:len(c)-2], " \t")
		}
		c = strings.TrimSpace(c)
		if c != "" {
			b.paragraph(c)
		}
	}
	for k := range b.stack {
		if b.stack[k].closing {
			b.popTo(k)
			break
		}
	}
}

// mdHeading is called when a heading starts: what is pending goes to the
// section before it, and the open containers stop prefixing lines.
func (b *builder) mdHeading() {
	if !b.md {
		return
	}
	b.mdEnd()
	b.leads(nil)
	for k := range b.stack {
		b.stack[k].hidden = true
	}
	b.table = 0
	b.prevItem = false
}

// maxContainers bounds the nesting the Markdown shows: deeper quotes, list
// items and components add no prefix of their own (their content stays in
// the container above), so that hostile nesting cannot make every line's
// prefix, and the output, grow with the page.
const maxContainers = 32

// push opens a container, and reports whether it did.
func (b *builder) push(c container) bool {
	if len(b.stack) >= maxContainers {
		return false
	}
	b.nextID++
	c.id = b.nextID
	b.stack = append(b.stack, c)
	return true
}

// popTo removes the containers from stack[k] up, writing their titles if
// nothing was written in them.
func (b *builder) popTo(k int) {
	for i := k; i < len(b.stack); i++ {
		if b.stack[i].lead != "" {
			b.writeLead(i)
		}
	}
	b.stack = b.stack[:k]
}

// innermost returns the index of the innermost open component named name, or -1.
func (b *builder) innermost(name string) int {
	for k := len(b.stack) - 1; k >= 0; k-- {
		if b.stack[k].name == name && !b.stack[k].closing {
			return k
		}
	}
	return -1
}

// mdOpen handles an opening tag.
func (b *builder) mdOpen(t token) {
	if !b.md || b.heading || b.hidden > 0 {
		return
	}
	inRow := b.kind == bRow || b.kind == bHeader
	switch t.text {
	case "br":
		if inRow {
			b.addMD("<br>")
		} else if !t.flow {
			b.addMD("\\\n")
		}
		return
	case "img":
		if alt, ok := attrString(t.attrs, "alt"); ok {
			b.addMD(collapse(alt))
		}
		return
	case "a":
		if !t.flow && !t.self {
			href, _ := attrString(t.attrs, "href")
			b.hrefs = append(b.hrefs, markdownTarget(href, b.link))
			b.addMD("[")
		}
		return
	case "strong", "b", "em", "i", "code":
		if !t.flow && !t.self {
			b.addMD(inlineMarkup(t.text))
		}
		return
	}
	if !t.flow && (strings.TrimSpace(string(b.mdLine)) != "" || inRow || b.kind == bCode) {
		return // a component inside text: its children's text is kept
	}
	if t.text == "" || (t.text[0] >= 'a' && t.text[0] <= 'z') {
		return // HTML elements and fragments only hold their children
	}
	if t.flow {
		b.mdEnd()
	}
	c := b.component(t)
	c.inline = !t.flow
	if !b.push(c) {
		return
	}
	if t.self {
		if t.flow {
			b.popTo(len(b.stack) - 1)
		} else {
			b.stack[len(b.stack)-1].closing = true
		}
	}
}

// mdClose handles a closing tag.
func (b *builder) mdClose(t token) {
	if !b.md || b.heading || b.hidden > 0 {
		return
	}
	switch t.text {
	case "a":
		if n := len(b.hrefs); n > 0 && !t.flow {
			b.addMD("](" + b.hrefs[n-1] + ")")
			b.hrefs = b.hrefs[:n-1]
		}
		return
	case "strong", "b", "em", "i", "code":
		if !t.flow {
			b.addMD(inlineMarkup(t.text))
		}
		return
	}
	k := b.innermost(t.text)
	if k < 0 {
		return
	}
	if !t.flow && b.stack[k].inline {
		b.stack[k].closing = true
		return
	}
	b.mdEnd()
	b.popTo(k)
}

func inlineMarkup(tag string) string {
	switch tag {
	case "strong", "b":
		return "**"
	case "code":
		return "`"
	}
	return "*"
}

// component returns the container a Mintlify component becomes.
func (b *builder) component(t token) container {
	c := container{name: t.text}
	title, _ := attrString(t.attrs, "title")
	title = collapse(title)
	switch name := t.text; {
	case name == "Note" || name == "Warning" || name == "Tip" || name == "Info" || name == "Check" || name == "Danger":
		c.first, c.cont = "> ", "> "
		c.lead, c.join = "**"+name+":**", " "
	case name == "Callout":
		c.first, c.cont = "> ", "> "
	case name == "Step":
		n := 1
		if k := b.innermost("Steps"); k >= 0 {
			b.stack[k].steps++
			n = b.stack[k].steps
		}
		num := strconv.Itoa(n) + ". "
		c.first, c.cont = num, strings.Repeat(" ", len(num))
		c.lead = bold(title)
	case strings.HasSuffix(name, "Field"):
		c.first, c.cont = "- ", "  "
		c.lead, c.join = fieldLine(t.attrs), " — "
	case name == "Card":
		href, _ := attrString(t.attrs, "href")
		switch {
		case href != "" && title != "":
			c.lead = "[" + title + "](" + markdownTarget(href, b.link) + ")"
		case href != "":
			c.lead = "<" + markdownTarget(href, b.link) + ">"
		default:
			c.lead = bold(title)
		}
	default:
		if title == "" {
			title, _ = attrString(t.attrs, "label")
			title = collapse(title)
		}
		c.lead = bold(title)
		if d, ok := attrString(t.attrs, "description"); ok && collapse(d) != "" && name != "Tab" {
			c.lead = strings.TrimPrefix(c.lead+"\n\n"+collapse(d), "\n\n")
		}
	}
	return c
}

func bold(s string) string {
	if s == "" {
		return ""
	}
	return "**" + s + "**"
}

// fieldLine is the definition line of a <ParamField> or <ResponseField>.
func fieldLine(attrs []attr) string {
	var b strings.Builder
	var notes []string
	for _, in := range [...]string{"path", "query", "body", "header", "name"} {
		if v, ok := attrString(attrs, in); ok && v != "" {
			b.WriteString("**`" + collapse(v) + "`**")
			if in != "name" {
				notes = append(notes, in)
			}
			break
		}
	}
	if v, ok := attrString(attrs, "type"); ok && v != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("`" + collapse(v) + "`")
	}
	for _, a := range attrs {
		switch {
		case a.name == "required" && (!a.set || trimSpace(a.value) == "true"):
			notes = append(notes, "required")
		case a.name == "deprecated" && (!a.set || trimSpace(a.value) == "true"):
			notes = append(notes, "deprecated")
		case a.name == "default" && a.set:
			v := a.value
			if a.expr {
				if s, ok := jsStringLiteral(a.value); ok {
					v = s
				}
			}
			notes = append(notes, "default: `"+collapse(v)+"`")
		}
	}
	if len(notes) > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("(" + strings.Join(notes, ", ") + ")")
	}
	return b.String()
}

// leads writes the titles of the open containers that have not been written
// yet. With a paragraph about to be written, the innermost container's title
// is joined to it when that container joins its title (a callout's label,
// a field's definition).
func (b *builder) leads(para *string) {
	top := len(b.stack) - 1
	for k := range b.stack {
		c := &b.stack[k]
		if c.lead == "" {
			continue
		}
		if para != nil && k == top && c.join != "" {
			*para = c.lead + c.join + *para
			c.lead = ""
			continue
		}
		b.writeLead(k)
	}
}

// writeLead writes stack[k]'s title on a line of its own.
func (b *builder) writeLead(k int) {
	lead := b.stack[k].lead
	b.stack[k].lead = ""
	b.writeLineAt(lead, Line{}, k+1)
}

func (b *builder) paragraph(c string) {
	for strings.Contains(c, "\\\n ") {
		c = strings.ReplaceAll(c, "\\\n ", "\\\n")
	}
	b.leads(&c)
	b.writeLine(c, Line{})
}

// openCode starts a fenced code block; inside a code group its title comes
// first.
func (b *builder) openCode(info, fence string) {
	b.leads(nil)
	if k := len(b.stack) - 1; k >= 0 {
		switch b.stack[k].name {
		case "CodeGroup", "RequestExample", "ResponseExample":
			if title := fenceTitle(info); title != "" {
				b.writeLine(bold(title), Line{})
			}
		}
	}
	b.group++
	open := fence
	if info != "" {
		open += info
	}
	b.code = &codeBlock{open: open, close: fence, group: b.group}
}

// fenceTitle is a code block's title in a code group: the meta after the
// language (less {…} and key=value options), a title="…" option, or the
// language.
func fenceTitle(info string) string {
	lang, meta, _ := strings.Cut(strings.TrimSpace(info), " ")
	if i := strings.Index(meta, `title="`); i >= 0 {
		if j := strings.IndexByte(meta[i+7:], '"'); j >= 0 {
			return meta[i+7 : i+7+j]
		}
	}
	var words []string
	depth := 0
	for _, w := range strings.Fields(meta) {
		switch {
		case strings.HasPrefix(w, "{"):
			depth++
		}
		if depth == 0 && !strings.Contains(w, "=") {
			words = append(words, w)
		}
		if strings.HasSuffix(w, "}") && depth > 0 {
			depth--
		}
	}
	if len(words) > 0 {
		return strings.Join(words, " ")
	}
	return lang
}

func (b *builder) codeLine(content string) {
	c := b.code
	_, cont := b.prefixes(len(b.stack), false)
	l := Line{Group: c.group, Close: cont + c.close}
	if c.lines == 0 {
		content = c.open + "\n" + content
	} else {
		l.Open = cont + c.open
	}
	c.lines++
	b.writeLine(content, l)
}

func (b *builder) closeCode() {
	c := b.code
	if c == nil {
		return
	}
	b.code = nil
	if n := len(b.lines); c.lines > 0 && n > 0 && b.lines[n-1].Group == c.group {
		last := &b.lines[n-1]
		last.Markdown += "\n" + last.Close
		last.Close = ""
		return
	}
	b.writeLine(c.open+"\n"+c.close, Line{Group: c.group})
}

// tableRow writes a table row with leading and trailing pipes.
func (b *builder) tableRow(header bool, content string) {
	row := strings.TrimSpace(content)
	if !strings.HasPrefix(row, "|") {
		row = "| " + row
	}
	if !strings.HasSuffix(row, "|") || strings.HasSuffix(row, "\\|") || len(row) == 1 {
		row += " |"
	}
	if header || b.table == 0 {
		b.leads(nil)
		b.group++
		b.table = b.group
		_, cont := b.prefixes(len(b.stack), false)
		delim := b.delim
		if !header {
			delim = "| --- |"
		}
		b.tableOpen = cont + row + "\n" + cont + delim
		b.writeLine(row+"\n"+delim, Line{Group: b.table})
		return
	}
	b.writeLine(row, Line{Group: b.table, Open: b.tableOpen})
}

// setQuote opens or closes Markdown quotes to reach depth n.
func (b *builder) setQuote(n int) {
	var at []int
	for k, c := range b.stack {
		if c.quote {
			at = append(at, k)
		}
	}
	if n < len(at) {
		b.popTo(at[max(n, 0)])
		return
	}
	for range n - len(at) {
		if !b.push(container{quote: true, first: "> ", cont: "> "}) {
			return
		}
	}
}

// popList ends the Markdown list item id.
func (b *builder) popList(id int) {
	for k := len(b.stack) - 1; k >= 0; k-- {
		if b.stack[k].list == id {
			b.popTo(k)
			return
		}
	}
}

// prefixes returns the prefix of a line inside stack[:depth] and of the
// lines after it, marking the containers started when mark is set.
func (b *builder) prefixes(depth int, mark bool) (string, string) {
	if depth == 0 {
		return "", ""
	}
	var first, cont strings.Builder
	for k := range b.stack[:depth] {
		c := &b.stack[k]
		if c.hidden {
			continue
		}
		if c.started {
			first.WriteString(c.cont)
		} else {
			first.WriteString(c.first)
		}
		if mark {
			c.started = true
		}
		cont.WriteString(c.cont)
	}
	return first.String(), cont.String()
}

func (b *builder) writeLine(md string, l Line) {
	b.writeLineAt(md, l, len(b.stack))
}

// writeLineAt writes a Line inside stack[:depth]: its prefixes, the
// separator from the Line before, and the plain text written since.
func (b *builder) writeLineAt(md string, l Line, depth int) {
	if l.Group == 0 {
		b.table = 0
	}
	newItem := false
	ids := b.ids[:0]
	for k := range b.stack[:depth] {
		c := &b.stack[k]
		if c.hidden {
			continue
		}
		ids = append(ids, c.id)
		newItem = newItem || (c.list != 0 && !c.started)
	}
	// The blank line before keeps the prefixes of the containers both
	// Lines are in.
	var shared strings.Builder
	for k, i := 0, 0; k < depth && i < len(b.prevIDs); k++ {
		c := b.stack[k]
		if c.hidden {
			continue
		}
		if c.id != b.prevIDs[i] {
			break
		}
		shared.WriteString(c.cont)
		i++
	}
	switch n := len(b.lines); {
	case n > 0 && l.Group != 0 && b.lines[n-1].Group == l.Group, newItem && b.prevItem:
		l.Sep = "\n"
	default:
		l.Sep = "\n" + strings.TrimRight(shared.String(), " ") + "\n"
	}
	first, cont := b.prefixes(depth, true)
	if first == "" && cont == "" {
		l.Markdown = md
	} else {
		var out strings.Builder
		out.Grow(len(md) + len(first) + 8*len(cont))
		for i, line := range strings.Split(md, "\n") {
			prefix := first
			if i > 0 {
				out.WriteByte('\n')
				prefix = cont
			}
			if line == "" {
				prefix = strings.TrimRight(prefix, " ")
			}
			out.WriteString(prefix)
			out.WriteString(line)
		}
		l.Markdown = out.String()
	}
	if l.Group == 0 {
		l.Markdown = strings.TrimRight(l.Markdown, " ")
	}
	text := b.text.String()
	l.Text = strings.TrimPrefix(text[min(b.seg, len(text)):], "\n")
	b.seg = len(text)
	b.lines = append(b.lines, l)
	b.ids, b.prevIDs = b.prevIDs, ids
	b.prevItem = l.Group == 0 && len(ids) > 0 && b.stack[depthTop(b.stack[:depth])].list != 0
}

// depthTop returns the index of the innermost visible container.
func depthTop(stack []container) int {
	for k := len(stack) - 1; k >= 0; k-- {
		if !stack[k].hidden {
			return k
		}
	}
	return 0
}

// closeMarkdown gives the section its Lines and Markdown: the plain text
// written after the last Line becomes a Line of its own.
func (b *builder) closeMarkdown(sec *Section) {
	if !b.md {
		return
	}
	text := b.text.String()
	if rest := strings.TrimPrefix(text[min(b.seg, len(text)):], "\n"); strings.TrimSpace(rest) != "" {
		b.lines = append(b.lines, Line{Text: rest, Sep: "\n\n"})
	}
	b.seg = 0
	sec.Lines = b.lines
	b.lines = nil
	b.prevIDs = nil
	b.prevItem = false
}

// JoinLines joins Lines' Markdown with their separators.
func JoinLines(lines []Line) string {
	var out strings.Builder
	for _, l := range lines {
		if l.Markdown == "" && l.Group == 0 {
			continue
		}
		if out.Len() > 0 {
			out.WriteString(l.Sep)
		}
		out.WriteString(l.Markdown)
	}
	return out.String()
}
