-- The queue of pull request heads whose docs are checked with the
-- readers' questions (prcheck): one row per pull request and head commit,
-- so a redelivered webhook or a second hook for the same push adds
-- nothing. Workers claim rows under a lease, as agent turns are claimed.

CREATE TABLE pr_checks (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id),
    number      INTEGER NOT NULL,
    head_sha    TEXT NOT NULL,
    head_ref    TEXT NOT NULL,
    base_ref    TEXT NOT NULL,
    pull_ref    TEXT NOT NULL, -- what the checks read, in the project's own repository
    fork        INTEGER NOT NULL,
    link        TEXT NOT NULL,
    source      TEXT NOT NULL, -- webhook or agent
    state       TEXT NOT NULL, -- queued, running, done, failed
    attempts    INTEGER NOT NULL DEFAULT 0,
    worker      TEXT NOT NULL DEFAULT '',
    lease_until INTEGER NOT NULL DEFAULT 0,
    run_after   INTEGER NOT NULL,
    runs        TEXT NOT NULL DEFAULT '[]', -- JSON [{domain, id}] of the stored check runs
    error       TEXT NOT NULL DEFAULT '',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (project_id, number, head_sha)
);
CREATE INDEX pr_checks_due ON pr_checks(state, run_after);
CREATE INDEX pr_checks_lease ON pr_checks(state, lease_until);
