package sqlite

import (
	"context"
	"time"

	"github.com/docsmith/docsmith/internal/checkwatch"
)

var _ checkwatch.ScheduleStore = (*Store)(nil)

// ClaimCheckRun implements checkwatch.ScheduleStore in one statement: the
// upsert's condition is the claim.
func (s *Store) ClaimCheckRun(ctx context.Context, domain string, every time.Duration, now time.Time) (bool, error) {
	res, err := s.exec(ctx, `INSERT INTO check_schedules (domain_id, next_run_at, every_us) VALUES (?1, ?2, ?3)
		ON CONFLICT (domain_id) DO UPDATE SET next_run_at = excluded.next_run_at, every_us = excluded.every_us
		WHERE check_schedules.next_run_at <= ?4 OR check_schedules.every_us <> excluded.every_us`,
		domain, toMicros(now.Add(every)), every.Microseconds(), toMicros(now))
	if err != nil {
		return false, indexStateError(domain, "claim the scheduled check run", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, indexStateError(domain, "claim the scheduled check run", err)
	}
	return n == 1, nil
}

// RetryCheckRun implements checkwatch.ScheduleStore.
func (s *Store) RetryCheckRun(ctx context.Context, domain string, at time.Time) error {
	_, err := s.exec(ctx, `UPDATE check_schedules SET next_run_at = ? WHERE domain_id = ? AND next_run_at > ?`, toMicros(at), domain, toMicros(at))
	return indexStateError(domain, "reschedule the check run", err)
}
