package search

import (
	"slices"
	"testing"
)

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

func TestRankedHits(t *testing.T) {
	t.Parallel()
	ranked := []Candidate{{Key: 7, Score: 9}, {Key: 3, Score: 4}, {Key: 5, Score: 1}}
	chunks := map[int64]Chunk{3: {ID: "b"}, 7: {ID: "a"}, 99: {ID: "unranked"}}
	hits := RankedHits(ranked, chunks, 1, 2, 100)
	if len(hits) != 2 || hits[0].ID != "a" || hits[1].ID != "b" {
		t.Fatalf("hits = %+v, want a then b, the unread candidate 5 left out", hits)
	}
	if want := NormalizeScore(9, 1, 2, 100); hits[0].Score != want || hits[1].Score >= hits[0].Score {
		t.Errorf("scores = %v, %v; want %v first, then lower", hits[0].Score, hits[1].Score, want)
	}
}
