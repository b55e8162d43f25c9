package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
)

var _ search.Source = (*Store)(nil)

const searchChunkColumns = `c.chunk_id, c.page_path, c.seq, c.anchor, c.url, c.page_title, c.heading, c.breadcrumb,
	c.text, c.overlap, c.markdown, c.markdown_overlap, c.keywords, c.version, c.language, c.groups, c.boost, c.page_hash`

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
		// One writer per domain at a time: two builds of the same pages
		// would otherwise collide on their chunks' ids.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockSearchDomain, domain); err != nil {
			return fmt.Errorf("lock the domain's index: %w", err)
		}
		if len(order) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM search_chunks WHERE domain = $1 AND page_path = ANY($2)`, domain, order); err != nil {
				return fmt.Errorf("delete chunks: %w", err)
			}
		}
		if err := insertChunks(ctx, tx, domain, chunks); err != nil {
			return err
		}
		// The snapshot of the old pages is of no use to anyone now.
		if _, err := tx.Exec(ctx, `DELETE FROM search_snapshots WHERE domain = $1`, domain); err != nil {
			return fmt.Errorf("drop the index snapshot: %w", err)
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
	return nil
}

// insertChunks writes chunks.
func insertChunks(ctx context.Context, tx pgx.Tx, domain string, chunks []search.Chunk) error {
	const batchSize = 500
	for start := 0; start < len(chunks); start += batchSize {
		b := &pgx.Batch{}
		for _, c := range chunks[start:min(start+batchSize, len(chunks))] {
			c = withoutNUL(c)
			b.Queue(`INSERT INTO search_chunks (domain, chunk_id, page_path, seq, anchor, url, page_title, heading,
    breadcrumb, text, overlap, markdown, markdown_overlap, keywords, version, language, groups, boost, page_hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
				domain, c.ID, c.PagePath, c.Seq, c.Anchor, c.URL, c.PageTitle, c.Heading,
				nonNil(c.Breadcrumb), c.Text, c.Overlap, c.Markdown, c.MarkdownOverlap, c.Keywords, c.Version, c.Language, nonNil(c.Groups),
				max(c.Boost, 0), c.PageHash)
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
	pt, ok := engine.AssemblePage(chunks)
	if !ok {
		return search.PageText{}, fmt.Errorf("page %q of %s: %w", path, domain, search.ErrPageNotFound)
	}
	return pt, nil
}

// scanChunk scans searchChunkColumns, after the extra columns before them.
func scanChunk(rows pgx.Rows, c *search.Chunk, extra ...any) error {
	dest := []any{&c.ID, &c.PagePath, &c.Seq, &c.Anchor, &c.URL, &c.PageTitle, &c.Heading, &c.Breadcrumb,
		&c.Text, &c.Overlap, &c.Markdown, &c.MarkdownOverlap, &c.Keywords, &c.Version, &c.Language, &c.Groups, &c.Boost, &c.PageHash}
	if err := rows.Scan(append(extra, dest...)...); err != nil {
		return err
	}
	return nil
}

// withoutNUL drops the NUL characters of a chunk's text, which PostgreSQL's
// text cannot hold (a binary file read as a page may have some).
func withoutNUL(c search.Chunk) search.Chunk {
	clean := func(s string) string { return strings.ReplaceAll(s, "\x00", "") }
	c.ID, c.PagePath, c.Anchor, c.URL = clean(c.ID), clean(c.PagePath), clean(c.Anchor), clean(c.URL)
	c.PageTitle, c.Heading, c.Text, c.Markdown, c.Keywords = clean(c.PageTitle), clean(c.Heading), clean(c.Text), clean(c.Markdown), clean(c.Keywords)
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
