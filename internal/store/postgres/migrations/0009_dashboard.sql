-- The dashboard: the web sessions and one-time login links (only hashes
-- kept), the jobs started from a content gap, and an index for reading a
-- period's questions, as in the SQLite store.

CREATE INDEX IF NOT EXISTS thread_turns_created ON thread_turns(created_at);

CREATE TABLE ui_sessions (
    id_hash      bytea PRIMARY KEY,
    org_id       text COLLATE "C" NOT NULL,
    key_id       text COLLATE "C" NOT NULL,
    csrf         text NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);
CREATE INDEX ui_sessions_key ON ui_sessions(key_id);

CREATE TABLE ui_login_tokens (
    hash       bytea PRIMARY KEY,
    org_id     text COLLATE "C" NOT NULL,
    key_id     text COLLATE "C" NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);

CREATE TABLE gap_jobs (
    domain     text COLLATE "C" NOT NULL,
    gap_key    text COLLATE "C" NOT NULL,
    project_id text COLLATE "C" NOT NULL,
    job_id     text COLLATE "C" NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (domain, gap_key, job_id)
);
