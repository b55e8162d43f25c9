package postgres

import (
	"context"
	"time"

	"github.com/docsmith/docsmith/internal/checkwatch"
)

var _ checkwatch.ScheduleStore = (*Store)(nil)

// ClaimCheckRun implements checkwatch.ScheduleStore in one statement: the
// upsert's condition is the claim. Of two replicas at once, the second
// waits for the first's row and finds it no longer due.
func (s *Store) ClaimCheckRun(ctx context.Context, domain string, every time.Duration, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO check_schedules (domain_id, next_run_at, every_us) VALUES ($1, $2, $3)
		ON CONFLICT (domain_id) DO UPDATE SET next_run_at = excluded.next_run_at, every_us = excluded.every_us
		WHERE check_schedules.next_run_at <= $4 OR check_schedules.every_us <> excluded.every_us`,
		domain, now.Add(every), every.Microseconds(), now)
	if err != nil {
		return false, indexStateError(domain, "claim the scheduled check run", s.noteWrite(err))
	}
	return tag.RowsAffected() == 1, nil
}

// RetryCheckRun implements checkwatch.ScheduleStore.
func (s *Store) RetryCheckRun(ctx context.Context, domain string, at time.Time) error {
	_, err := s.pool.Exec(ctx, `UPDATE check_schedules SET next_run_at = $1 WHERE domain_id = $2 AND next_run_at > $1`, at, domain)
	return indexStateError(domain, "reschedule the check run", s.noteWrite(err))
}
