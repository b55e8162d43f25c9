package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/docsmith/docsmith/internal/search"
)

var _ search.Source = (*Store)(nil)

// IndexVersion returns the domain's index version (0 if never indexed): one
// primary-key lookup, cheap enough to ask often.
func (s *Store) IndexVersion(ctx context.Context, domain string) (int64, error) {
	var v int64
	err := s.read.QueryRowContext(ctx, `SELECT version FROM search_versions WHERE domain = ?`, domain).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the index version of %s: %w", domain, err)
	}
	return v, nil
}

// DomainChunks calls each with every chunk of the domain, in page and seq
// order, as it reads them, and returns the index version they are at, read
// in one transaction.
func (s *Store) DomainChunks(ctx context.Context, domain string, each func(search.Chunk) error) (int64, error) {
	version, err := s.domainChunks(ctx, domain, each)
	if err != nil {
		return 0, fmt.Errorf("read the chunks of %s: %w", domain, err)
	}
	return version, nil
}

func (s *Store) domainChunks(ctx context.Context, domain string, each func(search.Chunk) error) (int64, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback() }()
	var version int64
	if err := tx.QueryRowContext(ctx, `SELECT version FROM search_versions WHERE domain = ?`, domain).Scan(&version); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+searchChunkColumns+` FROM search_chunks c WHERE c.domain = ? ORDER BY c.page_path, c.seq`, domain)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var c search.Chunk
		if err := scanChunk(rows, &c); err != nil {
			return 0, err
		}
		if err := each(c); err != nil {
			return 0, err
		}
	}
	return version, rows.Err()
}
