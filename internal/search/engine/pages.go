package engine

import (
	"slices"
	"strings"
)

// CountPages counts the pages holding t in a chunk the filter keeps, up to
// upTo (0: all of them): countPages, answered from memory for a word the index was
// asked about before with no filter: the index never changes, so neither
// does the answer.
func (di *Index) CountPages(t Term, f Filter, upTo int) int {
	if len(t.Words) != 1 || f.Version != "" || f.Language != "" || len(f.Groups) > 0 {
		return di.countPages(t, f, upTo)
	}
	key := pageCountKey{word: t.Words[0], prefix: t.Prefix, upTo: upTo}
	if n, ok := di.pageCounts.Load(key); ok {
		return n.(int)
	}
	n := di.countPages(t, f, upTo)
	if di.pageCountsHeld.Add(1) <= maxPageCounts {
		// A copy of the word, so that the question it came from is not kept.
		key.word = strings.Clone(key.word)
		di.pageCounts.Store(key, n)
	}
	return n
}

// countPages is CountPages on this index: the term's chunks are walked,
// each kept chunk's page marked, until upTo pages are seen.
func (di *Index) countPages(t Term, f Filter, upTo int) int {
	if upTo <= 0 {
		upTo = len(di.pages)
	}
	keep := di.chunkFilter(f)
	s := getQueryScratch()
	defer s.release()
	seen := slices.Grow(s.pagesSeen[:0], (len(di.pages)+63)/64)[:(len(di.pages)+63)/64]
	clear(seen)
	s.pagesSeen = seen
	n := 0
	di.termDocs(t, s, func(docs []int32) bool {
		for _, d := range docs {
			pg := di.page[d]
			if seen[pg/64]&(1<<(pg%64)) != 0 || !keep.keeps(&di.chunks[d]) {
				continue
			}
			seen[pg/64] |= 1 << (pg % 64)
			if n++; n >= upTo {
				return false
			}
		}
		return true
	})
	return n
}

// Candidates kept per hit asked for: enough for page-level ranking to see
// every page that can make the cut.
const (
	candidatesPerHit = 10
	minCandidates    = 300
)

// Search runs a query: the best candidates by bm25, page-level ranking, then
// the chunks as hits with normalized scores.
func (di *Index) Search(q Query) []Hit {
	limit := q.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	s := getQueryScratch()
	defer s.release()
	best := di.search(q, max(candidatesPerHit*limit, minCandidates), s)
	if len(best) == 0 {
		return nil
	}
	rows := s.rows[:0]
	for _, c := range best {
		rows = append(rows, rankRow{score: c.score, seq: di.seq[c.doc], page: di.page[c.doc], item: c.doc})
	}
	s.rows = rows
	ranked := rankRows(rows, len(di.pages), q.MaxPerPage, limit, q.SecondPassageRatio, di.pagePath, s)
	norm := newScoreNormalizer(singleWordTerms(q.Terms), len(di.chunks))
	out := make([]Hit, len(ranked))
	for i, r := range ranked {
		out[i].Chunk = di.chunks[r.item]
		out[i].Score = norm.normalize(r.score)
	}
	return out
}

// pagePath is chunk d's page path.
func (di *Index) pagePath(d int32) string { return di.chunks[d].PagePath }

// Page assembles a page from its chunks, in Seq order; ok is false
// when the index has no chunk of it.
func (di *Index) Page(path string) (PageText, bool) {
	pg, ok := di.pages[path]
	if !ok {
		return PageText{}, false
	}
	var chunks []Chunk
	for d, p := range di.page {
		if p == pg {
			chunks = append(chunks, di.chunks[d])
		}
	}
	slices.SortStableFunc(chunks, func(a, b Chunk) int { return a.Seq - b.Seq })
	return AssemblePage(chunks)
}

// defaultLimit is the number of hits of a query that sets no Limit.
const defaultLimit = 10
