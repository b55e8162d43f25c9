package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/freshness"
)

var _ freshness.Store = (*Store)(nil)

const indexStateColumns = `domain_id, commit_sha, indexed_at, head, head_seen_at, head_checked_at, pages, passages, duration_us, last_error, last_error_at, failures`

// seeHeadSQL records a head seen at a time, as the SQLite store does: a
// head already recorded keeps when it was first seen, and a report older
// than the last recorded changes nothing. Arguments: domain, head, at.
const seeHeadSQL = `INSERT INTO index_states (domain_id, head, head_seen_at, head_checked_at) VALUES ($1, $2, $3, $3)
	ON CONFLICT (domain_id) DO UPDATE SET
		head_seen_at = CASE WHEN index_states.head_checked_at > excluded.head_checked_at OR index_states.head = excluded.head
			THEN index_states.head_seen_at ELSE excluded.head_seen_at END,
		head = CASE WHEN index_states.head_checked_at > excluded.head_checked_at THEN index_states.head ELSE excluded.head END,
		head_checked_at = GREATEST(index_states.head_checked_at, excluded.head_checked_at)`

// IndexState implements freshness.Store.
func (s *Store) IndexState(ctx context.Context, domain string) (freshness.State, error) {
	st, err := scanIndexState(s.pool.QueryRow(ctx, `SELECT `+indexStateColumns+` FROM index_states WHERE domain_id = $1`, domain))
	if errors.Is(err, pgx.ErrNoRows) {
		return freshness.State{Domain: domain}, nil
	}
	if err != nil {
		return freshness.State{}, fmt.Errorf("read the index state of %s: %w", domain, err)
	}
	return st, nil
}

// IndexStates implements freshness.Store.
func (s *Store) IndexStates(ctx context.Context) ([]freshness.State, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+indexStateColumns+` FROM index_states ORDER BY domain_id`)
	if err != nil {
		return nil, fmt.Errorf("read the index states: %w", err)
	}
	defer rows.Close()
	var out []freshness.State
	for rows.Next() {
		st, err := scanIndexState(rows)
		if err != nil {
			return nil, fmt.Errorf("read the index states: %w", err)
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

func scanIndexState(row pgx.Row) (freshness.State, error) {
	var st freshness.State
	var indexed, seen, checked, errAt *time.Time
	var durationUS int64
	err := row.Scan(&st.Domain, &st.Commit, &indexed, &st.Head, &seen, &checked, &st.Pages, &st.Passages, &durationUS, &st.LastError, &errAt, &st.Failures)
	if err != nil {
		return freshness.State{}, err
	}
	st.IndexedAt, st.HeadSeenAt, st.HeadCheckedAt, st.LastErrorAt = orZero(indexed), orZero(seen), orZero(checked), orZero(errAt)
	st.Duration = time.Duration(durationUS) * time.Microsecond
	return st, nil
}

func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// SeeHead implements freshness.Store in one statement.
func (s *Store) SeeHead(ctx context.Context, domain, head string, at time.Time) error {
	if head == "" {
		return nil
	}
	_, err := s.pool.Exec(ctx, seeHeadSQL, domain, head, at)
	return indexStateError(domain, "record the head", s.noteWrite(err))
}

// RecordBuilt implements freshness.Store in one transaction.
func (s *Store) RecordBuilt(ctx context.Context, domain string, b freshness.Built) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO index_states (domain_id, commit_sha, indexed_at, pages, passages, duration_us) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (domain_id) DO UPDATE SET commit_sha = excluded.commit_sha, indexed_at = excluded.indexed_at,
				pages = excluded.pages, passages = excluded.passages, duration_us = excluded.duration_us,
				last_error = '', last_error_at = NULL, failures = 0`,
			domain, b.Commit, b.At, b.Pages, b.Passages, b.Duration.Microseconds())
		if err != nil || b.Commit == "" {
			return err
		}
		_, err = tx.Exec(ctx, seeHeadSQL, domain, b.Commit, b.Started)
		return err
	})
	return indexStateError(domain, "record a build", err)
}

// RecordFailure implements freshness.Store in one statement.
func (s *Store) RecordFailure(ctx context.Context, domain, why string, at time.Time, took time.Duration) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO index_states (domain_id, last_error, last_error_at, duration_us, failures) VALUES ($1, $2, $3, $4, 1)
		ON CONFLICT (domain_id) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at,
			duration_us = excluded.duration_us, failures = index_states.failures + 1`,
		domain, why, at, took.Microseconds())
	return indexStateError(domain, "record a failed build", s.noteWrite(err))
}

func indexStateError(domain, what string, err error) error {
	switch {
	case err == nil:
		return nil
	case isForeignKeyViolation(err):
		return apperr.New(apperr.NotFound, "domain %q not found", domain)
	}
	return fmt.Errorf("%s of %s: %w", what, domain, err)
}
