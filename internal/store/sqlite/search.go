package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
)

// searchChunkColumns are what scanChunk reads, from search_chunks AS c.
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
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		delRows, err := tx.PrepareContext(ctx, `DELETE FROM search_chunks WHERE domain = ? AND page_path = ?`)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer func() { _ = delRows.Close() }()
		for _, p := range order {
			if _, err := delRows.ExecContext(ctx, domain, p); err != nil {
				return fmt.Errorf("delete chunks of %s: %w", p, err)
			}
		}
		insRow, err := tx.PrepareContext(ctx, `INSERT INTO search_chunks (domain, chunk_id, page_path, seq, anchor, url, page_title, heading,
			breadcrumb, text, overlap, markdown, markdown_overlap, keywords, version, language, groups, boost, page_hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("prepare: %w", err)
		}
		defer func() { _ = insRow.Close() }()
		for _, c := range chunks {
			crumbs, err := json.Marshal(nonNil(c.Breadcrumb))
			if err != nil {
				return fmt.Errorf("encode breadcrumb of %s: %w", c.ID, err)
			}
			groups, err := json.Marshal(nonNil(c.Groups))
			if err != nil {
				return fmt.Errorf("encode groups of %s: %w", c.ID, err)
			}
			_, err = insRow.ExecContext(ctx, domain, c.ID, c.PagePath, c.Seq, c.Anchor, c.URL, c.PageTitle, c.Heading,
				string(crumbs), c.Text, c.Overlap, c.Markdown, c.MarkdownOverlap, c.Keywords, c.Version, c.Language, string(groups), max(c.Boost, 0), c.PageHash)
			if err != nil {
				if isUniqueViolation(err) {
					return fmt.Errorf("chunk %q appears twice: %w", c.ID, err)
				}
				return fmt.Errorf("insert chunk %s: %w", c.ID, err)
			}
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
	pt, ok := engine.AssemblePage(chunks)
	if !ok {
		return search.PageText{}, fmt.Errorf("page %q of %s: %w", path, domain, search.ErrPageNotFound)
	}
	return pt, nil
}

// scanChunk scans searchChunkColumns, after the extra columns before them.
func scanChunk(rows *sql.Rows, c *search.Chunk, extra ...any) error {
	var crumbs, groups string
	dest := []any{&c.ID, &c.PagePath, &c.Seq, &c.Anchor, &c.URL, &c.PageTitle, &c.Heading, &crumbs,
		&c.Text, &c.Overlap, &c.Markdown, &c.MarkdownOverlap, &c.Keywords, &c.Version, &c.Language, &groups, &c.Boost, &c.PageHash}
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
