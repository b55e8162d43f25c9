package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

func (s *Store) insert(ctx context.Context, what, id, query string, args ...any) error {
	_, err := s.pool.Exec(ctx, query, args...)
	err = s.noteWrite(err)
	if isUniqueViolation(err) {
		return apperr.New(apperr.Conflict, "%s %q already exists", what, id)
	}
	if err != nil {
		return fmt.Errorf("insert %s: %w", what, err)
	}
	return nil
}

func notFoundOr(err error, what, id string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return apperr.New(apperr.NotFound, "%s %q not found", what, id)
	}
	return fmt.Errorf("get %s: %w", what, err)
}

func updated(tag pgconn.CommandTag, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("update %s: %w", what, err)
	}
	if tag.RowsAffected() == 0 {
		return apperr.New(apperr.NotFound, "%s %q not found", what, id)
	}
	return nil
}

// CreateOrg stores an organization.
func (s *Store) CreateOrg(ctx context.Context, o tenant.Org) error {
	return s.insert(ctx, "org", o.ID, `INSERT INTO orgs (id, created_at) VALUES ($1, $2)`, o.ID, o.CreatedAt)
}

// GetOrg returns an organization.
func (s *Store) GetOrg(ctx context.Context, id string) (tenant.Org, error) {
	var created time.Time
	if err := s.pool.QueryRow(ctx, `SELECT created_at FROM orgs WHERE id = $1`, id).Scan(&created); err != nil {
		return tenant.Org{}, notFoundOr(err, "org", id)
	}
	return tenant.Org{ID: id, CreatedAt: utc(created)}, nil
}

// ListOrgs returns every organization by id.
func (s *Store) ListOrgs(ctx context.Context) ([]tenant.Org, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, created_at FROM orgs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list orgs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tenant.Org, error) {
		var o tenant.Org
		err := row.Scan(&o.ID, &o.CreatedAt)
		o.CreatedAt = utc(o.CreatedAt)
		return o, err
	})
	if err != nil {
		return nil, fmt.Errorf("list orgs: %w", err)
	}
	return out, nil
}

const projectColumns = `id, org_id, repo_url, base_ref, forge_kind, forge_url, token_env, token_file, docs_root, model, webhook_secret_env, webhook_secret_file, allow_automerge, context_repos, created_at`

// CreateProject stores a project.
func (s *Store) CreateProject(ctx context.Context, p tenant.Project) error {
	return s.insert(ctx, "project", p.ID, `INSERT INTO projects (`+projectColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		p.ID, p.OrgID, p.RepoURL, p.BaseRef, p.ForgeKind, p.ForgeURL, p.TokenEnv, p.TokenFile, p.DocsRoot, p.Model,
		p.WebhookSecretEnv, p.WebhookSecretFile, p.AllowAutomerge, nonNil(p.ContextRepos), p.CreatedAt)
}

// UpdateProject changes a project's settings; its id and org stay.
func (s *Store) UpdateProject(ctx context.Context, p tenant.Project) error {
	tag, err := s.pool.Exec(ctx, `UPDATE projects SET repo_url = $1, base_ref = $2, forge_kind = $3, forge_url = $4, token_env = $5, token_file = $6, docs_root = $7, model = $8, webhook_secret_env = $9, webhook_secret_file = $10, allow_automerge = $11, context_repos = $12 WHERE id = $13 AND org_id = $14`,
		p.RepoURL, p.BaseRef, p.ForgeKind, p.ForgeURL, p.TokenEnv, p.TokenFile, p.DocsRoot, p.Model, p.WebhookSecretEnv, p.WebhookSecretFile, p.AllowAutomerge, nonNil(p.ContextRepos), p.ID, p.OrgID)
	return updated(tag, s.noteWrite(err), "project", p.ID)
}

func scanProject(row pgx.Row) (tenant.Project, error) {
	var p tenant.Project
	err := row.Scan(&p.ID, &p.OrgID, &p.RepoURL, &p.BaseRef, &p.ForgeKind, &p.ForgeURL, &p.TokenEnv, &p.TokenFile, &p.DocsRoot, &p.Model,
		&p.WebhookSecretEnv, &p.WebhookSecretFile, &p.AllowAutomerge, &p.ContextRepos, &p.CreatedAt)
	p.CreatedAt = utc(p.CreatedAt)
	if len(p.ContextRepos) == 0 {
		p.ContextRepos = nil
	}
	return p, err
}

// GetProject returns a project.
func (s *Store) GetProject(ctx context.Context, id string) (tenant.Project, error) {
	p, err := scanProject(s.pool.QueryRow(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = $1`, id))
	if err != nil {
		return tenant.Project{}, notFoundOr(err, "project", id)
	}
	return p, nil
}

// ListProjects returns an organization's projects, or every project when
// orgID is empty.
func (s *Store) ListProjects(ctx context.Context, orgID string) ([]tenant.Project, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+projectColumns+` FROM projects WHERE $1 = '' OR org_id = $1 ORDER BY id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tenant.Project, error) { return scanProject(row) })
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

const domainColumns = `id, org_id, project_id, ref, site_url, model, allowed_origins, finish_thread_id, settings, created_at`

// CreateDomain stores a domain.
func (s *Store) CreateDomain(ctx context.Context, d tenant.Domain) error {
	return s.insert(ctx, "domain", d.ID, `INSERT INTO domains (`+domainColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		d.ID, d.OrgID, d.ProjectID, d.Ref, d.SiteURL, d.Model, nonNil(d.AllowedOrigins), d.FinishThreadID, d.Settings, d.CreatedAt)
}

// UpdateDomain changes a domain's settings; its id and org stay.
func (s *Store) UpdateDomain(ctx context.Context, d tenant.Domain) error {
	tag, err := s.pool.Exec(ctx, `UPDATE domains SET project_id = $1, ref = $2, site_url = $3, model = $4, allowed_origins = $5, finish_thread_id = $6, settings = $7 WHERE id = $8 AND org_id = $9`,
		d.ProjectID, d.Ref, d.SiteURL, d.Model, nonNil(d.AllowedOrigins), d.FinishThreadID, d.Settings, d.ID, d.OrgID)
	return updated(tag, s.noteWrite(err), "domain", d.ID)
}

func scanDomain(row pgx.Row) (tenant.Domain, error) {
	var d tenant.Domain
	err := row.Scan(&d.ID, &d.OrgID, &d.ProjectID, &d.Ref, &d.SiteURL, &d.Model, &d.AllowedOrigins, &d.FinishThreadID, &d.Settings, &d.CreatedAt)
	d.CreatedAt = utc(d.CreatedAt)
	return d, err
}

// GetDomain returns a domain.
func (s *Store) GetDomain(ctx context.Context, id string) (tenant.Domain, error) {
	d, err := scanDomain(s.pool.QueryRow(ctx, `SELECT `+domainColumns+` FROM domains WHERE id = $1`, id))
	if err != nil {
		return tenant.Domain{}, notFoundOr(err, "domain", id)
	}
	return d, nil
}

// ListDomains returns an organization's domains, or all when orgID is empty.
func (s *Store) ListDomains(ctx context.Context, orgID string) ([]tenant.Domain, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+domainColumns+` FROM domains WHERE $1 = '' OR org_id = $1 ORDER BY id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tenant.Domain, error) { return scanDomain(row) })
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return out, nil
}

const keyColumns = `id, org_id, kind, name, hash, created_at, revoked_at`

// CreateKey stores a key's hash.
func (s *Store) CreateKey(ctx context.Context, k tenant.Key) error {
	return s.insert(ctx, "key", k.ID, `INSERT INTO api_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		k.ID, k.OrgID, string(k.Kind), k.Name, k.Hash, k.CreatedAt, k.RevokedAt)
}

func scanKey(row pgx.Row) (tenant.Key, error) {
	var k tenant.Key
	var kind string
	err := row.Scan(&k.ID, &k.OrgID, &kind, &k.Name, &k.Hash, &k.CreatedAt, &k.RevokedAt)
	k.Kind = apikey.Kind(kind)
	k.CreatedAt = utc(k.CreatedAt)
	k.RevokedAt = utcPtr(k.RevokedAt)
	return k, err
}

// GetKey returns a key by its public id.
func (s *Store) GetKey(ctx context.Context, id string) (tenant.Key, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
	if err != nil {
		return tenant.Key{}, notFoundOr(err, "key", id)
	}
	return k, nil
}

// ListKeys returns an organization's keys, or all when orgID is empty.
func (s *Store) ListKeys(ctx context.Context, orgID string) ([]tenant.Key, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE $1 = '' OR org_id = $1 ORDER BY created_at, id`, orgID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tenant.Key, error) { return scanKey(row) })
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return out, nil
}

// RevokeKey marks a key of the organization revoked.
func (s *Store) RevokeKey(ctx context.Context, orgID, id string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2 AND org_id = $3`, at, id, orgID)
	return updated(tag, s.noteWrite(err), "key", id)
}
