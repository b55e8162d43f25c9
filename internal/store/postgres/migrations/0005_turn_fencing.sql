-- A job's version: every change is a compare-and-swap on it, so a decision
-- made on a stale read is refused and made again.
ALTER TABLE jobs ADD COLUMN version bigint NOT NULL DEFAULT 0;
-- A turn queued again after a retryable error waits until run_after.
ALTER TABLE job_turns ADD COLUMN run_after timestamptz;
-- How far a turn's side effects got, so a turn run again resumes after them.
ALTER TABLE job_turns ADD COLUMN pushed_sha text NOT NULL DEFAULT '';
ALTER TABLE job_turns ADD COLUMN pushed_summary text NOT NULL DEFAULT '';
ALTER TABLE job_turns ADD COLUMN pushed_files text[] NOT NULL DEFAULT '{}';
ALTER TABLE job_turns ADD COLUMN pr_number integer NOT NULL DEFAULT 0;
ALTER TABLE job_turns ADD COLUMN pr_link text NOT NULL DEFAULT '';
