package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apperr"
)

// StartGapLifecycle records that a job was started from a gap: the gap's
// lifecycle starts, or starts again with this job, in progress.
func (s *Store) StartGapLifecycle(ctx context.Context, l analytics.GapLifecycle) error {
	terms, err := json.Marshal(nonNil(l.Terms))
	if err != nil {
		return fmt.Errorf("encode the terms of gap %s: %w", l.Key, err)
	}
	questions, err := json.Marshal(nonNil(l.Questions))
	if err != nil {
		return fmt.Errorf("encode the questions of gap %s: %w", l.Key, err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO gap_lifecycles (domain, gap_key, state, terms, top_page, questions, project_id, job_id, linked_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
ON CONFLICT (domain, gap_key) DO UPDATE SET state = excluded.state, terms = excluded.terms, top_page = excluded.top_page,
  questions = excluded.questions, project_id = excluded.project_id, job_id = excluded.job_id, linked_at = excluded.linked_at,
  checked_commit = '', checked_push = '', checked_at = NULL, closed_at = NULL, answers = '[]', updated_at = excluded.updated_at`,
		l.Domain, l.Key, l.State, string(terms), l.TopPage, string(questions), l.ProjectID, l.JobID, utc(l.LinkedAt), utc(l.UpdatedAt))
	if err != nil {
		return fmt.Errorf("start the lifecycle of gap %s of %s: %w", l.Key, l.Domain, err)
	}
	return nil
}

// GapLifecycles returns the domain's gap lifecycles, the latest linked
// first.
func (s *Store) GapLifecycles(ctx context.Context, domain string) ([]analytics.GapLifecycle, error) {
	rows, err := s.pool.Query(ctx, `SELECT gap_key, state, terms, top_page, questions, project_id, job_id, linked_at,
checked_commit, checked_push, checked_at, closed_at, answers, updated_at
FROM gap_lifecycles WHERE domain = $1 ORDER BY linked_at DESC, gap_key`, domain)
	if err != nil {
		return nil, fmt.Errorf("list the gap lifecycles of %s: %w", domain, err)
	}
	defer rows.Close()
	out := []analytics.GapLifecycle{}
	for rows.Next() {
		l := analytics.GapLifecycle{Domain: domain}
		var terms, questions, answers []byte
		var checked, closed *time.Time
		if err := rows.Scan(&l.Key, &l.State, &terms, &l.TopPage, &questions, &l.ProjectID, &l.JobID, &l.LinkedAt,
			&l.CheckedCommit, &l.CheckedPush, &checked, &closed, &answers, &l.UpdatedAt); err != nil {
			return nil, fmt.Errorf("scan a gap lifecycle of %s: %w", domain, err)
		}
		if err := json.Unmarshal(terms, &l.Terms); err != nil {
			return nil, fmt.Errorf("decode the terms of gap %s: %w", l.Key, err)
		}
		if err := json.Unmarshal(questions, &l.Questions); err != nil {
			return nil, fmt.Errorf("decode the questions of gap %s: %w", l.Key, err)
		}
		if err := json.Unmarshal(answers, &l.Answers); err != nil {
			return nil, fmt.Errorf("decode the answers of gap %s: %w", l.Key, err)
		}
		l.LinkedAt, l.UpdatedAt = utc(l.LinkedAt), utc(l.UpdatedAt)
		l.CheckedAt, l.ClosedAt = utcPtr(checked), utcPtr(closed)
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
	answers := l.Answers
	if answers == nil {
		answers = []analytics.GapAnswer{}
	}
	enc, err := json.Marshal(answers)
	if err != nil {
		return fmt.Errorf("encode the answers of gap %s: %w", l.Key, err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE gap_lifecycles SET state = $1, checked_commit = $2, checked_push = $3, checked_at = $4, closed_at = $5, answers = $6, updated_at = $7
WHERE domain = $8 AND gap_key = $9 AND job_id = $10`,
		l.State, l.CheckedCommit, l.CheckedPush, utcPtr(l.CheckedAt), utcPtr(l.ClosedAt), string(enc), utc(l.UpdatedAt),
		l.Domain, l.Key, l.JobID)
	if err != nil {
		return fmt.Errorf("record the check of gap %s of %s: %w", l.Key, l.Domain, err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.New(apperr.Conflict, "gap %q of %s is no longer worked on by job %s", l.Key, l.Domain, l.JobID)
	}
	return nil
}
