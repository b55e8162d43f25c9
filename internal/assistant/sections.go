package assistant

import (
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/docs/mdx"
	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search"
)

// maxPageBytes bounds how much of a page an extractive answer reads to find
// its sections: a page is input from outside, and its sections past this
// are left out.
const maxPageBytes = 256 << 10

// section is a heading and its body in a page's Markdown, up to the next
// heading of any level: its subsections are sections of their own.
type section struct {
	heading string // "" for the page's top, before the first heading
	anchor  string
	level   int
	// parent is the section this one is a subsection of, or -1.
	parent int
	// from and to are the body's lines [from, to) in the page's lines.
	from, to int
	// head and body are the question's words in the heading and the body.
	head, body uint64
}

// pageSections is one page cut into sections.
type pageSections struct {
	lines    []string
	sections []section
	// sizes and masks are each line's bytes and question words (lineMasks).
	sizes []int
	masks []uint64
	// title is the question's words in the page's title.
	title uint64
}

// splitSections cuts a page's Markdown (search.PageText.Content: the title
// as a level-1 heading, then the sections under their headings) into
// sections, each with the anchor the index gives its heading (mdx.Slug,
// made unique within the page as the docs are), and marks the question's
// words in each. Lines starting with "#" inside code blocks are code, not
// headings.
func splitSections(content string, ts *termSet) pageSections {
	if len(content) > maxPageBytes {
		content = content[:maxPageBytes]
		if i := strings.LastIndexByte(content, '\n'); i > 0 {
			content = content[:i]
		}
	}
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	start := 0
	if len(lines) > 0 && strings.HasPrefix(lines[0], "# ") {
		start = 1 // the page title
	}
	spans := mdblock.Spans(lines)
	sizes, masks := lineMasks(lines, spans, ts)
	p := pageSections{lines: lines, sizes: sizes, masks: masks}
	if start == 1 {
		p.title = masks[0]
	}
	seen := map[string]int{}
	cur := section{parent: -1, from: start}
	var open []int // sections of the headings above, by level
	next := 0      // the first span not behind line i
	for i := start; i < len(lines); i++ {
		for next < len(spans) && spans[next].To < i {
			next++
		}
		if next < len(spans) && spans[next].From <= i {
			for ; i <= spans[next].To; i++ {
				cur.body |= masks[i]
			}
			i = spans[next].To
			continue
		}
		level, heading := headingLine(lines[i])
		if level == 0 {
			cur.body |= masks[i]
			continue
		}
		cur.to = i
		p.sections = append(p.sections, cur)
		for len(open) > 0 && p.sections[open[len(open)-1]].level >= level {
			open = open[:len(open)-1]
		}
		parent := -1
		if len(open) > 0 {
			parent = open[len(open)-1]
		}
		open = append(open, len(p.sections))
		cur = section{heading: heading, anchor: uniqueAnchor(seen, mdx.Slug(heading)), level: level, parent: parent,
			from: i + 1, head: ts.mask(heading)}
	}
	cur.to = len(lines)
	p.sections = append(p.sections, cur)
	return p
}

// headingLine reads a Markdown heading line: "## Heading" is level 2.
func headingLine(line string) (level int, heading string) {
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level == len(line) || line[level] != ' ' {
		return 0, ""
	}
	return level, strings.TrimSpace(line[level:])
}

// uniqueAnchor makes an anchor unique within a page as the docs do: the
// second "overview" is "overview-2".
func uniqueAnchor(seen map[string]int, a string) string {
	n, ok := seen[a]
	if !ok {
		seen[a] = 1
		return a
	}
	for {
		n++
		c := a + "-" + strconv.Itoa(n)
		if _, taken := seen[c]; !taken {
			seen[a] = n
			seen[c] = 1
			return c
		}
	}
}

// useHitAnchors gives a section the anchor a retrieved chunk of the page
// has for its heading when the page's headings do not make it: a heading
// with a custom id ("## Setup {#install}").
func (p *pageSections) useHitAnchors(hits []search.Hit) {
	for _, h := range hits {
		if h.Anchor == "" || p.hasAnchor(h.Anchor) {
			continue
		}
		for i := range p.sections {
			if p.sections[i].heading == h.Heading {
				p.sections[i].anchor = h.Anchor
				break
			}
		}
	}
}

func (p *pageSections) hasAnchor(a string) bool {
	for _, s := range p.sections {
		if s.anchor == a {
			return true
		}
	}
	return false
}

// whole adds a section that is the whole page, from its top, to the
// page's sections, and returns its index: a quote of it is the page's
// start, cited as the page.
func (p *pageSections) whole() int {
	s := section{parent: -1, to: len(p.lines)}
	if len(p.sections) > 0 {
		s.from = p.sections[0].from
	}
	for _, o := range p.sections {
		s.head |= o.head
		s.body |= o.body
	}
	p.sections = append(p.sections, s)
	return len(p.sections) - 1
}

// text is a section's body as Markdown, without the blank lines around it.
func (p *pageSections) text(s section) string {
	from, to := s.from, s.to
	for from < to && strings.TrimSpace(p.lines[from]) == "" {
		from++
	}
	for to > from && strings.TrimSpace(p.lines[to-1]) == "" {
		to--
	}
	return strings.Join(p.lines[from:to], "\n")
}

// hasBody reports whether a section has more than its heading.
func (p *pageSections) hasBody(s section) bool {
	for _, l := range p.lines[s.from:s.to] {
		if strings.TrimSpace(l) != "" {
			return true
		}
	}
	return false
}

// score is how well a section answers: the weight of the question's words
// in its heading and in the part of its body a quote shows (the densest
// lines, see excerpt), a word in the heading counting half again when no
// other heading of the page holds it (a heading says what its section is
// about, unless the page's headings all say it), and half the weight of
// the words only the headings above it hold ("Install" under "Windows").
// A long section does not win by holding the question's words far apart.
func (p *pageSections) score(i int, ts *termSet) float64 {
	s := p.sections[i]
	// Words of the page's title are what the whole page is about: every
	// section has them, so they tell none apart.
	own := p.shown(i, ts) &^ p.title
	var above, others uint64
	for j := s.parent; j >= 0; j = p.sections[j].parent {
		above |= p.sections[j].head
	}
	for j, o := range p.sections {
		if j != i {
			others |= o.head
		}
	}
	return ts.score(own) + ts.score(s.head&^others&^p.title)/2 + ts.score(above&^own&^p.title)/2
}

// shown are the question's words a quote of section i shows: those of its
// heading and of the densest lines of its body (see excerpt).
func (p *pageSections) shown(i int, ts *termSet) uint64 {
	s := p.sections[i]
	own := s.head
	if s.from < s.to {
		from, to := densestLines(p.sizes[s.from:s.to], p.masks[s.from:s.to], ts, maxExtractiveChars)
		for _, m := range p.masks[s.from+from : s.from+to] {
			own |= m
		}
	}
	return own
}
