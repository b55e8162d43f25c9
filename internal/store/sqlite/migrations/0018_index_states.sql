-- What is known of each domain's index (freshness.State): the commit it
-- was built from, the head of its branch last seen, and the last failure.
-- A failed build changes only the failure columns: the served index and
-- its commit stay.

CREATE TABLE index_states (
    domain_id       TEXT PRIMARY KEY REFERENCES domains(id),
    commit_sha      TEXT NOT NULL DEFAULT '',
    indexed_at      INTEGER,          -- micros; NULL before the first build
    head            TEXT NOT NULL DEFAULT '',
    head_seen_at    INTEGER,          -- when head was first seen there
    head_checked_at INTEGER,          -- when head was last seen there
    pages           INTEGER NOT NULL DEFAULT 0,
    passages        INTEGER NOT NULL DEFAULT 0,
    duration_us     INTEGER NOT NULL DEFAULT 0, -- the last build's
    last_error      TEXT NOT NULL DEFAULT '',
    last_error_at   INTEGER,
    failures        INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
