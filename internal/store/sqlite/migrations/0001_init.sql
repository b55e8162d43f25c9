-- Times are INTEGER microseconds since the Unix epoch (UTC).

CREATE TABLE orgs (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);

CREATE TABLE projects (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs(id),
    repo_url   TEXT NOT NULL,
    base_ref   TEXT NOT NULL,
    forge_kind TEXT NOT NULL,
    forge_url  TEXT NOT NULL DEFAULT '',
    token_env  TEXT NOT NULL DEFAULT '',
    token_file TEXT NOT NULL DEFAULT '',
    docs_root  TEXT NOT NULL,
    model      TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX projects_org ON projects(org_id);

CREATE TABLE domains (
    id               TEXT PRIMARY KEY,
    org_id           TEXT NOT NULL REFERENCES orgs(id),
    project_id       TEXT NOT NULL REFERENCES projects(id),
    ref              TEXT NOT NULL,
    site_url         TEXT NOT NULL DEFAULT '',
    model            TEXT NOT NULL,
    allowed_origins  TEXT NOT NULL DEFAULT '[]',
    finish_thread_id INTEGER NOT NULL DEFAULT 1,
    created_at       INTEGER NOT NULL
);
CREATE INDEX domains_org ON domains(org_id);

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    org_id     TEXT NOT NULL REFERENCES orgs(id),
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL DEFAULT '',
    hash       BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX api_keys_org ON api_keys(org_id);

CREATE TABLE jobs (
    id            TEXT PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects(id),
    status        TEXT NOT NULL,
    repository    TEXT NOT NULL,
    branch        TEXT NOT NULL,
    base_ref      TEXT NOT NULL,
    model         TEXT NOT NULL,
    pr_link       TEXT NOT NULL DEFAULT '',
    pr_number     INTEGER NOT NULL DEFAULT 0,
    summary       TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    files_changed TEXT NOT NULL DEFAULT '[]',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    completed_at  INTEGER,
    archived_at   INTEGER
);
CREATE INDEX jobs_project_created ON jobs(project_id, created_at DESC, id DESC);
CREATE INDEX jobs_project_status_created ON jobs(project_id, status, created_at DESC, id DESC);

-- One row per message: the instruction and the queued turn that carries it out.
CREATE TABLE job_turns (
    job_id           TEXT NOT NULL REFERENCES jobs(id),
    seq              INTEGER NOT NULL,
    prompt           TEXT NOT NULL,
    state            TEXT NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    summary          TEXT NOT NULL DEFAULT '',
    error            TEXT NOT NULL DEFAULT '',
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      INTEGER NOT NULL DEFAULT 0,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    finished_at      INTEGER,
    PRIMARY KEY (job_id, seq)
);
CREATE INDEX job_turns_state ON job_turns(state, created_at);
-- At most one running turn per job.
CREATE UNIQUE INDEX job_turns_one_running ON job_turns(job_id) WHERE state = 'running';

CREATE TABLE job_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id     TEXT NOT NULL REFERENCES jobs(id),
    type       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX job_events_job ON job_events(job_id, id);

CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash BLOB NOT NULL,
    job_id       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

CREATE TABLE rate_hits (
    key TEXT NOT NULL,
    at  INTEGER NOT NULL
);
CREATE INDEX rate_hits_key_at ON rate_hits(key, at);
