-- Feedback on a page rather than on an answer, as in the SQLite store: an
-- AI agent that read a page over MCP says whether it helped (up or down),
-- with an optional comment; source says where it came from (mcp). Answers'
-- ratings stay on their turns; the analytics read both. The index reads a
-- domain's feedback of a period, newest first.
CREATE TABLE page_feedback (
	id         bigserial PRIMARY KEY,
	domain     text COLLATE "C" NOT NULL,
	org_id     text COLLATE "C" NOT NULL,
	page_path  text NOT NULL,
	rating     text NOT NULL,
	comment    text NOT NULL DEFAULT '',
	source     text NOT NULL,
	created_at timestamptz NOT NULL
);
CREATE INDEX page_feedback_domain ON page_feedback(domain, created_at);
