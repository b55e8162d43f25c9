-- Rate-limit hits carry the instant they leave their window (expires), so
-- hits of keys that are never checked again can be swept, and the token of
-- the request they count, so retries of one request are counted once.
-- Hits recorded before this migration get the longest window (30 days):
-- none is dropped while it still counts, and all are gone within a month.

ALTER TABLE rate_hits ADD COLUMN expires timestamptz;
ALTER TABLE rate_hits ADD COLUMN token text;
UPDATE rate_hits SET expires = at + interval '30 days';
ALTER TABLE rate_hits ALTER COLUMN expires SET NOT NULL;
CREATE INDEX rate_hits_expires ON rate_hits(expires);
CREATE INDEX rate_hits_key_token ON rate_hits(key, token) WHERE token IS NOT NULL;

DROP FUNCTION rate_take(text[], timestamptz[], integer[], timestamptz);

-- rate_take is ratelimit.Store's Take in one statement: it locks the keys
-- (advisory, in a fixed order, so replicas checking one key take turns and
-- the count is exact), drops the hits that left each window (at <= start),
-- counts what is left, and records a hit for every rule only if all have
-- room. A rule whose key already holds a hit with the request's token
-- (non-empty) is taken already: not checked, not recorded again. On the way
-- it deletes up to sweep hits of any key that left their window (expires
-- <= at_), skipping rows another transaction holds. It returns, per rule in
-- order, the count before this hit, the oldest hit, whether the hit was
-- recorded and whether the rule was taken already. The transaction commits
-- without waiting for the WAL flush: a database crash may forget the last
-- moment of hits, a price worth the lock not being held across a disk sync.
CREATE FUNCTION rate_take(keys text[], starts timestamptz[], limits integer[], expiries timestamptz[], token_ text, sweep integer, at_ timestamptz)
RETURNS TABLE (used integer, oldest timestamptz, allowed boolean, taken boolean)
LANGUAGE plpgsql AS $$
DECLARE
    n      integer := coalesce(array_length(keys, 1), 0);
    counts integer[] := '{}';
    firsts timestamptz[] := '{}';
    done   boolean[] := '{}';
    ok     boolean := true;
    k      text;
    c      integer;
    o      timestamptz;
    d      boolean;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    FOR k IN SELECT DISTINCT u FROM unnest(keys) AS u ORDER BY u LOOP
        PERFORM pg_advisory_xact_lock(1685258242, hashtext(k));
    END LOOP;
    FOR i IN 1..n LOOP
        DELETE FROM rate_hits h WHERE h.key = keys[i] AND h.at <= starts[i];
        SELECT count(*), min(h.at) INTO c, o FROM rate_hits h WHERE h.key = keys[i];
        d := token_ <> '' AND EXISTS (SELECT 1 FROM rate_hits h WHERE h.key = keys[i] AND h.token = token_);
        counts[i] := c;
        firsts[i] := o;
        done[i] := d;
        IF NOT d AND c >= limits[i] THEN
            ok := false;
        END IF;
    END LOOP;
    DELETE FROM rate_hits WHERE ctid IN (
        SELECT ctid FROM rate_hits WHERE expires <= at_ LIMIT sweep FOR UPDATE SKIP LOCKED);
    IF ok THEN
        INSERT INTO rate_hits (key, at, expires, token)
        SELECT keys[j], at_, expiries[j], nullif(token_, '')
        FROM generate_subscripts(keys, 1) AS j WHERE NOT done[j];
    END IF;
    RETURN QUERY SELECT counts[j], firsts[j], ok, done[j] FROM generate_subscripts(keys, 1) AS j ORDER BY j;
END
$$;

-- The old signature stays for replicas not yet upgraded, which run beside
-- upgraded ones during a rolling upgrade: their hits get the longest window
-- (30 days) as expiry and no token.
CREATE FUNCTION rate_take(keys text[], starts timestamptz[], limits integer[], at_ timestamptz)
RETURNS TABLE (used integer, oldest timestamptz, allowed boolean)
LANGUAGE sql AS $$
    SELECT t.used, t.oldest, t.allowed
    FROM rate_take(keys, starts, limits,
                   array_fill(at_ + interval '30 days', ARRAY[coalesce(array_length(keys, 1), 0)]),
                   '', 256, at_) AS t;
$$;
