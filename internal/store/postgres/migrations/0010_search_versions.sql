-- Each domain's index version, raised by every change of its chunks in the
-- same transaction: a process holding the domain's index in memory compares
-- it to know when to load the domain again (a notification on the schema's
-- search channel says when to look).
CREATE TABLE search_versions (
    domain  TEXT PRIMARY KEY,
    version BIGINT NOT NULL
);
