package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/docsmith/docsmith/internal/search"
)

var _ search.Index = (*Store)(nil)

// bm25 weights of the search_fts columns (title, headings, keywords, body):
// a word in the page title says more about a chunk than the same word in
// its text.
const (
	weightTitle    = 6.0
	weightHeadings = 3.0
	weightKeywords = 2.0
	weightBody     = 1.0
)

// searchChunkColumns are what scanChunk reads, from search_chunks AS c.
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
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		delFTS, err := tx.PrepareContext(ctx, `DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_chunks WHERE domain = ? AND page_path = ?)`)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer func() { _ = delFTS.Close() }()
		delRows, err := tx.PrepareContext(ctx, `DELETE FROM search_chunks WHERE domain = ? AND page_path = ?`)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer func() { _ = delRows.Close() }()
		for _, p := range order {
			if _, err := delFTS.ExecContext(ctx, domain, p); err != nil {
				return fmt.Errorf("delete full-text rows of %s: %w", p, err)
			}
			if _, err := delRows.ExecContext(ctx, domain, p); err != nil {
				return fmt.Errorf("delete chunks of %s: %w", p, err)
			}
		}
		insRow, err := tx.PrepareContext(ctx, `INSERT INTO search_chunks (domain, chunk_id, page_path, seq, anchor, url, page_title, heading,
			breadcrumb, text, overlap, keywords, version, language, groups, boost, rank_boost, page_hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer func() { _ = insRow.Close() }()
		insFTS, err := tx.PrepareContext(ctx, `INSERT INTO search_fts (rowid, title, headings, keywords, body) VALUES (?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer func() { _ = insFTS.Close() }()
		for _, c := range chunks {
			crumbs, err := json.Marshal(nonNil(c.Breadcrumb))
			if err != nil {
				return fmt.Errorf("encode breadcrumb of %s: %w", c.ID, err)
			}
			groups, err := json.Marshal(nonNil(c.Groups))
			if err != nil {
				return fmt.Errorf("encode groups of %s: %w", c.ID, err)
			}
			res, err := insRow.ExecContext(ctx, domain, c.ID, c.PagePath, c.Seq, c.Anchor, c.URL, c.PageTitle, c.Heading,
				string(crumbs), c.Text, c.Overlap, c.Keywords, c.Version, c.Language, string(groups), max(c.Boost, 0), search.RankBoost(c.Boost), c.PageHash)
			if err != nil {
				if isUniqueViolation(err) {
					return fmt.Errorf("chunk %q appears twice: %w", c.ID, err)
				}
				return fmt.Errorf("insert chunk %s: %w", c.ID, err)
			}
			id, err := res.LastInsertId()
			if err != nil {
				return fmt.Errorf("insert chunk %s: %w", c.ID, err)
			}
			f := search.IndexFields(c)
			if _, err := insFTS.ExecContext(ctx, id, f.Title, f.Headings, f.Keywords, f.Body); err != nil {
				return fmt.Errorf("index chunk %s: %w", c.ID, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE search_stats SET chunks = (SELECT count(*) FROM search_chunks) WHERE id = 1`); err != nil {
			return fmt.Errorf("count chunks: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_versions (domain, version) VALUES (?, 1)
ON CONFLICT (domain) DO UPDATE SET version = search_versions.version + 1`, domain); err != nil {
			return fmt.Errorf("raise the index version: %w", err)
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
	rows, err := s.read.QueryContext(ctx, `SELECT page_path, MIN(page_hash) FROM search_chunks WHERE domain = ? GROUP BY page_path`, domain)
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

// Search runs a query with FTS5: the terms' MATCH expression ranked by bm25
// over the weighted columns, times the chunk's boost and the current page's
// boost, filtered; then search.RankCandidates over the best of those.
func (s *Store) Search(ctx context.Context, domain string, q search.Query) ([]search.Hit, error) {
	expr := matchExpression(q.Terms)
	if expr == "" {
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
	groups, err := json.Marshal(nonNil(q.Filter.Groups))
	if err != nil {
		return nil, fmt.Errorf("search %s: encode groups: %w", domain, err)
	}
	// Rank on the short columns, which come first in each row; the text
	// is read for the chunks returned only.
	rows, err := s.read.QueryContext(ctx, `
WITH m AS (
    SELECT rowid AS id, -bm25(search_fts, ?, ?, ?, ?) AS rel FROM search_fts WHERE search_fts MATCH ?
)
SELECT c.id, c.page_path, c.seq, m.rel * c.rank_boost * (CASE WHEN c.page_path = ? THEN ? ELSE 1 END) AS score
FROM m JOIN search_chunks c ON c.id = m.id
WHERE c.domain = ?
  AND (? = '' OR c.version = '' OR c.version = ?)
  AND (? = '' OR c.language = '' OR lower(c.language) = lower(?))
  AND (c.groups = '[]' OR EXISTS (SELECT 1 FROM json_each(c.groups) g JOIN json_each(?) f ON g.value = f.value))
ORDER BY score DESC
LIMIT ?`,
		weightTitle, weightHeadings, weightKeywords, weightBody, expr,
		q.BoostPath, pathBoost, domain,
		q.Filter.Version, q.Filter.Version, q.Filter.Language, q.Filter.Language, string(groups),
		max(candidatesPerHit*limit, minCandidates))
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	var cands []search.Candidate
	for rows.Next() {
		var c search.Candidate
		if err := rows.Scan(&c.Key, &c.PagePath, &c.Seq, &c.Score); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("search %s: %w", domain, err)
		}
		cands = append(cands, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	if len(cands) == 0 {
		return nil, nil
	}
	ranked := search.RankCandidates(cands, q.MaxPerPage, limit)
	return s.hits(ctx, domain, ranked, search.SingleWordTerms(q.Terms))
}

// Candidates read per hit asked for: enough for page-level ranking to see
// every page that can make the cut.
const (
	candidatesPerHit = 10
	minCandidates    = 300
)

// hits reads the ranked chunks and scores them.
func (s *Store) hits(ctx context.Context, domain string, ranked []search.Candidate, nTerms int) ([]search.Hit, error) {
	args := make([]any, len(ranked))
	marks := make([]string, len(ranked))
	for i, c := range ranked {
		args[i], marks[i] = c.Key, "?"
	}
	var total int
	if err := s.read.QueryRowContext(ctx, `SELECT chunks FROM search_stats WHERE id = 1`).Scan(&total); err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT c.id, `+searchChunkColumns+` FROM search_chunks c WHERE c.id IN (`+strings.Join(marks, ",")+`)`, args...)
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
	// bm25's figures need no scaling.
	return search.RankedHits(ranked, chunks, 1, nTerms, total), nil
}

// Page returns an indexed page as text, from its chunks.
func (s *Store) Page(ctx context.Context, domain, path string) (search.PageText, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+searchChunkColumns+` FROM search_chunks c WHERE c.domain = ? AND c.page_path = ? ORDER BY c.seq`, domain, path)
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
func scanChunk(rows *sql.Rows, c *search.Chunk, extra ...any) error {
	var crumbs, groups string
	dest := []any{&c.ID, &c.PagePath, &c.Seq, &c.Anchor, &c.URL, &c.PageTitle, &c.Heading, &crumbs,
		&c.Text, &c.Overlap, &c.Keywords, &c.Version, &c.Language, &groups, &c.Boost, &c.PageHash}
	if err := rows.Scan(append(extra, dest...)...); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(crumbs), &c.Breadcrumb); err != nil {
		return fmt.Errorf("decode breadcrumb of %s: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(groups), &c.Groups); err != nil {
		return fmt.Errorf("decode groups of %s: %w", c.ID, err)
	}
	return nil
}

// matchExpression writes terms as an FTS5 query: required terms joined by
// AND, with the OR of the optional terms. Each word is a quoted string, so
// no user text is read as FTS5 syntax.
func matchExpression(terms []search.Term) string {
	var req, opt []string
	for _, t := range terms {
		var words []string
		for _, w := range t.Words {
			if strings.IndexFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
				continue
			}
			words = append(words, strings.ReplaceAll(w, `"`, `""`))
		}
		if len(words) == 0 {
			continue
		}
		e := `"` + strings.Join(words, " ") + `"`
		if t.Prefix {
			e += "*"
		}
		if t.Required {
			req = append(req, e)
		} else {
			opt = append(opt, e)
		}
	}
	var parts []string
	parts = append(parts, req...)
	if len(opt) > 0 {
		parts = append(parts, "("+strings.Join(opt, " OR ")+")")
	}
	return strings.Join(parts, " AND ")
}
