package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// Candidate is a chunk matched, before page-level ranking, for the tests
// of rankRows.
type Candidate struct {
	Key      int64
	PagePath string
	Seq      int
	Score    float64
}

// RankCandidates ranks candidates with rankRows, as the index ranks its
// best chunks: page-level evidence, then at most maxPerPage a page (0: no
// cap), then the best limit, best first, scores replaced by the
// ranking's. No two candidates share a page and a Seq.
func RankCandidates(cands []Candidate, maxPerPage, limit int) []Candidate {
	return rankCandidatesRatio(cands, maxPerPage, limit, 0)
}

// rankCandidatesRatio is RankCandidates keeping a page's later candidates
// only when they score at least secondRatio of its first.
func rankCandidatesRatio(cands []Candidate, maxPerPage, limit int, secondRatio float64) []Candidate {
	s := getQueryScratch()
	defer s.release()
	pageNo := make(map[string]int32)
	rows := s.rows[:0]
	for i, c := range cands {
		n, ok := pageNo[c.PagePath]
		if !ok {
			n = int32(len(pageNo))
			pageNo[c.PagePath] = n
		}
		rows = append(rows, rankRow{score: c.Score, seq: c.Seq, page: n, item: int32(i)})
	}
	s.rows = rows
	ranked := rankRows(rows, len(pageNo), maxPerPage, limit, secondRatio, func(i int32) string { return cands[i].PagePath }, s)
	out := make([]Candidate, len(ranked))
	for k, r := range ranked {
		out[k] = cands[r.item]
		out[k].Score = r.score
	}
	return out
}

func TestRankCandidates(t *testing.T) {
	t.Parallel()
	cands := []Candidate{
		{Key: 1, PagePath: "lucky", Seq: 0, Score: 10},
		{Key: 2, PagePath: "broad", Seq: 0, Score: 8},
		{Key: 3, PagePath: "broad", Seq: 1, Score: 4},
		{Key: 4, PagePath: "broad", Seq: 2, Score: 2},
		{Key: 5, PagePath: "broad", Seq: 3, Score: 1},
		{Key: 6, PagePath: "other", Seq: 0, Score: 3},
	}
	keys := func(cs []Candidate) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.Key)
		}
		return out
	}
	// broad#0 gains half of 4+2: 11 > lucky's 10.
	got := RankCandidates(slices.Clone(cands), 0, 0)
	if !slices.Equal(keys(got), []int64{2, 1, 3, 4, 5, 6}) {
		t.Errorf("uncapped = %v", got)
	}
	// A chunk past the page's best three never overtakes them.
	if got[3].Score < got[4].Score {
		t.Errorf("chunk past the best three scores %v over %v", got[4].Score, got[3].Score)
	}
	if got := RankCandidates(slices.Clone(cands), 2, 0); !slices.Equal(keys(got), []int64{2, 1, 3, 6}) {
		t.Errorf("two a page = %v", keys(got))
	}
	if got := RankCandidates(slices.Clone(cands), 1, 2); !slices.Equal(keys(got), []int64{2, 1}) {
		t.Errorf("one a page, limit 2 = %v", keys(got))
	}
	if got := RankCandidates(nil, 2, 5); len(got) != 0 {
		t.Errorf("no candidates = %v", got)
	}
}

// rankCandidatesByMaps is RankCandidates as it was first written, grouping
// the pages in a map and sorting each with sort.SliceStable: the reference
// the sorted groups must agree with.
func rankCandidatesByMaps(cands []Candidate, maxPerPage, limit int) []Candidate {
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

// RankCandidates gives exactly the reference's ranking and scores, ties in
// scores included.
func TestRankCandidatesAsReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 2000 {
		var cands []Candidate
		pages := 1 + rng.IntN(40)
		used := map[[2]int]bool{}
		for range rng.IntN(400) {
			pg, seq := rng.IntN(pages), rng.IntN(20)
			if used[[2]int{pg, seq}] {
				continue
			}
			used[[2]int{pg, seq}] = true
			// Few distinct scores, so that ties are common.
			score := float64(1+rng.IntN(8)) * 0.75
			if rng.IntN(3) == 0 {
				score = rng.Float64() * 10
			}
			cands = append(cands, Candidate{Key: int64(len(cands)), PagePath: fmt.Sprintf("p%02d", pg), Seq: seq, Score: score})
		}
		maxPerPage, limit := rng.IntN(4), rng.IntN(50)
		want := rankCandidatesByMaps(slices.Clone(cands), maxPerPage, limit)
		got := RankCandidates(slices.Clone(cands), maxPerPage, limit)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d candidates, %d a page, limit %d):\n got %v\nwant %v", trial, len(cands), maxPerPage, limit, got, want)
		}
	}
}

// TestSecondPassageRatio: a page's second passage is listed only when it
// scores close to the first, so that the first results are one page each;
// a page that answers twice over keeps both.
func TestSecondPassageRatio(t *testing.T) {
	t.Parallel()
	cands := []Candidate{
		{Key: 1, PagePath: "install", Seq: 0, Score: 10},
		{Key: 2, PagePath: "install", Seq: 1, Score: 5},
		{Key: 3, PagePath: "upgrade", Seq: 0, Score: 6},
		{Key: 4, PagePath: "upgrade", Seq: 1, Score: 5.7},
		{Key: 5, PagePath: "faq", Seq: 0, Score: 4},
	}
	var got []int64
	for _, c := range rankCandidatesRatio(cands, 2, 10, 0.9) {
		got = append(got, c.Key)
	}
	if want := []int64{1, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("ranked %v, want %v", got, want)
	}
	got = got[:0]
	for _, c := range rankCandidatesRatio(cands, 2, 10, 0) {
		got = append(got, c.Key)
	}
	if len(got) != 5 {
		t.Errorf("without a ratio: %v, want every candidate", got)
	}
}
