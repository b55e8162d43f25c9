package engine

import (
	"cmp"
	"iter"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Related terms mined from a docs site when its index is built. Readers do
// not use the docs' words, but the docs often say which of their words
// mean the same: a link whose text is "team space" leads to the page titled
// "Workspaces"; a definition says "A team space, or workspace, is …" or
// "workspace (also called team space)"; a glossary lists "**Team space**:
// a workspace …". Each such statement relates the distinctive words of one
// side to those of the other. A page's title and its headings relate too,
// more weakly: only when several pages say so does it count.
//
// A query word with relations is searched with them as optional terms of a
// lower weight (see expandRelated), which find a page written in the docs'
// words without outranking a page that has the reader's own.

// Evidence each kind of statement gives a pair of words, and what a pair
// needs in all to be kept.
const (
	linkEvidence       = 1.0
	definitionEvidence = 1.0
	// A glossary entry relates a term to the first words that describe
	// it; "X is a Y" does too, but is as often a statement as a
	// definition: two of them must agree.
	glossaryEvidence = 1.0
	describeEvidence = 0.5
	// describeWords bounds the distinctive words of a description.
	describeWords = 2
	// A title and a heading of its page are related only when several
	// pages pair the same words.
	headingEvidence = 0.25
	minRelation     = 1.0
	// maxRelated bounds the relations kept per word, the strongest first;
	// maxExpansion the related words one query adds.
	maxRelated   = 4
	maxExpansion = 8
	// maxSideWords bounds the words of either side of a statement: a
	// longer link text or definition is a sentence, not a name.
	maxSideWords = 3
	// maxRelatedShare drops words found in more than this share of the
	// chunks (and at least minCommonChunks): relating a word every page
	// has adds noise, not vocabulary.
	maxRelatedShare = 0.05
	minCommonChunks = 8
	// relatedWeight is the weight of a related term at full strength:
	// enough to find a page written in the docs' words, too little to
	// outrank one with the reader's.
	relatedWeight = 0.3
)

// relatedTerm is a word related to another, as the index holds it.
type relatedTerm struct {
	token string
	// strength is in (0, 1]: the pair's evidence over twice minRelation,
	// capped.
	strength float32
}

// The statements mined, as patterns over a chunk's Markdown (links,
// glossary entries) and plain text lines (definitions).
var (
	// "A team space, or workspace, is …"
	orDefinition = regexp.MustCompile(`(?i)^(?:an?\s+|the\s+)?([\p{L}\d][\p{L}\d -]{1,40}?),\s+or\s+([\p{L}\d][\p{L}\d -]{1,40}?),\s+(?:is|are)\s`)
	// "workspace (also called a team space)", "(aka …)", "(or …)"
	alsoCalled = regexp.MustCompile(`(?i)([\p{L}\d][\p{L}\d-]*(?:\s[\p{L}\d][\p{L}\d-]*){0,2})\s+\((?:also\s+(?:called|known\s+as|named)|aka|a\.k\.a\.|or)\s+(?:an?\s+|the\s+)?([^()]{2,40})\)$`)
	// "**Team space**: a workspace …", "- **Team space** — …"
	glossaryEntry = regexp.MustCompile(`^\s*(?:[-*]\s+)?\*\*([^*]{2,40})\*\*\s*[:—–-]\s*(.{2,200})`)
	// "A team space is a workspace …"
	isADefinition = regexp.MustCompile(`(?i)^(?:an?\s+|the\s+)?([\p{L}\d][\p{L}\d-]*(?:\s[\p{L}\d][\p{L}\d-]*){0,2})\s+(?:is|are)\s+(?:an?|the)\s+(.{2,120})`)
)

// relationMiner gathers the evidence of a domain's pairs of words.
type relationMiner struct {
	di *Index
	// evidence per pair, the smaller word first; pageSeen keeps one
	// page from counting a pair twice for one kind of statement.
	evidence map[[2]string]float64
	pageSeen map[pairOnPage]bool
	// titles maps a page's URL (no anchor) to its title and language.
	titles map[string]linkTarget
	// maxDF is the most chunks a related word may be in.
	maxDF int
	// sides remembers sideWords' answers: page titles and headings come
	// again and again.
	sides map[string][]string
}

type linkTarget struct{ title, language string }

type pairOnPage struct {
	pair [2]string
	page int32
	kind float64
}

// mineRelations returns the related words of a built index's words: the
// confident pairs, each word's strongest up to maxRelated.
func mineRelations(di *Index) map[string][]relatedTerm {
	if len(di.chunks) == 0 {
		return nil
	}
	m := &relationMiner{
		di:       di,
		evidence: map[[2]string]float64{},
		pageSeen: map[pairOnPage]bool{},
		titles:   map[string]linkTarget{},
		sides:    map[string][]string{},
		maxDF:    max(minCommonChunks, int(maxRelatedShare*float64(len(di.chunks)))),
	}
	for _, c := range di.chunks {
		if c.PageTitle != "" {
			m.titles[pageURL(c.URL)] = linkTarget{c.PageTitle, c.Language}
		}
	}
	for d := range di.chunks {
		m.chunk(int32(d))
	}
	return m.relations()
}

// pageURL is a link's or a chunk's URL without its anchor, query or final
// slash.
func pageURL(u string) string {
	if i := strings.IndexAny(u, "#?"); i >= 0 {
		u = u[:i]
	}
	return strings.TrimSuffix(u, "/")
}

// chunk gathers the statements of chunk d.
func (m *relationMiner) chunk(d int32) {
	c := &m.di.chunks[d]
	page := m.di.page[d]
	if c.Heading != "" && c.Heading != c.PageTitle {
		m.relate(c.PageTitle, c.Heading, page, headingEvidence)
	}
	for text, target := range markdownLinks(c.Markdown) {
		// A link to a translation of the page relates words of two
		// languages: not vocabulary a reader of one uses.
		if t, ok := m.titles[pageURL(target)]; ok && t.language == c.Language {
			m.relate(text, t.title, page, linkEvidence)
		}
	}
	for line := range strings.Lines(c.Markdown) {
		if strings.Contains(line, "**") {
			if sm := glossaryEntry.FindStringSubmatch(line); sm != nil {
				m.relate(sm[1], leadingWords(sm[2]), page, glossaryEvidence)
			}
		}
	}
	for line := range strings.Lines(c.Text) {
		if strings.Contains(line, ", or ") {
			if sm := orDefinition.FindStringSubmatch(line); sm != nil {
				m.relate(sm[1], sm[2], page, definitionEvidence)
			}
		}
		for at := range otherNames(line) {
			// The pattern is anchored to the parenthesis: from a few
			// words before it to its end.
			from := max(0, at-60)
			for from > 0 && !utf8.RuneStart(line[from]) {
				from--
			}
			if sm := alsoCalled.FindStringSubmatch(line[from:at]); sm != nil {
				m.relate(lastWords(sm[1]), sm[2], page, definitionEvidence)
			}
		}
		if startsDefinition(line) {
			if sm := isADefinition.FindStringSubmatch(line); sm != nil {
				m.relate(sm[1], leadingWords(sm[2]), page, describeEvidence)
			}
		}
	}
}

// markdownLinks yields the text and target of each link of a chunk's
// Markdown, images aside: "[text](target)" with a short text and a target
// without spaces. A scan rather than a pattern: most chunks have links.
func markdownLinks(md string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		rest, offset := md, 0
		for {
			i := strings.Index(rest, "](")
			if i < 0 {
				return
			}
			at := offset + i
			rest, offset = rest[i+2:], at+2
			open := strings.LastIndexAny(md[max(0, at-maxLinkText):at], "[]")
			if open < 0 {
				continue
			}
			open += max(0, at-maxLinkText)
			if md[open] != '[' || open > 0 && md[open-1] == '!' {
				continue
			}
			end := strings.IndexAny(rest, ") \n\t(")
			if end <= 0 || rest[end] != ')' {
				continue
			}
			if !yield(md[open+1:at], rest[:end]) {
				return
			}
		}
	}
}

// maxLinkText bounds a link text worth reading: a name, not a sentence.
const maxLinkText = 60

// otherNames yields where, in a line, a parenthesis opens that gives
// another name: "(also called", "(also known as", "(aka", "(or ".
func otherNames(line string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for at := 0; ; {
			i := strings.IndexByte(line[at:], '(')
			if i < 0 {
				return
			}
			at += i
			rest := line[at+1:]
			if hasPrefixFold(rest, "also ") || hasPrefixFold(rest, "aka ") || hasPrefixFold(rest, "a.k.a. ") || hasPrefixFold(rest, "or ") {
				end := strings.IndexByte(rest, ')')
				if end < 0 {
					return
				}
				if !yield(at + 1 + end + 1) {
					return
				}
			}
			at++
		}
	}
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// startsDefinition reports whether a line may start "X is a …" with a name
// of a few words: the pattern is tried only then.
func startsDefinition(line string) bool {
	for _, verb := range [...]string{" is ", " are "} {
		if i := strings.Index(line, verb); i > 0 && i < 48 && strings.Count(line[:i], " ") < maxSideWords+1 {
			return true
		}
	}
	return false
}

// leadingWords is the start of a description, up to its first punctuation
// and at most describeWords distinctive words: "a workspace shared by your
// team, …" → "a workspace shared".
func leadingWords(s string) string {
	if i := strings.IndexAny(s, ",.;:()"); i >= 0 {
		s = s[:i]
	}
	words := strings.Fields(s)
	kept, n := 0, 0
	for kept < len(words) && n < describeWords {
		if !stopEN(strings.ToLower(words[kept])) {
			n++
		}
		kept++
	}
	return strings.Join(words[:kept], " ")
}

// lastWords keeps the last maxSideWords-1 words of the name before an
// "(also called …)": the pattern takes up to three, of which the first
// may belong to the sentence.
func lastWords(s string) string {
	words := strings.Fields(s)
	if len(words) > maxSideWords-1 {
		words = words[len(words)-(maxSideWords-1):]
	}
	return strings.Join(words, " ")
}

// relate adds evidence that the distinctive words of a and those of b mean
// about the same: each word of one side not on the other is paired with
// each of the other's.
func (m *relationMiner) relate(a, b string, page int32, evidence float64) {
	left, right := m.sideWords(a), m.sideWords(b)
	if len(left) == 0 || len(right) == 0 || len(left) > maxSideWords || len(right) > maxSideWords {
		return
	}
	for _, x := range left {
		if slices.Contains(right, x) {
			continue
		}
		for _, y := range right {
			// Words of two scripts are a translation, not a synonym.
			if slices.Contains(left, y) || isPlainASCII(x) != isPlainASCII(y) {
				continue
			}
			pair := [2]string{min(x, y), max(x, y)}
			key := pairOnPage{pair, page, evidence}
			if m.pageSeen[key] {
				continue
			}
			m.pageSeen[key] = true
			m.evidence[pair] += evidence
		}
	}
}

// sideWords returns the distinct index words of one side of a statement
// that may be related: no stop words, no numbers, none too common or
// absent from the index. A side with more words than maxSideWords (before
// they are filtered) is returned whole, for relate to refuse.
func (m *relationMiner) sideWords(s string) []string {
	if out, ok := m.sides[s]; ok {
		return out
	}
	out := m.distinctiveWords(s)
	m.sides[s] = out
	return out
}

func (m *relationMiner) distinctiveWords(s string) []string {
	if strings.Count(s, " ") > 2*maxSideWords {
		return make([]string, maxSideWords+1)
	}
	var out []string
	all := 0
	Words(s, func(raw, word string) {
		all++
		if len(word) < 3 || stopEN(strings.ToLower(raw)) || isNumber(word) || slices.Contains(out, word) {
			return
		}
		if pl := m.di.terms[word]; pl == nil || len(pl.docs) > m.maxDF {
			return
		}
		out = append(out, word)
	})
	if all > maxSideWords+1 {
		return make([]string, maxSideWords+1)
	}
	return out
}

func isNumber(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// relations keeps the pairs with enough evidence, each word's strongest.
func (m *relationMiner) relations() map[string][]relatedTerm {
	out := map[string][]relatedTerm{}
	for pair, ev := range m.evidence {
		if ev < minRelation {
			continue
		}
		strength := float32(min(1, ev/(2*minRelation)))
		out[pair[0]] = append(out[pair[0]], relatedTerm{pair[1], strength})
		out[pair[1]] = append(out[pair[1]], relatedTerm{pair[0], strength})
	}
	for w, rs := range out {
		slices.SortFunc(rs, func(a, b relatedTerm) int {
			if c := cmp.Compare(b.strength, a.strength); c != 0 {
				return c
			}
			return strings.Compare(a.token, b.token)
		})
		out[w] = rs[:min(len(rs), maxRelated)]
	}
	if len(out) == 0 {
		return nil // as a snapshot reads it back
	}
	return out
}

// expandRelated appends to s.matches the related words of the query's
// single words, weighed relatedWeight times their strength and the word's
// own weight; a word the query has already, or found twice, counts once
// at its best weight. A word still being typed (a prefix) is taken as it
// stands: most often it is whole already.
func (di *Index) expandRelated(q Query, s *queryScratch) {
	if len(di.related) == 0 {
		return
	}
	// The query's own words, each analysed once: stemming costs most.
	s.expansion, s.queryTokens = s.expansion[:0], s.queryTokens[:0]
	for _, t := range q.Terms {
		if len(t.Words) != 1 {
			continue
		}
		s.tokens = appendTermTokens(s.tokens[:0], t)
		s.queryTokens = append(s.queryTokens, s.tokens...)
		if len(s.tokens) != 1 || t.Required || t.Expansion() {
			continue
		}
		var readersDocs []int32
		if pl := di.terms[s.tokens[0]]; pl != nil {
			readersDocs = pl.docs
		}
		for _, r := range di.related[s.tokens[0]] {
			var relatedDocs int
			if pl := di.terms[r.token]; pl != nil {
				relatedDocs = len(pl.docs)
			}
			w := gatedWeight(relatedWeight*float64(r.strength)*t.weight(), readersDocs, relatedDocs)
			if w == 0 {
				continue
			}
			if i := slices.IndexFunc(s.expansion, func(e relatedTerm) bool { return e.token == r.token }); i >= 0 {
				s.expansion[i].strength = max(s.expansion[i].strength, float32(w))
				continue
			}
			s.expansion = append(s.expansion, relatedTerm{r.token, float32(w)})
		}
	}
	// The strongest few: each term added costs a postings walk.
	slices.SortStableFunc(s.expansion, func(a, b relatedTerm) int { return cmp.Compare(b.strength, a.strength) })
	s.expansion = s.expansion[:min(len(s.expansion), maxExpansion)]
	for _, e := range s.expansion {
		if slices.Contains(s.queryTokens, e.token) {
			continue
		}
		if pl := di.terms[e.token]; pl != nil {
			di.addMatch(postingsMatch(pl), float64(e.strength), s)
		}
	}
}
