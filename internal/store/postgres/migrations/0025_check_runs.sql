-- Runs of a domain's answer checks, as in the SQLite store: what asked for
-- the run (cli, api, pull_request, schedule), the pull request checked,
-- and the report as JSON (bounded: answers' texts are clipped). The
-- dashboard and the API read a domain's newest runs, of one trigger or
-- all.
CREATE TABLE check_runs (
	id         text COLLATE "C" PRIMARY KEY,
	domain     text COLLATE "C" NOT NULL,
	trigger    text COLLATE "C" NOT NULL,
	pr_number  integer NOT NULL DEFAULT 0,
	pr_link    text NOT NULL DEFAULT '',
	report     jsonb NOT NULL,
	created_at timestamptz NOT NULL
);
CREATE INDEX check_runs_domain ON check_runs(domain, created_at);
CREATE INDEX check_runs_domain_trigger ON check_runs(domain, trigger, created_at);
