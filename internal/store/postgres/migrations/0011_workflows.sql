-- Agent workflows, as in the SQLite store: where a project's webhook secret
-- lives and whether its workflows may automerge; what started each job
-- (trigger 'api' for every job from before workflows) and the workflow run
-- it belongs to; the push a run's message was sent for; and what the
-- workflow service keeps between triggers: each project's workflows as last
-- read from its base ref, how they were read, and the webhook deliveries
-- already handled.

ALTER TABLE projects ADD COLUMN webhook_secret_env text NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN webhook_secret_file text NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN allow_automerge boolean NOT NULL DEFAULT false;

ALTER TABLE jobs ADD COLUMN trigger text NOT NULL DEFAULT 'api';
ALTER TABLE jobs ADD COLUMN workflow text COLLATE "C" NOT NULL DEFAULT '';
-- agentjob.RunSpec; NULL for API jobs.
ALTER TABLE jobs ADD COLUMN run json;
-- A workflow's runs, newest first: its active run and its runs of a day.
CREATE INDEX jobs_project_workflow_created ON jobs(project_id, workflow, created_at DESC, id DESC);

-- agentjob.PushRange; NULL for a message sent for no push.
ALTER TABLE job_turns ADD COLUMN push json;

CREATE TABLE workflows (
    project_id text COLLATE "C" NOT NULL REFERENCES projects(id),
    id         text COLLATE "C" NOT NULL,
    definition json NOT NULL, -- workflow.Workflow
    first_seen timestamptz NOT NULL,
    last_slot  timestamptz,   -- NULL until a schedule slot started
    PRIMARY KEY (project_id, id)
);

CREATE TABLE workflow_syncs (
    project_id text COLLATE "C" PRIMARY KEY REFERENCES projects(id),
    base_sha   text NOT NULL,
    synced_at  timestamptz NOT NULL,
    problems   json NOT NULL DEFAULT '[]' -- []workflow.Problem
);

CREATE TABLE webhook_deliveries (
    project_id  text COLLATE "C" NOT NULL REFERENCES projects(id),
    delivery_id text COLLATE "C" NOT NULL,
    forge       text NOT NULL,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, delivery_id)
);
CREATE INDEX webhook_deliveries_received ON webhook_deliveries(project_id, received_at);
