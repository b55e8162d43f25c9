package postgres

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/search"
)

var _ search.Index = (*Store)(nil)

// textConfig is the text search configuration of the index and the
// queries: English stemming, as the SQLite side's porter tokenizer does
// ('simple' measured within one question of it on the eval corpora).
// CJK text arrives as bigrams (search.Analyze), which the parser keeps as
// words.
const textConfig = "english"

// rankWeights are ts_rank's weights of the fields, in its order D (body),
// C (keywords), B (headings), A (title): the ratios of the SQLite store's
// bm25 column weights (1, 2, 3, 6).
const rankWeights = "{0.1667, 0.3333, 0.5, 1.0}"

// rankNormalization is ts_rank's length normalization: none. Chunks are
// already section-sized; dividing by 1 + the log of the length (1) cost
// recall on the mintlify question set (recall@1 0.444 against 0.556).
const rankNormalization = 0

// scoreScale maps idf-weighted ts_rank relevance onto the range where
// x/(x+1) spreads hits as the SQLite store's scores do: the median top
// score of the answerable questions of the three eval corpora is within
// 0.03 of SQLite's.
const scoreScale = 6.0

// Candidates read per hit asked for: enough for page-level ranking to see
// every page that can make the cut.
const (
	candidatesPerHit = 10
	minCandidates    = 300
)

const searchChunkColumns = `c.chunk_id, c.page_path, c.seq, c.anchor, c.url, c.page_title, c.heading, c.breadcrumb,
	c.text, c.overlap, c.keywords, c.version, c.language, c.groups, c.boost, c.page_hash`

// ReplacePages replaces the chunks of the pages the chunks belong to and
// deletes the chunks of removedPages, in one transaction.
func (s *Store) ReplacePages(ctx context.Context, domain string, chunks []search.Chunk, removedPages []string) error {
	pages := map[string]bool{}
	var order []string
	for _, c := range chunks {
		if !pages[c.PagePath] {
			pages[c.PagePath] = true
			order = append(order, c.PagePath)
		}
	}
	for _, p := range removedPages {
		if !pages[p] {
			pages[p] = true
			order = append(order, p)
		}
	}
	seen := make(map[string]bool, len(chunks))
	for _, c := range chunks {
		if seen[c.ID] {
			return fmt.Errorf("replace search pages of %s: chunk %q appears twice", domain, c.ID)
		}
		seen[c.ID] = true
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if len(order) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM search_chunks WHERE domain = $1 AND page_path = ANY($2)`, domain, order); err != nil {
				return fmt.Errorf("delete chunks: %w", err)
			}
		}
		const batchSize = 500
		for start := 0; start < len(chunks); start += batchSize {
			b := &pgx.Batch{}
			for _, c := range chunks[start:min(start+batchSize, len(chunks))] {
				c = withoutNUL(c)
				f := search.IndexFields(c)
				b.Queue(`INSERT INTO search_chunks (domain, chunk_id, page_path, seq, anchor, url, page_title, heading,
    breadcrumb, text, overlap, keywords, version, language, groups, boost, rank_boost, page_hash, tsv)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
    setweight(to_tsvector('`+textConfig+`', $19), 'A') || setweight(to_tsvector('`+textConfig+`', $20), 'B') ||
    setweight(to_tsvector('`+textConfig+`', $21), 'C') || setweight(to_tsvector('`+textConfig+`', $22), 'D'))`,
					domain, c.ID, c.PagePath, c.Seq, c.Anchor, c.URL, c.PageTitle, c.Heading,
					nonNil(c.Breadcrumb), c.Text, c.Overlap, c.Keywords, c.Version, c.Language, nonNil(c.Groups),
					max(c.Boost, 0), search.RankBoost(c.Boost), c.PageHash,
					f.Title, f.Headings, f.Keywords, f.Body)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				if isUniqueViolation(err) {
					return fmt.Errorf("a chunk id appears twice: %w", err)
				}
				return fmt.Errorf("insert chunks: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("replace search pages of %s: %w", domain, err)
	}
	return nil
}

// PageHashes returns the hash of each indexed page of the domain.
func (s *Store) PageHashes(ctx context.Context, domain string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT page_path, MIN(page_hash) FROM search_chunks WHERE domain = $1 GROUP BY page_path`, domain)
	if err != nil {
		return nil, fmt.Errorf("list indexed pages of %s: %w", domain, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var p, h string
		if err := rows.Scan(&p, &h); err != nil {
			return nil, fmt.Errorf("list indexed pages of %s: %w", domain, err)
		}
		out[p] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list indexed pages of %s: %w", domain, err)
	}
	return out, nil
}

// Search runs a query with PostgreSQL full-text search: the terms' tsquery
// matched against the weighted tsvector through the GIN index, ranked by
// ts_rank times the chunk's boost and the current page's boost, filtered;
// then search.RankCandidates over the best of those.
func (s *Store) Search(ctx context.Context, domain string, q search.Query) ([]search.Hit, error) {
	parts := termQueries(q.Terms)
	if len(parts) == 0 {
		return nil, nil
	}
	expr := joinQuery(q.Terms, parts)
	limit := q.Limit
	if limit <= 0 {
		limit = search.DefaultPageSize
	}
	pathBoost := q.PathBoost
	if pathBoost <= 0 || q.BoostPath == "" {
		pathBoost = 1
	}
	// ts_rank knows nothing of how rare a word is, so each term is ranked
	// on its own and weighted by its inverse document frequency, as bm25
	// does: the chunks matching the whole query are found through the GIN
	// index, then scored term by term.
	rows, err := s.pool.Query(ctx, `
WITH t AS MATERIALIZED (
    SELECT to_tsquery('`+textConfig+`', x) AS q FROM unnest($1::text[]) AS u(x)
), df AS MATERIALIZED (
    SELECT t.q, (SELECT count(*) FROM search_chunks c WHERE c.domain = $4 AND c.tsv @@ t.q) AS n FROM t
), total AS MATERIALIZED (
    SELECT count(*) AS n FROM search_chunks WHERE domain = $4
), w AS MATERIALIZED (
    SELECT df.q, ln(1 + (total.n - df.n + 0.5) / (df.n + 0.5)) AS idf FROM df, total WHERE df.n > 0
)
SELECT c.id, c.page_path, c.seq, (SELECT n FROM total),
    (SELECT COALESCE(sum(CASE WHEN c.tsv @@ w.q THEN w.idf * ts_rank('`+rankWeights+`', c.tsv, w.q, `+fmt.Sprint(rankNormalization)+`) ELSE 0 END), 0) FROM w)
    * c.rank_boost * (CASE WHEN c.page_path = $2 THEN $3::float8 ELSE 1 END) AS score
FROM search_chunks c
WHERE c.domain = $4 AND c.tsv @@ to_tsquery('`+textConfig+`', $9)
  AND ($5 = '' OR c.version = '' OR c.version = $5)
  AND ($6 = '' OR c.language = '' OR lower(c.language) = lower($6))
  AND (cardinality(c.groups) = 0 OR c.groups && $7::text[])
ORDER BY score DESC
LIMIT $8`,
		parts, q.BoostPath, pathBoost, domain, q.Filter.Version, q.Filter.Language, nonNil(q.Filter.Groups),
		max(candidatesPerHit*limit, minCandidates), expr)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	var cands []search.Candidate
	var total int
	for rows.Next() {
		var c search.Candidate
		if err := rows.Scan(&c.Key, &c.PagePath, &c.Seq, &total, &c.Score); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search %s: %w", domain, err)
		}
		cands = append(cands, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	if len(cands) == 0 {
		return nil, nil
	}
	ranked := search.RankCandidates(cands, q.MaxPerPage, limit)
	return s.hits(ctx, domain, ranked, search.SingleWordTerms(q.Terms), total)
}

// hits reads the ranked chunks and scores them.
func (s *Store) hits(ctx context.Context, domain string, ranked []search.Candidate, nTerms, total int) ([]search.Hit, error) {
	keys := make([]int64, len(ranked))
	pos := make(map[int64]int, len(ranked))
	for i, c := range ranked {
		keys[i], pos[c.Key] = c.Key, i
	}
	rows, err := s.pool.Query(ctx, `SELECT c.id, `+searchChunkColumns+` FROM search_chunks c WHERE c.id = ANY($1)`, keys)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	defer rows.Close()
	hits := make([]search.Hit, len(ranked))
	for rows.Next() {
		var key int64
		var c search.Chunk
		if err := scanChunk(rows, &c, &key); err != nil {
			return nil, fmt.Errorf("search %s: %w", domain, err)
		}
		i := pos[key]
		hits[i] = search.Hit{Chunk: c, Score: search.NormalizeScore(ranked[i].Score, scoreScale, nTerms, total)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	// A page rewritten between the two queries loses its chunks here.
	out := hits[:0]
	for _, h := range hits {
		if h.ID != "" {
			out = append(out, h)
		}
	}
	return out, nil
}

// Page returns an indexed page as text, from its chunks.
func (s *Store) Page(ctx context.Context, domain, path string) (search.PageText, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+searchChunkColumns+` FROM search_chunks c WHERE c.domain = $1 AND c.page_path = $2 ORDER BY c.seq`, domain, path)
	if err != nil {
		return search.PageText{}, fmt.Errorf("read page %s of %s: %w", path, domain, err)
	}
	defer rows.Close()
	var chunks []search.Chunk
	for rows.Next() {
		var c search.Chunk
		if err := scanChunk(rows, &c); err != nil {
			return search.PageText{}, fmt.Errorf("read page %s of %s: %w", path, domain, err)
		}
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
		return search.PageText{}, fmt.Errorf("read page %s of %s: %w", path, domain, err)
	}
	pt, ok := search.AssemblePage(chunks)
	if !ok {
		return search.PageText{}, fmt.Errorf("page %q of %s: %w", path, domain, search.ErrPageNotFound)
	}
	return pt, nil
}

// scanChunk scans searchChunkColumns, after the extra columns before them.
func scanChunk(rows pgx.Rows, c *search.Chunk, extra ...any) error {
	dest := []any{&c.ID, &c.PagePath, &c.Seq, &c.Anchor, &c.URL, &c.PageTitle, &c.Heading, &c.Breadcrumb,
		&c.Text, &c.Overlap, &c.Keywords, &c.Version, &c.Language, &c.Groups, &c.Boost, &c.PageHash}
	if err := rows.Scan(append(extra, dest...)...); err != nil {
		return err
	}
	return nil
}

// termQueries writes each term as a to_tsquery expression, "" for a term
// with no letters or digits: a phrase's words joined by <->, a prefix
// term's last word ending in :*. Words are cut to their letters and digits
// and each quoted, so no user text is read as tsquery syntax.
func termQueries(terms []search.Term) []string {
	out := make([]string, 0, len(terms))
	n := 0
	for _, t := range terms {
		var lexemes []string
		for _, w := range t.Words {
			lexemes = append(lexemes, strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })...)
		}
		if len(lexemes) == 0 {
			out = append(out, "")
			continue
		}
		for i, l := range lexemes {
			lexemes[i] = "'" + l + "'"
		}
		if t.Prefix {
			lexemes[len(lexemes)-1] += ":*"
		}
		out = append(out, strings.Join(lexemes, " <-> "))
		n++
	}
	if n == 0 {
		return nil
	}
	return out
}

// joinQuery writes the whole query from the terms' expressions (see
// termQueries): required terms joined by &, with the | of the optional
// terms.
func joinQuery(terms []search.Term, parts []string) string {
	var req, opt []string
	for i, t := range terms {
		if parts[i] == "" {
			continue
		}
		if t.Required {
			req = append(req, "("+parts[i]+")")
		} else {
			opt = append(opt, "("+parts[i]+")")
		}
	}
	all := req
	if len(opt) > 0 {
		all = append(all, "("+strings.Join(opt, " | ")+")")
	}
	return strings.Join(all, " & ")
}

// withoutNUL drops the NUL characters of a chunk's text, which PostgreSQL's
// text cannot hold (a binary file read as a page may have some).
func withoutNUL(c search.Chunk) search.Chunk {
	clean := func(s string) string { return strings.ReplaceAll(s, "\x00", "") }
	c.ID, c.PagePath, c.Anchor, c.URL = clean(c.ID), clean(c.PagePath), clean(c.Anchor), clean(c.URL)
	c.PageTitle, c.Heading, c.Text, c.Keywords = clean(c.PageTitle), clean(c.Heading), clean(c.Text), clean(c.Keywords)
	c.Version, c.Language, c.PageHash = clean(c.Version), clean(c.Language), clean(c.PageHash)
	c.Breadcrumb = cleanAll(c.Breadcrumb, clean)
	c.Groups = cleanAll(c.Groups, clean)
	return c
}

func cleanAll(ss []string, clean func(string) string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = clean(s)
	}
	return out
}
