package assistant

import (
	"math/bits"
	"strings"

	"github.com/docsmith/docsmith/internal/mdblock"
)

// quote is what an extractive answer quotes of a passage: lines of its
// text, and whether lines were left out before and after them.
type quote struct {
	// head holds the first lines of a code block or table (its opening
	// fence, or its header and delimiter rows) when the quote starts
	// inside it, past them.
	head                string
	lines               string
	cutBefore, cutAfter bool
	// closeFence closes a code block the quote cuts before its end.
	closeFence string
	// blocks is set when the quote starts or ends in a code block or a
	// table, which the "…" lines must not run into.
	blocks bool
}

// ellipsis is the line that stands for lines left out.
const ellipsis = "…"

// write writes the quote as a Markdown block quote, "…" for the lines
// left out, apart from a code block or a table by a blank line.
func (q quote) write(b *strings.Builder) {
	if q.cutBefore {
		writeQuoteLine(b, ellipsis)
		if q.blocks {
			writeQuoteLine(b, "")
		}
	}
	if q.head != "" {
		for line := range strings.SplitSeq(q.head, "\n") {
			writeQuoteLine(b, line)
		}
	}
	for line := range strings.SplitSeq(q.lines, "\n") {
		writeQuoteLine(b, line)
	}
	if q.closeFence != "" {
		writeQuoteLine(b, q.closeFence)
	}
	if q.cutAfter {
		if q.blocks {
			writeQuoteLine(b, "")
		}
		writeQuoteLine(b, ellipsis)
	}
}

// size is about the bytes write writes, for growing a builder once.
func (q quote) size() int {
	n := len(q.head) + len(q.lines)
	return n + 3*(strings.Count(q.head, "\n")+strings.Count(q.lines, "\n")+2) + 2*(len(ellipsis)+3) + len(q.closeFence) + 8
}

func writeQuoteLine(b *strings.Builder, line string) {
	if line = strings.TrimRight(line, " \t"); line == "" {
		b.WriteString(">\n")
		return
	}
	b.WriteString("> ")
	b.WriteString(line)
	b.WriteByte('\n')
}

// excerpt quotes text: all of it when it is at most max bytes long, and
// otherwise a window of whole lines of about max bytes centred on the
// lines that hold the most of the question's words (by weight, a word
// counted once, a table row holding its header's words): the shortest run
// of lines holding them, grown a line at a time after and before while it
// fits. Code blocks and tables are kept
// whole where they can be: a quote that would start inside one starts with
// its opening fence, or with a table's header and delimiter rows, and one
// that would end inside a code block takes the rest of it when that is
// short and otherwise closes it; a table ending the quote is cut between
// rows, after its first row at least.
func excerpt(text string, ts *termSet, max int) quote {
	if len(text) <= max {
		return quote{lines: text}
	}
	lines := strings.Split(text, "\n")
	spans := mdblock.Spans(lines)
	sizes, masks := lineMasks(lines, spans, ts)
	from, to := densestLines(sizes, masks, ts, max)
	size := sum(sizes[from:to])
	for grew := true; grew; {
		grew = false
		if to < len(lines) && size+sizes[to] <= max {
			size += sizes[to]
			to++
			grew = true
		}
		if from > 0 && size+sizes[from-1] <= max {
			from--
			size += sizes[from]
			grew = true
		}
	}
	var q quote
	// The start: a heading right above comes along; inside a block, the
	// block's start does, or its opening lines.
	if h := headingAbove(lines, spans, from); h >= 0 {
		from = h
	}
	if s, ok := mdblock.At(spans, from); ok && from > s.From {
		switch {
		case s.Kind == mdblock.Table && from <= s.From+1:
			from = s.From
		case s.Kind == mdblock.Table:
			q.head = strings.Join(lines[s.From:s.From+2], "\n")
		case sum(sizes[s.From:to]) <= max+max/2:
			from = s.From
		default:
			q.head = lines[s.From]
		}
	}
	// The end: a code block is finished or closed, a table keeps a row.
	if s, ok := mdblock.At(spans, to-1); ok && to-1 < s.To {
		switch {
		case s.Kind == mdblock.Table && to-1 < s.From+2:
			to = min(s.To, s.From+2) + 1
		case s.Kind == mdblock.Table:
			// Cut between rows, a table stays a table.
		case sum(sizes[from:s.To+1]) <= max+max/2:
			to = s.To + 1
		default:
			q.closeFence = s.Close
		}
	}
	if s, ok := mdblock.At(spans, to-1); ok && s.Kind == mdblock.Fence && !s.Closed && to-1 == s.To {
		q.closeFence = s.Close
	}
	// Nor does it start or end on blank lines, or end on a heading whose
	// section it leaves out.
	for to-1 > from && endsBare(lines[to-1]) {
		if _, inBlock := mdblock.At(spans, to-1); inBlock {
			break
		}
		to--
	}
	for from < to-1 && strings.TrimSpace(lines[from]) == "" {
		from++
	}
	q.cutBefore = from > 0
	q.cutAfter = to < len(lines)
	if to-from == 1 && len(lines[from]) > max {
		q.lines = clip(lines[from], max)
		q.head, q.closeFence = "", ""
		return q
	}
	_, startsInBlock := mdblock.At(spans, from)
	_, endsInBlock := mdblock.At(spans, to-1)
	q.blocks = startsInBlock || endsInBlock || q.closeFence != "" || q.head != ""
	q.lines = strings.Join(lines[from:to], "\n")
	return q
}

// lineMasks are the sizes of lines (with their line break) and the
// question's words each holds; a table's row is read under its header, so
// it holds the header's words too.
func lineMasks(lines []string, spans []mdblock.Span, ts *termSet) (sizes []int, masks []uint64) {
	sizes = make([]int, len(lines))
	masks = make([]uint64, len(lines))
	for i, l := range lines {
		sizes[i] = len(l) + 1
		masks[i] = ts.mask(l)
	}
	for _, s := range spans {
		if s.Kind == mdblock.Table {
			for r := s.From + 2; r <= s.To; r++ {
				masks[r] |= masks[s.From]
			}
		}
	}
	return sizes, masks
}

// densestLines finds the run of lines [from, to), at most max bytes long
// (a single line may be longer), whose question words weigh the most, the
// first of equals, and shortens it to the shortest run that holds the same
// words: no line at either end holds a word the rest lacks. A text without
// question words gives its first line.
func densestLines(sizes []int, masks []uint64, ts *termSet, max int) (from, to int) {
	var counts [maxTermBits]int
	add := func(m uint64, d int) (changed uint64) {
		for ; m != 0; m &= m - 1 {
			k := bits.TrailingZeros64(m)
			counts[k] += d
			if counts[k] == 0 || counts[k] == 1 && d > 0 {
				changed |= 1 << k
			}
		}
		return changed
	}
	var held uint64 // words of the window
	best := -1.0
	l, size := 0, 0
	for r := range masks {
		size += sizes[r]
		held |= add(masks[r], 1)
		for size > max && l < r {
			held &^= add(masks[l], -1)
			size -= sizes[l]
			l++
		}
		if s := ts.score(held) + repeated(&counts, held, ts); s > best {
			best, from, to = s, l, r+1
		}
	}
	if best <= 0 {
		return 0, 1
	}
	counts = [maxTermBits]int{}
	for _, m := range masks[from:to] {
		add(m, 1)
	}
	needed := func(m uint64) bool {
		for ; m != 0; m &= m - 1 {
			if counts[bits.TrailingZeros64(m)] == 1 {
				return true
			}
		}
		return false
	}
	for from < to-1 && !needed(masks[from]) {
		add(masks[from], -1)
		from++
	}
	for to-1 > from && !needed(masks[to-1]) {
		add(masks[to-1], -1)
		to--
	}
	return from, to
}

// repeated is what the words of a window held by more than one of its
// lines add to its score: a quarter of a word's weight for each line
// after the first, two at most, as a passage that keeps coming back to a
// word is about it.
func repeated(counts *[maxTermBits]int, held uint64, ts *termSet) float64 {
	s := 0.0
	for m := held; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		s += ts.weight[k] * float64(min(counts[k]-1, 2)) / 4
	}
	return s
}

// headingAbove is the line of the Markdown heading just above line i (a
// blank line between them allowed), or -1. A "#" line of code is no
// heading.
func headingAbove(lines []string, spans []mdblock.Span, i int) int {
	h := -1
	switch {
	case i >= 1 && strings.HasPrefix(lines[i-1], "#"):
		h = i - 1
	case i >= 2 && strings.TrimSpace(lines[i-1]) == "" && strings.HasPrefix(lines[i-2], "#"):
		h = i - 2
	}
	if _, inBlock := mdblock.At(spans, h); h >= 0 && inBlock {
		return -1
	}
	return h
}

// endsBare reports whether a quote ending on line would end bare: on a
// blank line or a Markdown heading.
func endsBare(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
