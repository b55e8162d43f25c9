-- One row that readiness rewrites to learn whether the database can be
-- written again after writes failed (a full disk, say).
CREATE TABLE health_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    checked_at INTEGER NOT NULL
);
