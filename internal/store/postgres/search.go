package postgres

import (
	"context"
	"fmt"
	"slices"
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

// Ranking is bm25 (k1 1.2, b 0.75, as SQLite FTS5 ranks) with the
// SQLite store's field weights (title 6, headings 3, keywords 2, body 1).
// A term's weighted frequency in a chunk is ts_rank_cd of the term with
// no normalization, which sums the weights of its occurrences (of a
// phrase's, the harmonic mean of its words' weights): rankWeights are the
// field weights over 6, in ts_rank_cd's order D (body), C (keywords),
// B (headings), A (title), and the sum is multiplied back by 6.
const (
	rankWeights = "{0.16666667, 0.33333333, 0.5, 1.0}"
	rankScale   = 6.0
	bm25K1      = 1.2
	bm25B       = 0.75
)

// scoreScale maps relevance onto [0, 1) (search.NormalizeScore): the
// SQLite store's, as the ranking is the same bm25. The median top score
// of the eval corpora's answerable questions is within 0.05 of SQLite's.
const scoreScale = 1.0

// Candidates read per hit asked for: enough for page-level ranking to see
// every page that can make the cut.
const (
	candidatesPerHit = 10
	minCandidates    = 300
)

const searchChunkColumns = `c.chunk_id, c.page_path, c.seq, c.anchor, c.url, c.page_title, c.heading, c.breadcrumb,
	c.text, c.overlap, c.keywords, c.version, c.language, c.groups, c.boost, c.page_hash`

// ReplacePages replaces the chunks of the pages the chunks belong to and
// deletes the chunks of removedPages, in one transaction that also keeps
// the domain's term statistics (search_terms, search_domain_stats).
func (s *Store) ReplacePages(ctx context.Context, domain string, chunks []search.Chunk, removedPages []string) error {
	pages := map[string]bool{}
	var order []string
	for _, c := range chunks {
		if !pages[c.PagePath] {
			pages[c.PagePath] = true
			order = append(order, c.PagePath)
		}
	}
	written := slices.Clone(order)
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
		// The statistics are read, changed and written back: one writer
		// per domain at a time.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockSearchDomain, domain); err != nil {
			return fmt.Errorf("lock the domain's index: %w", err)
		}
		if len(order) > 0 {
			if err := uncountPages(ctx, tx, domain, order); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM search_chunks WHERE domain = $1 AND page_path = ANY($2)`, domain, order); err != nil {
				return fmt.Errorf("delete chunks: %w", err)
			}
		}
		if err := insertChunks(ctx, tx, domain, chunks); err != nil {
			return err
		}
		if len(chunks) > 0 {
			if err := countPages(ctx, tx, domain, written); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO search_versions (domain, version) VALUES ($1, 1)
ON CONFLICT (domain) DO UPDATE SET version = search_versions.version + 1`, domain); err != nil {
			return fmt.Errorf("raise the index version: %w", err)
		}
		// Delivered at commit, to the processes holding the domain.
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, s.searchChannel(), domain); err != nil {
			return fmt.Errorf("notify the index change: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("replace search pages of %s: %w", domain, err)
	}
	if len(chunks) >= mergePendingAfter {
		// New GIN entries wait in the index's pending list, which every
		// search reads through until it is merged; merge a large batch now
		// rather than at the next vacuum.
		if _, err := s.pool.Exec(ctx, `SELECT gin_clean_pending_list('search_chunks_tsv'::regclass)`); err != nil {
			s.log.Warn("merge the search index's pending entries", "domain", domain, "err", err)
		}
	}
	return nil
}

// mergePendingAfter is the number of chunks written at once from which
// ReplacePages merges the GIN index's pending list.
const mergePendingAfter = 200

// insertChunks writes chunks, with their weighted tsvector and length.
func insertChunks(ctx context.Context, tx pgx.Tx, domain string, chunks []search.Chunk) error {
	const batchSize = 500
	for start := 0; start < len(chunks); start += batchSize {
		b := &pgx.Batch{}
		for _, c := range chunks[start:min(start+batchSize, len(chunks))] {
			c = withoutNUL(c)
			f := search.IndexFields(c)
			b.Queue(`INSERT INTO search_chunks (domain, chunk_id, page_path, seq, anchor, url, page_title, heading,
    breadcrumb, text, overlap, keywords, version, language, groups, boost, rank_boost, page_hash, tokens, tsv)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
    setweight(to_tsvector('`+textConfig+`', $20), 'A') || setweight(to_tsvector('`+textConfig+`', $21), 'B') ||
    setweight(to_tsvector('`+textConfig+`', $22), 'C') || setweight(to_tsvector('`+textConfig+`', $23), 'D'))`,
				domain, c.ID, c.PagePath, c.Seq, c.Anchor, c.URL, c.PageTitle, c.Heading,
				nonNil(c.Breadcrumb), c.Text, c.Overlap, c.Keywords, c.Version, c.Language, nonNil(c.Groups),
				max(c.Boost, 0), search.RankBoost(c.Boost), c.PageHash, f.Tokens(),
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
}

// pageTerms lists the lexemes of the chunks of pages $2 of domain $1, each
// with the number of chunks holding it; pageTotals counts those chunks and
// sums their lengths.
const (
	pageTerms = `SELECT l.lexeme, count(*) AS n
    FROM search_chunks c, unnest(tsvector_to_array(c.tsv)) AS l(lexeme)
    WHERE c.domain = $1 AND c.page_path = ANY($2) GROUP BY l.lexeme`
	pageTotals = `SELECT count(*) AS n, COALESCE(sum(tokens), 0) AS tokens
    FROM search_chunks WHERE domain = $1 AND page_path = ANY($2)`
)

// countPages adds the chunks of pages to the domain's term statistics.
func countPages(ctx context.Context, tx pgx.Tx, domain string, pages []string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO search_terms (domain, lexeme, chunks)
SELECT $1, t.lexeme, t.n FROM (`+pageTerms+`) t
ON CONFLICT (domain, lexeme) DO UPDATE SET chunks = search_terms.chunks + EXCLUDED.chunks`, domain, pages); err != nil {
		return fmt.Errorf("count the index's terms: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO search_domain_stats (domain, chunks, tokens)
SELECT $1, t.n, t.tokens FROM (`+pageTotals+`) t
ON CONFLICT (domain) DO UPDATE SET chunks = search_domain_stats.chunks + EXCLUDED.chunks,
    tokens = search_domain_stats.tokens + EXCLUDED.tokens`, domain, pages); err != nil {
		return fmt.Errorf("count the index's chunks: %w", err)
	}
	return nil
}

// uncountPages takes the chunks of pages away from the domain's term
// statistics, before they are deleted.
func uncountPages(ctx context.Context, tx pgx.Tx, domain string, pages []string) error {
	// Lexemes no chunk holds any more are deleted, the others counted
	// down: two sets of rows, so one statement does both.
	if _, err := tx.Exec(ctx, `WITH gone AS MATERIALIZED (`+pageTerms+`),
dropped AS (
    DELETE FROM search_terms t USING gone
    WHERE t.domain = $1 AND t.lexeme = gone.lexeme AND t.chunks <= gone.n
)
UPDATE search_terms t SET chunks = t.chunks - gone.n FROM gone
WHERE t.domain = $1 AND t.lexeme = gone.lexeme AND t.chunks > gone.n`, domain, pages); err != nil {
		return fmt.Errorf("count the index's terms: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE search_domain_stats s SET chunks = s.chunks - t.n, tokens = s.tokens - t.tokens
FROM (`+pageTotals+`) t WHERE s.domain = $1`, domain, pages); err != nil {
		return fmt.Errorf("count the index's chunks: %w", err)
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

// searchStatement is Search's query: $1–$3 the words of the terms (term
// ordinal, word, prefix), $4 the domain, $5–$7 the terms (to_tsquery
// expression, required, phrase), $8 and $9 the current page and its boost,
// $10–$12 bm25's k1 and b and rankScale, $13–$15 the filters (version,
// language, groups), $16 the number of candidates.
//
// The match query is made from the statistics inside the statement, so
// the planner cannot see how many chunks it matches and takes the GIN
// index. Given the query as a value, it counts the matches but does not
// charge for decompressing each row's tsvector, and picks a sequential
// scan of the domain several times slower (TestSearchUsesTheGINIndex).
const searchStatement = `WITH words AS MATERIALIZED (
    SELECT w.term, (tsvector_to_array(to_tsvector('` + textConfig + `', w.word)))[1] AS lexeme, w.prefix
    FROM unnest($1::int[], $2::text[], $3::bool[]) AS w(term, word, prefix)
), stats AS MATERIALIZED (
    SELECT s.chunks::float8 AS n, greatest(s.tokens::float8 / greatest(s.chunks, 1), 1) AS avglen
    FROM search_domain_stats s WHERE s.domain = $4 AND s.chunks > 0
), freq AS MATERIALIZED (
    -- A phrase is taken to be as common as its rarest word, a prefix as
    -- all the lexemes it begins; stop words count for nothing.
    SELECT w.term, min(CASE
        WHEN w.prefix THEN (SELECT COALESCE(sum(t.chunks), 0) FROM search_terms t
            WHERE t.domain = $4 AND starts_with(t.lexeme, w.lexeme))
        ELSE COALESCE((SELECT t.chunks FROM search_terms t WHERE t.domain = $4 AND t.lexeme = w.lexeme), 0)
    END) AS df
    FROM words w WHERE w.lexeme IS NOT NULL GROUP BY w.term
), terms AS MATERIALIZED (
    SELECT e.expr, to_tsquery('` + textConfig + `', e.expr) AS q, e.required, e.phrase, f.df,
        ln(1 + (st.n - least(f.df, st.n) + 0.5) / (least(f.df, st.n) + 0.5)) AS idf
    FROM unnest($5::text[], $6::bool[], $7::bool[]) WITH ORDINALITY AS e(expr, required, phrase, term)
    JOIN freq f ON f.term = e.term CROSS JOIN stats st
), m AS MATERIALIZED (
    -- Every required term and one of the others.
    SELECT CASE WHEN bool_or(required AND df = 0) THEN NULL ELSE to_tsquery('` + textConfig + `', NULLIF(concat_ws(' & ',
        string_agg('(' || expr || ')', ' & ') FILTER (WHERE required),
        '(' || string_agg(expr, ' | ') FILTER (WHERE NOT required AND df > 0) || ')'), '')) END AS q
    FROM terms
)
SELECT c.id, c.page_path, c.seq, st.n::bigint,
    r.rel * c.rank_boost * (CASE WHEN c.page_path = $8 THEN $9::float8 ELSE 1 END) AS score
FROM search_chunks c
CROSS JOIN stats st
-- One copy of the tsvector, decompressed once, for all the terms.
CROSS JOIN LATERAL (SELECT c.tsv || ''::tsvector AS v OFFSET 0) d
CROSS JOIN LATERAL (
    SELECT sum(t.idf * x.tf * ($10 + 1) / (x.tf + $10 * (1 - $11 + $11 * c.tokens / st.avglen))) AS rel
    FROM terms t
    -- Most terms are not in most chunks: a lookup is cheaper than ranking.
    CROSS JOIN LATERAL (SELECT CASE WHEN NOT d.v @@ t.q THEN 0
        ELSE ts_rank_cd('` + rankWeights + `', d.v, t.q, 0) * $12 END AS tf) x
    WHERE t.df > 0
) r
WHERE c.domain = $4 AND c.tsv @@ (SELECT q FROM m)
  AND ($13 = '' OR c.version = '' OR c.version = $13)
  AND ($14 = '' OR c.language = '' OR lower(c.language) = lower($14))
  AND (cardinality(c.groups) = 0 OR c.groups && $15::text[])
ORDER BY score DESC
LIMIT $16`

// Search runs a query with PostgreSQL full-text search in one statement:
// each term's document frequency comes from the term statistics, the
// chunks to rank from the GIN index, and each of those is scored by bm25 over its weighted tsvector, times the chunk's boost
// and the current page's; then search.RankCandidates over the best.
func (s *Store) Search(ctx context.Context, domain string, q search.Query) ([]search.Hit, error) {
	st := sqlTerms(q.Terms)
	if len(st.exprs) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = search.DefaultPageSize
	}
	pathBoost := q.PathBoost
	if pathBoost <= 0 || q.BoostPath == "" {
		pathBoost = 1
	}
	rows, err := s.pool.Query(ctx, searchStatement,
		st.wordTerms, st.words, st.prefixes, domain, st.exprs, st.required, st.phrases,
		q.BoostPath, pathBoost, bm25K1, bm25B, rankScale,
		q.Filter.Version, q.Filter.Language, nonNil(q.Filter.Groups),
		max(candidatesPerHit*limit, minCandidates))
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
	for i, c := range ranked {
		keys[i] = c.Key
	}
	rows, err := s.pool.Query(ctx, `SELECT c.id, `+searchChunkColumns+` FROM search_chunks c WHERE c.id = ANY($1)`, keys)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	defer rows.Close()
	chunks := make(map[int64]search.Chunk, len(ranked))
	for rows.Next() {
		var key int64
		var c search.Chunk
		if err := scanChunk(rows, &c, &key); err != nil {
			return nil, fmt.Errorf("search %s: %w", domain, err)
		}
		chunks[key] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	return search.RankedHits(ranked, chunks, scoreScale, nTerms, total), nil
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

// queryTerms are a query's terms as Search's statement takes them: per
// term, its to_tsquery expression, whether it is required and whether it
// is a phrase; per word of each term, the term's ordinal (from 1), the word
// and whether it is a prefix.
type queryTerms struct {
	exprs     []string
	required  []bool
	phrases   []bool
	wordTerms []int32
	words     []string
	prefixes  []bool
}

// sqlTerms writes each term as a to_tsquery expression and lists its words,
// leaving out terms with no letters or digits: a phrase's words are joined
// by <->, a prefix term's last word ends in :*. Words are cut to their
// letters and digits and each quoted, so no user text is read as tsquery
// syntax.
func sqlTerms(terms []search.Term) queryTerms {
	var out queryTerms
	for _, t := range terms {
		var words []string
		for _, w := range t.Words {
			words = append(words, strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })...)
		}
		if len(words) == 0 {
			continue
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		if t.Prefix {
			quoted[len(quoted)-1] += ":*"
		}
		out.exprs = append(out.exprs, strings.Join(quoted, " <-> "))
		out.required = append(out.required, t.Required)
		out.phrases = append(out.phrases, len(words) > 1)
		for i, w := range words {
			out.wordTerms = append(out.wordTerms, int32(len(out.exprs)))
			out.words = append(out.words, w)
			out.prefixes = append(out.prefixes, t.Prefix && i == len(words)-1)
		}
	}
	return out
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
