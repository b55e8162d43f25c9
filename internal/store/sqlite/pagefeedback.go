package sqlite

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
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO page_feedback (domain, org_id, page_path, rating, comment, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			f.Domain, f.OrgID, f.Path, f.Rating, f.Comment, f.Source, toMicros(f.CreatedAt))
		if err != nil {
			return fmt.Errorf("add feedback on page %s of %s: %w", f.Path, f.Domain, err)
		}
		return nil
	})
}

// DomainPageFeedback returns the newest limit page feedback of the domain
// given in [from, to) (zero values open), newest first.
func (s *Store) DomainPageFeedback(ctx context.Context, domain string, from, to time.Time, limit int) ([]assistant.PageFeedback, error) {
	where := []string{"domain = ?"}
	args := []any{domain}
	if !from.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, toMicros(from))
	}
	if !to.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, toMicros(to))
	}
	args = append(args, limit)
	rows, err := s.read.QueryContext(ctx, `SELECT domain, org_id, page_path, rating, comment, source, created_at FROM page_feedback
WHERE `+strings.Join(where, " AND ")+` ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("read page feedback of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []assistant.PageFeedback{}
	for rows.Next() {
		var f assistant.PageFeedback
		var created int64
		if err := rows.Scan(&f.Domain, &f.OrgID, &f.Path, &f.Rating, &f.Comment, &f.Source, &created); err != nil {
			return nil, fmt.Errorf("scan page feedback of %s: %w", domain, err)
		}
		f.CreatedAt = fromMicros(created)
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read page feedback of %s: %w", domain, err)
	}
	return out, nil
}
