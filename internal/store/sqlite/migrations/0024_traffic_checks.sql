-- Answer checks kept from a domain's traffic (trafficcheck.Check): a
-- question a reader rated up (origin upvote: its answer must cite a page it
-- cited then) or a question of a content gap (origin gap: it must be
-- answered once a fix lands). harvest_key is the question as first found,
-- normalized: a domain holds each once, and a check the team dropped stays
-- as a row so that it is never harvested again. cite and contains are JSON
-- arrays of strings. asked_at is when the reader asked it; the harvest
-- keeps the newest of those the team did not pin or edit.
CREATE TABLE traffic_checks (
    id          TEXT PRIMARY KEY,
    domain      TEXT NOT NULL,
    harvest_key TEXT NOT NULL,
    name        TEXT NOT NULL,
    question    TEXT NOT NULL,
    cite        TEXT NOT NULL DEFAULT '[]',
    contains    TEXT NOT NULL DEFAULT '[]',
    not_covered INTEGER NOT NULL DEFAULT 0,
    answered    INTEGER NOT NULL DEFAULT 0,
    origin      TEXT NOT NULL,
    pinned      INTEGER NOT NULL DEFAULT 0,
    dropped     INTEGER NOT NULL DEFAULT 0,
    edited      INTEGER NOT NULL DEFAULT 0,
    thread_id   TEXT NOT NULL DEFAULT '',
    seq         INTEGER NOT NULL DEFAULT 0,
    gap_key     TEXT NOT NULL DEFAULT '',
    asked_at    INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (domain, harvest_key)
) WITHOUT ROWID;
CREATE INDEX traffic_checks_domain ON traffic_checks(domain, origin, asked_at);
