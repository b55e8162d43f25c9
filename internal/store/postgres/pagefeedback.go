package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/assistant"
)

var _ assistant.PageFeedbackStore = (*Store)(nil)

// AddPageFeedback stores feedback on a page.
func (s *Store) AddPageFeedback(ctx context.Context, f assistant.PageFeedback) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO page_feedback (domain, org_id, page_path, rating, comment, source, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		f.Domain, f.OrgID, f.Path, f.Rating, f.Comment, f.Source, utc(f.CreatedAt))
	if err := s.noteWrite(err); err != nil {
		return fmt.Errorf("add feedback on page %s of %s: %w", f.Path, f.Domain, err)
	}
	return nil
}

// DomainPageFeedback returns the newest limit page feedback of the domain
// given in [from, to) (zero values open), newest first.
func (s *Store) DomainPageFeedback(ctx context.Context, domain string, from, to time.Time, limit int) ([]assistant.PageFeedback, error) {
	var p params
	where := []string{"domain = " + p.add(domain)}
	if !from.IsZero() {
		where = append(where, "created_at >= "+p.add(utc(from)))
	}
	if !to.IsZero() {
		where = append(where, "created_at < "+p.add(utc(to)))
	}
	rows, err := s.pool.Query(ctx, `SELECT domain, org_id, page_path, rating, comment, source, created_at FROM page_feedback
WHERE `+strings.Join(where, " AND ")+` ORDER BY created_at DESC, id DESC LIMIT `+p.add(limit), p.args...)
	if err != nil {
		return nil, fmt.Errorf("read page feedback of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []assistant.PageFeedback{}
	for rows.Next() {
		var f assistant.PageFeedback
		if err := rows.Scan(&f.Domain, &f.OrgID, &f.Path, &f.Rating, &f.Comment, &f.Source, &f.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan page feedback of %s: %w", domain, err)
		}
		f.CreatedAt = f.CreatedAt.UTC()
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read page feedback of %s: %w", domain, err)
	}
	return out, nil
}
