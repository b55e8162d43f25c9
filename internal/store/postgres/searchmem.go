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

var _ search.SharedSnapshots = (*Store)(nil)

// SharedSnapshotStamp returns the index version and key of the domain's
// snapshot (version 0 when there is none).
func (s *Store) SharedSnapshotStamp(ctx context.Context, domain string) (int64, []byte, error) {
	var version int64
	var key []byte
	err := s.pool.QueryRow(ctx, `SELECT version, key FROM search_snapshots WHERE domain = $1`, domain).Scan(&version, &key)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read the index snapshot's stamp of %s: %w", domain, err)
	}
	return version, key, nil
}

// SharedSnapshot returns the domain's snapshot if its key is key and it
// takes at most maxBytes, nil if not.
func (s *Store) SharedSnapshot(ctx context.Context, domain string, key []byte, maxBytes int64) ([]byte, error) {
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM search_snapshots WHERE domain = $1 AND key = $2 AND octet_length(data) <= $3`,
		domain, key, maxBytes).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the index snapshot of %s: %w", domain, err)
	}
	return data, nil
}

// PutSharedSnapshot keeps data, built at index version, as the domain's
// snapshot, unless the one kept was built at a later version. While
// another process writes the domain's snapshot, it writes nothing: the
// replicas that load a changed domain together write one snapshot, not one
// each.
func (s *Store) PutSharedSnapshot(ctx context.Context, domain string, version int64, key, data []byte) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1, hashtext($2))`, lockSearchSnapshot, domain).Scan(&mine); err != nil || !mine {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO search_snapshots (domain, version, key, data) VALUES ($1, $2, $3, $4)
ON CONFLICT (domain) DO UPDATE SET version = excluded.version, key = excluded.key, data = excluded.data
WHERE search_snapshots.version <= excluded.version`, domain, version, key, data)
		return err
	})
	if err != nil {
		return fmt.Errorf("write the index snapshot of %s: %w", domain, err)
	}
	return nil
}
