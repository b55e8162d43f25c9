package assistant

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// groundedSpan is the grounding of one segment of an answer's text block:
// its span in UTF-16 code units of the block as sent (as JavaScript indexes
// it), the ids of the passages it was checked against, and the groundVerdict.
type groundedSpan struct {
	start, end int
	sources    []string
	supported  bool
	missing    []string
}

// groundingStats count what the grounder judged in one answer.
type groundingStats struct {
	// claims are the segments with something to check; supported of them
	// were backed by their passages, cited ones carried or inherited a
	// marker.
	claims, supported, supportedCited int
	// left are the unsupported segments strict mode left out; kept are the
	// claims it sent.
	left, kept int
	// declines are the sentences saying that the passages do not answer.
	declines []string
}

// grounder follows a model's answer, after the citation filter, sentence
// by sentence. In mark mode the text passes on at once and each settled
// sentence's grounding follows it; in strict mode a sentence is held until
// it is settled and judged, and sent only if its passages back it (or it
// makes no claim: a heading, a sentence saying the docs do not cover
// something).
//
// A sentence without a marker is judged against the citations of the next
// cited sentence on its line (a model often cites once at a paragraph's
// end: "A. B [1]."), else of the last cited segment before it, else of the
// first cited one after it; with none at all, against no passage. A code
// block without a marker takes the last citations before it, else the
// first after it.
type grounder struct {
	passages      []groundedPassage // passage n is passages[n-1]
	strict        bool
	emitText      func(string) error
	emitGrounding func(groundedSpan) error

	buf     strings.Builder
	text    string // buf's contents after the last Write
	settled int    // bytes of text split into segments

	queue     []queuedSegment
	lastCites []int

	// Mark mode: where the UTF-16 count of text stands.
	at, at16 int
	// Strict mode: the UTF-16 length of what was sent, and the gap of the
	// first segment of a run being left out.
	out16    int
	dropping bool
	dropGap  string

	stats groundingStats
}

type queuedSegment struct {
	seg      segment
	resolved bool
	decline  bool
	// waitsLine: an uncited sentence waiting for a cited one on its line
	// (or the line's end).
	waitsLine bool
}

func newGrounder(passages []groundedPassage, strict bool, emitText func(string) error, emitGrounding func(groundedSpan) error) *grounder {
	return &grounder{passages: passages, strict: strict, emitText: emitText, emitGrounding: emitGrounding}
}

// Write takes the next piece of the text block.
func (g *grounder) Write(s string) error {
	if s == "" {
		return nil
	}
	if !g.strict {
		if err := g.emitText(s); err != nil {
			return err
		}
	}
	g.buf.WriteString(s)
	g.text = g.buf.String()
	return g.settle(false)
}

// Close settles and judges what is left.
func (g *grounder) Close() error {
	if err := g.settle(true); err != nil {
		return err
	}
	for i := range g.queue {
		if !g.queue[i].resolved {
			g.queue[i].seg.cites = g.lastCites
			g.queue[i].resolved = true
		}
	}
	return g.drain()
}

// Text is the text block as received.
func (g *grounder) Text() string { return g.text }

func (g *grounder) settle(final bool) error {
	for {
		seg, next, ok := nextSegment(g.text, g.settled, final)
		if !ok {
			break
		}
		g.settled = next
		g.add(seg)
	}
	return g.drain()
}

// add queues a settled segment and resolves the citations of those waiting.
func (g *grounder) add(seg segment) {
	if seg.newLine && g.lastCites != nil {
		// A line ended: its uncited sentences take the last citations.
		for i := range g.queue {
			if q := &g.queue[i]; !q.resolved && q.waitsLine {
				q.seg.cites, q.resolved = g.lastCites, true
			}
		}
	}
	q := queuedSegment{seg: seg}
	switch {
	case seg.kind == segLayout:
		q.resolved = true
	case seg.kind == segProse && isDecline(g.text[seg.start:seg.end]):
		q.resolved, q.decline = true, true
	case len(seg.cites) > 0:
		for i := range g.queue {
			if w := &g.queue[i]; !w.resolved {
				w.seg.cites, w.resolved = seg.cites, true
			}
		}
		g.lastCites = seg.cites
		q.resolved = true
	case seg.kind == segCode && g.lastCites != nil:
		q.seg.cites, q.resolved = g.lastCites, true
	case seg.kind == segProse:
		q.waitsLine = true
	}
	g.queue = append(g.queue, q)
}

// drain judges and sends the queued segments that are resolved, in order.
func (g *grounder) drain() error {
	n := 0
	for n < len(g.queue) && g.queue[n].resolved {
		if err := g.finish(g.queue[n]); err != nil {
			return err
		}
		n++
	}
	g.queue = append(g.queue[:0], g.queue[n:]...)
	return nil
}

// finish judges one segment and sends what follows from it.
func (g *grounder) finish(q queuedSegment) error {
	seg := q.seg
	body := g.text[seg.start:seg.end]
	if seg.kind == segLayout || q.decline {
		if q.decline {
			g.stats.declines = append(g.stats.declines, body)
		}
		if g.strict {
			_, _, err := g.send(seg, body)
			return err
		}
		return nil
	}
	var cited []groundedPassage
	sources := make([]string, 0, len(seg.cites))
	for _, n := range seg.cites {
		if n >= 1 && n <= len(g.passages) {
			cited = append(cited, g.passages[n-1])
			sources = append(sources, "src_"+strconv.Itoa(n))
		}
	}
	v := judge(body, seg.kind, cited)
	g.stats.claims++
	if v.supported {
		g.stats.supported++
		if len(cited) > 0 {
			g.stats.supportedCited++
		}
	}
	span := groundedSpan{sources: sources, supported: v.supported, missing: v.missing}
	if g.strict {
		if !v.supported {
			g.stats.left++
			if !g.dropping {
				g.dropping, g.dropGap = true, g.text[seg.gap:seg.start]
			}
			return nil
		}
		g.stats.kept++
		start, end, err := g.send(seg, body)
		if err != nil {
			return err
		}
		span.start, span.end = start, end
		return g.emitGrounding(span)
	}
	span.start = g.utf16At(seg.start)
	span.end = g.utf16At(seg.end)
	return g.emitGrounding(span)
}

// send writes a kept segment in strict mode, after its gap: the gap of the
// run of segments left out before it when it continues their line (so a
// list item keeps its marker), else its own. It returns the segment's span.
func (g *grounder) send(seg segment, body string) (start, end int, err error) {
	gap := g.text[seg.gap:seg.start]
	if g.dropping {
		if !strings.Contains(gap, "\n") {
			gap = g.dropGap
		}
		g.dropping = false
	}
	if g.out16 == 0 {
		gap = strings.TrimLeft(gap, " \t\r\n")
	}
	start = g.out16 + utf16Len(gap)
	end = start + utf16Len(body)
	g.out16 = end
	return start, end, g.emitText(gap + body)
}

// utf16At is the UTF-16 length of text[:pos]; pos never goes back.
func (g *grounder) utf16At(pos int) int {
	g.at16 += utf16Len(g.text[g.at:pos])
	g.at = pos
	return g.at16
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 && r <= utf8.MaxRune {
			n++
		}
	}
	return n
}
