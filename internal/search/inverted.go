package search

import (
	"math"
	"slices"
	"sort"
	"strings"
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
}

// domainIndex is one domain's chunks with an inverted index over them. It is
// never changed once built: a newer version of the domain is a new one.
type domainIndex struct {
	version int64
	chunks  []Chunk
	// length is each chunk's token count over every field; boost its
	// RankBoost.
	length []float32
	boost  []float32
	// page numbers each chunk's page; pages maps a page path to its number.
	page   []int32
	pages  map[string]int32
	avgLen float64
	// maxBoost bounds boost, for pruning.
	maxBoost float64
	terms    map[string]*postings
	// sorted lists the tokens in order, for prefixes.
	sorted []string
	bytes  int64
}

// match is one query term's matches: chunk, weighted frequency.
type match struct {
	docs []int32
	wtf  []float32
	idf  float64
	// ub bounds the term's score in any chunk (boosts aside).
	ub       float64
	required bool
}

// termMatches finds a term's chunks: a token's postings, a prefix's union,
// or a phrase's chunks with its weighted frequency of occurrence.
func (di *domainIndex) termMatches(t Term) match {
	var toks []string
	for _, w := range t.Words {
		tokens(w, func(tok string) { toks = append(toks, tok) })
	}
	if len(toks) == 0 {
		return match{}
	}
	last := len(toks) - 1
	lists := make([][]*postings, len(toks))
	for i, tok := range toks {
		if t.Prefix && i == last {
			lists[i] = di.prefixed(tok)
		} else if pl := di.terms[tok]; pl != nil {
			lists[i] = []*postings{pl}
		}
		if len(lists[i]) == 0 {
			return match{}
		}
	}
	if len(toks) == 1 && len(lists[0]) == 1 {
		pl := lists[0][0]
		return match{docs: pl.docs, wtf: pl.wtf}
	}
	if len(toks) == 1 {
		return union(lists[0])
	}
	return di.phrase(lists)
}

// termDocs calls fn with lists of the chunks that hold t, which together are
// termMatches(t).docs (a chunk may be in several of the lists), until fn
// returns false. A word or a prefix needs no merge: its postings lists are
// passed as they are.
func (di *domainIndex) termDocs(t Term, fn func(docs []int32) bool) {
	var toks []string
	for _, w := range t.Words {
		tokens(w, func(tok string) { toks = append(toks, tok) })
	}
	switch {
	case len(toks) != 1:
		if m := di.termMatches(t); len(m.docs) > 0 {
			fn(m.docs)
		}
	case t.Prefix:
		i := sort.SearchStrings(di.sorted, toks[0])
		for ; i < len(di.sorted) && strings.HasPrefix(di.sorted[i], toks[0]); i++ {
			if !fn(di.terms[di.sorted[i]].docs) {
				return
			}
		}
	default:
		if pl := di.terms[toks[0]]; pl != nil {
			fn(pl.docs)
		}
	}
}

// prefixed returns the postings of every token starting with prefix.
func (di *domainIndex) prefixed(prefix string) []*postings {
	i := sort.SearchStrings(di.sorted, prefix)
	var out []*postings
	for ; i < len(di.sorted) && strings.HasPrefix(di.sorted[i], prefix); i++ {
		out = append(out, di.terms[di.sorted[i]])
	}
	return out
}

// union merges postings lists, adding frequencies.
func union(lists []*postings) match {
	acc := map[int32]float32{}
	for _, pl := range lists {
		for i, d := range pl.docs {
			acc[d] += pl.wtf[i]
		}
	}
	m := match{docs: make([]int32, 0, len(acc))}
	for d := range acc {
		m.docs = append(m.docs, d)
	}
	slices.Sort(m.docs)
	m.wtf = make([]float32, len(m.docs))
	for i, d := range m.docs {
		m.wtf[i] = acc[d]
	}
	return m
}

// phrase finds the chunks where the tokens follow each other in one field,
// each position of lists[i] being any of its postings (the last may be a
// prefix's several).
func (di *domainIndex) phrase(lists [][]*postings) match {
	single := true
	for _, l := range lists {
		single = single && len(l) == 1
	}
	if single {
		pls := make([]*postings, len(lists))
		for i, l := range lists {
			pls[i] = l[0]
		}
		return exactPhrase(pls)
	}
	var m match
	// Candidate chunks: those of the first token's lists, checked against
	// the others.
	first := union(lists[0])
	for _, d := range first.docs {
		// starts are the positions where the phrase so far ends.
		var starts []uint32
		for _, pl := range lists[0] {
			starts = append(starts, positionsIn(pl, d)...)
		}
		for k := 1; k < len(lists) && len(starts) > 0; k++ {
			var next []uint32
			for _, pl := range lists[k] {
				for _, p := range positionsIn(pl, d) {
					if p&posMask > 0 && containsPos(starts, p-1) {
						next = append(next, p)
					}
				}
			}
			starts = next
		}
		if len(starts) == 0 {
			continue
		}
		var wtf float32
		for _, p := range starts {
			wtf += fieldWeights[p>>fieldShift]
		}
		m.docs = append(m.docs, d)
		m.wtf = append(m.wtf, wtf)
	}
	return m
}

// exactPhrase is phrase for tokens that each have one postings list: the
// lists are intersected by walking them together, and each common chunk's
// positions are merged in order.
func exactPhrase(pls []*postings) match {
	var m match
	cur := make([]int, len(pls))
	var starts, next []uint32
outer:
	for i0, d := range pls[0].docs {
		for k := 1; k < len(pls); k++ {
			docs := pls[k].docs
			j := cur[k]
			for j < len(docs) && docs[j] < d {
				j++
			}
			cur[k] = j
			if j == len(docs) {
				break outer
			}
			if docs[j] != d {
				continue outer
			}
		}
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
		m.docs = append(m.docs, d)
		m.wtf = append(m.wtf, wtf)
	}
	return m
}

// positionsIn returns a postings list's positions in chunk d, if any.
func positionsIn(pl *postings, d int32) []uint32 {
	i, ok := slices.BinarySearch(pl.docs, d)
	if !ok {
		return nil
	}
	return pl.pos[pl.off[i]:pl.off[i+1]]
}

func containsPos(ps []uint32, p uint32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// search returns the best n candidates of q among the chunks the filter
// keeps: bm25 times the boosts, with MaxScore pruning — terms whose best
// possible contribution cannot lift a chunk into the current top n only
// score chunks other terms found.
func (di *domainIndex) search(q Query, n int) []Candidate {
	N := float64(len(di.chunks))
	var ms []match
	for _, t := range q.Terms {
		m := di.termMatches(t)
		m.required = t.Required
		if len(m.docs) == 0 {
			if t.Required {
				return nil
			}
			continue
		}
		df := float64(len(m.docs))
		m.idf = math.Log((N - df + 0.5) / (df + 0.5))
		if m.idf <= 0 {
			m.idf = 1e-6
		}
		for i, d := range m.docs {
			m.ub = max(m.ub, m.idf*di.tf(m.wtf[i], d))
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil
	}
	pathBoost := q.PathBoost
	if pathBoost <= 0 || q.BoostPath == "" {
		pathBoost = 1
	}
	keep := newChunkFilter(q.Filter)
	maxBoost := di.maxBoost * max(pathBoost, 1)
	boostPage, ok := di.pages[q.BoostPath]
	if !ok {
		boostPage = -1
	}
	factor := func(d int32) float64 {
		f := float64(di.boost[d])
		if di.page[d] == boostPage {
			f *= pathBoost
		}
		return f
	}
	var req, opt []match
	for _, m := range ms {
		if m.required {
			req = append(req, m)
		} else {
			opt = append(opt, m)
		}
	}
	top := &candHeap{s: make([]scored, 0, min(n, len(di.chunks)))}
	push := func(d int32, score float64) { top.offer(n, scored{d, score}) }
	if len(req) > 0 {
		// A quoted phrase: every chunk holding the required terms (and one
		// of the others, if any) is scored; such queries are few and their
		// matches fewer.
		di.exhaustive(req, opt, keep, factor, push)
	} else {
		di.maxScore(opt, n, keep, factor, maxBoost, top, push)
	}
	out := make([]Candidate, 0, top.Len())
	for _, s := range top.s {
		c := &di.chunks[s.doc]
		out = append(out, Candidate{Key: int64(s.doc), PagePath: c.PagePath, Seq: c.Seq, Score: s.score})
	}
	return out
}

// tf is bm25's saturated term frequency of a weighted frequency in chunk d.
func (di *domainIndex) tf(wtf float32, d int32) float64 {
	norm := bm25K1 * (1 - bm25B + bm25B*float64(di.length[d])/di.avgLen)
	return float64(wtf) * (bm25K1 + 1) / (float64(wtf) + norm)
}

// exhaustive scores every chunk holding all of req and, when opt is not
// empty, one of opt.
func (di *domainIndex) exhaustive(req, opt []match, keep chunkFilter, factor func(int32) float64, push func(int32, float64)) {
	scores := map[int32]float64{}
	counts := map[int32]int{}
	for _, m := range req {
		for i, d := range m.docs {
			scores[d] += m.idf * di.tf(m.wtf[i], d)
			counts[d]++
		}
	}
	hasOpt := map[int32]bool{}
	for _, m := range opt {
		for i, d := range m.docs {
			if counts[d] == len(req) {
				scores[d] += m.idf * di.tf(m.wtf[i], d)
				hasOpt[d] = true
			}
		}
	}
	for d, s := range scores {
		if counts[d] != len(req) || (len(opt) > 0 && !hasOpt[d]) || !keep.keeps(&di.chunks[d]) {
			continue
		}
		push(d, s*factor(d))
	}
}

// maxScore is document-at-a-time scoring with MaxScore pruning over
// optional terms.
func (di *domainIndex) maxScore(ms []match, n int, keep chunkFilter, factor func(int32) float64, maxBoost float64, top *candHeap, push func(int32, float64)) {
	sort.Slice(ms, func(a, b int) bool { return ms[a].ub < ms[b].ub })
	// cum[i] bounds the score of terms 0..i together.
	cum := make([]float64, len(ms))
	for i, m := range ms {
		cum[i] = m.ub * maxBoost
		if i > 0 {
			cum[i] += cum[i-1]
		}
	}
	cur := make([]int, len(ms))
	firstEssential := 0
	threshold := func() float64 {
		if top.Len() < n {
			return -1
		}
		return top.s[0].score
	}
	for {
		// The next chunk is the smallest among the essential terms.
		next := int32(math.MaxInt32)
		for i := firstEssential; i < len(ms); i++ {
			if cur[i] < len(ms[i].docs) && ms[i].docs[cur[i]] < next {
				next = ms[i].docs[cur[i]]
			}
		}
		if next == math.MaxInt32 {
			return
		}
		var raw float64
		for i := firstEssential; i < len(ms); i++ {
			if cur[i] < len(ms[i].docs) && ms[i].docs[cur[i]] == next {
				raw += ms[i].idf * di.tf(ms[i].wtf[cur[i]], next)
				cur[i]++
			}
		}
		f := factor(next)
		th := threshold()
		for i := firstEssential - 1; i >= 0; i-- {
			if (raw+cum[i]/maxBoost)*f <= th {
				break
			}
			m := &ms[i]
			// Skip ahead (the lists are sorted by chunk).
			j := cur[i] + sort.Search(len(m.docs)-cur[i], func(k int) bool { return m.docs[cur[i]+k] >= next })
			cur[i] = j
			if j < len(m.docs) && m.docs[j] == next {
				raw += m.idf * di.tf(m.wtf[j], next)
			}
		}
		score := raw * f
		if score <= th || !keep.keeps(&di.chunks[next]) {
			continue
		}
		push(next, score)
		th = threshold()
		for firstEssential < len(ms) && cum[firstEssential] <= th {
			firstEssential++
		}
	}
}

type scored struct {
	doc   int32
	score float64
}

// candHeap is a min-heap of the best candidates so far.
type candHeap struct{ s []scored }

func (h *candHeap) Len() int { return len(h.s) }

// worse orders candidates: lower score, then later chunk.
func worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

// offer keeps c if it is among the best n.
func (h *candHeap) offer(n int, c scored) {
	if len(h.s) < n {
		h.s = append(h.s, c)
		for i := len(h.s) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(h.s[i], h.s[p]) {
				break
			}
			h.s[i], h.s[p] = h.s[p], h.s[i]
			i = p
		}
		return
	}
	if !worse(h.s[0], c) {
		return
	}
	h.s[0] = c
	for i := 0; ; {
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

// chunkFilter is a Filter as applied to chunks.
type chunkFilter struct{ f Filter }

func newChunkFilter(f Filter) chunkFilter { return chunkFilter{f} }

// keeps reports whether the filter keeps c: the version and language when
// set (chunks with none always pass), and pages without groups or sharing
// one with the reader.
func (k chunkFilter) keeps(c *Chunk) bool {
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
