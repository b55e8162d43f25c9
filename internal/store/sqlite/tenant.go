package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

func (s *Store) insert(ctx context.Context, what, id, query string, args ...any) error {
	_, err := s.exec(ctx, query, args...)
	if isUniqueViolation(err) {
		return apperr.New(apperr.Conflict, "%s %q already exists", what, id)
	}
	if err != nil {
		return fmt.Errorf("insert %s: %w", what, err)
	}
	return nil
}

func notFoundOr(err error, what, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return apperr.New(apperr.NotFound, "%s %q not found", what, id)
	}
	return fmt.Errorf("get %s: %w", what, err)
}

// CreateOrg stores an organization.
func (s *Store) CreateOrg(ctx context.Context, o tenant.Org) error {
	return s.insert(ctx, "org", o.ID, `INSERT INTO orgs (id, created_at) VALUES (?, ?)`, o.ID, toMicros(o.CreatedAt))
}

// GetOrg returns an organization.
func (s *Store) GetOrg(ctx context.Context, id string) (tenant.Org, error) {
	var created int64
	err := s.read.QueryRowContext(ctx, `SELECT created_at FROM orgs WHERE id = ?`, id).Scan(&created)
	if err != nil {
		return tenant.Org{}, notFoundOr(err, "org", id)
	}
	return tenant.Org{ID: id, CreatedAt: fromMicros(created)}, nil
}

// ListOrgs returns every organization by id.
func (s *Store) ListOrgs(ctx context.Context) ([]tenant.Org, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, created_at FROM orgs ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list orgs: %w", err)
	}
	defer rows.Close()
	var out []tenant.Org
	for rows.Next() {
		var o tenant.Org
		var created int64
		if err := rows.Scan(&o.ID, &created); err != nil {
			return nil, fmt.Errorf("scan org: %w", err)
		}
		o.CreatedAt = fromMicros(created)
		out = append(out, o)
	}
	return out, rows.Err()
}

const projectColumns = `id, org_id, repo_url, base_ref, forge_kind, forge_url, token_env, token_file, docs_root, model, webhook_secret_env, webhook_secret_file, allow_automerge, context_repos, created_at`

// CreateProject stores a project.
func (s *Store) CreateProject(ctx context.Context, p tenant.Project) error {
	repos, err := json.Marshal(nonNil(p.ContextRepos))
	if err != nil {
		return fmt.Errorf("encode context repositories: %w", err)
	}
	return s.insert(ctx, "project", p.ID, `INSERT INTO projects (`+projectColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.OrgID, p.RepoURL, p.BaseRef, p.ForgeKind, p.ForgeURL, p.TokenEnv, p.TokenFile, p.DocsRoot, p.Model,
		p.WebhookSecretEnv, p.WebhookSecretFile, p.AllowAutomerge, string(repos), toMicros(p.CreatedAt))
}

// UpdateProject changes a project's settings; its id and org stay.
func (s *Store) UpdateProject(ctx context.Context, p tenant.Project) error {
	repos, err := json.Marshal(nonNil(p.ContextRepos))
	if err != nil {
		return fmt.Errorf("encode context repositories: %w", err)
	}
	res, err := s.exec(ctx, `UPDATE projects SET repo_url = ?, base_ref = ?, forge_kind = ?, forge_url = ?, token_env = ?, token_file = ?, docs_root = ?, model = ?, webhook_secret_env = ?, webhook_secret_file = ?, allow_automerge = ?, context_repos = ? WHERE id = ? AND org_id = ?`,
		p.RepoURL, p.BaseRef, p.ForgeKind, p.ForgeURL, p.TokenEnv, p.TokenFile, p.DocsRoot, p.Model, p.WebhookSecretEnv, p.WebhookSecretFile, p.AllowAutomerge, string(repos), p.ID, p.OrgID)
	return updated(res, err, "project", p.ID)
}

func updated(res sql.Result, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("update %s: %w", what, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return apperr.New(apperr.NotFound, "%s %q not found", what, id)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanProject(row scanner) (tenant.Project, error) {
	var p tenant.Project
	var created int64
	var repos string
	if err := row.Scan(&p.ID, &p.OrgID, &p.RepoURL, &p.BaseRef, &p.ForgeKind, &p.ForgeURL, &p.TokenEnv, &p.TokenFile, &p.DocsRoot, &p.Model,
		&p.WebhookSecretEnv, &p.WebhookSecretFile, &p.AllowAutomerge, &repos, &created); err != nil {
		return p, err
	}
	p.CreatedAt = fromMicros(created)
	if err := json.Unmarshal([]byte(repos), &p.ContextRepos); err != nil {
		return p, fmt.Errorf("decode context repositories of project %q: %w", p.ID, err)
	}
	if len(p.ContextRepos) == 0 {
		p.ContextRepos = nil
	}
	return p, nil
}

// GetProject returns a project.
func (s *Store) GetProject(ctx context.Context, id string) (tenant.Project, error) {
	p, err := scanProject(s.read.QueryRowContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE id = ?`, id))
	if err != nil {
		return tenant.Project{}, notFoundOr(err, "project", id)
	}
	return p, nil
}

// ListProjects returns an organization's projects, or every project when
// orgID is empty.
func (s *Store) ListProjects(ctx context.Context, orgID string) ([]tenant.Project, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+projectColumns+` FROM projects WHERE ? = '' OR org_id = ? ORDER BY id`, orgID, orgID)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	var out []tenant.Project
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, fmt.Errorf("scan project: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

const domainColumns = `id, org_id, project_id, ref, site_url, model, allowed_origins, finish_thread_id, settings, created_at`

// CreateDomain stores a domain.
func (s *Store) CreateDomain(ctx context.Context, d tenant.Domain) error {
	origins, settings, err := encodeDomain(d)
	if err != nil {
		return err
	}
	return s.insert(ctx, "domain", d.ID, `INSERT INTO domains (`+domainColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.OrgID, d.ProjectID, d.Ref, d.SiteURL, d.Model, origins, d.FinishThreadID, settings, toMicros(d.CreatedAt))
}

// UpdateDomain changes a domain's settings; its id and org stay.
func (s *Store) UpdateDomain(ctx context.Context, d tenant.Domain) error {
	origins, settings, err := encodeDomain(d)
	if err != nil {
		return err
	}
	res, err := s.exec(ctx, `UPDATE domains SET project_id = ?, ref = ?, site_url = ?, model = ?, allowed_origins = ?, finish_thread_id = ?, settings = ? WHERE id = ? AND org_id = ?`,
		d.ProjectID, d.Ref, d.SiteURL, d.Model, origins, d.FinishThreadID, settings, d.ID, d.OrgID)
	return updated(res, err, "domain", d.ID)
}

// encodeDomain is the JSON of a domain's origins and settings columns.
func encodeDomain(d tenant.Domain) (origins, settings string, err error) {
	o, err := json.Marshal(nonNil(d.AllowedOrigins))
	if err != nil {
		return "", "", fmt.Errorf("encode origins: %w", err)
	}
	st, err := json.Marshal(d.Settings)
	if err != nil {
		return "", "", fmt.Errorf("encode settings: %w", err)
	}
	return string(o), string(st), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func scanDomain(row scanner) (tenant.Domain, error) {
	var d tenant.Domain
	var origins, settings string
	var created int64
	if err := row.Scan(&d.ID, &d.OrgID, &d.ProjectID, &d.Ref, &d.SiteURL, &d.Model, &origins, &d.FinishThreadID, &settings, &created); err != nil {
		return d, err
	}
	d.CreatedAt = fromMicros(created)
	if err := json.Unmarshal([]byte(origins), &d.AllowedOrigins); err != nil {
		return d, fmt.Errorf("decode origins of domain %q: %w", d.ID, err)
	}
	if err := json.Unmarshal([]byte(settings), &d.Settings); err != nil {
		return d, fmt.Errorf("decode settings of domain %q: %w", d.ID, err)
	}
	return d, nil
}

// GetDomain returns a domain.
func (s *Store) GetDomain(ctx context.Context, id string) (tenant.Domain, error) {
	d, err := scanDomain(s.read.QueryRowContext(ctx, `SELECT `+domainColumns+` FROM domains WHERE id = ?`, id))
	if err != nil {
		return tenant.Domain{}, notFoundOr(err, "domain", id)
	}
	return d, nil
}

// ListDomains returns an organization's domains, or all when orgID is empty.
func (s *Store) ListDomains(ctx context.Context, orgID string) ([]tenant.Domain, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+domainColumns+` FROM domains WHERE ? = '' OR org_id = ? ORDER BY id`, orgID, orgID)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	defer rows.Close()
	var out []tenant.Domain
	for rows.Next() {
		d, err := scanDomain(rows)
		if err != nil {
			return nil, fmt.Errorf("scan domain: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

const keyColumns = `id, org_id, kind, name, hash, created_at, revoked_at`

// CreateKey stores a key's hash.
func (s *Store) CreateKey(ctx context.Context, k tenant.Key) error {
	return s.insert(ctx, "key", k.ID, `INSERT INTO api_keys (`+keyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.OrgID, string(k.Kind), k.Name, k.Hash, toMicros(k.CreatedAt), nullMicros(k.RevokedAt))
}

func scanKey(row scanner) (tenant.Key, error) {
	var k tenant.Key
	var kind string
	var created int64
	var revoked sql.NullInt64
	err := row.Scan(&k.ID, &k.OrgID, &kind, &k.Name, &k.Hash, &created, &revoked)
	k.Kind = apikey.Kind(kind)
	k.CreatedAt = fromMicros(created)
	k.RevokedAt = timePtr(revoked)
	return k, err
}

// GetKey returns a key by its public id.
func (s *Store) GetKey(ctx context.Context, id string) (tenant.Key, error) {
	k, err := scanKey(s.read.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = ?`, id))
	if err != nil {
		return tenant.Key{}, notFoundOr(err, "key", id)
	}
	return k, nil
}

// ListKeys returns an organization's keys, or all when orgID is empty.
func (s *Store) ListKeys(ctx context.Context, orgID string) ([]tenant.Key, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE ? = '' OR org_id = ? ORDER BY created_at, id`, orgID, orgID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	defer rows.Close()
	var out []tenant.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("scan key: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey marks a key of the organization revoked.
func (s *Store) RevokeKey(ctx context.Context, orgID, id string, at time.Time) error {
	res, err := s.exec(ctx, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND org_id = ?`, toMicros(at), id, orgID)
	return updated(res, err, "key", id)
}

// TenantChanges reads the counter every change of an organization,
// project, domain or key raises (migration 0013), whichever process makes
// it: a cache of them (tenant.CachedStore.CheckChanges) forgets what it
// holds when it moved.
func (s *Store) TenantChanges(ctx context.Context) (int64, error) {
	var n int64
	if err := s.read.QueryRowContext(ctx, `SELECT counter FROM tenant_changes WHERE id = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the tenant change counter: %w", err)
	}
	return n, nil
}
