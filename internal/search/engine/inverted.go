package engine

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// The ranking every store shares: bm25 over the analyzed fields of a
// domain's chunks, with each field's term frequency weighted (see
// fieldWeights), the chunk's length counted over all fields, and the
// statistics (chunk count, average length, document frequencies) of the
// domain alone.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// fieldWeights are the weights of the fields title, headings, keywords and
// body: a word in the page title says more about a chunk than the same word
// in its text.
var fieldWeights = [numFields]float32{6, 3, 2, 1}

const (
	numFields = 4
	// A position packs the field in its top bits.
	fieldShift = 30
	posMask    = 1<<fieldShift - 1
)

// postings are the chunks a token occurs in, in chunk order.
type postings struct {
	docs []int32
	// wtf is the weighted term frequency in each chunk: the sum over
	// fields of occurrences times the field's weight.
	wtf []float32
	// pos[off[i]:off[i+1]] are the positions in docs[i], field first.
	off []uint32
	pos []uint32
	// maxTF is the largest bm25 tf of the token in any of its chunks (see
	// domainIndex.prepare): a query bounds the term's score by it without
	// walking the chunks.
	maxTF float64
}

// domainIndex is one domain's chunks with an inverted index over them. It is
// never changed once built: a newer version of the domain is a new one.
type Index struct {
	version int64
	chunks  []Chunk
	// length is each chunk's token count over every field; boost its
	// rankBoost.
	length []float32
	boost  []float32
	// page numbers each chunk's page; pages maps a page path to its number.
	page   []int32
	pages  map[string]int32
	avgLen float64
	// maxBoost bounds boost, for pruning.
	maxBoost float64
	terms    map[string]*postings
	// related are the words mined as related to each word (see
	// mineRelations), searched with it at a lower weight.
	related map[string][]relatedTerm
	// sorted lists the tokens in order, for prefixes; sortedPostings
	// holds the postings of each, so that a prefix's tokens are found
	// without a map lookup each.
	sorted         []string
	sortedPostings []*postings
	// norm is each chunk's bm25 length normalization and seq its Seq:
	// computed once (see prepare) rather than in every query, and read
	// without touching the chunk itself.
	norm []float64
	seq  []int
	// hasGroups reports whether a chunk has access groups: when none has,
	// a filter without a version or language keeps every chunk.
	hasGroups bool
	bytes     int64
	// vectors holds the chunks' vectors, when they were given (see
	// SetVectors): unit length, dims values each, chunk d's at
	// vectorAt[d] (-1 when it has none).
	vectors  []float32
	vectorAt []int32
	dims     int
	// pageCounts remembers countPages' answers for one word without a
	// filter (pageCountKey to int), which an assistant asks of every
	// question's words; pageCountsHeld counts them, up to maxPageCounts.
	pageCounts     sync.Map
	pageCountsHeld atomic.Int32
}

// pageCountKey is a countPages question whose answer the index keeps.
type pageCountKey struct {
	word   string
	prefix bool
	upTo   int
}

// maxPageCounts bounds the answers an index keeps (each distinct word
// readers ask about adds one); pageCountsBytes is what they may take,
// counted in the index's size.
const (
	maxPageCounts   = 2048
	pageCountsBytes = maxPageCounts * 96
)

// prepare computes what the index derives from its chunks and postings
// once it is built or read from a snapshot, for queries to read.
func (di *Index) prepare() {
	di.norm = make([]float64, len(di.chunks))
	di.seq = make([]int, len(di.chunks))
	for d := range di.chunks {
		di.norm[d] = bm25Norm(di.length[d], di.avgLen)
		di.seq[d] = di.chunks[d].Seq
		di.hasGroups = di.hasGroups || len(di.chunks[d].Groups) > 0
	}
	// Each token's maxTF takes a walk of its postings: the tokens are
	// shared out between goroutines, in runs.
	di.sortedPostings = make([]*postings, len(di.sorted))
	workers := min(runtime.GOMAXPROCS(0), 1+len(di.sorted)/prepareRun)
	per := (len(di.sorted) + workers - 1) / workers
	var wg sync.WaitGroup
	for from := 0; from < len(di.sorted); from += per {
		wg.Go(func() {
			for i := from; i < min(from+per, len(di.sorted)); i++ {
				pl := di.terms[di.sorted[i]]
				di.sortedPostings[i] = pl
				pl.maxTF = 0
				for k, d := range pl.docs {
					pl.maxTF = max(pl.maxTF, di.tf(pl.wtf[k], d))
				}
			}
		})
	}
	wg.Wait()
}

// prepareRun is about the fewest tokens worth a goroutine of their own in
// prepare.
const prepareRun = 4096

// placeChunk numbers chunk d's page (pages, page) and sets its boost.
func (di *Index) placeChunk(d int) {
	c := &di.chunks[d]
	pg, ok := di.pages[c.PagePath]
	if !ok {
		pg = int32(len(di.pages))
		di.pages[c.PagePath] = pg
	}
	di.page[d] = pg
	b := rankBoost(c.Boost)
	di.boost[d] = float32(b)
	di.maxBoost = max(di.maxBoost, b)
}

// bm25Norm is bm25's normalization of a chunk's term frequencies by its
// length.
func bm25Norm(length float32, avgLen float64) float64 {
	return bm25K1 * (1 - bm25B + bm25B*float64(length)/avgLen)
}

// match is one query term's matches: chunk, weighted frequency.
type match struct {
	docs []int32
	wtf  []float32
	idf  float64
	// maxTF is the postings' maxTF when the match is one postings list of
	// the index; 0 (no chunk's tf) when it was built for the query.
	maxTF float64
	// ub bounds the term's score in any chunk (boosts aside).
	ub       float64
	required bool
}

// postingsMatch is the match of one postings list.
func postingsMatch(pl *postings) match {
	return match{docs: pl.docs, wtf: pl.wtf, maxTF: pl.maxTF}
}

// appendTermTokens appends the tokens of t's words to toks.
func appendTermTokens(toks []string, t Term) []string {
	for _, w := range t.Words {
		tokens(w, func(tok string) { toks = append(toks, tok) })
	}
	return toks
}

// termMatches finds a term's chunks: a token's postings, a prefix's union,
// or a phrase's chunks with its weighted frequency of occurrence. A match
// that is no postings list of the index is held in s.
func (di *Index) termMatches(t Term, s *queryScratch) match {
	s.tokens = appendTermTokens(s.tokens[:0], t)
	toks := s.tokens
	if len(toks) == 0 {
		return match{}
	}
	if len(toks) == 1 && !t.Prefix {
		if pl := di.terms[toks[0]]; pl != nil {
			return postingsMatch(pl)
		}
		return match{}
	}
	// Each token's postings lists: one, or a prefix's several.
	last := len(toks) - 1
	s.postingLists, s.listEnds = s.postingLists[:0], s.listEnds[:0]
	for i, tok := range toks {
		start := len(s.postingLists)
		if t.Prefix && i == last {
			s.postingLists = di.appendPrefixed(s.postingLists, tok)
		} else if pl := di.terms[tok]; pl != nil {
			s.postingLists = append(s.postingLists, pl)
		}
		if len(s.postingLists) == start {
			return match{}
		}
		s.listEnds = append(s.listEnds, len(s.postingLists))
	}
	if len(s.postingLists) == len(toks) {
		// One postings list a token.
		if len(toks) == 1 {
			return postingsMatch(s.postingLists[0])
		}
		return s.exactPhrase(s.postingLists)
	}
	s.lists = s.lists[:0]
	start := 0
	for _, end := range s.listEnds {
		s.lists = append(s.lists, s.postingLists[start:end:end])
		start = end
	}
	if len(toks) == 1 {
		return s.union(s.lists[0], len(di.chunks))
	}
	return di.phrase(s.lists, s)
}

// termDocs calls fn with lists of the chunks that hold t, which together are
// termMatches(t).docs (a chunk may be in several of the lists), until fn
// returns false. A word or a prefix needs no merge: its postings lists are
// passed as they are.
func (di *Index) termDocs(t Term, s *queryScratch, fn func(docs []int32) bool) {
	s.tokens = appendTermTokens(s.tokens[:0], t)
	switch toks := s.tokens; {
	case len(toks) != 1:
		if m := di.termMatches(t, s); len(m.docs) > 0 {
			fn(m.docs)
		}
	case t.Prefix:
		i := sort.SearchStrings(di.sorted, toks[0])
		for ; i < len(di.sorted) && strings.HasPrefix(di.sorted[i], toks[0]); i++ {
			if !fn(di.sortedPostings[i].docs) {
				return
			}
		}
	default:
		if pl := di.terms[toks[0]]; pl != nil {
			fn(pl.docs)
		}
	}
}

// appendPrefixed appends the postings of every token starting with prefix
// to lists.
func (di *Index) appendPrefixed(lists []*postings, prefix string) []*postings {
	i := sort.SearchStrings(di.sorted, prefix)
	for ; i < len(di.sorted) && strings.HasPrefix(di.sorted[i], prefix); i++ {
		lists = append(lists, di.sortedPostings[i])
	}
	return lists
}

// union merges postings lists of an index of chunks chunks, adding
// frequencies.
func (s *queryScratch) union(lists []*postings, chunks int) match {
	if len(s.unionWTF) < chunks {
		s.unionWTF = make([]float32, chunks)
	}
	acc := s.unionWTF
	docsStart := len(s.matchDocs)
	for _, pl := range lists {
		for i, d := range pl.docs {
			if acc[d] == 0 {
				// Not met yet: an occurrence weighs at least 1.
				s.matchDocs = append(s.matchDocs, d)
			}
			acc[d] += pl.wtf[i]
		}
	}
	docs := s.matchDocs[docsStart:len(s.matchDocs):len(s.matchDocs)]
	slices.Sort(docs)
	wtfStart := len(s.matchWTF)
	for _, d := range docs {
		s.matchWTF = append(s.matchWTF, acc[d])
		acc[d] = 0
	}
	return match{docs: docs, wtf: s.matchWTF[wtfStart:len(s.matchWTF):len(s.matchWTF)]}
}

// phrase finds the chunks where the tokens follow each other in one field,
// each position of lists[i] being any of its postings (the last may be a
// prefix's several).
func (di *Index) phrase(lists [][]*postings, s *queryScratch) match {
	// Candidate chunks: those of the first token's lists, checked against
	// the others.
	first := s.union(lists[0], len(di.chunks))
	docsStart, wtfStart := len(s.matchDocs), len(s.matchWTF)
	// cursors holds each postings list's place, the lists of lists[0]
	// first, then those of lists[1], and so on: the chunks are met in
	// order, so each list is only walked forward.
	numLists := 0
	for _, l := range lists {
		numLists += len(l)
	}
	cursors := slices.Grow(s.cursors[:0], numLists)[:numLists]
	clear(cursors)
	s.cursors = cursors
	// starts are the positions where the phrase so far ends.
	starts, next := s.starts[:0], s.nextStarts[:0]
	for _, d := range first.docs {
		starts = starts[:0]
		c := 0
		for _, pl := range lists[0] {
			starts = append(starts, positionsAt(pl, &cursors[c], d)...)
			c++
		}
		for k := 1; k < len(lists) && len(starts) > 0; k++ {
			next = next[:0]
			for _, pl := range lists[k] {
				ps := positionsAt(pl, &cursors[c], d)
				c++
				for _, p := range ps {
					if p&posMask > 0 && containsPos(starts, p-1) {
						next = append(next, p)
					}
				}
			}
			starts, next = next, starts
		}
		if len(starts) == 0 {
			continue
		}
		var wtf float32
		for _, p := range starts {
			wtf += fieldWeights[p>>fieldShift]
		}
		s.matchDocs = append(s.matchDocs, d)
		s.matchWTF = append(s.matchWTF, wtf)
	}
	s.starts, s.nextStarts = starts, next
	return s.matchesFrom(docsStart, wtfStart)
}

// matchesFrom is the match appended to s's match buffers since docsStart
// and wtfStart.
func (s *queryScratch) matchesFrom(docsStart, wtfStart int) match {
	return match{
		docs: s.matchDocs[docsStart:len(s.matchDocs):len(s.matchDocs)],
		wtf:  s.matchWTF[wtfStart:len(s.matchWTF):len(s.matchWTF)],
	}
}

// exactPhrase is phrase for tokens that each have one postings list: the
// lists are intersected by walking the shortest and seeking each of its
// chunks in the others, and each common chunk's positions are merged in
// order.
func (s *queryScratch) exactPhrase(pls []*postings) match {
	cur := slices.Grow(s.cursors[:0], len(pls))[:len(pls)]
	clear(cur)
	s.cursors = cur
	lead := 0
	for k, pl := range pls {
		if len(pl.docs) < len(pls[lead].docs) {
			lead = k
		}
	}
	docsStart, wtfStart := len(s.matchDocs), len(s.matchWTF)
	starts, next := s.starts[:0], s.nextStarts[:0]
outer:
	for i, d := range pls[lead].docs {
		for k, pl := range pls {
			if k == lead {
				cur[k] = i
				continue
			}
			j := seek(pl.docs, cur[k], d)
			cur[k] = j
			if j == len(pl.docs) {
				break outer
			}
			if pl.docs[j] != d {
				continue outer
			}
		}
		i0 := cur[0]
		starts = append(starts[:0], pls[0].pos[pls[0].off[i0]:pls[0].off[i0+1]]...)
		for k := 1; k < len(pls) && len(starts) > 0; k++ {
			j := cur[k]
			ps := pls[k].pos[pls[k].off[j]:pls[k].off[j+1]]
			next = next[:0]
			a := 0
			for _, p := range ps {
				for a < len(starts) && starts[a]+1 < p {
					a++
				}
				if a < len(starts) && starts[a]+1 == p && p&posMask > 0 {
					next = append(next, p)
				}
			}
			starts, next = next, starts
		}
		if len(starts) == 0 {
			continue
		}
		var wtf float32
		for _, p := range starts {
			wtf += fieldWeights[p>>fieldShift]
		}
		s.matchDocs = append(s.matchDocs, d)
		s.matchWTF = append(s.matchWTF, wtf)
	}
	s.starts, s.nextStarts = starts, next
	return s.matchesFrom(docsStart, wtfStart)
}

// positionsAt returns a postings list's positions in chunk d, if any,
// seeking d from the list's place at, which it leaves at d or the first
// chunk after it.
func positionsAt(pl *postings, at *int, d int32) []uint32 {
	i := seek(pl.docs, *at, d)
	*at = i
	if i == len(pl.docs) || pl.docs[i] != d {
		return nil
	}
	return pl.pos[pl.off[i]:pl.off[i+1]]
}

// seek returns the first place from from on in docs whose chunk is d or
// after it (len(docs) if none), as a binary search of docs[from:] would.
// The chunk sought is mostly near: seek gallops from there, then searches
// the last stride.
func seek(docs []int32, from int, d int32) int {
	if from >= len(docs) || docs[from] >= d {
		return from
	}
	// docs[below] < d all along.
	below, stride := from, 1
	for below+stride < len(docs) && docs[below+stride] < d {
		below += stride
		stride *= 2
	}
	end := min(below+stride, len(docs))
	i, _ := slices.BinarySearch(docs[below+1:end], d)
	return below + 1 + i
}

func containsPos(ps []uint32, p uint32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// pageBoost multiplies the relevance of the chunks of one page (the
// reader's) by factor; page is -1 for none.
type pageBoost struct {
	page   int32
	factor float64
}

// chunkFactor is what chunk d's relevance is multiplied by: its own boost,
// and the page boost on its page.
func (di *Index) chunkFactor(d int32, pb pageBoost) float64 {
	f := float64(di.boost[d])
	if di.page[d] == pb.page {
		f *= pb.factor
	}
	return f
}

// search finds the best n candidates of q among the chunks the filter
// keeps: bm25 times the boosts, with MaxScore pruning — terms whose best
// possible contribution cannot lift a chunk into the current top n only
// score chunks other terms found. They are returned in no order, in s.
func (di *Index) search(q Query, n int, s *queryScratch) []scored {
	s.matches = s.matches[:0]
	for _, t := range q.Terms {
		m := di.termMatches(t, s)
		m.required = t.Required
		if len(m.docs) == 0 {
			if t.Required {
				return nil
			}
			continue
		}
		w := t.weight()
		if t.standsFor != nil {
			w = gatedWeight(w, di.termMatches(Term{Words: t.standsFor}, s).docs, len(m.docs))
			if w == 0 {
				continue
			}
		}
		di.addMatch(m, w, s)
	}
	di.expandCompounds(q.Terms, s)
	if len(s.matches) > 0 {
		di.expandRelated(q, s)
	}
	if len(s.matches) == 0 {
		return nil
	}
	pathBoost := q.PathBoost
	if pathBoost <= 0 || q.BoostPath == "" {
		pathBoost = 1
	}
	pb := pageBoost{page: -1, factor: pathBoost}
	if page, ok := di.pages[q.BoostPath]; ok {
		pb.page = page
	}
	keep := di.chunkFilter(q.Filter)
	s.required, s.optional = s.required[:0], s.optional[:0]
	for _, m := range s.matches {
		if m.required {
			s.required = append(s.required, m)
		} else {
			s.optional = append(s.optional, m)
		}
	}
	s.best.s = s.best.s[:0]
	if len(s.required) > 0 {
		// A quoted phrase: every chunk holding the required terms (and one
		// of the others, if any) is scored; such queries are few and their
		// matches fewer.
		di.exhaustive(s.required, s.optional, n, keep, pb, s)
	} else {
		di.maxScore(s.optional, n, keep, pb, di.maxBoost*max(pathBoost, 1), s)
	}
	return s.best.s
}

// gatedWeight is the weight of an expansion (a synonym, a related word) of
// the reader's words: its own weight, less as the docs use the reader's
// words themselves in more chunks (readersDocs) against the expansion's
// (expansionDocs). A reader who writes "log in" where the docs say "sign
// in" everywhere needs the synonym; one who writes "install" on a site
// that says "install" as often as "set up" does not, and the expansion
// would only dilute the question. 0 leaves the expansion out.
func gatedWeight(weight float64, readersDocs []int32, expansionDocs int) float64 {
	if expansionDocs == 0 {
		return 0
	}
	f := 1 - float64(len(readersDocs))/float64(expansionDocs)
	if f < minExpansionShare {
		return 0
	}
	return weight * f
}

// minExpansionShare is the least share of its weight an expansion keeps:
// below it, the expansion is left out.
const minExpansionShare = 0.05

// addMatch adds a term's match to s.matches, with its idf times weight and
// the bound of its score.
func (di *Index) addMatch(m match, weight float64, s *queryScratch) {
	N := float64(len(di.chunks))
	df := float64(len(m.docs))
	m.idf = math.Log((N - df + 0.5) / (df + 0.5))
	if m.idf <= 0 {
		m.idf = 1e-6
	}
	m.idf *= weight
	// idf > 0 and rounding keeps order, so idf times the largest tf
	// is the largest of idf times each tf.
	maxTF := m.maxTF
	if maxTF == 0 {
		for i, d := range m.docs {
			maxTF = max(maxTF, di.tf(m.wtf[i], d))
		}
	}
	m.ub = m.idf * maxTF
	s.matches = append(s.matches, m)
}

// tf is bm25's saturated term frequency of a weighted frequency in chunk d.
func (di *Index) tf(wtf float32, d int32) float64 {
	return float64(wtf) * (bm25K1 + 1) / (float64(wtf) + di.norm[d])
}

// exhaustive scores every chunk holding all of req and, when opt is not
// empty, one of opt: the terms' chunks are walked together, in order.
func (di *Index) exhaustive(req, opt []match, n int, keep chunkFilter, pb pageBoost, s *queryScratch) {
	at := slices.Grow(s.termAt[:0], len(req)+len(opt))[:len(req)+len(opt)]
	clear(at)
	s.termAt = at
	reqAt, optAt := at[:len(req)], at[len(req):]
outer:
	for i0, d := range req[0].docs {
		reqAt[0] = i0
		for k := 1; k < len(req); k++ {
			docs := req[k].docs
			j := reqAt[k]
			for j < len(docs) && docs[j] < d {
				j++
			}
			reqAt[k] = j
			if j == len(docs) {
				break outer
			}
			if docs[j] != d {
				continue outer
			}
		}
		var score float64
		for k := range req {
			m := &req[k]
			score += m.idf * di.tf(m.wtf[reqAt[k]], d)
		}
		hasOpt := false
		for k := range opt {
			m := &opt[k]
			j := optAt[k]
			for j < len(m.docs) && m.docs[j] < d {
				j++
			}
			optAt[k] = j
			if j < len(m.docs) && m.docs[j] == d {
				score += m.idf * di.tf(m.wtf[j], d)
				hasOpt = true
			}
		}
		if (len(opt) > 0 && !hasOpt) || !keep.keeps(&di.chunks[d]) {
			continue
		}
		s.best.offer(n, scored{d, score * di.chunkFactor(d, pb)})
	}
}

// byUpperBound orders terms by their upper bound, lowest first.
func byUpperBound(a, b match) int { return cmp.Compare(a.ub, b.ub) }

// maxScore is document-at-a-time scoring with MaxScore pruning over
// optional terms.
func (di *Index) maxScore(ms []match, n int, keep chunkFilter, pb pageBoost, maxBoost float64, s *queryScratch) {
	slices.SortFunc(ms, byUpperBound)
	// bounds[i] bounds the score of terms 0..i together.
	bounds := slices.Grow(s.bounds[:0], len(ms))[:len(ms)]
	for i, m := range ms {
		bounds[i] = m.ub * maxBoost
		if i > 0 {
			bounds[i] += bounds[i-1]
		}
	}
	s.bounds = bounds
	// at[i] is term i's place in its chunks, doc[i] the chunk there
	// (math.MaxInt32 past the last).
	at := slices.Grow(s.termAt[:0], len(ms))[:len(ms)]
	doc := slices.Grow(s.termDoc[:0], len(ms))[:len(ms)]
	s.termAt, s.termDoc = at, doc
	for i, m := range ms {
		at[i], doc[i] = 0, m.docs[0]
	}
	top := &s.best
	// threshold is the score to beat: the worst of the best n, once there
	// are n.
	threshold := -1.0
	firstEssential := 0
	// The next chunk is the smallest among the essential terms; the terms
	// are advanced past one chunk and the smallest of the next found in
	// the same pass.
	next := slices.Min(doc)
	for next != math.MaxInt32 {
		d := next
		next = math.MaxInt32
		var raw float64
		for i := firstEssential; i < len(ms); i++ {
			if doc[i] == d {
				m := &ms[i]
				raw += m.idf * di.tf(m.wtf[at[i]], d)
				at[i]++
				doc[i] = math.MaxInt32
				if at[i] < len(m.docs) {
					doc[i] = m.docs[at[i]]
				}
			}
			next = min(next, doc[i])
		}
		f := di.chunkFactor(d, pb)
		for i := firstEssential - 1; i >= 0; i-- {
			if (raw+bounds[i]/maxBoost)*f <= threshold {
				break
			}
			m := &ms[i]
			// Skip ahead (the lists are sorted by chunk).
			j := seek(m.docs, at[i], d)
			at[i] = j
			if j < len(m.docs) && m.docs[j] == d {
				raw += m.idf * di.tf(m.wtf[j], d)
			}
		}
		score := raw * f
		if score <= threshold || !keep.keeps(&di.chunks[d]) {
			continue
		}
		top.offer(n, scored{d, score})
		if top.Len() == n {
			threshold = top.s[0].score
		}
		if firstEssential < len(ms) && bounds[firstEssential] <= threshold {
			for firstEssential < len(ms) && bounds[firstEssential] <= threshold {
				firstEssential++
			}
			// The terms no longer essential may have held the next chunk.
			next = int32(math.MaxInt32)
			if firstEssential < len(ms) {
				next = slices.Min(doc[firstEssential:])
			}
		}
	}
}

type scored struct {
	doc   int32
	score float64
}

// candHeap holds the best candidates so far. Until it holds n of them they
// are only appended; from then on it is a min-heap, its root the worst of
// them (which worse orders totally: no two candidates share a chunk).
type candHeap struct{ s []scored }

func (h *candHeap) Len() int { return len(h.s) }

// worse orders candidates: lower score, then later chunk.
func worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

// offer keeps c if it is among the best n. Many queries match fewer than n
// chunks: the heap is built only once there are n, at once.
func (h *candHeap) offer(n int, c scored) {
	if len(h.s) < n {
		h.s = append(h.s, c)
		if len(h.s) == n {
			for i := n/2 - 1; i >= 0; i-- {
				h.siftDown(i)
			}
		}
		return
	}
	if !worse(h.s[0], c) {
		return
	}
	h.replaceRoot(c)
}

// siftDown moves h.s[i] down until neither child is worse.
func (h *candHeap) siftDown(i int) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.s) && worse(h.s[l], h.s[m]) {
			m = l
		}
		if r < len(h.s) && worse(h.s[r], h.s[m]) {
			m = r
		}
		if m == i {
			return
		}
		h.s[i], h.s[m] = h.s[m], h.s[i]
		i = m
	}
}

// replaceRoot puts c in the root's place. A candidate good enough to enter
// mostly belongs near the leaves, so the hole the root leaves is moved down
// to a leaf along the worse children (one comparison a level), and c then
// up from there to its place.
func (h *candHeap) replaceRoot(c scored) {
	s := h.s
	i := 0
	for {
		child := 2*i + 1
		if child >= len(s) {
			break
		}
		if r := child + 1; r < len(s) && worse(s[r], s[child]) {
			child = r
		}
		s[i] = s[child]
		i = child
	}
	for i > 0 {
		parent := (i - 1) / 2
		if !worse(c, s[parent]) {
			break
		}
		s[i] = s[parent]
		i = parent
	}
	s[i] = c
}

// chunkFilter is a Filter as applied to the chunks of an index.
type chunkFilter struct {
	f Filter
	// all is set when the filter keeps every chunk of the index, which
	// then need not be read.
	all bool
}

func (di *Index) chunkFilter(f Filter) chunkFilter {
	return chunkFilter{f: f, all: f.Version == "" && f.Language == "" && !di.hasGroups}
}

// keeps reports whether the filter keeps c: the version and language when
// set (chunks with none always pass), and pages without groups or sharing
// one with the reader.
func (k chunkFilter) keeps(c *Chunk) bool {
	if k.all {
		return true
	}
	if k.f.Version != "" && c.Version != "" && c.Version != k.f.Version {
		return false
	}
	if k.f.Language != "" && c.Language != "" && !strings.EqualFold(c.Language, k.f.Language) {
		return false
	}
	if len(c.Groups) == 0 {
		return true
	}
	for _, g := range k.f.Groups {
		if slices.Contains(c.Groups, g) {
			return true
		}
	}
	return false
}
