package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/assistant"
)

var _ analytics.Store = (*Store)(nil)

// params numbers query parameters as they are added.
type params struct{ args []any }

func (p *params) add(v any) string {
	p.args = append(p.args, v)
	return "$" + strconv.Itoa(len(p.args))
}

// ListThreads returns a page of a domain's threads, newest first.
func (s *Store) ListThreads(ctx context.Context, q analytics.ThreadQuery) ([]assistant.Thread, error) {
	var p params
	where := []string{"t.domain = " + p.add(q.Domain)}
	if !q.From.IsZero() {
		where = append(where, "t.created_at >= "+p.add(utc(q.From)))
	}
	if !q.To.IsZero() {
		where = append(where, "t.created_at < "+p.add(utc(q.To)))
	}
	if q.After != nil {
		at := p.add(utc(q.After.CreatedAt))
		where = append(where, "(t.created_at < "+at+" OR (t.created_at = "+at+" AND t.id < "+p.add(q.After.ID)+"))")
	}
	where = append(where, threadFilters(q.Status, q.Feedback)...)
	limit := p.add(q.Limit)
	rows, err := s.pool.Query(ctx, `SELECT t.id, t.domain, t.org_id, t.fp, t.created_at, t.updated_at FROM threads t
WHERE `+strings.Join(where, " AND ")+` ORDER BY t.created_at DESC, t.id DESC LIMIT `+limit, p.args...)
	if err != nil {
		return nil, fmt.Errorf("list threads of %s: %w", q.Domain, err)
	}
	defer rows.Close()
	out := []assistant.Thread{}
	for rows.Next() {
		var t assistant.Thread
		if err := rows.Scan(&t.ID, &t.Domain, &t.OrgID, &t.FP, &t.CreatedAt, &t.UpdatedAt); err != nil {
			return nil, fmt.Errorf("scan thread: %w", err)
		}
		t.CreatedAt, t.UpdatedAt = utc(t.CreatedAt), utc(t.UpdatedAt)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list threads of %s: %w", q.Domain, err)
	}
	return out, nil
}

// threadFilters are the status and feedback conditions of the thread list,
// the same text as in the SQLite store.
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

const turnRecordColumns = `tt.thread_id, tt.seq, tt.message_id, tt.question, tt.answer, tt.sources::text, tt.status, tt.note, tt.missing::text, tt.created_at,
    tt.rating, tt.rating_comment, tt.rated_at`

const turnRecordFrom = `thread_turns tt`

// ThreadTurns returns the turns of the threads, each thread's in order.
func (s *Store) ThreadTurns(ctx context.Context, threadIDs []string) ([]analytics.TurnRecord, error) {
	if len(threadIDs) == 0 {
		return []analytics.TurnRecord{}, nil
	}
	return s.turnRecords(ctx, `SELECT `+turnRecordColumns+` FROM `+turnRecordFrom+`
WHERE tt.thread_id = ANY($1) ORDER BY tt.thread_id, tt.seq`, threadIDs)
}

// DomainTurns returns the newest limit turns of the domain asked in
// [from, to), oldest first.
func (s *Store) DomainTurns(ctx context.Context, domain string, from, to time.Time, limit int) ([]analytics.TurnRecord, error) {
	var p params
	where := []string{"t.domain = " + p.add(domain)}
	if !from.IsZero() {
		where = append(where, "tt.created_at >= "+p.add(utc(from)))
	}
	if !to.IsZero() {
		where = append(where, "tt.created_at < "+p.add(utc(to)))
	}
	lim := p.add(limit)
	out, err := s.turnRecords(ctx, `SELECT `+turnRecordColumns+` FROM `+turnRecordFrom+` JOIN threads t ON t.id = tt.thread_id
WHERE `+strings.Join(where, " AND ")+` ORDER BY tt.created_at DESC, tt.thread_id DESC, tt.seq DESC LIMIT `+lim, p.args...)
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

func (s *Store) turnRecords(ctx context.Context, query string, args ...any) ([]analytics.TurnRecord, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	defer rows.Close()
	out := []analytics.TurnRecord{}
	for rows.Next() {
		var t analytics.TurnRecord
		var sources, missing string
		var rated *time.Time
		if err := rows.Scan(&t.ThreadID, &t.Seq, &t.MessageID, &t.Question, &t.Answer, &sources, &t.Status, &t.Note, &missing, &t.CreatedAt,
			&t.Rating, &t.Comment, &rated); err != nil {
			return nil, fmt.Errorf("scan turn: %w", err)
		}
		if err := json.Unmarshal([]byte(sources), &t.Sources); err != nil {
			return nil, fmt.Errorf("decode sources of turn %d of thread %s: %w", t.Seq, t.ThreadID, err)
		}
		if err := json.Unmarshal([]byte(missing), &t.Missing); err != nil {
			return nil, fmt.Errorf("decode the missing names of turn %d of thread %s: %w", t.Seq, t.ThreadID, err)
		}
		t.CreatedAt = utc(t.CreatedAt)
		t.FeedbackAt = utcPtr(rated)
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
		`INSERT INTO gap_jobs (domain, gap_key, project_id, job_id, created_at) VALUES ($1, $2, $3, $4, $5)`,
		g.Domain, g.GapKey, g.ProjectID, g.JobID, utc(g.CreatedAt))
}

// GapJobs returns the jobs started from the domain's gaps, oldest first.
func (s *Store) GapJobs(ctx context.Context, domain string) ([]analytics.GapJob, error) {
	rows, err := s.pool.Query(ctx, `SELECT gap_key, project_id, job_id, created_at FROM gap_jobs WHERE domain = $1 ORDER BY created_at, job_id`, domain)
	if err != nil {
		return nil, fmt.Errorf("list gap jobs of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []analytics.GapJob{}
	for rows.Next() {
		g := analytics.GapJob{Domain: domain}
		if err := rows.Scan(&g.GapKey, &g.ProjectID, &g.JobID, &g.CreatedAt); err != nil {
			return nil, fmt.Errorf("scan gap job: %w", err)
		}
		g.CreatedAt = utc(g.CreatedAt)
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list gap jobs of %s: %w", domain, err)
	}
	return out, nil
}
