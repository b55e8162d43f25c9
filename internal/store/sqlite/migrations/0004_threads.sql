-- Assistant threads: one row per conversation of a domain, and one per turn
-- (question, answer, the citations sent, the fingerprint and timings). The
-- domain and organization are not foreign keys: with PostgreSQL the tenants
-- live there, and the threads in this file.

CREATE TABLE threads (
    id         TEXT PRIMARY KEY,
    domain     TEXT NOT NULL,
    org_id     TEXT NOT NULL,
    fp         TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX threads_domain ON threads(domain, created_at);

CREATE TABLE thread_turns (
    thread_id     TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    message_id    TEXT NOT NULL,
    fp            TEXT NOT NULL,
    question      TEXT NOT NULL,
    answer        TEXT NOT NULL DEFAULT '',
    sources       TEXT NOT NULL DEFAULT '[]', -- JSON array of {id, url, title, path, score}
    model         TEXT NOT NULL,
    status        TEXT NOT NULL,              -- answered | not_covered | failed | canceled
    error         TEXT NOT NULL DEFAULT '',
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    retrieval_us  INTEGER NOT NULL DEFAULT 0,
    first_text_us INTEGER NOT NULL DEFAULT 0,
    total_us      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
