-- What happened to a content gap once a job was started from it, per
-- domain and gap key: the gap's questions and terms at that moment (JSON
-- arrays), its state (in_progress, closed, reopened), its job, and its
-- last check: the commit of the index its questions were asked on, the
-- job's newest pushed commit then, and the answers (JSON), which prove a
-- closed gap or say why it was reopened.
CREATE TABLE gap_lifecycles (
    domain         TEXT NOT NULL,
    gap_key        TEXT NOT NULL,
    state          TEXT NOT NULL,
    terms          TEXT NOT NULL,
    top_page       TEXT NOT NULL DEFAULT '',
    questions      TEXT NOT NULL,
    project_id     TEXT NOT NULL,
    job_id         TEXT NOT NULL,
    linked_at      INTEGER NOT NULL,
    checked_commit TEXT NOT NULL DEFAULT '',
    checked_push   TEXT NOT NULL DEFAULT '',
    checked_at     INTEGER,
    closed_at      INTEGER,
    answers        TEXT NOT NULL DEFAULT '[]',
    updated_at     INTEGER NOT NULL,
    PRIMARY KEY (domain, gap_key)
) WITHOUT ROWID;
