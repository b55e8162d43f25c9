package assistant

import (
	"context"
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/search"
)

// What an extractive answer quotes.
const (
	maxExtractive      = 3    // quotes in one answer
	maxExtractiveChars = 1000 // bytes of one quote, about
	// strongSecond is how close to a page's best section its second one
	// must score to be quoted too: otherwise one page gives one quote.
	strongSecond = 0.9
	// complementShare is how much a section must add to what the best one
	// shows of the question's words, against the best one's score, to be
	// quoted beside it.
	complementShare = 0.2
)

// extractive is an answer without a model: the passages it quotes, in the
// order they are numbered, the answer's text and the pieces to stream.
func (a *Answer) extractive(ctx context.Context, ps []passage) (quoted []passage, answer string, pieces []string) {
	ts := newTermSet(a.req.Question())
	quoted = a.sectionPassages(ctx, ps, ts)
	answer, pieces = extractiveText(quoted, ts)
	return quoted, answer, pieces
}

// sectionPassages picks what an extractive answer quotes from the pages
// retrieval found: on each of the best pages (those whose best passage
// scores at least half as well as the first), the section whose body and
// heading hold the most of the question's words, rare words weighing most,
// whether or not retrieval returned that section; and a second section of
// the page when it scores close to the first, or shows enough of the
// question's words the first does not (see complement). Each passage links to its
// section (page#anchor). A page that cannot be read, or none of whose
// sections holds a question word, gives its best retrieved passage.
func (a *Answer) sectionPassages(ctx context.Context, ps []passage, ts *termSet) []passage {
	pages := bestPages(ps)
	read := make([]*pageSections, len(pages))
	if !ts.empty() {
		var masks []uint64
		for i, pg := range pages {
			pt, err := a.svc.index.Page(ctx, a.domain.ID, pg[0].hit.PagePath)
			if err != nil {
				a.svc.log.DebugContext(ctx, "read a page to quote its sections", "domain", a.domain.ID, "page", pg[0].hit.PagePath, "err", err)
				continue
			}
			p := splitSections(pt.Content, ts)
			hits := make([]search.Hit, len(pg))
			for k, q := range pg {
				hits[k] = q.hit
			}
			p.useHitAnchors(hits)
			read[i] = &p
			for _, s := range p.sections {
				masks = append(masks, s.head|s.body)
			}
		}
		ts.weigh(masks)
	}
	// Each page gives its best section. A second strong section of the
	// first page, the one retrieval trusts most, comes before the other
	// pages; those of other pages only take the room the pages leave.
	picked := make([][]int, len(pages))
	n := 0
	for i := range pages {
		picked[i] = pickSections(read[i], ts)
		n++
		if i == 0 && len(picked[i]) > 1 {
			n++
		}
	}
	var out []passage
	for i, pg := range pages {
		if len(out) == maxExtractive {
			break
		}
		if len(picked[i]) == 0 {
			out = append(out, pg[0])
			continue
		}
		out = append(out, a.sectionPassage(pg[0], read[i], read[i].sections[picked[i][0]]))
		switch {
		case len(picked[i]) < 2 || len(out) == maxExtractive:
		case i == 0:
			out = append(out, a.sectionPassage(pg[0], read[i], read[i].sections[picked[i][1]]))
		case n < maxExtractive:
			out = append(out, a.sectionPassage(pg[0], read[i], read[i].sections[picked[i][1]]))
			n++
		}
	}
	for i := range out {
		out[i].n = i + 1
	}
	return out
}

// bestPages groups the passages by page, pages in the order of their best
// passage, keeping the pages whose best passage scores at least half as
// well as the first, up to maxExtractive.
func bestPages(ps []passage) [][]passage {
	var out [][]passage
	for _, p := range ps {
		found := false
		for i := range out {
			if out[i][0].hit.PagePath == p.hit.PagePath {
				out[i] = append(out[i], p)
				found = true
				break
			}
		}
		if found {
			continue
		}
		if len(out) == maxExtractive || p.hit.Score < ps[0].hit.Score/2 {
			continue
		}
		out = append(out, []passage{p})
	}
	return out
}

// pickSections are the sections of a page to quote, best first: the one
// that scores best (the first of equals: a page that leads with the answer
// to its title's question, "Install Quill", leads with its first section),
// and the next best when it scores at least strongSecond as well. Sections without a body, or without a question word, are not
// quoted; nil means none.
func pickSections(p *pageSections, ts *termSet) []int {
	if p == nil {
		return nil
	}
	best, second := -1, -1
	var bestScore, secondScore float64
	for i, s := range p.sections {
		if s.head|s.body == 0 || !p.hasBody(s) {
			continue
		}
		sc := p.score(i, ts)
		switch {
		case sc > bestScore || best < 0:
			second, secondScore = best, bestScore
			best, bestScore = i, sc
		case sc > secondScore:
			second, secondScore = i, sc
		}
	}
	switch {
	case best < 0:
		return nil
	case bestScore == 0:
		// The question asks only what the page's title says ("How do I
		// install Quill?" of "Install Quill"): the page as a whole answers
		// it, from its start (a section whole adds to p).
		return []int{p.whole()}
	case second >= 0 && secondScore >= strongSecond*bestScore:
		return []int{best, second}
	}
	if other := complement(p, ts, best, bestScore); other >= 0 {
		return []int{best, other}
	}
	return []int{best}
}

// complement is the section of a page that shows most of the question's
// words a quote of section best does not, when they weigh at least
// complementShare of best's score: the part of the page that answers
// another part of the question ("how do I export it, and how do they open
// it?"). Words of the page's title are not missing: the whole page is
// about them. -1 when none does.
func complement(p *pageSections, ts *termSet, best int, bestScore float64) int {
	shown := p.shown(best, ts) | p.title
	out, outScore := -1, 0.0
	for i, s := range p.sections {
		if i == best || s.head|s.body == 0 || !p.hasBody(s) {
			continue
		}
		if sc := ts.score(p.shown(i, ts) &^ shown); sc > outScore {
			out, outScore = i, sc
		}
	}
	if outScore < complementShare*bestScore {
		return -1
	}
	return out
}

// sectionPassage is a passage of a page's section: the retrieved passage
// of that page with the section's heading, link and text.
func (a *Answer) sectionPassage(from passage, p *pageSections, s section) passage {
	h := from.hit
	h.Anchor, h.Heading = s.anchor, s.heading
	return passage{hit: h, url: citeURL(a.domain.SiteURL, h.PagePath, h.Anchor), title: citeTitle(h), text: p.text(s)}
}

// extractiveText quotes the passages, each under its title and marker: the
// answer, and the pieces of it to stream. A passage longer than
// maxExtractiveChars is cut to a window around the lines that hold the
// most of the question's words (see excerpt).
func extractiveText(ps []passage, ts *termSet) (answer string, pieces []string) {
	const intro = "These passages of the documentation match your question best:\n\n"
	quotes := make([]quote, len(ps))
	size := len(intro)
	for i, p := range ps {
		quotes[i] = excerpt(p.text, ts, maxExtractiveChars)
		size += len(p.title) + len(strconv.Itoa(p.n)) + 10 + quotes[i].size()
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(intro)
	// ends[i] is where piece i ends in the answer.
	ends := make([]int, 0, len(ps)+1)
	ends = append(ends, b.Len())
	for i, p := range ps {
		b.WriteString("**")
		b.WriteString(p.title)
		b.WriteString("** [")
		b.WriteString(strconv.Itoa(p.n))
		b.WriteString("]\n\n")
		quotes[i].write(&b)
		if i < len(ps)-1 {
			b.WriteString("\n")
		}
		ends = append(ends, b.Len())
	}
	answer = b.String()
	pieces = make([]string, len(ends))
	from := 0
	for i, end := range ends {
		pieces[i] = answer[from:end]
		from = end
	}
	return answer, pieces
}
