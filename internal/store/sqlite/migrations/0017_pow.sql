-- Keys the server makes for itself once, kept in the database so that
-- every process of the install uses the same (the key that signs the
-- proof-of-work challenges of the widget).
CREATE TABLE server_keys (
	name       TEXT PRIMARY KEY,
	value      BLOB NOT NULL,
	created_at INTEGER NOT NULL
);
