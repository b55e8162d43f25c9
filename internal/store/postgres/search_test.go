package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// TestSearchTermStatistics checks that the term statistics ReplacePages
// keeps always equal a count made afresh from the chunks, through
// rewrites, removals and concurrent writers of one domain.
func TestSearchTermStatistics(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	s := open(t, url)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.WithoutCancel(ctx)) })

	page := func(path, title string, texts ...string) []search.Chunk {
		var out []search.Chunk
		for i, text := range texts {
			out = append(out, search.Chunk{ID: path + "#" + string(rune('a'+i)), PagePath: path, Seq: i,
				PageTitle: title, Text: text, PageHash: "h-" + title})
		}
		return out
	}
	steps := []struct {
		name    string
		domain  string
		chunks  []search.Chunk
		removed []string
	}{
		{"build", "tea", append(page("brewing", "Brewing", "Green tea wants water at 80 degrees.", "Black tea wants boiling water."),
			page("storage", "Storage", "Keep leaves dry and away from light.")...), nil},
		{"another domain", "coffee", page("brewing", "Brewing", "Coffee wants water just off the boil."), nil},
		{"rewrite a page", "tea", page("brewing", "Brewing again", "Oolong tea wants water at 90 degrees."), nil},
		{"remove a page", "tea", nil, []string{"storage", "no/such/page"}},
		{"rewrite and remove", "tea", page("storage", "Storage", "Tins keep tea fresh."), []string{"brewing"}},
		{"remove the rest", "tea", nil, []string{"storage"}},
	}
	for _, st := range steps {
		if err := s.ReplacePages(ctx, st.domain, st.chunks, st.removed); err != nil {
			t.Fatalf("%s: ReplacePages: %v", st.name, err)
		}
		checkTermStatistics(t, conn, st.name)
	}

	// Writers of one domain, each rewriting its own pages, at once.
	errs := make(chan error, 8)
	for w := range 8 {
		go func() {
			p := string(rune('a' + w))
			for i := range 5 {
				errs <- s.ReplacePages(ctx, "tea", page("p"+p, p, "shared words here", "and "+p+" words "+string(rune('a'+i))), nil)
			}
		}()
	}
	for range 8 * 5 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent ReplacePages: %v", err)
		}
	}
	checkTermStatistics(t, conn, "concurrent writers")
}

// checkTermStatistics fails the test when search_terms or
// search_domain_stats differ from a count of the chunks.
func checkTermStatistics(t *testing.T, conn *pgx.Conn, step string) {
	t.Helper()
	const counted = `SELECT c.domain, l.lexeme, count(*)::int FROM search_chunks c, unnest(tsvector_to_array(c.tsv)) AS l(lexeme) GROUP BY 1, 2`
	const kept = `SELECT domain, lexeme, chunks FROM search_terms`
	var diff int
	err := conn.QueryRow(t.Context(), `SELECT count(*) FROM ((`+counted+` EXCEPT `+kept+`) UNION ALL (`+kept+` EXCEPT `+counted+`)) d`).Scan(&diff)
	if err != nil {
		t.Fatalf("%s: compare term counts: %v", step, err)
	}
	if diff != 0 {
		t.Errorf("%s: search_terms differs from the chunks in %d rows", step, diff)
	}
	const countedTotals = `SELECT domain, count(*), sum(tokens) FROM search_chunks GROUP BY domain`
	const keptTotals = `SELECT domain, chunks, tokens FROM search_domain_stats WHERE chunks > 0`
	err = conn.QueryRow(t.Context(), `SELECT count(*) FROM ((`+countedTotals+` EXCEPT `+keptTotals+`) UNION ALL (`+keptTotals+` EXCEPT `+countedTotals+`)) d`).Scan(&diff)
	if err != nil {
		t.Fatalf("%s: compare domain totals: %v", step, err)
	}
	if diff != 0 {
		t.Errorf("%s: search_domain_stats differs from the chunks in %d rows", step, diff)
	}
}
