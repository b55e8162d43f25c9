-- How far the docs covered an answer, as in the SQLite store: status gains
-- 'partial', and a partial or not covered answer keeps the note the reader
-- saw ("The docs don't mention Datadog.") and the names it was about, which
-- the analytics count among the content gaps.
ALTER TABLE thread_turns ADD COLUMN note text NOT NULL DEFAULT '';
ALTER TABLE thread_turns ADD COLUMN missing jsonb NOT NULL DEFAULT '[]';
