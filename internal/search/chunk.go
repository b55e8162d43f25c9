package search

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/docs/mdx"
)

// Chunk sizes, in bytes of text. A chunk is a heading's section together with
// its small subsections; sections longer than maxChunk are cut at line
// (paragraph) boundaries, each part repeating up to overlapChunk bytes of the
// previous one so that a sentence cut in two is still found whole.
const (
	maxChunk     = 1500
	minChunk     = 300
	overlapChunk = 200
)

// chunkerVersion goes into every page hash, so that a change to how pages are
// cut re-indexes every page.
const chunkerVersion = "1"

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
}

func (u unit) size() int { return len(u.heading) + 1 + len(u.text) }

func pageChunks(site *docs.Site, np docs.NavPage, p *docs.Page, base string) []Chunk {
	title := pageTitle(p)
	units := pageUnits(site, p)
	if p.Description != "" && !strings.Contains(units[0].text, p.Description) {
		units[0].text = joinLines(p.Description, units[0].text)
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
	emit := func(first unit, text string, part, overlap int) {
		c := tmpl
		c.Anchor = first.anchor
		c.Heading = first.heading
		c.Text = text
		c.Overlap = overlap
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
		text := first.text
		for _, u := range units[i+1 : j] {
			text = joinLines(text, joinLines(u.heading, u.text))
		}
		if strings.TrimSpace(text) == "" && first.heading == "" && len(units) > 1 {
			i = j
			continue
		}
		for part, piece := range splitText(text) {
			emit(first, piece.text, part, piece.overlap)
		}
		i = j
	}
	if len(chunks) == 0 {
		emit(unit{}, "", 0, 0)
	}
	hash := pageHash(chunks)
	for k := range chunks {
		chunks[k].PageHash = hash
	}
	return chunks
}

// pageUnits returns the page's sections; an API page's operation, when the
// spec has it, comes first.
func pageUnits(site *docs.Site, p *docs.Page) []unit {
	secs := mdx.Sections(p.Body, site.Snippet)
	units := make([]unit, 0, len(secs))
	var stack []unit // open headings by level
	for _, s := range secs {
		u := unit{heading: s.Heading, anchor: s.Anchor, level: s.Level, text: s.Text}
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
		units[0].text = joinLines(operationText(op), units[0].text)
	}
	return units
}

// operationText is what an API page shows from its OpenAPI operation.
func operationText(op *docs.Operation) string {
	var b strings.Builder
	line := func(parts ...string) {
		var kept []string
		for _, s := range parts {
			if s = strings.TrimSpace(s); s != "" {
				kept = append(kept, s)
			}
		}
		if len(kept) > 0 {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(strings.Join(kept, " "))
		}
	}
	line(op.Method, op.Path)
	line(op.Summary)
	line(oneLine(op.Description))
	if op.Deprecated {
		line("Deprecated.")
	}
	field := func(name, in, typ string, required bool, desc string) {
		var attrs []string
		for _, a := range []string{in, typ} {
			if a != "" {
				attrs = append(attrs, a)
			}
		}
		if required {
			attrs = append(attrs, "required")
		}
		head := name
		if len(attrs) > 0 {
			head += " (" + strings.Join(attrs, ", ") + ")"
		}
		if desc = oneLine(desc); desc != "" {
			head += ": " + desc
		}
		line(head)
	}
	if len(op.Parameters) > 0 {
		line("Parameters")
		for _, prm := range op.Parameters {
			field(prm.Name, prm.In, prm.Type, prm.Required, prm.Description)
		}
	}
	if rb := op.RequestBody; rb != nil {
		line("Request body", strings.Join(rb.ContentTypes, ", "))
		line(oneLine(rb.Description))
		for _, f := range rb.Fields {
			field(f.Name, "", f.Type, f.Required, f.Description)
		}
	}
	for _, r := range op.Responses {
		line("Response", r.Status+":", oneLine(r.Description))
		for _, f := range r.Fields {
			field(f.Name, "", f.Type, f.Required, f.Description)
		}
	}
	return b.String()
}

// piece is one part of a chunk's text.
type piece struct {
	text    string
	overlap int
}

// splitText cuts text longer than maxChunk at line boundaries (inside a
// line, at spaces), each part after the first starting with the last lines
// (up to overlapChunk bytes) of the previous part.
func splitText(text string) []piece {
	if len(text) <= maxChunk {
		return []piece{{text: text}}
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, splitLong(l, maxChunk-overlapChunk)...)
	}
	var out []piece
	var cur []string
	curLen, overlap := 0, 0
	flush := func() {
		out = append(out, piece{text: strings.Join(cur, "\n"), overlap: overlap})
		// Carry the last lines that fit in the overlap.
		var carry []string
		n := 0
		for k := len(cur) - 1; k >= 0 && n+len(cur[k])+1 <= overlapChunk; k-- {
			carry = append([]string{cur[k]}, carry...)
			n += len(cur[k]) + 1
		}
		if len(carry) == len(cur) {
			carry = nil
			n = 0
		}
		cur, curLen, overlap = carry, n, n
	}
	for _, l := range lines {
		if curLen+len(l)+1 > maxChunk && curLen > overlap {
			flush()
		}
		cur = append(cur, l)
		curLen += len(l) + 1
	}
	if curLen > overlap {
		out = append(out, piece{text: strings.Join(cur, "\n"), overlap: overlap})
	}
	return out
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
