package engine

import "sync"

// queryScratch holds the buffers one query on a domainIndex works in. They
// are kept between queries in queryScratchPool, so that a query allocates
// little more than the hits it returns.
type queryScratch struct {
	// tokens are the tokens of the term being matched; postingLists the
	// postings of each, in order, a prefix's several together, listEnds
	// where each token's end in postingLists, and lists the same as one
	// slice a token.
	tokens       []string
	postingLists []*postings
	listEnds     []int
	lists        [][]*postings
	// matchDocs and matchWTF hold the matches of prefixes and phrases,
	// which are no postings list of the index: each such match is a
	// slice of them.
	matchDocs []int32
	matchWTF  []float32
	// unionWTF accumulates a union's frequencies by chunk; it is all
	// zeros between unions.
	unionWTF []float32
	// starts, nextStarts and cursors are a phrase's positions and its
	// place in each token's postings.
	starts, nextStarts []uint32
	cursors            []int
	// matches are the query's terms found in the index, split into
	// required and optional.
	matches, required, optional []match
	// bounds, termAt and termDoc are maxScore's: the cumulated upper
	// bounds of the terms, and each term's position in its chunks and the
	// chunk there.
	bounds  []float64
	termAt  []int
	termDoc []int32
	// joined, stem and stemRunes are the compounds' (see
	// expandCompounds): a joined form, a stem, the stemmer's room; pair
	// the postings of a split word's two parts.
	joined, stem []byte
	stemRunes    [maxStemBytes]rune
	pair         [2]*postings
	// pagesSeen is countPages' set of the pages counted, a bit a page.
	pagesSeen []uint64
	// best are the best candidates so far; rows the page-level ranking's,
	// grouped the same page by page, pageNext its places of the pages.
	best     candHeap
	rows     []rankRow
	grouped  []rankRow
	pageNext []int32
	// expansion are the related words a query adds, with their weights.
	expansion []relatedTerm
	// queryTokens are the tokens of the query's single words.
	queryTokens []string
}

// queryScratchPool keeps the *queryScratch of finished queries.
var queryScratchPool = sync.Pool{New: func() any { return new(queryScratch) }}

// maxPooledMatches bounds the matches a pooled scratch holds room for: the
// buffers of a query with unusually many (prefixes of common words on a
// large domain) are left to the collector rather than kept.
const maxPooledMatches = 1 << 18

func getQueryScratch() *queryScratch {
	return queryScratchPool.Get().(*queryScratch)
}

// release returns s to the pool, unless its match buffers outgrew
// maxPooledMatches. What points into an index is cleared first, over the
// whole capacity (a query may have used more of a buffer than its length
// at the end), so that a scratch in the pool never keeps a dropped index
// alive.
func (s *queryScratch) release() {
	clear(s.postingLists[:cap(s.postingLists)])
	clear(s.lists[:cap(s.lists)])
	clear(s.matches[:cap(s.matches)])
	clear(s.required[:cap(s.required)])
	clear(s.optional[:cap(s.optional)])
	clear(s.tokens[:cap(s.tokens)])
	s.postingLists, s.lists, s.tokens = s.postingLists[:0], s.lists[:0], s.tokens[:0]
	s.matches, s.required, s.optional = s.matches[:0], s.required[:0], s.optional[:0]
	s.matchDocs, s.matchWTF = s.matchDocs[:0], s.matchWTF[:0]
	if cap(s.matchDocs) > maxPooledMatches {
		return
	}
	queryScratchPool.Put(s)
}
