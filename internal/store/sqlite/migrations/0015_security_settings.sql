-- The repositories an operator allows a project's workflows to read as
-- context (a JSON list of owner/name), and a domain's optional settings as
-- one JSON document (tenant.DomainSettings): reader token secret, daily
-- budget, proof of work.
ALTER TABLE projects ADD COLUMN context_repos TEXT NOT NULL DEFAULT '[]';
ALTER TABLE domains ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
