-- Runs of a domain's answer checks: what asked for the run (cli, api,
-- pull_request, schedule), the pull request checked, and the report as
-- JSON (bounded: answers' texts are clipped). The dashboard and the API
-- read a domain's newest runs, of one trigger or all.
CREATE TABLE check_runs (
	id         TEXT PRIMARY KEY,
	domain     TEXT NOT NULL,
	trigger    TEXT NOT NULL,
	pr_number  INTEGER NOT NULL DEFAULT 0,
	pr_link    TEXT NOT NULL DEFAULT '',
	report     TEXT NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX check_runs_domain ON check_runs(domain, created_at);
CREATE INDEX check_runs_domain_trigger ON check_runs(domain, trigger, created_at);
