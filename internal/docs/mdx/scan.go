package mdx

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

// tokKind is the kind of a token the scanner emits.
type tokKind uint8

const (
	tText    tokKind = iota + 1 // text, with the Markdown markup already removed
	tBreak                      // end of a block: what follows starts a new line of text
	tHeading                    // a heading starts; its text follows up to the next tBreak
	tAnchor                     // the custom id of the current heading ({#id})
	tOpen                       // a JSX opening or self-closing tag
	tClose                      // a JSX closing tag
	tExpr                       // a JSX expression {…} outside tags
	tLink                       // a link target (Markdown link or reference definition)
	tImport                     // a default import of a Markdown file (text: name, extra: path)

	// Tokens only emitted when the scanner keeps Markdown (see markdown.go).
	tBlock   // a block starts: blk says which (list item, table row, code line, …)
	tListEnd // a Markdown list item ends (level: the item's id)
	tQuote   // the block quote depth changes to level
)

type token struct {
	kind  tokKind
	flow  bool      // tOpen, tClose: the tag stands on a line of its own
	self  bool      // tOpen: self-closing
	blk   blockKind // tBlock: the kind of block
	line  int
	level int    // tHeading: 1–6; tBlock of a list item, tListEnd: the item's id; tQuote: the depth
	text  string // text, tag name, expression source, link target, import name
	extra string // tLink: link text; tImport: path; tText: the text as Markdown, when kept
	attrs []attr
}

// openTag is a JSX element waiting for its closing tag.
type openTag struct {
	name string
	line int
	ctx  int // the paragraph (phrasing context) it was opened in; 0 for a tag on its own line
}

// fence is an open fenced code block.
type fence struct {
	char   byte
	n      int // length of the opening run
	indent int // indentation of the opening fence, removed from content lines
	quote  int // blockquote depth of the opening fence
	line   int
}

// Paragraph kinds, for setext headings: only a plain paragraph can become one.
const (
	paraPlain = iota + 1
	paraList
)

// maxProblems caps the report on a badly broken page; the first problems are
// the ones worth fixing first.
const maxProblems = 100

// scanner reads an MDX body line by line. At the start of each line it
// decides the block (fence, heading, list item, table row, JSX on a line of
// its own, paragraph text); inside a line it reads inline constructs, some of
// which (tags, expressions, code spans, link labels) may run over several
// lines. It emits tokens for Sections and Links and records Problems for Check.
type scanner struct {
	src  []byte
	pos  int
	line int

	toks  []token
	probs []Problem
	text  []byte // pending text, flushed into a tText token
	tline int    // line of the pending text

	stack   []openTag
	open    map[string]int // how many elements of each name are on the stack
	orphans map[string]int // tags reported as unclosed whose closing tag may still come

	ctx      int // current phrasing context (paragraph, heading, table row); 0 when none
	nextCtx  int
	inPara   bool // the previous line was paragraph text
	paraKind int
	paraTok  int // index in toks where the current paragraph starts
	quote    int // blockquote depth of the previous line
	table    bool
	tableRow bool
	fence    *fence
	deadEnd  bool // an expression or tag ran to the end of the body; stop retrying

	// Markdown, kept beside the plain text when markdown is set: the
	// pending text as Markdown, the column of the current block's first
	// character, the open Markdown list items and the quote depth the
	// tokens last reported.
	markdown bool
	linkTo   func(string) string // makes a link target absolute; nil keeps it
	md       []byte
	col      int
	lists    []listItem
	nextList int
	mdQuote  int

	// Memos that keep adversarial input linear: the ']' closing each '[' of
	// the paragraph at labelFrom–labelTo, and for runs of n backticks (or
	// dollars) the offset before which no closing run exists.
	labels    map[int]int
	labelFrom int
	labelTo   int
	noCloser  [2][16]int
}

func scan(body []byte) *scanner {
	return scanWith(body, false, nil)
}

// scanWith scans body, keeping each text's Markdown beside it when markdown
// is set; link, which may be nil, rewrites link targets in that Markdown.
func scanWith(body []byte, markdown bool, link func(string) string) *scanner {
	src := normalizeNewlines(body)
	s := &scanner{src: src, line: 1, open: map[string]int{}, orphans: map[string]int{}, markdown: markdown, linkTo: link}
	perToken := 64
	if markdown {
		perToken = 32 // block tokens too
	}
	s.toks = make([]token, 0, len(src)/perToken+8)
	for s.pos < len(s.src) {
		s.scanLine()
	}
	s.finish()
	return s
}

// normalizeNewlines turns \r\n and lone \r into \n, copying only when needed.
func normalizeNewlines(b []byte) []byte {
	if bytes.IndexByte(b, '\r') < 0 {
		return b
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}

func (s *scanner) problem(line int, msg string) {
	if len(s.probs) < maxProblems {
		s.probs = append(s.probs, Problem{Line: line, Message: msg})
	}
}

// lineEnd returns the offset of the '\n' that ends the line containing p, or len(src).
func lineEnd(src []byte, p int) int {
	if i := bytes.IndexByte(src[p:], '\n'); i >= 0 {
		return p + i
	}
	return len(src)
}

// advance moves to offset p, counting the line breaks passed.
func (s *scanner) advance(p int) {
	if p > len(s.src) {
		p = len(s.src)
	}
	if p > s.pos {
		s.line += bytes.Count(s.src[s.pos:p], []byte{'\n'})
		s.pos = p
	}
}

// nextLine moves past the end of the current line.
func (s *scanner) nextLine() {
	e := lineEnd(s.src, s.pos)
	s.advance(e)
	if s.pos < len(s.src) {
		s.pos++
		s.line++
	}
}

func (s *scanner) emit(t token) {
	s.flush()
	s.toks = append(s.toks, t)
}

func (s *scanner) flush() {
	if len(s.text) > 0 || len(s.md) > 0 {
		text := string(s.text)
		md := text
		if !bytes.Equal(s.md, s.text) {
			md = string(s.md)
		}
		s.toks = append(s.toks, token{kind: tText, line: s.tline, text: text, extra: md})
		s.text = s.text[:0]
		s.md = s.md[:0]
	}
}

// addText adds text that reads the same as plain text and as Markdown.
func (s *scanner) addText(b []byte) {
	s.addPlain(b)
	s.addMD(b)
}

func (s *scanner) addByte(c byte) {
	if len(s.text) == 0 && len(s.md) == 0 {
		s.tline = s.line
	}
	s.text = append(s.text, c)
	if s.markdown {
		s.md = append(s.md, c)
	}
}

// addPlain adds text to the plain text only.
func (s *scanner) addPlain(b []byte) {
	if len(s.text) == 0 && len(s.md) == 0 {
		s.tline = s.line
	}
	s.text = append(s.text, b...)
}

// addMD adds Markdown that the plain text leaves out (markup).
func (s *scanner) addMD(b []byte) {
	if !s.markdown {
		return
	}
	if len(s.text) == 0 && len(s.md) == 0 {
		s.tline = s.line
	}
	s.md = append(s.md, b...)
}

// brk ends the current block of text.
func (s *scanner) brk() {
	s.flush()
	if n := len(s.toks); n > 0 && s.toks[n-1].kind != tBreak {
		s.toks = append(s.toks, token{kind: tBreak, line: s.line})
	}
}

// startCtx opens a new phrasing context: tags opened in it must close in it.
func (s *scanner) startCtx() {
	s.nextCtx++
	s.ctx = s.nextCtx
}

// endCtx closes the phrasing context, reporting the tags still open in it.
func (s *scanner) endCtx(where string) {
	if s.ctx == 0 {
		return
	}
	for n := len(s.stack); n > 0 && s.stack[n-1].ctx == s.ctx; n-- {
		t := s.stack[n-1]
		s.problem(t.line, "<"+t.name+"> is never closed in its "+where+" (add </"+t.name+"> before the "+where+" ends, or put <"+t.name+"> and </"+t.name+"> on lines of their own)")
		s.orphans[t.name]++
		s.pop(n - 1)
	}
	s.ctx = 0
}

// endPara ends the current paragraph, if any.
func (s *scanner) endPara() {
	if s.inPara {
		s.endCtx("paragraph")
		s.inPara = false
	}
	s.brk()
}

func (s *scanner) finish() {
	s.endPara()
	if f := s.fence; f != nil {
		s.block(bFenceClose, "", "")
		run := strings.Repeat(string(f.char), f.n)
		what := "code block"
		if f.char == '$' {
			what = "math block"
		}
		s.problem(f.line, what+" opened with "+run+" is never closed (add a line with "+run+" after it)")
		s.fence = nil
	}
	for _, t := range s.stack {
		if t.name == "" {
			s.problem(t.line, "fragment <> is never closed (add </>)")
			continue
		}
		s.problem(t.line, "<"+t.name+"> is never closed (add </"+t.name+">)")
	}
	s.stack = nil
	s.col, s.quote = -1, 0
	s.blockStart()
}

// stripQuotes skips leading whitespace and up to max blockquote markers ('>'
// and one optional space). It returns the offset after them and their number.
func stripQuotes(src []byte, p, end, max int) (int, int) {
	n := 0
	for n < max {
		q := p
		for q < end && (src[q] == ' ' || src[q] == '\t') {
			q++
		}
		if q >= end || src[q] != '>' {
			break
		}
		p = q + 1
		if p < end && src[p] == ' ' {
			p++
		}
		n++
	}
	return p, n
}

func skipBlanks(src []byte, p, end int) int {
	for p < end && (src[p] == ' ' || src[p] == '\t') {
		p++
	}
	return p
}

// scanLine reads one line starting at s.pos, and any further lines that a
// construct started on it runs over, and moves past its line break.
func (s *scanner) scanLine() {
	start := s.pos
	end := lineEnd(s.src, start)

	if f := s.fence; f != nil {
		p, depth := stripQuotes(s.src, start, end, f.quote)
		if depth == f.quote {
			s.fenceLine(f, p, end)
			s.nextLine()
			return
		}
		s.fence = nil // the blockquote holding the code block ended
		s.block(bFenceClose, "", "")
	}

	p, depth := stripQuotes(s.src, start, end, 1<<30)
	afterQuotes := p
	p = skipBlanks(s.src, p, end)
	if p == end {
		s.endPara()
		s.table = false
		s.quote = depth
		s.nextLine()
		return
	}
	if depth > s.quote && s.inPara {
		s.endPara()
	}
	s.quote = depth
	s.col = columns(s.src, afterQuotes, p)

	if depth == 0 && p == start && !s.inPara && isESMStart(s.src[p:end]) {
		s.endPara()
		s.esm(start)
		return
	}

	list := false
	for {
		if s.fenceStart(p, end, depth) {
			s.nextLine()
			return
		}
		if s.setext(p, end, list) {
			s.nextLine()
			return
		}
		if thematicBreak(s.src[p:end]) {
			s.endPara()
			s.table = false
			s.blockStart()
			s.block(bRule, "", "")
			s.nextLine()
			return
		}
		q, ok := listMarker(s.src, p, end)
		if !ok {
			break
		}
		s.endPara()
		s.table = false
		s.listItem(p, q)
		list = true
		p = q
		if p == end {
			s.nextLine()
			return
		}
	}

	if s.atxHeading(p, end) {
		s.nextLine()
		return
	}
	if s.tableLine(p, end) {
		s.nextLine()
		return
	}
	if !s.inPara && s.definition(p, end) {
		s.nextLine()
		return
	}
	if (s.src[p] == '<' || s.src[p] == '{') && s.flowLine(p) {
		s.endPara()
		s.table = false
		s.blockStart()
		s.flowConstructs(p)
		s.brk()
		s.nextLine()
		return
	}

	if !s.inPara {
		s.brk()
		s.blockStart()
		s.block(bPara, "", "")
		s.inPara = true
		s.paraKind = paraPlain
		if list {
			s.paraKind = paraList
		}
		s.paraTok = len(s.toks)
		s.startCtx()
	} else {
		s.addByte(' ')
	}
	s.advance(p)
	s.inline(len(s.src), true)
	s.nextLine()
}

// fenceLine handles a line inside a fenced code block: either its closing
// fence or a line of code.
func (s *scanner) fenceLine(f *fence, p, end int) {
	q := skipBlanks(s.src, p, end)
	n := 0
	for q+n < end && s.src[q+n] == f.char {
		n++
	}
	if n >= f.n && skipBlanks(s.src, q+n, end) == end {
		s.fence = nil
		s.brk()
		s.block(bFenceClose, "", "")
		return
	}
	// Remove up to the opening fence's indentation.
	for i := 0; i < f.indent && p < end && (s.src[p] == ' ' || s.src[p] == '\t'); i++ {
		p++
	}
	s.advance(p)
	s.block(bCode, "", "")
	s.addText(s.src[p:end])
	s.brk()
}

// fenceStart opens a fenced code block when the line starts with ``` or ~~~,
// or a math block when it starts with $$. MDX turns indented code off, so a
// fence may be indented any amount, as it is inside components.
func (s *scanner) fenceStart(p, end, depth int) bool {
	c := s.src[p]
	if c != '`' && c != '~' && c != '$' {
		return false
	}
	n := 0
	for p+n < end && s.src[p+n] == c {
		n++
	}
	if n < 3 && (c != '$' || n < 2) {
		return false
	}
	if (c == '`' || c == '$') && bytes.IndexByte(s.src[p+n:end], c) >= 0 {
		return false // the info string may not hold the fence character: this is inline code or math
	}
	s.endPara()
	s.table = false
	s.blockStart()
	s.block(bFenceOpen, string(bytes.TrimSpace(s.src[p+n:end])), string(s.src[p:p+n]))
	indent := 0
	for i := lineStartOf(s.src, p); i < p; i++ {
		if s.src[i] == ' ' || s.src[i] == '\t' {
			indent++
		} else {
			indent = 0
		}
	}
	s.fence = &fence{char: c, n: n, indent: indent, quote: depth, line: s.line}
	return true
}

func lineStartOf(src []byte, p int) int {
	return bytes.LastIndexByte(src[:p], '\n') + 1
}

// setext turns the paragraph above into a heading when the line is an
// underline of '=' or '-'.
func (s *scanner) setext(p, end int, list bool) bool {
	if !s.inPara || s.paraKind != paraPlain || list {
		return false
	}
	c := s.src[p]
	if c != '=' && c != '-' {
		return false
	}
	q := p
	for q < end && s.src[q] == c {
		q++
	}
	if skipBlanks(s.src, q, end) != end {
		return false
	}
	level := 1
	if c == '-' {
		level = 2
	}
	s.flush()
	at := s.paraTok
	s.toks = append(s.toks, token{})
	copy(s.toks[at+1:], s.toks[at:])
	s.toks[at] = token{kind: tHeading, line: s.line - 1, level: level}
	s.endCtx("heading")
	s.inPara = false
	s.brk()
	return true
}

func thematicBreak(line []byte) bool {
	var c byte
	n := 0
	for _, b := range line {
		switch b {
		case ' ', '\t':
		case '*', '-', '_':
			if c != 0 && b != c {
				return false
			}
			c = b
			n++
		default:
			return false
		}
	}
	return n >= 3
}

// listMarker recognises "- ", "* ", "+ ", "1. " and "1) " (and a task box
// after them) and returns the offset of the item's content.
func listMarker(src []byte, p, end int) (int, bool) {
	q := p
	switch c := src[p]; {
	case c == '-' || c == '*' || c == '+':
		q++
	case c >= '0' && c <= '9':
		for q < end && q-p < 9 && src[q] >= '0' && src[q] <= '9' {
			q++
		}
		if q >= end || (src[q] != '.' && src[q] != ')') {
			return 0, false
		}
		q++
	default:
		return 0, false
	}
	if q < end && src[q] != ' ' && src[q] != '\t' {
		return 0, false
	}
	q = skipBlanks(src, q, end)
	if q+2 < end && src[q] == '[' && src[q+2] == ']' && (src[q+1] == ' ' || src[q+1] == 'x' || src[q+1] == 'X') &&
		(q+3 == end || src[q+3] == ' ' || src[q+3] == '\t') {
		q = skipBlanks(src, q+3, end)
	}
	return q, true
}

// atxHeading handles "## Heading ##" with an optional custom id {#id}.
func (s *scanner) atxHeading(p, end int) bool {
	n := 0
	for p+n < end && s.src[p+n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (p+n < end && s.src[p+n] != ' ' && s.src[p+n] != '\t') {
		return false
	}
	s.endPara()
	s.table = false
	s.blockStart()
	a := skipBlanks(s.src, p+n, end)
	b := end
	for b > a && (s.src[b-1] == ' ' || s.src[b-1] == '\t') {
		b--
	}
	// The closing sequence: #s preceded by a space, or the whole content.
	c := b
	for c > a && s.src[c-1] == '#' {
		c--
	}
	if c == a || s.src[c-1] == ' ' || s.src[c-1] == '\t' {
		b = c
		for b > a && (s.src[b-1] == ' ' || s.src[b-1] == '\t') {
			b--
		}
	}
	id, b := customID(s.src, a, b)
	s.emit(token{kind: tHeading, line: s.line, level: n})
	if id != "" {
		s.emit(token{kind: tAnchor, line: s.line, text: id})
	}
	s.startCtx()
	s.advance(a)
	s.inline(b, true)
	s.endCtx("heading")
	s.brk()
	return true
}

// customID finds a Mintlify custom heading id, {#id}, at the end of the
// heading text src[a:b], and returns it and the end of the text before it.
func customID(src []byte, a, b int) (string, int) {
	if b-a < 4 || src[b-1] != '}' {
		return "", b
	}
	open := bytes.LastIndex(src[a:b], []byte("{#"))
	if open < 0 {
		return "", b
	}
	open += a
	id := src[open+2 : b-1]
	if len(id) == 0 || bytes.ContainsAny(id, "{} \t") {
		return "", b
	}
	return string(id), skipBlanksBack(src, a, open)
}

// skipBlanksBack returns end moved back over spaces and tabs, not before start.
func skipBlanksBack(src []byte, start, end int) int {
	for end > start && (src[end-1] == ' ' || src[end-1] == '\t') {
		end--
	}
	return end
}

// tableLine handles the header, delimiter and body rows of a GFM table.
func (s *scanner) tableLine(p, end int) bool {
	if !s.table {
		if bytes.IndexByte(s.src[p:end], '|') < 0 || end >= len(s.src) {
			return false
		}
		ne := lineEnd(s.src, end+1)
		q, _ := stripQuotes(s.src, end+1, ne, s.quote)
		q = skipBlanks(s.src, q, ne)
		if !delimiterRow(s.src[q:ne]) || cellCount(s.src[p:end]) != cellCount(s.src[q:ne]) {
			return false
		}
		s.endPara()
		s.table = true
		s.blockStart()
		s.row(p, end, bHeader, string(bytes.TrimSpace(s.src[q:ne])))
		s.nextLine() // the header row; the caller moves past the delimiter row
		return true
	}
	if s.src[p] == '<' || s.src[p] == '{' || s.src[p] == '#' {
		s.table = false
		return false
	}
	s.row(p, end, bRow, "")
	return true
}

func (s *scanner) row(p, end int, kind blockKind, delim string) {
	s.brk()
	s.block(kind, delim, "")
	s.startCtx()
	s.tableRow = true
	s.advance(p)
	s.inline(end, true)
	s.tableRow = false
	s.endCtx("table row")
	s.brk()
}

func delimiterRow(line []byte) bool {
	dash := false
	for _, c := range line {
		switch c {
		case '-':
			dash = true
		case '|', ':', ' ', '\t':
		default:
			return false
		}
	}
	return dash
}

// cellCount counts the cells of a table row: unescaped pipes, not counting a
// leading or trailing one.
func cellCount(line []byte) int {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '|' {
		line = line[1:]
	}
	if len(line) > 0 && line[len(line)-1] == '|' && (len(line) < 2 || line[len(line)-2] != '\\') {
		line = line[:len(line)-1]
	}
	n := 1
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// definitionRE matches a link reference definition: [label]: target "title".
var definitionRE = regexp.MustCompile(`^\[([^\]^][^\]]*)\]:[ \t]*(<[^<>\n]*>|\S+)(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*$`)

func (s *scanner) definition(p, end int) bool {
	if s.src[p] != '[' {
		return false
	}
	m := definitionRE.FindSubmatch(s.src[p:end])
	if m == nil {
		return false
	}
	s.endPara()
	target := string(m[2])
	if len(target) >= 2 && target[0] == '<' && target[len(target)-1] == '>' {
		target = target[1 : len(target)-1]
	}
	s.emit(token{kind: tLink, line: s.line, text: unescapeTarget(target), extra: string(m[1])})
	return true
}

// isESMStart reports whether a line starts an import or export statement.
func isESMStart(line []byte) bool {
	for _, kw := range [...]string{"import", "export"} {
		if bytes.HasPrefix(line, []byte(kw)) && len(line) > len(kw) && (line[len(kw)] == ' ' || line[len(kw)] == '\t') {
			return true
		}
	}
	return false
}

// esm consumes an import/export block: like MDX it runs to a blank line, and
// past it while the JavaScript is unfinished.
func (s *scanner) esm(start int) {
	line := s.line
	p := start
	var e int
	for {
		e = lineEnd(s.src, p)
		if e >= len(s.src) || blankLineAt(s.src, e) {
			if !jsIncomplete(s.src[start:e]) {
				break
			}
			if e >= len(s.src) {
				s.problem(line, "import/export statement is never finished (check its brackets, quotes and comments)")
				break
			}
		}
		p = e + 1
	}
	for _, m := range importRE.FindAllSubmatch(s.src[start:e], -1) {
		s.emit(token{kind: tImport, line: line, text: string(m[1]), extra: string(m[3])})
	}
	s.advance(e)
	s.nextLine()
}

// importRE matches a default import of a Markdown file.
var importRE = regexp.MustCompile(`(?m)^[ \t]*import[ \t]+([A-Za-z_$][\w$]*)[ \t]+from[ \t]+(['"])([^'"\n]+\.mdx?)['"]`)

// flowLine reports whether the line at p holds only JSX tags, expressions and
// whitespace; then MDX reads the tags as blocks, not as text in a paragraph.
func (s *scanner) flowLine(p int) bool {
	if s.deadEnd {
		return false
	}
	src := s.src
	for {
		for p < len(src) && (src[p] == ' ' || src[p] == '\t') {
			p++
		}
		if p >= len(src) || src[p] == '\n' {
			return true
		}
		switch src[p] {
		case '<':
			if bytes.HasPrefix(src[p:], []byte("<!--")) {
				e := bytes.Index(src[p:], []byte("-->"))
				if e < 0 {
					return false
				}
				p += e + 3
				continue
			}
			t, err := parseTag(src, p)
			if err != nil {
				return false
			}
			p = t.end
		case '{':
			e, ok := exprEnd(src, p)
			if !ok {
				return false
			}
			p = e
		default:
			return false
		}
	}
}

// flowConstructs reads the tags and expressions of a line that flowLine accepted.
func (s *scanner) flowConstructs(p int) {
	s.advance(p)
	for s.pos < len(s.src) && s.src[s.pos] != '\n' {
		switch s.src[s.pos] {
		case '<':
			if bytes.HasPrefix(s.src[s.pos:], []byte("<!--")) {
				s.htmlComment()
				continue
			}
			t, _ := parseTag(s.src, s.pos)
			s.tag(t, true)
		case '{':
			e, _ := exprEnd(s.src, s.pos)
			s.emit(token{kind: tExpr, line: s.line, text: string(s.src[s.pos+1 : e-1]), flow: true})
			s.advance(e)
		default:
			s.advance(s.pos + 1)
		}
	}
}

func (s *scanner) htmlComment() {
	e := bytes.Index(s.src[s.pos:], []byte("-->"))
	if e < 0 {
		s.problem(s.line, "HTML comment <!-- is never closed; MDX does not support HTML comments anyway (use {/* … */})")
		s.advance(len(s.src))
		return
	}
	s.problem(s.line, "HTML comments are not supported in MDX (use {/* … */} instead of <!-- … -->)")
	s.advance(s.pos + e + 3)
}

// tag records a parsed tag: it emits a token and keeps the stack of open
// elements, reporting closing tags that do not match.
func (s *scanner) tag(t tag, flow bool) {
	line := s.line
	kind := tOpen
	if t.closing {
		kind = tClose
	}
	s.emit(token{kind: kind, line: line, flow: flow, self: t.self, text: t.name, attrs: t.attrs})
	s.advance(t.end)
	if isVoid(t.name) || t.self {
		return
	}
	ctx := s.ctx
	if flow {
		ctx = 0
	}
	if !t.closing {
		s.stack = append(s.stack, openTag{name: t.name, line: line, ctx: ctx})
		s.open[t.name]++
		return
	}
	s.closeTag(t.name, line, ctx)
}

func (s *scanner) closeTag(name string, line, ctx int) {
	show := "<" + name + ">"
	closing := "</" + name + ">"
	if name == "" {
		show, closing = "fragment <>", "</>"
	}
	n := len(s.stack)
	if n > 0 && s.stack[n-1].name == name {
		top := s.stack[n-1]
		s.pop(n - 1)
		switch {
		case top.ctx == 0 && ctx != 0:
			s.problem(line, closing+" closes "+show+" from line "+strconv.Itoa(top.line)+", which stands on a line of its own, but "+closing+" is inside a paragraph: put "+closing+" on a line of its own")
		case top.ctx != ctx:
			s.problem(line, closing+" closes "+show+" from line "+strconv.Itoa(top.line)+" outside the paragraph it was opened in")
		}
		return
	}
	for k := n - 2; k >= 0 && s.open[name] > 0; k-- {
		if s.stack[k].name != name {
			continue
		}
		for j := n - 1; j > k; j-- {
			o := s.stack[j]
			s.problem(o.line, "<"+o.name+"> is never closed (add </"+o.name+"> before "+closing+" on line "+strconv.Itoa(line)+")")
		}
		s.pop(k)
		return
	}
	if s.orphans[name] > 0 {
		s.orphans[name]--
		return
	}
	if n == 0 {
		s.problem(line, closing+" has no matching "+show+" (remove it, or add "+show+" where the element starts)")
		return
	}
	top := s.stack[n-1]
	s.problem(line, closing+" does not match the open <"+top.name+"> from line "+strconv.Itoa(top.line)+" (close <"+top.name+"> first, or fix the tag name)")
}

// pop removes the elements from stack[k] up.
func (s *scanner) pop(k int) {
	for _, t := range s.stack[k:] {
		s.open[t.name]--
	}
	s.stack = s.stack[:k]
}

// isVoid reports whether an HTML element never has content, so that <br> and
// <img …> need no closing tag.
func isVoid(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr":
		return true
	}
	return false
}
