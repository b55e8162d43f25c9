-- Keys the server makes for itself once, kept in the database so that
-- every replica uses the same (the key that signs the proof-of-work
-- challenges of the widget).
CREATE TABLE server_keys (
	name       text PRIMARY KEY,
	value      bytea NOT NULL,
	created_at timestamptz NOT NULL
);
