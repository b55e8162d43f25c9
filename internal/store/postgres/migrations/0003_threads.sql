-- Assistant threads: one row per conversation of a domain, and one per turn
-- (question, answer, the citations sent, the fingerprint and timings), as
-- in the SQLite store.
CREATE TABLE threads (
    id         text COLLATE "C" PRIMARY KEY,
    domain     text COLLATE "C" NOT NULL,
    org_id     text COLLATE "C" NOT NULL,
    fp         text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX threads_domain ON threads(domain, created_at);

CREATE TABLE thread_turns (
    thread_id     text COLLATE "C" NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
    seq           integer NOT NULL,
    message_id    text NOT NULL,
    fp            text NOT NULL,
    question      text NOT NULL,
    answer        text NOT NULL DEFAULT '',
    sources       jsonb NOT NULL DEFAULT '[]', -- [{id, url, title, path, score}]
    model         text NOT NULL,
    status        text NOT NULL,               -- answered | not_covered | failed | canceled
    error         text NOT NULL DEFAULT '',
    input_tokens  integer NOT NULL DEFAULT 0,
    output_tokens integer NOT NULL DEFAULT 0,
    retrieval_us  bigint NOT NULL DEFAULT 0,
    first_text_us bigint NOT NULL DEFAULT 0,
    total_us      bigint NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
