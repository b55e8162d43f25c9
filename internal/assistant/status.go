package assistant

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
)

// The answer's status says how far the docs cover a question. Without a
// model it is decided here, from the question's words, what the index knows
// of them, and the passages retrieved:
//
//   - a name the reader wrote that the index has never seen (see qname)
//     makes the answer not covered, or partial when another part of the
//     question is covered ("The docs don't mention Datadog.");
//   - a question most of whose words the index has never seen is about
//     something else;
//   - a passage is evidence when it holds two of the question's words of
//     substance, or one that says much (a rare word, a name); one ordinary
//     word in common with a longer question is chance ("bread" in a page on
//     bread-crumbs says nothing about a banana bread recipe);
//   - one odd word never decides alone: a question whose words but one
//     are on the retrieved pages is answered from them.

// verdict is the status of an answer and the passages it quotes.
type verdict struct {
	status  string // TurnAnswered, TurnPartial or TurnNotCovered
	missing []string
	note    string
	kept    []passage
	// byName is set when names of the question that the docs never
	// mention decided the status (missing holds them).
	byName bool
}

// indexFacts is what the index says of a question's words: how many pages
// hold each (up to the count that makes it common), and whether it holds
// each name.
type indexFacts struct {
	pages int
	// common is the page count from which a word is on most pages; 0 when
	// the site is too small to tell.
	common int
	df     map[string]int // by stem
	known  []bool         // by name, as questionTerms.names
}

// rareShare is the share of a site's pages (1/rareShare) up to which a
// word is rare: one such word in common with a passage is evidence, but a
// question most of whose words are rare or unknown is not about the docs.
const rareShare = 100

// decide is the answer's status for a question, what the index knows of
// its words, and the passages retrieved (best first). Kept passages are
// numbered from 1 again.
func decide(qt questionTerms, f indexFacts, ps []passage) verdict {
	// Numbered by rank, on a copy, so that kept passages tell where they
	// ranked (see outranking).
	ps = slices.Clone(ps)
	for i := range ps {
		ps[i].n = i + 1
	}
	// Words of the names the docs do not mention are decided by the name.
	inMissing := map[string]bool{}
	var missing []string
	missingParts := map[int]bool{}
	for i, n := range qt.names {
		if f.known[i] {
			continue
		}
		missing = appendUnique(missing, n.text)
		missingParts[n.part] = true
		for _, w := range n.words {
			engine.Words(w, func(_, stem string) { inMissing[stem] = true })
		}
	}
	// A word on no more than rare pages the docs barely use: on a small
	// site, where most words are on a page or two, none is rare.
	rare := f.pages / rareShare
	// key are the question's words of substance the docs use; weak those
	// they never or barely use.
	var key, weak, common, context []qword
	for _, w := range qt.words {
		df := f.df[w.stem]
		switch {
		case inMissing[w.stem]:
		case w.part < 0:
			if df > 0 && (f.common == 0 || df < f.common) {
				context = append(context, w)
			}
		case df == 0:
			weak = append(weak, w)
		case f.common > 0 && df >= f.common:
			common = append(common, w)
		default:
			key = append(key, w)
			if df <= rare && !w.name {
				weak = append(weak, w)
			}
		}
	}
	strong := func(w qword) bool { return w.name || f.df[w.stem] <= max(1, rare) }
	evidence := append(append([]qword(nil), key...), context...)
	var kept []passage
	switch {
	case len(evidence) == 0 && len(common) > 0:
		// Nothing but words every page has (the product's name) and at
		// most an odd word: the passages holding them are what there is.
		kept = holding(ps, common, func(held []qword) bool { return len(held) > 0 })
	case len(evidence) == 0:
		kept = ps
	default:
		kept = holding(ps, evidence, func(held []qword) bool {
			return fields(held) >= 2 || len(held) > 0 && (fields(evidence) == 1 || strong(held[0]))
		})
	}
	// The words the docs use often enough to be about them.
	var solid []qword
	for _, w := range evidence {
		if w.name || f.df[w.stem] > rare {
			solid = append(solid, w)
		}
	}
	v := verdict{status: TurnAnswered, kept: kept}
	switch {
	case len(missing) > 0:
		v.missing, v.byName = missing, true
		if len(kept) > 0 && len(evidence) > 0 && coveredPart(qt.parts, missingParts, key, kept) {
			v.status = TurnPartial
			v.note = "The docs don't mention " + orList(missing) + ". Here is what they say about the rest of your question."
		} else {
			v.status, v.kept = TurnNotCovered, nil
			v.note = "The docs don't mention " + orList(missing) + "."
		}
	case fields(weak) >= 2 && fields(weak) > fields(solid) && !foothold(kept, solid, (fields(weak)+1)/2):
		// Most of what the question is about, the docs never or barely
		// mention, and no passage holds the rest together.
		v.status, v.kept = TurnNotCovered, nil
		for _, w := range weak {
			if f.df[w.stem] == 0 {
				v.missing = appendUnique(v.missing, w.raw)
			}
		}
		if len(v.missing) > 0 {
			v.note = "The docs don't mention " + orList(v.missing) + "."
		}
	case len(kept) == 0:
		v.status = TurnNotCovered
	}
	if len(v.kept) > 0 && len(evidence) > 0 {
		v.kept = outranking(ps, v.kept, evidence)
	}
	for i := range v.kept {
		v.kept[i].n = i + 1
	}
	return v
}

// outranking adds to the kept passages those that share a word with the
// question and that retrieval ranks above the last one kept (passages are
// numbered by rank): once the question is answered, a passage ranked above
// evidence is not there by chance for sharing only one of its words, since
// the ranking weighed them all.
func outranking(ps, kept []passage, words []qword) []passage {
	last := kept[len(kept)-1].n
	return holding(ps[:last], words, func(held []qword) bool { return len(held) > 0 })
}

// fields counts the words as the reader wrote them: the parts of a
// camel-case word count once.
func fields(ws []qword) int {
	n, last := 0, -1
	for _, w := range ws {
		if w.field != last {
			n, last = n+1, w.field
		}
	}
	return n
}

// foothold reports whether a passage holds a name the question wrote, or
// two of its words and at least need: then the question is about what the
// docs describe, whatever other words it uses that they do not.
func foothold(ps []passage, words []qword, need int) bool {
	return len(holding(ps, words, func(held []qword) bool {
		if fields(held) >= max(2, need) {
			return true
		}
		for _, w := range held {
			if w.name {
				return true
			}
		}
		return false
	})) > 0
}

// coveredPart reports whether a part of the question that names nothing
// missing has one of its words in a kept passage.
func coveredPart(parts int, missingParts map[int]bool, key []qword, kept []passage) bool {
	if parts < 2 {
		return false
	}
	var words []qword
	for _, w := range key {
		if !missingParts[w.part] {
			words = append(words, w)
		}
	}
	return len(words) > 0 && len(holding(kept, words, func(held []qword) bool { return len(held) > 0 })) > 0
}

// holding keeps the passages (in order, copied) whose title and text hold
// words that ok accepts, as whole words.
func holding(ps []passage, words []qword, ok func(held []qword) bool) []passage {
	var out []passage
	for _, p := range ps {
		stems := passageStems(p)
		var held []qword
		for _, w := range words {
			if stems[w.stem] {
				held = append(held, w)
			}
		}
		if ok(held) {
			out = append(out, p)
		}
	}
	return out
}

// passageStems are the words of a passage's title and text, as the index
// analyses them.
func passageStems(p passage) map[string]bool {
	stems := map[string]bool{}
	add := func(_, stem string) { stems[stem] = true }
	engine.Words(p.title, add)
	engine.Words(p.text, add)
	return stems
}

// orList joins names for a sentence: "A", "A or B", "A, B or C".
func orList(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return list
		}
	}
	return append(list, s)
}

// status decides the status of an extractive answer: the question's words
// and names are looked up in the index, then weighed (decide). A failed
// look-up counts a word as known: the check is then only less strict.
func (a *Answer) status(ctx context.Context, ps []passage) verdict {
	q := a.req.Question()
	if !spacedScript(q) {
		// Words of a script written without spaces cannot be told apart
		// this simply: the passages stand.
		return verdict{status: TurnAnswered, kept: ps}
	}
	qt := questionWords(q, a.req.contextValues())
	if len(ps) == 0 && len(qt.names) == 0 {
		return verdict{status: TurnNotCovered}
	}
	return decide(qt, a.svc.indexFacts(ctx, a.domain.ID, a.req.Filter, qt), ps)
}

// spacedScript reports whether text has no letters of a script written
// without spaces between words.
func spacedScript(text string) bool {
	for _, r := range text {
		if r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai) {
			return false
		}
	}
	return true
}

// indexFacts asks the index about a question's words and names.
func (s *Service) indexFacts(ctx context.Context, domain string, filter search.Filter, qt questionTerms) indexFacts {
	f := indexFacts{df: map[string]int{}, known: make([]bool, len(qt.names))}
	pages, err := s.pageCount(ctx, domain)
	if err != nil {
		s.log.DebugContext(ctx, "count the pages of a domain", "domain", domain, "err", err)
	}
	f.pages = pages
	upTo := maxCommonPages
	if pages >= minPagesForCommon {
		f.common = min(pages/2+1, maxCommonPages)
		upTo = f.common
	}
	for _, w := range qt.words {
		n, err := s.termPages(ctx, domain, search.Term{Words: []string{w.raw}, Required: true}, filter, upTo)
		if err != nil {
			s.log.DebugContext(ctx, "count the pages of a word", "domain", domain, "err", err)
			n = 1
		}
		f.df[w.stem] = n
	}
	for i, n := range qt.names {
		f.known[i] = s.knowsName(ctx, domain, filter, n)
	}
	return f
}

// knowsName reports whether the index holds a name: its words as a phrase.
// A run of three capitalised words or more ("Slack Enterprise Grid") is
// known when each word is and two of them stand together. A lower-case
// compound ("built-in") is known when one of its words is.
func (s *Service) knowsName(ctx context.Context, domain string, filter search.Filter, n qname) bool {
	has := func(words ...string) bool {
		c, err := s.termPages(ctx, domain, search.Term{Words: words, Required: true}, filter, 1)
		return err != nil || c > 0
	}
	if len(n.words) == 0 || has(n.words...) {
		return true
	}
	if n.loose {
		// "brand-new", "self-run": English joins words so freely that
		// only a compound none of whose words the docs use is a name.
		for _, w := range n.words {
			if has(w) {
				return true
			}
		}
		return false
	}
	if len(n.words) < 3 {
		return false
	}
	for _, w := range n.words {
		if !has(w) {
			return false
		}
	}
	for i := 0; i+1 < len(n.words); i++ {
		if has(n.words[i], n.words[i+1]) {
			return true
		}
	}
	return false
}
