package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/trafficcheck"
)

var _ trafficcheck.Store = (*Store)(nil)

const trafficCheckColumns = `id, domain, harvest_key, name, question, cite, contains, not_covered, answered, origin,
	pinned, dropped, edited, thread_id, seq, gap_key, asked_at, created_at, updated_at`

// HarvestTrafficChecks implements trafficcheck.Store in one transaction.
func (s *Store) HarvestTrafficChecks(ctx context.Context, domain string, found []trafficcheck.Check, keep int) (int, error) {
	added := 0
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		added = 0
		origins := map[string]bool{}
		for _, c := range found {
			cite, contains, err := encodeCheckLists(c)
			if err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `INSERT INTO traffic_checks (`+trafficCheckColumns+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (domain, harvest_key) DO NOTHING`,
				c.ID, domain, c.HarvestKey, c.Name, c.Question, cite, contains, c.NotCovered, c.Answered, c.Origin,
				c.Pinned, c.Dropped, c.Edited, c.ThreadID, c.Seq, c.GapKey, toMicros(c.AskedAt), toMicros(c.CreatedAt), toMicros(c.UpdatedAt))
			if err != nil {
				return fmt.Errorf("add traffic check %q: %w", c.Name, err)
			}
			n, _ := res.RowsAffected()
			added += int(n)
			origins[c.Origin] = true
		}
		for origin := range origins {
			_, err := tx.ExecContext(ctx, `DELETE FROM traffic_checks WHERE domain = ? AND origin = ? AND NOT pinned AND NOT edited AND NOT dropped
				AND id NOT IN (SELECT id FROM traffic_checks WHERE domain = ? AND origin = ? AND NOT pinned AND NOT edited AND NOT dropped
					ORDER BY asked_at DESC, id DESC LIMIT ?)`, domain, origin, domain, origin, keep)
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
	rows, err := s.read.QueryContext(ctx, `SELECT `+trafficCheckColumns+` FROM traffic_checks WHERE domain = ?
		ORDER BY dropped, pinned DESC, asked_at DESC, id DESC LIMIT ?`, domain, limit)
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
	c, err := scanTrafficCheck(s.read.QueryRowContext(ctx, `SELECT `+trafficCheckColumns+` FROM traffic_checks WHERE domain = ? AND id = ?`, domain, id))
	if errors.Is(err, sql.ErrNoRows) {
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
	res, err := s.exec(ctx, `UPDATE traffic_checks SET name = ?, question = ?, cite = ?, contains = ?, not_covered = ?, answered = ?,
		pinned = ?, dropped = ?, edited = ?, updated_at = ? WHERE domain = ? AND id = ?`,
		c.Name, c.Question, cite, contains, c.NotCovered, c.Answered, c.Pinned, c.Dropped, c.Edited, toMicros(c.UpdatedAt), c.Domain, c.ID)
	if err != nil {
		return fmt.Errorf("update traffic check %s: %w", c.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.New(apperr.NotFound, "check %q of domain %q not found", c.ID, c.Domain)
	}
	return nil
}

type trafficCheckRow interface {
	Scan(dest ...any) error
}

func scanTrafficCheck(row trafficCheckRow) (trafficcheck.Check, error) {
	var c trafficcheck.Check
	var cite, contains string
	var asked, created, updated int64
	err := row.Scan(&c.ID, &c.Domain, &c.HarvestKey, &c.Name, &c.Question, &cite, &contains, &c.NotCovered, &c.Answered, &c.Origin,
		&c.Pinned, &c.Dropped, &c.Edited, &c.ThreadID, &c.Seq, &c.GapKey, &asked, &created, &updated)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
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
	c.AskedAt, c.CreatedAt, c.UpdatedAt = fromMicros(asked), fromMicros(created), fromMicros(updated)
	return c, nil
}
