package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/search"
)

var _ search.Source = (*Store)(nil)

// IndexVersion returns the domain's index version (0 if never indexed).
func (s *Store) IndexVersion(ctx context.Context, domain string) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT version FROM search_versions WHERE domain = $1`, domain).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the index version of %s: %w", domain, err)
	}
	return v, nil
}

// DomainChunks calls each with every chunk of the domain, in page and seq
// order, as it reads them, and returns the index version they are at, from
// one snapshot.
func (s *Store) DomainChunks(ctx context.Context, domain string, each func(search.Chunk) error) (int64, error) {
	var version int64
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT version FROM search_versions WHERE domain = $1`, domain).Scan(&version)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+searchChunkColumns+` FROM search_chunks c WHERE c.domain = $1 ORDER BY c.page_path, c.seq`, domain)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c search.Chunk
			if err := scanChunk(rows, &c); err != nil {
				return err
			}
			if err := each(c); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("read the chunks of %s: %w", domain, err)
	}
	return version, nil
}

// searchChannel is the NOTIFY channel on which ReplacePages names the
// domain it changed, for this schema's processes.
func (s *Store) searchChannel() string { return channelName("search." + s.schema) }

// WatchSearch calls changed with each domain whose index another process
// (or this one) changes, until ctx ends, reconnecting after losing the
// database. After each (re)connection it calls changed with "" (anything
// may have changed meanwhile). ready, if not nil, is closed once it first
// listens.
func (s *Store) WatchSearch(ctx context.Context, changed func(domain string), ready chan<- struct{}) {
	var once sync.Once
	s.listen(ctx, s.searchChannel(), func() {
		changed("")
		if ready != nil {
			once.Do(func() { close(ready) })
		}
	}, changed)
}
