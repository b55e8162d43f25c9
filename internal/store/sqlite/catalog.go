package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/search"
)

// PutCatalog replaces a domain's page catalog.
func (s *Store) PutCatalog(ctx context.Context, domain string, c search.SiteCatalog) error {
	raw, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode catalog of %s: %w", domain, err)
	}
	_, err = s.exec(ctx, `INSERT INTO site_catalogs (domain, catalog, updated_at) VALUES (?, ?, ?)
ON CONFLICT (domain) DO UPDATE SET catalog = excluded.catalog, updated_at = excluded.updated_at`,
		domain, string(raw), toMicros(time.Now()))
	if err != nil {
		return fmt.Errorf("store catalog of %s: %w", domain, err)
	}
	return nil
}

// GetCatalog returns a domain's page catalog; apperr NotFound when it has
// none (never indexed).
func (s *Store) GetCatalog(ctx context.Context, domain string) (search.SiteCatalog, error) {
	var raw string
	if err := s.read.QueryRowContext(ctx, `SELECT catalog FROM site_catalogs WHERE domain = ?`, domain).Scan(&raw); err != nil {
		return search.SiteCatalog{}, notFoundOr(err, "catalog", domain)
	}
	var c search.SiteCatalog
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return search.SiteCatalog{}, fmt.Errorf("decode catalog of %s: %w", domain, err)
	}
	return c, nil
}
