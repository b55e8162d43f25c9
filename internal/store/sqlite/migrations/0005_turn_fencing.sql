-- A job's version: every change is a compare-and-swap on it, so a decision
-- made on a stale read is refused and made again.
ALTER TABLE jobs ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
-- A turn queued again after a retryable error waits until run_after
-- (microseconds since the epoch; 0: at once).
ALTER TABLE job_turns ADD COLUMN run_after INTEGER NOT NULL DEFAULT 0;
-- How far a turn's side effects got, so a turn run again resumes after them.
ALTER TABLE job_turns ADD COLUMN pushed_sha TEXT NOT NULL DEFAULT '';
ALTER TABLE job_turns ADD COLUMN pushed_summary TEXT NOT NULL DEFAULT '';
ALTER TABLE job_turns ADD COLUMN pushed_files TEXT NOT NULL DEFAULT '[]';
ALTER TABLE job_turns ADD COLUMN pr_number INTEGER NOT NULL DEFAULT 0;
ALTER TABLE job_turns ADD COLUMN pr_link TEXT NOT NULL DEFAULT '';
