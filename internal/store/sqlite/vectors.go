package sqlite

import (
	"context"
	"fmt"

	"github.com/docsmith/docsmith/internal/search"
)

var _ search.VectorSource = (*Store)(nil)

// VectorHashes returns the hashes of the domain's vectors for model.
func (s *Store) VectorHashes(ctx context.Context, domain, model string) (map[string]bool, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT hash FROM search_vectors WHERE domain = ? AND model = ?`, domain, model)
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
	rows, err := s.read.QueryContext(ctx, `SELECT hash, vector FROM search_vectors WHERE domain = ? AND model = ?`, domain, model)
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
// changed anything, raises the index version, in one transaction.
func (s *Store) PutVectors(ctx context.Context, domain, model string, vectors []search.Vector, inUse []string) error {
	used := make(map[string]bool, len(inUse))
	for _, h := range inUse {
		used[h] = true
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		type key struct{ model, hash string }
		held := map[key]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT model, hash FROM search_vectors WHERE domain = ?`, domain)
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
		changed := false
		for k := range held {
			if k.model == model && used[k.hash] {
				continue
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM search_vectors WHERE domain = ? AND model = ? AND hash = ?`, domain, k.model, k.hash); err != nil {
				return fmt.Errorf("delete vector %s: %w", k.hash, err)
			}
			changed = true
		}
		for _, v := range vectors {
			if held[key{model, v.Hash}] || !used[v.Hash] {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO search_vectors (domain, model, hash, vector) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING`, domain, model, v.Hash, search.EncodeVector(v.Values)); err != nil {
				return fmt.Errorf("insert vector %s: %w", v.Hash, err)
			}
			held[key{model, v.Hash}] = true
			changed = true
		}
		if !changed {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_versions (domain, version) VALUES (?, 1)
ON CONFLICT (domain) DO UPDATE SET version = search_versions.version + 1`, domain); err != nil {
			return fmt.Errorf("raise the index version: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write the vectors of %s: %w", domain, err)
	}
	return nil
}
