-- Rate-limit hits carry the instant they leave their window (expires), so
-- hits of keys that are never checked again can be swept, and the token of
-- the request they count, so retries of one request are counted once.
-- Hits recorded before this migration get the longest window (30 days):
-- none is dropped while it still counts, and all are gone within a month.

ALTER TABLE rate_hits ADD COLUMN expires INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rate_hits ADD COLUMN token TEXT;
UPDATE rate_hits SET expires = at + 2592000000000;
CREATE INDEX rate_hits_expires ON rate_hits(expires);
CREATE INDEX rate_hits_key_token ON rate_hits(key, token) WHERE token IS NOT NULL;
