-- The queue of pull request heads whose docs are checked with the
-- readers' questions (prcheck), as in the SQLite store: one row per pull
-- request and head commit, so a redelivered webhook or a second hook for
-- the same push adds nothing. Workers claim rows under a lease with
-- FOR UPDATE SKIP LOCKED.

CREATE TABLE pr_checks (
    id          text COLLATE "C" PRIMARY KEY,
    project_id  text COLLATE "C" NOT NULL REFERENCES projects(id),
    number      bigint NOT NULL,
    head_sha    text COLLATE "C" NOT NULL,
    head_ref    text NOT NULL,
    base_ref    text NOT NULL,
    pull_ref    text NOT NULL, -- what the checks read, in the project's own repository
    fork        boolean NOT NULL,
    link        text NOT NULL,
    source      text NOT NULL, -- webhook or agent
    state       text NOT NULL, -- queued, running, done, failed
    attempts    integer NOT NULL DEFAULT 0,
    worker      text NOT NULL DEFAULT '',
    lease_until timestamptz,
    run_after   timestamptz NOT NULL,
    runs        jsonb NOT NULL DEFAULT '[]', -- [{domain, id}] of the stored check runs
    error       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (project_id, number, head_sha)
);
CREATE INDEX pr_checks_due ON pr_checks(state, run_after);
CREATE INDEX pr_checks_lease ON pr_checks(state, lease_until);
