-- How far the docs covered an answer: status gains 'partial', and a partial
-- or not covered answer keeps the note the reader saw ("The docs don't
-- mention Datadog.") and the names it was about, a JSON array of strings,
-- which the analytics count among the content gaps.
ALTER TABLE thread_turns ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE thread_turns ADD COLUMN missing TEXT NOT NULL DEFAULT '[]';
