-- A counter raised by every change of an organization, project, domain or
-- key, whoever makes it: this process, the CLI in another, an operator in
-- the sqlite shell. A process that keeps tenants in memory reads it before
-- serving them and forgets them when it moved.
CREATE TABLE tenant_changes (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    counter INTEGER NOT NULL
);
INSERT INTO tenant_changes (id, counter) VALUES (1, 0);

CREATE TRIGGER orgs_inserted AFTER INSERT ON orgs BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER orgs_updated AFTER UPDATE ON orgs BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER orgs_deleted AFTER DELETE ON orgs BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER projects_inserted AFTER INSERT ON projects BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER projects_updated AFTER UPDATE ON projects BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER projects_deleted AFTER DELETE ON projects BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER domains_inserted AFTER INSERT ON domains BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER domains_updated AFTER UPDATE ON domains BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER domains_deleted AFTER DELETE ON domains BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER api_keys_inserted AFTER INSERT ON api_keys BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER api_keys_updated AFTER UPDATE ON api_keys BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys BEGIN UPDATE tenant_changes SET counter = counter + 1; END;
