package postgres

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/search"
)

// TestSearchUsesTheGINIndex checks that searchStatement finds its chunks
// through the GIN index on a domain large enough for the choice to matter:
// a sequential scan decompresses every chunk's tsvector and costs several
// times as much.
func TestSearchUsesTheGINIndex(t *testing.T) {
	t.Parallel()
	s := openFresh(t)

	// 3,000 chunks of 150 words each from a 2,000-word vocabulary, the
	// low ranks far more frequent (about as in prose).
	rng := rand.New(rand.NewPCG(7, 11))
	zipf := rand.NewZipf(rng, 1.1, 1, 1999)
	chunks := make([]search.Chunk, 3000)
	for i := range chunks {
		words := make([]string, 150)
		for j := range words {
			words[j] = vocabularyWord(int(zipf.Uint64()))
		}
		page := fmt.Sprintf("page%04d", i)
		chunks[i] = search.Chunk{ID: page, PagePath: page, PageTitle: "Page " + vocabularyWord(i%2000), Text: strings.Join(words, " "), PageHash: "h"}
	}
	if err := s.ReplacePages(t.Context(), "big", chunks, nil); err != nil {
		t.Fatalf("ReplacePages: %v", err)
	}
	// As autovacuum would: with statistics, the planner knows how common
	// each word is.
	if _, err := s.pool.Exec(t.Context(), `ANALYZE search_chunks`); err != nil {
		t.Fatalf("analyze: %v", err)
	}

	// A word nearly every chunk holds and a rarer one, also in a phrase:
	// given this query as a value, the planner scans the table.
	terms := []search.Term{
		{Words: []string{vocabularyWord(1)}},
		{Words: []string{vocabularyWord(300)}},
		{Words: []string{vocabularyWord(300), vocabularyWord(301)}},
	}
	st := sqlTerms(terms)
	var plan []byte
	err := s.pool.QueryRow(t.Context(), "EXPLAIN (FORMAT JSON) "+searchStatement,
		st.wordTerms, st.words, st.prefixes, "big", st.exprs, st.required, st.phrases,
		"", 1.0, bm25K1, bm25B, rankScale, "", "", []string{}, 300).Scan(&plan)
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	if !json.Valid(plan) || !strings.Contains(string(plan), `"Index Name": "search_chunks_tsv"`) {
		t.Errorf("the search does not use the GIN index search_chunks_tsv; plan:\n%s", plan)
	}

	hits, err := s.Search(t.Context(), "big", search.Query{Terms: terms, Limit: 5})
	if err != nil || len(hits) == 0 {
		t.Fatalf("Search: %d hits, %v", len(hits), err)
	}
}

// vocabularyWord is the i-th word of a made-up vocabulary: letters only,
// so that stemming leaves each one whole and distinct.
func vocabularyWord(i int) string {
	const letters = "bcdfghjklmnpqrstvwz"
	var b strings.Builder
	b.WriteString("zo")
	for n := i + 1; n > 0; n /= len(letters) {
		b.WriteByte(letters[n%len(letters)])
	}
	b.WriteString("ax")
	return b.String()
}
