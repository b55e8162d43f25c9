package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apperr"
)

// StartGapLifecycle records that a job was started from a gap: the gap's
// lifecycle starts, or starts again with this job, in progress.
func (s *Store) StartGapLifecycle(ctx context.Context, l analytics.GapLifecycle) error {
	terms, questions, err := lifecycleLists(l)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO gap_lifecycles (domain, gap_key, state, terms, top_page, questions, project_id, job_id, linked_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (domain, gap_key) DO UPDATE SET state = excluded.state, terms = excluded.terms, top_page = excluded.top_page,
  questions = excluded.questions, project_id = excluded.project_id, job_id = excluded.job_id, linked_at = excluded.linked_at,
  checked_commit = '', checked_push = '', checked_at = NULL, closed_at = NULL, answers = '[]', updated_at = excluded.updated_at`,
		l.Domain, l.Key, l.State, terms, l.TopPage, questions, l.ProjectID, l.JobID, toMicros(l.LinkedAt), toMicros(l.UpdatedAt))
	if err != nil {
		return fmt.Errorf("start the lifecycle of gap %s of %s: %w", l.Key, l.Domain, err)
	}
	return nil
}

// GapLifecycles returns the domain's gap lifecycles, the latest linked
// first.
func (s *Store) GapLifecycles(ctx context.Context, domain string) ([]analytics.GapLifecycle, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT gap_key, state, terms, top_page, questions, project_id, job_id, linked_at,
checked_commit, checked_push, checked_at, closed_at, answers, updated_at
FROM gap_lifecycles WHERE domain = ? ORDER BY linked_at DESC, gap_key`, domain)
	if err != nil {
		return nil, fmt.Errorf("list the gap lifecycles of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []analytics.GapLifecycle{}
	for rows.Next() {
		l := analytics.GapLifecycle{Domain: domain}
		var terms, questions, answers string
		var linked, updated int64
		var checked, closed sql.NullInt64
		if err := rows.Scan(&l.Key, &l.State, &terms, &l.TopPage, &questions, &l.ProjectID, &l.JobID, &linked,
			&l.CheckedCommit, &l.CheckedPush, &checked, &closed, &answers, &updated); err != nil {
			return nil, fmt.Errorf("scan a gap lifecycle of %s: %w", domain, err)
		}
		if err := decodeLifecycle(&l, []byte(terms), []byte(questions), []byte(answers)); err != nil {
			return nil, err
		}
		l.LinkedAt, l.UpdatedAt = fromMicros(linked), fromMicros(updated)
		l.CheckedAt, l.ClosedAt = timePtr(checked), timePtr(closed)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the gap lifecycles of %s: %w", domain, err)
	}
	return out, nil
}

// RecordGapCheck writes a check's outcome to the gap's lifecycle while its
// job is still l.JobID.
func (s *Store) RecordGapCheck(ctx context.Context, l analytics.GapLifecycle) error {
	answers, err := json.Marshal(answersOrEmpty(l.Answers))
	if err != nil {
		return fmt.Errorf("encode the answers of gap %s: %w", l.Key, err)
	}
	res, err := s.exec(ctx, `UPDATE gap_lifecycles SET state = ?, checked_commit = ?, checked_push = ?, checked_at = ?, closed_at = ?, answers = ?, updated_at = ?
WHERE domain = ? AND gap_key = ? AND job_id = ?`,
		l.State, l.CheckedCommit, l.CheckedPush, nullMicros(l.CheckedAt), nullMicros(l.ClosedAt), string(answers), toMicros(l.UpdatedAt),
		l.Domain, l.Key, l.JobID)
	if err != nil {
		return fmt.Errorf("record the check of gap %s of %s: %w", l.Key, l.Domain, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return apperr.New(apperr.Conflict, "gap %q of %s is no longer worked on by job %s", l.Key, l.Domain, l.JobID)
	}
	return nil
}

func lifecycleLists(l analytics.GapLifecycle) (terms, questions string, err error) {
	t, err := json.Marshal(nonNil(l.Terms))
	if err != nil {
		return "", "", fmt.Errorf("encode the terms of gap %s: %w", l.Key, err)
	}
	q, err := json.Marshal(nonNil(l.Questions))
	if err != nil {
		return "", "", fmt.Errorf("encode the questions of gap %s: %w", l.Key, err)
	}
	return string(t), string(q), nil
}

func decodeLifecycle(l *analytics.GapLifecycle, terms, questions, answers []byte) error {
	if err := json.Unmarshal(terms, &l.Terms); err != nil {
		return fmt.Errorf("decode the terms of gap %s: %w", l.Key, err)
	}
	if err := json.Unmarshal(questions, &l.Questions); err != nil {
		return fmt.Errorf("decode the questions of gap %s: %w", l.Key, err)
	}
	if err := json.Unmarshal(answers, &l.Answers); err != nil {
		return fmt.Errorf("decode the answers of gap %s: %w", l.Key, err)
	}
	return nil
}

func answersOrEmpty(a []analytics.GapAnswer) []analytics.GapAnswer {
	if a == nil {
		return []analytics.GapAnswer{}
	}
	return a
}
