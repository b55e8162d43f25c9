package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Candidate is a chunk an engine matched, before page-level ranking.
type Candidate struct {
	// Key is the engine's key of the chunk's row.
	Key      int64
	PagePath string
	Seq      int
	// Score is the engine's relevance times the boosts, higher is better.
	Score float64
}

// Page-level evidence: a page whose several chunks match is a better answer
// than a page with one lucky chunk, so each chunk gains pageEvidence times
// the scores of its page's other best chunks (pageEvidenceChunks of them
// count).
const (
	pageEvidence       = 0.5
	pageEvidenceChunks = 3
)

// RankCandidates is the ranking every engine applies to its best matches:
// page-level evidence, then at most maxPerPage chunks a page (0: no cap),
// then the best limit, best first. Scores are replaced by the ranking's.
// Engines pass enough candidates (several times limit) for the pages that
// can make the cut. A candidate is one chunk, so no two share a page and a
// Seq.
func RankCandidates(cands []Candidate, maxPerPage, limit int) []Candidate {
	// Each page's candidates together, its best first: the pages are
	// numbered, so that the sort compares numbers rather than paths, and
	// positions are sorted rather than the candidates themselves, whose
	// moves would cost write barriers on the paths.
	pageNo := make(map[string]int32)
	page := make([]int32, len(cands))
	order := make([]int32, len(cands))
	for i, c := range cands {
		n, ok := pageNo[c.PagePath]
		if !ok {
			n = int32(len(pageNo))
			pageNo[c.PagePath] = n
		}
		page[i], order[i] = n, int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		if c := cmp.Compare(page[i], page[j]); c != 0 {
			return c
		}
		return byScoreThenSeq(&cands[i], &cands[j])
	})
	ranked := make([]Candidate, 0, len(cands))
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && page[order[end]] == page[order[start]] {
			end++
		}
		same := order[start:end]
		start = end
		// top is the sum of the page's best chunks; a chunk gains the
		// others of them (a chunk past them gains them less the weakest,
		// so that it never overtakes them).
		var top, weakest float64
		for _, i := range same[:min(len(same), pageEvidenceChunks)] {
			top += cands[i].Score
			weakest = cands[i].Score
		}
		for k, i := range same {
			if maxPerPage > 0 && k >= maxPerPage {
				break
			}
			c := cands[i]
			if k < pageEvidenceChunks {
				c.Score += pageEvidence * (top - c.Score)
			} else {
				c.Score += pageEvidence * (top - weakest)
			}
			ranked = append(ranked, c)
		}
	}
	order = order[:len(ranked)]
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &ranked[i], &ranked[j]
		if a.Score != b.Score {
			return byScoreThenSeq(a, b)
		}
		if c := strings.Compare(a.PagePath, b.PagePath); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	if limit > 0 && len(order) > limit {
		order = order[:limit]
	}
	out := make([]Candidate, len(order))
	for k, i := range order {
		out[k] = ranked[i]
	}
	return out
}

// byScoreThenSeq orders candidates by score, higher first, then by Seq.
func byScoreThenSeq(a, b *Candidate) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	return cmp.Compare(a.Seq, b.Seq)
}

// SingleWordTerms counts the one-word terms of a query: phrases add to a
// chunk's relevance but are not more words to match.
func SingleWordTerms(ts []Term) int {
	n := 0
	for _, t := range ts {
		if len(t.Words) == 1 {
			n++
		}
	}
	return n
}

// NormalizeScore maps an engine's relevance onto [0, 1), so that one
// threshold means about the same on a small site and a large one, for a
// short query and a long one. A word found once in one chunk of total
// scores about ln(total) in bm25-like ranking, so relevance is first taken
// in units of that; then per query word, by the square root, because a long
// question matches more words but seldom all of them; scale brings an
// engine's raw figures to the same range; then x/(x+1) saturates.
func NormalizeScore(raw, scale float64, words, total int) float64 {
	if raw <= 0 || math.IsNaN(raw) {
		return 0
	}
	x := scale * raw / math.Log(float64(max(total, 2))+1) / math.Sqrt(float64(max(words, 1)))
	return x / (x + 1)
}

// RankedHits turns the ranked candidates into hits, in their order, from
// the chunks an engine read for them by key, each score normalized (see
// NormalizeScore). A candidate whose chunk was not read (its page was
// rewritten in between) is left out.
func RankedHits(ranked []Candidate, chunks map[int64]Chunk, scale float64, words, total int) []Hit {
	hits := make([]Hit, 0, len(ranked))
	for _, c := range ranked {
		if chunk, ok := chunks[c.Key]; ok {
			hits = append(hits, Hit{Chunk: chunk, Score: NormalizeScore(c.Score, scale, words, total)})
		}
	}
	return hits
}
