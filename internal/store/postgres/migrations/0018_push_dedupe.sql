-- The pushes whose webhooks a project handled, whatever delivery reported
-- them, as in the SQLite store: a captured push sent again under a new
-- delivery id is found here and starts nothing (workflowrun.Pushed).

CREATE TABLE webhook_pushes (
    project_id  text COLLATE "C" NOT NULL REFERENCES projects(id),
    repo        text COLLATE "C" NOT NULL, -- owner/name, lower case
    branch      text COLLATE "C" NOT NULL,
    before_sha  text COLLATE "C" NOT NULL,
    after_sha   text COLLATE "C" NOT NULL,
    delivery_id text COLLATE "C" NOT NULL, -- the delivery that first reported it
    received_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, repo, branch, before_sha, after_sha)
);
CREATE INDEX webhook_pushes_received ON webhook_pushes(project_id, received_at);
