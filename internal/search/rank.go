package search

import (
	"math"
	"sort"
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
// can make the cut.
func RankCandidates(cands []Candidate, maxPerPage, limit int) []Candidate {
	byPage := map[string][]int{}
	for i, c := range cands {
		byPage[c.PagePath] = append(byPage[c.PagePath], i)
	}
	out := make([]Candidate, 0, len(cands))
	for _, idxs := range byPage {
		sort.SliceStable(idxs, func(a, b int) bool {
			ca, cb := cands[idxs[a]], cands[idxs[b]]
			if ca.Score != cb.Score {
				return ca.Score > cb.Score
			}
			return ca.Seq < cb.Seq
		})
		// top is the sum of the page's best chunks; a chunk gains the
		// others of them (a chunk past them gains them less the weakest,
		// so that it never overtakes them).
		var top, weakest float64
		for k, i := range idxs {
			if k < pageEvidenceChunks {
				top += cands[i].Score
				weakest = cands[i].Score
			}
		}
		for k, i := range idxs {
			if maxPerPage > 0 && k >= maxPerPage {
				break
			}
			c := cands[i]
			if k < pageEvidenceChunks {
				c.Score += pageEvidence * (top - c.Score)
			} else {
				c.Score += pageEvidence * (top - weakest)
			}
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Score != out[b].Score {
			return out[a].Score > out[b].Score
		}
		if out[a].PagePath != out[b].PagePath {
			return out[a].PagePath < out[b].PagePath
		}
		return out[a].Seq < out[b].Seq
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
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
