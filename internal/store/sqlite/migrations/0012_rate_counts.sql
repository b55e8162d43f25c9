-- How many hits each rate-limit key holds, kept by triggers as hits are
-- recorded and deleted, so that a check reads one row instead of counting
-- the key's hits: a key near a limit of 10,000 a month would otherwise
-- count 10,000 index entries on every request, inside the write lock.
-- A key's row goes when its last hit does.

CREATE TABLE rate_counts (
    key  TEXT PRIMARY KEY,
    hits INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO rate_counts (key, hits) SELECT key, COUNT(*) FROM rate_hits GROUP BY key;

CREATE TRIGGER rate_hits_counted AFTER INSERT ON rate_hits BEGIN
    INSERT INTO rate_counts (key, hits) VALUES (NEW.key, 1)
        ON CONFLICT (key) DO UPDATE SET hits = hits + 1;
END;

CREATE TRIGGER rate_hits_uncounted AFTER DELETE ON rate_hits BEGIN
    UPDATE rate_counts SET hits = hits - 1 WHERE key = OLD.key;
    DELETE FROM rate_counts WHERE key = OLD.key AND hits <= 0;
END;
