package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/search"
)

var _ search.VectorSource = (*Store)(nil)

// VectorHashes returns the hashes of the domain's vectors for model.
func (s *Store) VectorHashes(ctx context.Context, domain, model string) (map[string]bool, error) {
	rows, err := s.pool.Query(ctx, `SELECT hash FROM search_vectors WHERE domain = $1 AND model = $2`, domain, model)
	if err != nil {
		return nil, fmt.Errorf("list the vectors of %s: %w", domain, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("list the vectors of %s: %w", domain, err)
		}
		out[h] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the vectors of %s: %w", domain, err)
	}
	return out, nil
}

// DomainVectors calls each with every vector of the domain for model.
func (s *Store) DomainVectors(ctx context.Context, domain, model string, each func(search.Vector) error) error {
	rows, err := s.pool.Query(ctx, `SELECT hash, vector FROM search_vectors WHERE domain = $1 AND model = $2`, domain, model)
	if err != nil {
		return fmt.Errorf("read the vectors of %s: %w", domain, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			h    string
			blob []byte
		)
		if err := rows.Scan(&h, &blob); err != nil {
			return fmt.Errorf("read the vectors of %s: %w", domain, err)
		}
		v, err := search.DecodeVector(blob)
		if err != nil {
			return fmt.Errorf("read the vector %s of %s: %w", h, domain, err)
		}
		if err := each(search.Vector{Hash: h, Values: v}); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the vectors of %s: %w", domain, err)
	}
	return nil
}

// PutVectors keeps vectors for model, deletes the domain's vectors no
// passage uses (hash not in inUse, or of another model) and, when that
// changed anything, raises the index version and tells the processes
// holding the domain, in one transaction.
func (s *Store) PutVectors(ctx context.Context, domain, model string, vectors []search.Vector, inUse []string) error {
	used := make(map[string]bool, len(inUse))
	for _, h := range inUse {
		used[h] = true
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		// The domain's writers take turns, as ReplacePages'.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockSearchDomain, domain); err != nil {
			return fmt.Errorf("lock the domain's index: %w", err)
		}
		type key struct{ model, hash string }
		held := map[key]bool{}
		rows, err := tx.Query(ctx, `SELECT model, hash FROM search_vectors WHERE domain = $1`, domain)
		if err != nil {
			return fmt.Errorf("list vectors: %w", err)
		}
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.model, &k.hash); err != nil {
				rows.Close()
				return fmt.Errorf("list vectors: %w", err)
			}
			held[k] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list vectors: %w", err)
		}
		b := &pgx.Batch{}
		for k := range held {
			if k.model != model || !used[k.hash] {
				b.Queue(`DELETE FROM search_vectors WHERE domain = $1 AND model = $2 AND hash = $3`, domain, k.model, k.hash)
			}
		}
		for _, v := range vectors {
			if held[key{model, v.Hash}] || !used[v.Hash] {
				continue
			}
			held[key{model, v.Hash}] = true
			b.Queue(`INSERT INTO search_vectors (domain, model, hash, vector) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
				domain, model, v.Hash, search.EncodeVector(v.Values))
		}
		if b.Len() == 0 {
			return nil
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("write vectors: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO search_versions (domain, version) VALUES ($1, 1)
ON CONFLICT (domain) DO UPDATE SET version = search_versions.version + 1`, domain); err != nil {
			return fmt.Errorf("raise the index version: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, s.searchChannel(), domain); err != nil {
			return fmt.Errorf("notify the index change: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write the vectors of %s: %w", domain, err)
	}
	return nil
}
