-- Every change of an organization, project, domain or key is announced on
-- the channel docsmith.tenants, with the schema as payload, when its
-- transaction commits: processes that keep tenants in memory (keys,
-- projects) drop them at once, whoever made the change, a docsmith process
-- or an operator in psql. The channel is shared by the schemas of a
-- database; a listener ignores the other schemas' payloads.
CREATE FUNCTION tenants_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('docsmith.tenants', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;

CREATE TRIGGER orgs_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON orgs
    FOR EACH STATEMENT EXECUTE FUNCTION tenants_changed();
CREATE TRIGGER projects_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION tenants_changed();
CREATE TRIGGER domains_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON domains
    FOR EACH STATEMENT EXECUTE FUNCTION tenants_changed();
CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION tenants_changed();
