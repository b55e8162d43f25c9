-- claim_turn as in 0012, except that a turn's start is never before the end
-- of its job's previous turn: now_ is read by the worker before the claim,
-- which may run after that end (the worker was paused, or replicas' clocks
-- disagree), and a job's turns must not seem to overlap.
CREATE OR REPLACE FUNCTION claim_turn(worker text, lease_until_ timestamptz, now_ timestamptz)
RETURNS TABLE (job_id text, project_id text, seq integer, attempts integer)
LANGUAGE plpgsql AS $$
DECLARE
    c_at  timestamptz;
    c_job text;
    c_seq integer;
BEGIN
    LOOP
        IF c_at IS NULL THEN
            SELECT t.created_at, t.job_id, t.seq INTO c_at, c_job, c_seq
            FROM job_turns t
            WHERE t.state = 'queued'
            ORDER BY t.created_at, t.job_id, t.seq
            LIMIT 1;
        ELSE
            SELECT t.created_at, t.job_id, t.seq INTO c_at, c_job, c_seq
            FROM job_turns t
            WHERE t.state = 'queued' AND (t.created_at, t.job_id, t.seq) > (c_at, c_job, c_seq)
            ORDER BY t.created_at, t.job_id, t.seq
            LIMIT 1;
        END IF;
        IF NOT FOUND THEN
            RETURN;
        END IF;
        RETURN QUERY
        WITH next AS (
            SELECT t.job_id, t.seq
            FROM job_turns t
            WHERE t.job_id = c_job AND t.seq = c_seq AND t.state = 'queued'
              AND (t.run_after IS NULL OR t.run_after <= now_)
              AND EXISTS (SELECT 1 FROM jobs j WHERE j.id = t.job_id AND j.status = 'active')
              AND NOT EXISTS (SELECT 1 FROM job_turns r WHERE r.job_id = t.job_id AND r.state = 'running')
              -- queued or running, not just queued: the partial index of
              -- queued turns would then look tempting to the planner, which
              -- would read all of it instead of the job's turns.
              AND NOT EXISTS (SELECT 1 FROM job_turns r WHERE r.job_id = t.job_id AND r.seq < t.seq AND r.state IN ('queued', 'running'))
            FOR UPDATE OF t SKIP LOCKED
        )
        UPDATE job_turns t
        SET state = 'running', attempts = t.attempts + 1, lease_owner = worker, lease_until = lease_until_, cancel_requested = false,
            started_at = GREATEST(now_, (SELECT max(p.finished_at) FROM job_turns p WHERE p.job_id = t.job_id AND p.seq < t.seq))
        FROM next, jobs j
        WHERE t.job_id = next.job_id AND t.seq = next.seq AND j.id = t.job_id
        RETURNING t.job_id::text, j.project_id::text, t.seq, t.attempts;
        IF FOUND THEN
            RETURN;
        END IF;
    END LOOP;
END
$$;
