-- The dashboard: the web sessions and one-time login links (only hashes
-- kept), the jobs started from a content gap, and an index for reading a
-- period's questions.

CREATE INDEX IF NOT EXISTS thread_turns_created ON thread_turns(created_at);

CREATE TABLE ui_sessions (
    id_hash      BLOB PRIMARY KEY,
    org_id       TEXT NOT NULL,
    key_id       TEXT NOT NULL,
    csrf         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
);
CREATE INDEX ui_sessions_key ON ui_sessions(key_id);

CREATE TABLE ui_login_tokens (
    hash       BLOB PRIMARY KEY,
    org_id     TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);

CREATE TABLE gap_jobs (
    domain     TEXT NOT NULL,
    gap_key    TEXT NOT NULL,
    project_id TEXT NOT NULL,
    job_id     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (domain, gap_key, job_id)
);
