package search

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/docs/mdx"
)

// Chunk sizes, in bytes of plain text. A chunk is a heading's section
// together with its small subsections; sections longer than maxChunk are cut
// at line (paragraph, list item, table row, code line) boundaries, each part
// repeating up to overlapChunk bytes of the previous one so that a sentence
// cut in two is still found whole. A cut avoids the inside of a code block or
// table unless the block alone is too long for a chunk.
const (
	maxChunk     = 1500
	minChunk     = 300
	overlapChunk = 200
)

// chunkerVersion goes into every page hash, so that a change to how pages are
// cut re-indexes every page.
const chunkerVersion = "2"

// Chunks cuts every indexable page of the site (docs.Site.Indexable) into
// chunks. siteURL is the site's public URL, for the chunks' links.
func Chunks(site *docs.Site, siteURL string) []Chunk {
	base := strings.TrimRight(siteURL, "/")
	var out []Chunk
	for _, np := range site.Indexable() {
		p := site.Pages[np.Path]
		if p == nil {
			continue
		}
		out = append(out, pageChunks(site, np, p, base)...)
	}
	return out
}

// unit is a section of a page before chunks are formed.
type unit struct {
	heading, anchor string
	level           int
	path            []string // headings from the page's top level down to this one
	text            string
	lines           []mdx.Line // text and Markdown, line by line
}

// prepend puts lines before the unit's own.
func (u *unit) prepend(lines ...mdx.Line) {
	u.lines = append(lines, u.lines...)
	u.text = joinLines(linesText(lines), u.text)
}

func (u unit) size() int { return len(u.heading) + 1 + len(u.text) }

func pageChunks(site *docs.Site, np docs.NavPage, p *docs.Page, base string) []Chunk {
	title := pageTitle(p)
	units := pageUnits(site, p, base)
	if p.Description != "" && !strings.Contains(units[0].text, p.Description) {
		units[0].prepend(mdx.Line{Text: p.Description, Markdown: strings.TrimSpace(p.Description), Sep: "\n\n"})
	}

	tmpl := Chunk{
		PagePath:  p.Path,
		PageTitle: title,
		Version:   np.Version,
		Language:  np.Language,
		Groups:    stringList(p.FrontMatter["groups"]),
		Keywords:  pageKeywords(site, p),
		Boost:     frontMatterBoost(p.FrontMatter),
	}
	var chunks []Chunk
	ids := map[string]bool{}
	emit := func(first unit, pc piece, part int) {
		c := tmpl
		c.Anchor = first.anchor
		c.Heading = first.heading
		c.Text = pc.text
		c.Overlap = pc.overlap
		c.Markdown = pc.md
		c.MarkdownOverlap = pc.mdOverlap
		c.Seq = len(chunks)
		c.Breadcrumb = append(append(append([]string(nil), np.Breadcrumb...), title), first.path...)
		c.ID = p.Path
		if first.anchor != "" {
			c.ID += "#" + first.anchor
		}
		if part > 0 {
			c.ID += "~" + strconv.Itoa(part+1)
		}
		// A heading without a slug ("## 🎉") has no anchor, like the
		// page's top: number it to keep IDs unique.
		for k := 2; ids[c.ID]; k++ {
			c.ID = fmt.Sprintf("%s~s%d", strings.SplitN(c.ID, "~s", 2)[0], k)
		}
		ids[c.ID] = true
		c.URL = base + "/" + p.Path
		if first.anchor != "" {
			c.URL += "#" + first.anchor
		}
		chunks = append(chunks, c)
	}

	for i := 0; i < len(units); {
		first := units[i]
		size := first.size()
		j := i + 1
		for j < len(units) {
			u := units[j]
			if size+u.size() > maxChunk || (size >= minChunk && u.level <= first.level) {
				break
			}
			size += u.size()
			j++
		}
		var lines []mdx.Line
		if first.heading != "" {
			lines = append(lines, headingLine(first, false))
		}
		lines = append(lines, first.lines...)
		text := first.text
		for _, u := range units[i+1 : j] {
			text = joinLines(text, joinLines(u.heading, u.text))
			lines = append(append(lines, headingLine(u, true)), u.lines...)
		}
		if strings.TrimSpace(text) == "" && first.heading == "" && len(units) > 1 {
			i = j
			continue
		}
		for part, pc := range splitLines(text, lines) {
			emit(first, pc, part)
		}
		i = j
	}
	if len(chunks) == 0 {
		emit(unit{}, piece{}, 0)
	}
	hash := pageHash(chunks)
	for k := range chunks {
		chunks[k].PageHash = hash
	}
	return chunks
}

// headingLine is a section's heading as a Line: in the Markdown only for the
// section that starts a chunk (the chunk's Heading holds it), in both for a
// subsection merged into it.
func headingLine(u unit, inText bool) mdx.Line {
	l := mdx.Line{Markdown: strings.Repeat("#", max(u.level, 1)) + " " + u.heading, Sep: "\n\n"}
	if inText {
		l.Text = u.heading
	}
	return l
}

// pageUnits returns the page's sections; an API page's operation, when the
// spec has it, comes first. Links to the site are made absolute with base.
func pageUnits(site *docs.Site, p *docs.Page, base string) []unit {
	secs := mdx.Render(p.Body, mdx.Options{Resolve: site.Snippet, SiteURL: base, PagePath: p.Path})
	units := make([]unit, 0, len(secs))
	var stack []unit // open headings by level
	for _, s := range secs {
		u := unit{heading: s.Heading, anchor: s.Anchor, level: s.Level, text: s.Text, lines: s.Lines}
		if s.Heading != "" {
			for len(stack) > 0 && stack[len(stack)-1].level >= s.Level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, u)
			for _, h := range stack {
				u.path = append(u.path, h.heading)
			}
		}
		units = append(units, u)
	}
	if len(units) == 0 || units[0].heading != "" {
		units = append([]unit{{}}, units...)
	}
	if op, ok := site.Operation(p); ok {
		units[0].prepend(operationLines(op)...)
	}
	return units
}

// operationLines is what an API page shows from its OpenAPI operation: the
// method and path, summary, description, parameters, request body and
// responses, as plain text and as Markdown (descriptions are Markdown in
// OpenAPI; fields become definition lines as <ParamField> does).
func operationLines(op *docs.Operation) []mdx.Line {
	var out []mdx.Line
	line := func(md string, parts ...string) {
		var kept []string
		for _, s := range parts {
			if s = strings.TrimSpace(s); s != "" {
				kept = append(kept, s)
			}
		}
		if len(kept) > 0 {
			out = append(out, mdx.Line{Text: strings.Join(kept, " "), Markdown: md, Sep: "\n\n"})
		}
	}
	code := func(s string) string {
		if s = oneLine(s); s == "" {
			return ""
		}
		return "`" + strings.ReplaceAll(s, "`", "'") + "`"
	}
	line(strings.TrimSpace("**"+op.Method+"** "+code(op.Path)), op.Method, op.Path)
	line(oneLine(op.Summary), op.Summary)
	line(strings.TrimSpace(op.Description), oneLine(op.Description))
	if op.Deprecated {
		line("**Deprecated.**", "Deprecated.")
	}
	field := func(name, in, typ string, required bool, desc string) {
		var attrs, notes []string
		for _, a := range []string{in, typ} {
			if a != "" {
				attrs = append(attrs, a)
			}
		}
		if in != "" {
			notes = append(notes, in)
		}
		if required {
			attrs = append(attrs, "required")
			notes = append(notes, "required")
		}
		head := name
		if len(attrs) > 0 {
			head += " (" + strings.Join(attrs, ", ") + ")"
		}
		md := "- **" + code(name) + "**"
		if typ != "" {
			md += " " + code(typ)
		}
		if len(notes) > 0 {
			md += " (" + strings.Join(notes, ", ") + ")"
		}
		if desc = oneLine(desc); desc != "" {
			head += ": " + desc
			md += " — " + desc
		}
		n := len(out)
		line(md, head)
		if n > 0 && len(out) > n && strings.HasPrefix(out[n-1].Markdown, "- ") {
			out[n].Sep = "\n" // one list
		}
	}
	if len(op.Parameters) > 0 {
		line("**Parameters**", "Parameters")
		for _, prm := range op.Parameters {
			field(prm.Name, prm.In, prm.Type, prm.Required, prm.Description)
		}
	}
	if rb := op.RequestBody; rb != nil {
		types := strings.Join(rb.ContentTypes, ", ")
		md := "**Request body**"
		if types != "" {
			md += " (" + code(types) + ")"
		}
		line(md, "Request body", types)
		line(strings.TrimSpace(rb.Description), oneLine(rb.Description))
		for _, f := range rb.Fields {
			field(f.Name, "", f.Type, f.Required, f.Description)
		}
	}
	for _, r := range op.Responses {
		md := "**Response " + code(r.Status) + "**"
		if d := oneLine(r.Description); d != "" {
			md += " — " + d
		}
		line(md, "Response", r.Status+":", oneLine(r.Description))
		for _, f := range r.Fields {
			field(f.Name, "", f.Type, f.Required, f.Description)
		}
	}
	return out
}

// linesText is the plain text of lines, one line per non-empty Text.
func linesText(lines []mdx.Line) string {
	var b strings.Builder
	for _, l := range lines {
		if l.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.Text)
	}
	return b.String()
}

// lineSize is what a line adds to a chunk's plain text.
func lineSize(l mdx.Line) int {
	if l.Text == "" {
		return 0
	}
	return len(l.Text) + 1
}

// mdSkipped reports whether a line adds nothing to the Markdown: plain text
// without Markdown of its own (a component's prop, part of a long line). An
// empty line of code is kept.
func mdSkipped(l mdx.Line) bool {
	return l.Markdown == "" && (l.Group == 0 || l.Text != "")
}

// piece is one part of a chunk: its text and Markdown, and how many bytes at
// the start of each repeat the part before.
type piece struct {
	text, md           string
	overlap, mdOverlap int
}

// makePiece joins lines, the first carried of them repeating the end of the
// part before, into a piece. A part that starts inside a code block or table
// reopens it first (its fence, or header and delimiter rows), and one that
// ends inside a code block closes it, so that each chunk is valid Markdown on
// its own. The reopening counts as overlap: MarkdownOverlap ends where the
// separator before the first new line starts, so that the Markdown of a page
// is the first chunk's followed by each next chunk's from MarkdownOverlap on
// (after dropping the closing fence the chunk before added, see
// AssemblePage).
func makePiece(lines []mdx.Line, carried, overlap int) piece {
	pc := piece{text: linesText(lines), overlap: overlap}
	pc.md, pc.mdOverlap = joinMarkdown(lines, carried)
	return pc
}

// joinMarkdown is the Markdown of a part made of lines, and where the
// Markdown of its first line not carried from the part before starts.
func joinMarkdown(lines []mdx.Line, carried int) (md string, overlap int) {
	var b strings.Builder
	size := 0
	for _, l := range lines {
		size += len(l.Markdown) + len(l.Sep)
	}
	b.Grow(size + 64)
	if len(lines) > 0 && lines[0].Open != "" {
		b.WriteString(lines[0].Open)
	}
	for i, l := range lines {
		if i == carried && b.Len() > 0 {
			overlap = b.Len()
		}
		if mdSkipped(l) {
			continue
		}
		if b.Len() > 0 {
			if i == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteString(l.Sep)
			}
		}
		b.WriteString(l.Markdown)
	}
	if n := len(lines); n > 0 && lines[n-1].Close != "" {
		b.WriteString("\n" + lines[n-1].Close)
	}
	return b.String(), overlap
}

// markdownOf joins the lines' Markdown with their separators.
func markdownOf(lines []mdx.Line) string {
	md, _ := joinMarkdown(lines, 0)
	return md
}

// splitLines cuts lines whose text (text) is longer than maxChunk into parts at line
// boundaries (a line too long on its own at spaces), each part after the
// first starting with the last lines (up to overlapChunk bytes of text) of
// the previous part. A cut inside a code block or table moves back to the
// block's start when the block fits in a part.
func splitLines(text string, lines []mdx.Line) []piece {
	if len(text) <= maxChunk {
		return []piece{{text: text, md: markdownOf(lines)}}
	}
	lines = cutLongLines(lines, maxChunk-overlapChunk)
	groupSize := map[int]int{}
	for _, l := range lines {
		if l.Group != 0 {
			groupSize[l.Group] += lineSize(l)
		}
	}
	var out []piece
	var cur []mdx.Line
	curLen, overlap, carried := 0, 0, 0
	flush := func(n int) {
		part := cur[:n]
		out = append(out, makePiece(part, carried, overlap))
		// Carry the last lines that fit in the overlap.
		k, size := len(part), 0
		for k > 0 && size+lineSize(part[k-1]) <= overlapChunk {
			size += lineSize(part[k-1])
			k--
		}
		if k == 0 {
			k, size = len(part), 0
		}
		rest := cur[n:]
		next := make([]mdx.Line, 0, len(part)-k+len(rest)+8)
		next = append(append(next, part[k:]...), rest...)
		cur, carried, overlap = next, len(part)-k, size
		curLen = size
		for _, l := range rest {
			curLen += lineSize(l)
		}
	}
	for _, l := range lines {
		size := lineSize(l)
		if curLen+size > maxChunk && curLen > overlap {
			n := len(cur)
			if l.Open != "" && groupSize[l.Group] <= maxChunk-overlapChunk {
				g := n
				for g > 0 && cur[g-1].Group == l.Group {
					g--
				}
				if g > carried && textSize(cur[:g]) > overlap {
					n = g
				}
			}
			flush(n)
		}
		cur = append(cur, l)
		curLen += size
	}
	if curLen > overlap {
		out = append(out, makePiece(cur, carried, overlap))
	}
	return out
}

func textSize(lines []mdx.Line) int {
	n := 0
	for _, l := range lines {
		n += lineSize(l)
	}
	return n
}

// cutLongLines cuts each line whose text holds a line longer than max into
// one line per piece of text (at spaces, or anywhere for text without
// spaces). A paragraph's Markdown is cut into as many pieces; the Markdown of
// code or a table row stays whole on the first piece, so that code keeps its
// bytes.
func cutLongLines(lines []mdx.Line, max int) []mdx.Line {
	if !slices.ContainsFunc(lines, func(l mdx.Line) bool { return len(l.Text) > max }) {
		return lines
	}
	var out []mdx.Line
	for _, l := range lines {
		long := false
		for _, t := range strings.Split(l.Text, "\n") {
			long = long || len(t) > max
		}
		if !long {
			out = append(out, l)
			continue
		}
		var texts []string
		for _, t := range strings.Split(l.Text, "\n") {
			texts = append(texts, splitLong(t, max)...)
		}
		mds := []string{l.Markdown}
		if l.Group == 0 {
			mds = cutInto(l.Markdown, len(texts))
		}
		for i, t := range texts {
			p := l
			p.Text = t
			p.Markdown = ""
			if i < len(mds) {
				p.Markdown = mds[i]
			}
			if i > 0 {
				p.Sep = "\n"
				if l.Group == 0 {
					p.Sep = " "
				}
			}
			out = append(out, p)
		}
	}
	return out
}

// cutInto cuts s into n pieces of about equal length, at spaces where it
// can, on UTF-8 boundaries.
func cutInto(s string, n int) []string {
	var out []string
	for i := n; i > 1 && s != ""; i-- {
		at := len(s) / i
		cut := strings.LastIndexByte(s[:at], ' ')
		if cut <= at/2 {
			cut = at
			for cut > 0 && !isRuneStart(s[cut]) {
				cut--
			}
		}
		out = append(out, s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(out, s)
}

// splitLong cuts a line longer than max at spaces (or anywhere, for a line
// without spaces), on UTF-8 boundaries.
func splitLong(line string, max int) []string {
	var out []string
	for len(line) > max {
		cut := strings.LastIndexByte(line[:max], ' ')
		if cut <= max/2 {
			cut = max
			for cut > 0 && !isRuneStart(line[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimSpace(line[:cut]))
		line = strings.TrimSpace(line[cut:])
	}
	return append(out, line)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// pageTitle is the page's title, its sidebar title, or failing both a title
// made from its path.
func pageTitle(p *docs.Page) string {
	switch {
	case p.Title != "":
		return p.Title
	case p.SidebarTitle != "":
		return p.SidebarTitle
	}
	base := path.Base(p.Path)
	return strings.ReplaceAll(base, "-", " ")
}

// pageKeywords is the page-level text searched with every chunk of the page.
func pageKeywords(site *docs.Site, p *docs.Page) string {
	var parts []string
	if p.SidebarTitle != "" && p.SidebarTitle != p.Title {
		parts = append(parts, p.SidebarTitle)
	}
	parts = append(parts, p.Description)
	parts = append(parts, stringList(p.FrontMatter["keywords"])...)
	// The path's words ("help-center/static-file-not-served") often name
	// the page better than its title.
	parts = append(parts, strings.NewReplacer("/", " ", "-", " ", "_", " ").Replace(p.Path))
	if op, ok := site.Operation(p); ok {
		parts = append(parts, op.Method+" "+op.Path, op.OperationID, op.Summary)
		parts = append(parts, op.Tags...)
	}
	var kept []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			kept = append(kept, s)
		}
	}
	return strings.Join(kept, "\n")
}

// frontMatterBoost is the page's "boost" front matter (a positive number),
// or 0.
func frontMatterBoost(fm map[string]any) float64 {
	var f float64
	switch v := fm["boost"].(type) {
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case uint64:
		f = float64(v)
	case float64:
		f = v
	case string:
		f, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	if f <= 0 {
		return 0
	}
	return f
}

// stringList reads a front matter value that is a string or a list of
// strings.
func stringList(v any) []string {
	switch v := v.(type) {
	case string:
		if s := strings.TrimSpace(v); s != "" {
			return []string{s}
		}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			} else if e != nil && !ok {
				out = append(out, fmt.Sprint(e))
			}
		}
		return out
	case []string:
		return v
	}
	return nil
}

func joinLines(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// pageHash identifies the content of a page's chunks.
func pageHash(chunks []Chunk) string {
	h := sha256.New()
	h.Write([]byte(chunkerVersion))
	enc := json.NewEncoder(h)
	for _, c := range chunks {
		c.PageHash = ""
		_ = enc.Encode(c)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
