-- Feedback on a page rather than on an answer: an AI agent that read a page
-- over MCP says whether it helped (up or down), with an optional comment.
-- source says where it came from (mcp). Answers' ratings stay on their
-- turns; the analytics read both. The index reads a domain's feedback of a
-- period, newest first.
CREATE TABLE page_feedback (
	id         INTEGER PRIMARY KEY,
	domain     TEXT NOT NULL,
	org_id     TEXT NOT NULL,
	page_path  TEXT NOT NULL,
	rating     TEXT NOT NULL,
	comment    TEXT NOT NULL DEFAULT '',
	source     TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX page_feedback_domain ON page_feedback(domain, created_at);
