-- Answer checks kept from a domain's traffic (trafficcheck.Check), as in
-- the SQLite store: a question a reader rated up (origin upvote: its answer
-- must cite a page it cited then) or a question of a content gap (origin
-- gap: it must be answered once a fix lands). harvest_key is the question
-- as first found, normalized: a domain holds each once, and a check the
-- team dropped stays as a row so that it is never harvested again. asked_at
-- is when the reader asked it; the harvest keeps the newest of those the
-- team did not pin or edit.
CREATE TABLE traffic_checks (
    id          text COLLATE "C" PRIMARY KEY,
    domain      text COLLATE "C" NOT NULL,
    harvest_key text NOT NULL,
    name        text NOT NULL,
    question    text NOT NULL,
    cite        jsonb NOT NULL DEFAULT '[]',
    contains    jsonb NOT NULL DEFAULT '[]',
    not_covered boolean NOT NULL DEFAULT false,
    answered    boolean NOT NULL DEFAULT false,
    origin      text COLLATE "C" NOT NULL,
    pinned      boolean NOT NULL DEFAULT false,
    dropped     boolean NOT NULL DEFAULT false,
    edited      boolean NOT NULL DEFAULT false,
    thread_id   text COLLATE "C" NOT NULL DEFAULT '',
    seq         integer NOT NULL DEFAULT 0,
    gap_key     text NOT NULL DEFAULT '',
    asked_at    timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (domain, harvest_key)
);
CREATE INDEX traffic_checks_domain ON traffic_checks(domain, origin, asked_at);
