-- What happened to a content gap once a job was started from it, per
-- domain and gap key: the gap's questions and terms at that moment, its
-- state (in_progress, closed, reopened), its job, and its last check: the
-- commit of the index its questions were asked on, the job's newest pushed
-- commit then, and the answers, which prove a closed gap or say why it was
-- reopened.
CREATE TABLE gap_lifecycles (
    domain         text COLLATE "C" NOT NULL,
    gap_key        text COLLATE "C" NOT NULL,
    state          text NOT NULL,
    terms          jsonb NOT NULL,
    top_page       text NOT NULL DEFAULT '',
    questions      jsonb NOT NULL,
    project_id     text COLLATE "C" NOT NULL,
    job_id         text COLLATE "C" NOT NULL,
    linked_at      timestamptz NOT NULL,
    checked_commit text NOT NULL DEFAULT '',
    checked_push   text NOT NULL DEFAULT '',
    checked_at     timestamptz,
    closed_at      timestamptz,
    answers        jsonb NOT NULL DEFAULT '[]',
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (domain, gap_key)
);
