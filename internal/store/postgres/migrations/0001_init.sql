-- docsmith on PostgreSQL: tenants, agent jobs with their queue of turns and
-- events, idempotency keys and rate-limit hits. Times are timestamptz
-- (microsecond precision, as the SQLite store keeps them); ids compare
-- bytewise (COLLATE "C"), as in SQLite, whatever the database's collation.

CREATE TABLE orgs (
    id         text COLLATE "C" PRIMARY KEY,
    created_at timestamptz NOT NULL
);

CREATE TABLE projects (
    id         text COLLATE "C" PRIMARY KEY,
    org_id     text COLLATE "C" NOT NULL REFERENCES orgs(id),
    repo_url   text NOT NULL,
    base_ref   text NOT NULL,
    forge_kind text NOT NULL,
    forge_url  text NOT NULL DEFAULT '',
    token_env  text NOT NULL DEFAULT '',
    token_file text NOT NULL DEFAULT '',
    docs_root  text NOT NULL,
    model      text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX projects_org ON projects(org_id);

CREATE TABLE domains (
    id               text COLLATE "C" PRIMARY KEY,
    org_id           text COLLATE "C" NOT NULL REFERENCES orgs(id),
    project_id       text COLLATE "C" NOT NULL REFERENCES projects(id),
    ref              text NOT NULL,
    site_url         text NOT NULL DEFAULT '',
    model            text NOT NULL,
    allowed_origins  text[] NOT NULL DEFAULT '{}',
    finish_thread_id boolean NOT NULL DEFAULT true,
    created_at       timestamptz NOT NULL
);
CREATE INDEX domains_org ON domains(org_id);

CREATE TABLE api_keys (
    id         text COLLATE "C" PRIMARY KEY,
    org_id     text COLLATE "C" NOT NULL REFERENCES orgs(id),
    kind       text NOT NULL,
    name       text NOT NULL DEFAULT '',
    hash       bytea NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
CREATE INDEX api_keys_org ON api_keys(org_id);

CREATE TABLE jobs (
    id            text COLLATE "C" PRIMARY KEY,
    project_id    text COLLATE "C" NOT NULL REFERENCES projects(id),
    status        text NOT NULL,
    repository    text NOT NULL,
    branch        text NOT NULL,
    base_ref      text NOT NULL,
    model         text NOT NULL,
    pr_link       text NOT NULL DEFAULT '',
    pr_number     integer NOT NULL DEFAULT 0,
    summary       text NOT NULL DEFAULT '',
    error         text NOT NULL DEFAULT '',
    files_changed text[] NOT NULL DEFAULT '{}',
    input_tokens  bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    completed_at  timestamptz,
    archived_at   timestamptz
);
CREATE INDEX jobs_project_created ON jobs(project_id, created_at DESC, id DESC);
CREATE INDEX jobs_project_status_created ON jobs(project_id, status, created_at DESC, id DESC);

-- One row per message: the instruction and the queued turn that carries it out.
CREATE TABLE job_turns (
    job_id           text COLLATE "C" NOT NULL REFERENCES jobs(id),
    seq              integer NOT NULL,
    prompt           text NOT NULL,
    state            text NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    summary          text NOT NULL DEFAULT '',
    error            text NOT NULL DEFAULT '',
    lease_owner      text NOT NULL DEFAULT '',
    lease_until      timestamptz,
    cancel_requested boolean NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL,
    started_at       timestamptz,
    finished_at      timestamptz,
    PRIMARY KEY (job_id, seq)
);
-- What workers scan: queued turns, oldest first; running turns by lease.
CREATE INDEX job_turns_queued ON job_turns(created_at, job_id, seq) WHERE state = 'queued';
CREATE INDEX job_turns_running_lease ON job_turns(lease_until) WHERE state = 'running';
-- At most one running turn per job, whatever the workers race to do.
CREATE UNIQUE INDEX job_turns_one_running ON job_turns(job_id) WHERE state = 'running';

CREATE TABLE job_events (
    id         bigserial PRIMARY KEY,
    job_id     text COLLATE "C" NOT NULL REFERENCES jobs(id),
    type       text NOT NULL,
    data       json NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX job_events_job ON job_events(job_id, id);

CREATE TABLE idempotency_keys (
    scope        text NOT NULL,
    key          text NOT NULL,
    request_hash bytea NOT NULL,
    job_id       text COLLATE "C" NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

CREATE TABLE rate_hits (
    key text NOT NULL,
    at  timestamptz NOT NULL
);
CREATE INDEX rate_hits_key_at ON rate_hits(key, at);

-- rate_take is ratelimit.Store's Take in one statement: it locks the keys
-- (advisory, in a fixed order, so replicas checking one key take turns and
-- the count is exact), drops the hits that left each window (at <= start),
-- counts what is left, and records a hit for every rule only if all have
-- room. It returns, per rule in order, the count before this hit, the
-- oldest hit and whether the hit was recorded. The transaction commits
-- without waiting for the WAL flush: a database crash may forget the last
-- moment of hits, a price worth the lock not being held across a disk sync.
CREATE FUNCTION rate_take(keys text[], starts timestamptz[], limits integer[], at_ timestamptz)
RETURNS TABLE (used integer, oldest timestamptz, allowed boolean)
LANGUAGE plpgsql AS $$
DECLARE
    n      integer := coalesce(array_length(keys, 1), 0);
    counts integer[] := '{}';
    firsts timestamptz[] := '{}';
    ok     boolean := true;
    k      text;
    c      integer;
    o      timestamptz;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR k IN SELECT DISTINCT u FROM unnest(keys) AS u ORDER BY u LOOP
        PERFORM pg_advisory_xact_lock(1685258242, hashtext(k));
    END LOOP;
    FOR i IN 1..n LOOP
        DELETE FROM rate_hits h WHERE h.key = keys[i] AND h.at <= starts[i];
        SELECT count(*), min(h.at) INTO c, o FROM rate_hits h WHERE h.key = keys[i];
        counts[i] := c;
        firsts[i] := o;
        IF c >= limits[i] THEN
            ok := false;
        END IF;
    END LOOP;
    IF ok THEN
        INSERT INTO rate_hits (key, at) SELECT u, at_ FROM unnest(keys) AS u;
    END IF;
    RETURN QUERY SELECT counts[j], firsts[j], ok FROM generate_subscripts(keys, 1) AS j ORDER BY j;
END
$$;
