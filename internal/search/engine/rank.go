package engine

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Page-level evidence: a page whose several chunks match is a better answer
// than a page with one lucky chunk, so each chunk gains pageEvidence times
// the scores of its page's other best chunks (pageEvidenceChunks of them
// count).
const (
	pageEvidence       = 0.5
	pageEvidenceChunks = 3
)

// rankRow is a candidate as the page-level ranking sees it: no path, so
// that rows move without write barriers and compare by number.
type rankRow struct {
	score float64
	seq   int
	// page numbers the candidate's page, one number a page; item is the
	// caller's number of the candidate.
	page, item int32
}

// rankRows is the page-level ranking: page-level evidence, then at most
// maxPerPage rows a page (0: no cap), of which the second and later only
// when they score at least secondRatio of the page's first (0 keeps them
// all), then the best limit, best first, on
// rows whose pages are numbered from 0 to pages-1. It returns the ranked
// rows, best first, with the ranking's scores, in s's buffers. pathOf
// returns an item's page path, which orders candidates of equal scores.
func rankRows(rows []rankRow, pages, maxPerPage, limit int, secondRatio float64, pathOf func(item int32) string, s *queryScratch) []rankRow {
	// Only a page's best rows count: those that make its evidence, and
	// those kept when the page's rows are capped.
	counted := pageEvidenceChunks
	if maxPerPage > 0 {
		counted = max(counted, maxPerPage)
	}
	rows = groupByPage(rows, pages, counted, s)
	kept := 0
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && rows[end].page == rows[start].page {
			end++
		}
		same := rows[start:end]
		start = end
		// top is the sum of the page's best chunks; a chunk gains the
		// others of them (a chunk past them gains them less the weakest,
		// so that it never overtakes them).
		var top, weakest float64
		for _, r := range same[:min(len(same), pageEvidenceChunks)] {
			top += r.score
			weakest = r.score
		}
		// The kept rows go to the front of rows: never past the one read,
		// but the page's first may be overwritten.
		best := same[0].score
		for k, r := range same {
			if maxPerPage > 0 && k >= maxPerPage {
				break
			}
			if k > 0 && r.score < secondRatio*best {
				// The rows are in order: the page's others score less.
				break
			}
			if k < pageEvidenceChunks {
				r.score += pageEvidence * (top - r.score)
			} else {
				r.score += pageEvidence * (top - weakest)
			}
			rows[kept] = r
			kept++
		}
	}
	ranked := rows[:kept]
	order := rankOrder{pathOf: pathOf}
	if limit > 0 && len(ranked) > limit {
		moveFirstToFront(ranked, limit, order)
		ranked = ranked[:limit]
	} else {
		heapify(ranked, order)
	}
	// ranked is a heap whose root comes last: taking the root to the end
	// again and again sorts it. The order is total (no two rows share a
	// page and a seq), so any sort gives the same.
	for end := len(ranked) - 1; end > 0; end-- {
		ranked[0], ranked[end] = ranked[end], ranked[0]
		siftDown(ranked[:end], 0, order)
	}
	return ranked
}

// rankOrder is the order of ranked rows: higher score first, then page
// path, then seq. It is a type rather than a closure so that its calls in
// the heap's loops are direct.
type rankOrder struct {
	pathOf func(item int32) string
}

func (o rankOrder) compare(a, b *rankRow) int {
	if a.score != b.score {
		return byScoreThenSeq(*a, *b)
	}
	return o.byPathThenSeq(a, b)
}

// byPathThenSeq orders rows of equal scores, which is rare: kept out of
// compare so that compare is inlined.
func (o rankOrder) byPathThenSeq(a, b *rankRow) int {
	if c := strings.Compare(o.pathOf(a.item), o.pathOf(b.item)); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// groupByPage returns rows page after page, in s.grouped, each page's
// first rows the best (see sortBest): the rows are counted by page, placed,
// then each page's best sorted.
func groupByPage(rows []rankRow, pages, best int, s *queryScratch) []rankRow {
	// next[p] is where page p's next row goes.
	next := slices.Grow(s.pageNext[:0], pages+1)[:pages+1]
	clear(next)
	for _, r := range rows {
		next[r.page+1]++
	}
	for p := 1; p < len(next); p++ {
		next[p] += next[p-1]
	}
	grouped := slices.Grow(s.grouped[:0], len(rows))[:len(rows)]
	for _, r := range rows {
		grouped[next[r.page]] = r
		next[r.page]++
	}
	s.pageNext, s.grouped = next, grouped
	// next[p] is now where page p's rows end.
	start := int32(0)
	for _, end := range next[:pages] {
		if end-start > 1 {
			sortBest(grouped[start:end], best)
		}
		start = end
	}
	return grouped
}

// maxInsertionSort bounds the rows sortBest sorts by insertion.
const maxInsertionSort = 12

// sortBest puts the best k rows of one page, by byScoreThenSeq, in order
// at the front of rows, and the others after them in no order. A page has
// few rows and k is small (pageEvidenceChunks, or the cap of rows a
// page): a partial insertion sort beats sorting them all.
func sortBest(rows []rankRow, k int) {
	if k > maxInsertionSort && len(rows) > maxInsertionSort {
		slices.SortFunc(rows, byScoreThenSeq)
		return
	}
	k = min(k, len(rows))
	for i := 1; i < len(rows); i++ {
		r := rows[i]
		j := min(i, k)
		if j == k {
			// Past the first k: r only moves in if it beats the last
			// of them, which takes its place.
			if !before(r, rows[k-1]) {
				continue
			}
			rows[i] = rows[k-1]
			j = k - 1
		}
		for j > 0 && before(r, rows[j-1]) {
			rows[j] = rows[j-1]
			j--
		}
		rows[j] = r
	}
}

// before reports whether a comes before b in byScoreThenSeq's order.
func before(a, b rankRow) bool {
	switch {
	case a.score > b.score:
		return true
	case a.score < b.score:
		return false
	}
	return a.seq < b.seq
}

// byScoreThenSeq orders rows by score, higher first, then by seq.
func byScoreThenSeq(a, b rankRow) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

// moveFirstToFront moves the k rows that come first in order to rows[:k],
// in no order: rows[:k] is kept as a heap whose root is the last of them,
// which a row that comes before it replaces.
func moveFirstToFront(rows []rankRow, k int, order rankOrder) {
	front := rows[:k]
	heapify(front, order)
	for i := k; i < len(rows); i++ {
		if order.compare(&rows[i], &front[0]) < 0 {
			front[0] = rows[i]
			siftDown(front, 0, order)
		}
	}
}

// heapify makes rows a heap whose root is the last of them in order.
func heapify(rows []rankRow, order rankOrder) {
	for i := len(rows)/2 - 1; i >= 0; i-- {
		siftDown(rows, i, order)
	}
}

// siftDown moves heap[i] down until no child of it comes after it in
// order. The row moved mostly belongs near the leaves (in a heap sort it is
// a leaf taken to the root): the hole it leaves is moved down to a leaf
// along the children that come later (one comparison a level), and the row
// then up from there to its place, which is where comparing it with both
// children on the way down would have stopped.
func siftDown(heap []rankRow, i int, order rankOrder) {
	moving := heap[i]
	top := i
	for {
		child := 2*i + 1
		if child >= len(heap) {
			break
		}
		if r := child + 1; r < len(heap) && order.compare(&heap[r], &heap[child]) > 0 {
			child = r
		}
		heap[i] = heap[child]
		i = child
	}
	for i > top {
		parent := (i - 1) / 2
		if order.compare(&moving, &heap[parent]) <= 0 {
			break
		}
		heap[i] = heap[parent]
		i = parent
	}
	heap[i] = moving
}

// singleWordTerms counts the reader's one-word terms of a query: phrases
// add to a chunk's relevance but are not more words to match, and neither
// are the terms an expansion added with a lower weight.
func singleWordTerms(ts []Term) int {
	n := 0
	for _, t := range ts {
		if len(t.Words) == 1 && !t.expansion() {
			n++
		}
	}
	return n
}

// scoreNormalizer maps relevance onto [0, 1), so that one threshold means
// about the same on a small site and a large one, for a short query and a
// long one. A word found once in one chunk of total scores about
// ln(total) in bm25-like ranking, so relevance is first taken in units of
// that; then per query word, by the square root, because a long question
// matches more words but seldom all of them; then x/(x+1) saturates. The
// logarithm and the square root, which are the query's, are computed once.
type scoreNormalizer struct {
	logTotal  float64
	sqrtWords float64
}

func newScoreNormalizer(words, total int) scoreNormalizer {
	return scoreNormalizer{
		logTotal:  math.Log(float64(max(total, 2)) + 1),
		sqrtWords: math.Sqrt(float64(max(words, 1))),
	}
}

// normalize maps one relevance.
func (n scoreNormalizer) normalize(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) {
		return 0
	}
	x := raw / n.logTotal / n.sqrtWords
	return x / (x + 1)
}
