package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/assistant"
)

var _ analytics.Store = (*Store)(nil)

// ListThreads returns a page of a domain's threads, newest first.
func (s *Store) ListThreads(ctx context.Context, q analytics.ThreadQuery) ([]assistant.Thread, error) {
	var where []string
	args := []any{q.Domain}
	where = append(where, "t.domain = ?")
	if !q.From.IsZero() {
		where = append(where, "t.created_at >= ?")
		args = append(args, toMicros(q.From))
	}
	if !q.To.IsZero() {
		where = append(where, "t.created_at < ?")
		args = append(args, toMicros(q.To))
	}
	if q.After != nil {
		where = append(where, "(t.created_at < ? OR (t.created_at = ? AND t.id < ?))")
		at := toMicros(q.After.CreatedAt)
		args = append(args, at, at, q.After.ID)
	}
	where = append(where, threadFilters(q.Status, q.Feedback)...)
	args = append(args, q.Limit)
	rows, err := s.read.QueryContext(ctx, `SELECT t.id, t.domain, t.org_id, t.fp, t.created_at, t.updated_at FROM threads t
WHERE `+strings.Join(where, " AND ")+` ORDER BY t.created_at DESC, t.id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list threads of %s: %w", q.Domain, err)
	}
	defer rows.Close()
	out := []assistant.Thread{}
	for rows.Next() {
		var t assistant.Thread
		var created, updated int64
		if err := rows.Scan(&t.ID, &t.Domain, &t.OrgID, &t.FP, &created, &updated); err != nil {
			return nil, fmt.Errorf("scan thread: %w", err)
		}
		t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list threads of %s: %w", q.Domain, err)
	}
	return out, nil
}

// threadFilters are the status and feedback conditions of the thread list,
// the same text on both stores.
func threadFilters(status, feedback string) []string {
	const notCovered = `EXISTS (SELECT 1 FROM thread_turns x WHERE x.thread_id = t.id AND x.status = 'not_covered')`
	const partial = `EXISTS (SELECT 1 FROM thread_turns x WHERE x.thread_id = t.id AND x.status = 'partial')`
	rated := func(r string) string {
		return `EXISTS (SELECT 1 FROM thread_turns f WHERE f.thread_id = t.id AND f.rating = '` + r + `')`
	}
	var w []string
	switch status {
	case analytics.StatusNotCovered:
		w = append(w, notCovered)
	case analytics.StatusPartial:
		w = append(w, partial, "NOT "+notCovered)
	case analytics.StatusAnswered:
		w = append(w, "NOT "+notCovered, "NOT "+partial)
	}
	switch feedback {
	case analytics.RatingDown:
		w = append(w, rated(analytics.RatingDown))
	case analytics.RatingUp:
		w = append(w, rated(analytics.RatingUp), "NOT "+rated(analytics.RatingDown))
	case analytics.FeedbackNone:
		w = append(w, `NOT EXISTS (SELECT 1 FROM thread_turns f WHERE f.thread_id = t.id AND f.rating <> '')`)
	}
	return w
}

const turnRecordColumns = `tt.thread_id, tt.seq, tt.message_id, tt.question, tt.answer, tt.sources, tt.status, tt.note, tt.missing, tt.created_at,
    tt.rating, tt.rating_comment, tt.rated_at`

const turnRecordFrom = `thread_turns tt`

// ThreadTurns returns the turns of the threads, each thread's in order.
func (s *Store) ThreadTurns(ctx context.Context, threadIDs []string) ([]analytics.TurnRecord, error) {
	if len(threadIDs) == 0 {
		return []analytics.TurnRecord{}, nil
	}
	args := make([]any, len(threadIDs))
	for i, id := range threadIDs {
		args[i] = id
	}
	return s.turnRecords(ctx, `SELECT `+turnRecordColumns+` FROM `+turnRecordFrom+`
WHERE tt.thread_id IN (?`+strings.Repeat(", ?", len(threadIDs)-1)+`) ORDER BY tt.thread_id, tt.seq`, args...)
}

// DomainTurns returns the newest limit turns of the domain asked in
// [from, to), oldest first.
func (s *Store) DomainTurns(ctx context.Context, domain string, from, to time.Time, limit int) ([]analytics.TurnRecord, error) {
	where := []string{"t.domain = ?"}
	args := []any{domain}
	if !from.IsZero() {
		where = append(where, "tt.created_at >= ?")
		args = append(args, toMicros(from))
	}
	if !to.IsZero() {
		where = append(where, "tt.created_at < ?")
		args = append(args, toMicros(to))
	}
	args = append(args, limit)
	out, err := s.turnRecords(ctx, `SELECT `+turnRecordColumns+` FROM `+turnRecordFrom+` JOIN threads t ON t.id = tt.thread_id
WHERE `+strings.Join(where, " AND ")+` ORDER BY tt.created_at DESC, tt.thread_id DESC, tt.seq DESC LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

func (s *Store) turnRecords(ctx context.Context, query string, args ...any) ([]analytics.TurnRecord, error) {
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	defer rows.Close()
	out := []analytics.TurnRecord{}
	for rows.Next() {
		var t analytics.TurnRecord
		var sources, missing string
		var created int64
		var rated sql.NullInt64
		if err := rows.Scan(&t.ThreadID, &t.Seq, &t.MessageID, &t.Question, &t.Answer, &sources, &t.Status, &t.Note, &missing, &created,
			&t.Rating, &t.Comment, &rated); err != nil {
			return nil, fmt.Errorf("scan turn: %w", err)
		}
		if err := json.Unmarshal([]byte(sources), &t.Sources); err != nil {
			return nil, fmt.Errorf("decode sources of turn %d of thread %s: %w", t.Seq, t.ThreadID, err)
		}
		if err := json.Unmarshal([]byte(missing), &t.Missing); err != nil {
			return nil, fmt.Errorf("decode the missing names of turn %d of thread %s: %w", t.Seq, t.ThreadID, err)
		}
		t.CreatedAt = fromMicros(created)
		t.FeedbackAt = timePtr(rated)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	return out, nil
}

// LinkGapJob records a job started from a gap.
func (s *Store) LinkGapJob(ctx context.Context, g analytics.GapJob) error {
	return s.insert(ctx, "gap job", g.JobID,
		`INSERT INTO gap_jobs (domain, gap_key, project_id, job_id, created_at) VALUES (?, ?, ?, ?, ?)`,
		g.Domain, g.GapKey, g.ProjectID, g.JobID, toMicros(g.CreatedAt))
}

// GapJobs returns the jobs started from the domain's gaps, oldest first.
func (s *Store) GapJobs(ctx context.Context, domain string) ([]analytics.GapJob, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT gap_key, project_id, job_id, created_at FROM gap_jobs WHERE domain = ? ORDER BY created_at, job_id`, domain)
	if err != nil {
		return nil, fmt.Errorf("list gap jobs of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []analytics.GapJob{}
	for rows.Next() {
		g := analytics.GapJob{Domain: domain}
		var created int64
		if err := rows.Scan(&g.GapKey, &g.ProjectID, &g.JobID, &created); err != nil {
			return nil, fmt.Errorf("scan gap job: %w", err)
		}
		g.CreatedAt = fromMicros(created)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list gap jobs of %s: %w", domain, err)
	}
	return out, nil
}
