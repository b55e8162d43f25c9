-- The pushes whose webhooks a project handled, whatever delivery reported
-- them: a captured push sent again under a new delivery id is found here
-- and starts nothing (workflowrun.Pushed).

CREATE TABLE webhook_pushes (
    project_id  TEXT NOT NULL REFERENCES projects(id),
    repo        TEXT NOT NULL, -- owner/name, lower case
    branch      TEXT NOT NULL,
    before_sha  TEXT NOT NULL,
    after_sha   TEXT NOT NULL,
    delivery_id TEXT NOT NULL, -- the delivery that first reported it
    received_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, repo, branch, before_sha, after_sha)
) WITHOUT ROWID;
CREATE INDEX webhook_pushes_received ON webhook_pushes(project_id, received_at);
