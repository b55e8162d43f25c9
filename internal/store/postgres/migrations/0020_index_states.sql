-- What is known of each domain's index (freshness.State), as in the SQLite
-- store: the commit it was built from, the head of its branch last seen,
-- and the last failure. A failed build changes only the failure columns.

CREATE TABLE index_states (
    domain_id       text COLLATE "C" PRIMARY KEY REFERENCES domains(id),
    commit_sha      text COLLATE "C" NOT NULL DEFAULT '',
    indexed_at      timestamptz,
    head            text COLLATE "C" NOT NULL DEFAULT '',
    head_seen_at    timestamptz,     -- when head was first seen there
    head_checked_at timestamptz,     -- when head was last seen there
    pages           integer NOT NULL DEFAULT 0,
    passages        integer NOT NULL DEFAULT 0,
    duration_us     bigint NOT NULL DEFAULT 0, -- the last build's
    last_error      text NOT NULL DEFAULT '',
    last_error_at   timestamptz,
    failures        integer NOT NULL DEFAULT 0
);
