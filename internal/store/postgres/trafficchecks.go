package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/trafficcheck"
)

var _ trafficcheck.Store = (*Store)(nil)

const trafficCheckColumns = `id, domain, harvest_key, name, question, cite, contains, not_covered, answered, origin,
	pinned, dropped, edited, thread_id, seq, gap_key, asked_at, created_at, updated_at`

const trafficCheckSelect = `id, domain, harvest_key, name, question, cite::text, contains::text, not_covered, answered, origin,
	pinned, dropped, edited, thread_id, seq, gap_key, asked_at, created_at, updated_at`

// HarvestTrafficChecks implements trafficcheck.Store in one transaction.
// Harvests of one domain (two replicas) take turns on a transaction lock
// of the domain rather than racing their deletes.
func (s *Store) HarvestTrafficChecks(ctx context.Context, domain string, found []trafficcheck.Check, keep int) (int, error) {
	added := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		added = 0
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('traffic_checks ' || $1))`, domain); err != nil {
			return fmt.Errorf("take the harvest lock: %w", err)
		}
		origins := map[string]bool{}
		for _, c := range found {
			cite, contains, err := encodeCheckLists(c)
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `INSERT INTO traffic_checks (`+trafficCheckColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
				ON CONFLICT (domain, harvest_key) DO NOTHING`,
				c.ID, domain, c.HarvestKey, c.Name, c.Question, cite, contains, c.NotCovered, c.Answered, c.Origin,
				c.Pinned, c.Dropped, c.Edited, c.ThreadID, c.Seq, c.GapKey, utc(c.AskedAt), utc(c.CreatedAt), utc(c.UpdatedAt))
			if err != nil {
				return fmt.Errorf("add traffic check %q: %w", c.Name, err)
			}
			added += int(tag.RowsAffected())
			origins[c.Origin] = true
		}
		for origin := range origins {
			_, err := tx.Exec(ctx, `DELETE FROM traffic_checks WHERE domain = $1 AND origin = $2 AND NOT pinned AND NOT edited AND NOT dropped
				AND id NOT IN (SELECT id FROM traffic_checks WHERE domain = $1 AND origin = $2 AND NOT pinned AND NOT edited AND NOT dropped
					ORDER BY asked_at DESC, id DESC LIMIT $3)`, domain, origin, keep)
			if err != nil {
				return fmt.Errorf("let go of the oldest %s checks: %w", origin, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("harvest traffic checks of %s: %w", domain, err)
	}
	return added, nil
}

func encodeCheckLists(c trafficcheck.Check) (cite, contains string, err error) {
	b, err := json.Marshal(nonNil(c.Cite))
	if err != nil {
		return "", "", fmt.Errorf("encode cite of %q: %w", c.Name, err)
	}
	cite = string(b)
	if b, err = json.Marshal(nonNil(c.Contains)); err != nil {
		return "", "", fmt.Errorf("encode contains of %q: %w", c.Name, err)
	}
	return cite, string(b), nil
}

// TrafficChecks implements trafficcheck.Store.
func (s *Store) TrafficChecks(ctx context.Context, domain string, limit int) ([]trafficcheck.Check, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+trafficCheckSelect+` FROM traffic_checks WHERE domain = $1
		ORDER BY dropped, pinned DESC, asked_at DESC, id DESC LIMIT $2`, domain, limit)
	if err != nil {
		return nil, fmt.Errorf("list traffic checks of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []trafficcheck.Check{}
	for rows.Next() {
		c, err := scanTrafficCheck(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list traffic checks of %s: %w", domain, err)
	}
	return out, nil
}

// GetTrafficCheck implements trafficcheck.Store.
func (s *Store) GetTrafficCheck(ctx context.Context, domain, id string) (trafficcheck.Check, error) {
	c, err := scanTrafficCheck(s.pool.QueryRow(ctx, `SELECT `+trafficCheckSelect+` FROM traffic_checks WHERE domain = $1 AND id = $2`, domain, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return trafficcheck.Check{}, apperr.New(apperr.NotFound, "check %q of domain %q not found", id, domain)
	}
	return c, err
}

// UpdateTrafficCheck implements trafficcheck.Store.
func (s *Store) UpdateTrafficCheck(ctx context.Context, c trafficcheck.Check) error {
	cite, contains, err := encodeCheckLists(c)
	if err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE traffic_checks SET name = $1, question = $2, cite = $3, contains = $4, not_covered = $5, answered = $6,
		pinned = $7, dropped = $8, edited = $9, updated_at = $10 WHERE domain = $11 AND id = $12`,
		c.Name, c.Question, cite, contains, c.NotCovered, c.Answered, c.Pinned, c.Dropped, c.Edited, utc(c.UpdatedAt), c.Domain, c.ID)
	err = s.noteWrite(err)
	if err != nil {
		return fmt.Errorf("update traffic check %s: %w", c.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.New(apperr.NotFound, "check %q of domain %q not found", c.ID, c.Domain)
	}
	return nil
}

func scanTrafficCheck(row pgx.Row) (trafficcheck.Check, error) {
	var c trafficcheck.Check
	var cite, contains string
	err := row.Scan(&c.ID, &c.Domain, &c.HarvestKey, &c.Name, &c.Question, &cite, &contains, &c.NotCovered, &c.Answered, &c.Origin,
		&c.Pinned, &c.Dropped, &c.Edited, &c.ThreadID, &c.Seq, &c.GapKey, &c.AskedAt, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return c, err
		}
		return c, fmt.Errorf("scan traffic check: %w", err)
	}
	if err := json.Unmarshal([]byte(cite), &c.Cite); err != nil {
		return c, fmt.Errorf("decode cite of traffic check %s: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(contains), &c.Contains); err != nil {
		return c, fmt.Errorf("decode contains of traffic check %s: %w", c.ID, err)
	}
	if len(c.Cite) == 0 {
		c.Cite = nil
	}
	if len(c.Contains) == 0 {
		c.Contains = nil
	}
	c.AskedAt, c.CreatedAt, c.UpdatedAt = utc(c.AskedAt), utc(c.CreatedAt), utc(c.UpdatedAt)
	return c, nil
}
