-- Agent workflows: where a project's webhook secret lives and whether its
-- workflows may automerge; what started each job (trigger 'api' for every
-- job from before workflows) and the workflow run it belongs to; the push a
-- run's message was sent for; and what the workflow service keeps between
-- triggers: each project's workflows as last read from its base ref, how
-- they were read, and the webhook deliveries already handled.

ALTER TABLE projects ADD COLUMN webhook_secret_env TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN webhook_secret_file TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN allow_automerge INTEGER NOT NULL DEFAULT 0;

ALTER TABLE jobs ADD COLUMN trigger TEXT NOT NULL DEFAULT 'api';
ALTER TABLE jobs ADD COLUMN workflow TEXT NOT NULL DEFAULT '';
-- agentjob.RunSpec as JSON; NULL for API jobs.
ALTER TABLE jobs ADD COLUMN run TEXT;
-- A workflow's runs, newest first: its active run and its runs of a day.
CREATE INDEX jobs_project_workflow_created ON jobs(project_id, workflow, created_at DESC, id DESC);

-- agentjob.PushRange as JSON; NULL for a message sent for no push.
ALTER TABLE job_turns ADD COLUMN push TEXT;

CREATE TABLE workflows (
    project_id TEXT NOT NULL REFERENCES projects(id),
    id         TEXT NOT NULL,
    definition TEXT NOT NULL, -- workflow.Workflow as JSON
    first_seen INTEGER NOT NULL,
    last_slot  INTEGER,       -- NULL until a schedule slot started
    PRIMARY KEY (project_id, id)
) WITHOUT ROWID;

CREATE TABLE workflow_syncs (
    project_id TEXT PRIMARY KEY REFERENCES projects(id),
    base_sha   TEXT NOT NULL,
    synced_at  INTEGER NOT NULL,
    problems   TEXT NOT NULL DEFAULT '[]' -- []workflow.Problem as JSON
) WITHOUT ROWID;

CREATE TABLE webhook_deliveries (
    project_id  TEXT NOT NULL REFERENCES projects(id),
    delivery_id TEXT NOT NULL,
    forge       TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, delivery_id)
) WITHOUT ROWID;
CREATE INDEX webhook_deliveries_received ON webhook_deliveries(project_id, received_at);
