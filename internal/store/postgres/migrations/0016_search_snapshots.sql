-- The newest index snapshot of each domain (search.SharedSnapshots): a
-- process with no snapshot of its own, such as a new replica, loads the
-- domain's index from it rather than analysing every chunk of
-- search_chunks again. It is only a cache of search_chunks: a reader uses
-- it only when its key, a digest of the analysis and of the pages it was
-- built from, is the key of the pages search_chunks holds, and every change
-- of the domain's pages deletes it. The snapshot is stored uncompressed,
-- for the replica waiting to read it: PostgreSQL's default compression
-- halves its size but doubles the time of its write and slows its read.
CREATE TABLE search_snapshots (
    domain  TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    key     BYTEA NOT NULL,
    data    BYTEA NOT NULL
);
ALTER TABLE search_snapshots ALTER COLUMN data SET STORAGE EXTERNAL;
