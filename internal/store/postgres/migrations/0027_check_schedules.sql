-- When each domain's answer checks run next on their schedule, as in the
-- SQLite store. Claiming a due run moves next_run_at on in the same
-- statement, so of several replicas that find it due, one runs it.
-- every_us is the interval the run was scheduled with: a domain whose
-- interval changed is due at once.
CREATE TABLE check_schedules (
    domain_id   text COLLATE "C" PRIMARY KEY REFERENCES domains(id),
    next_run_at timestamptz NOT NULL,
    every_us    bigint NOT NULL
);
