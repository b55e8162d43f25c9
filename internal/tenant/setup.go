package tenant

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
)

// Setup is the declarative set-up file: the organizations with their
// projects, domains and keys. Applying it creates what is missing and
// updates projects and domains that differ; it never deletes.
type Setup struct {
	Orgs []SetupOrg `yaml:"orgs"`
}

// SetupOrg is one organization in a Setup.
type SetupOrg struct {
	ID       string         `yaml:"id"`
	Projects []SetupProject `yaml:"projects"`
	Domains  []SetupDomain  `yaml:"domains"`
	Keys     []SetupKey     `yaml:"keys"`
}

// SetupProject mirrors 'docsmith project create'.
type SetupProject struct {
	ID        string `yaml:"id"`
	Repo      string `yaml:"repo"`
	Ref       string `yaml:"ref"`
	Forge     string `yaml:"forge"`
	ForgeURL  string `yaml:"forge_url"`
	TokenEnv  string `yaml:"token_env"`
	TokenFile string `yaml:"token_file"`
	DocsRoot  string `yaml:"docs_root"`
	Model     string `yaml:"model"`
}

// SetupDomain mirrors 'docsmith domain create'.
type SetupDomain struct {
	ID             string   `yaml:"id"`
	Project        string   `yaml:"project"`
	Ref            string   `yaml:"ref"`
	SiteURL        string   `yaml:"site_url"`
	Model          string   `yaml:"model"`
	AllowedOrigins []string `yaml:"allowed_origins"`
	// FinishThreadID defaults to true; false suits strict-schema clients.
	FinishThreadID *bool `yaml:"finish_thread_id"`
}

// SetupKey is a key to create once, identified by its name.
type SetupKey struct {
	Name string `yaml:"name"`
	Kind string `yaml:"kind"`
}

// ParseSetup reads a set-up file; unknown keys are errors, so a typo does
// not silently drop a setting.
func ParseSetup(r io.Reader) (Setup, error) {
	var s Setup
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return Setup{}, apperr.Wrap(err, apperr.Invalid, "set-up file: %v", err)
	}
	return s, nil
}

// NewKey is a key Apply created, with the secret to show once.
type NewKey struct {
	OrgID, Name, Secret string
	Kind                apikey.Kind
}

// ApplyResult says what Apply changed.
type ApplyResult struct {
	Created []string // "org acme", "project docs", ...
	Updated []string
	Keys    []NewKey
}

// Apply makes the store match the set-up, creating and updating as needed.
// Each entity is checked before anything is written for it; an error names
// the entry at fault.
func (s *Service) Apply(ctx context.Context, setup Setup) (ApplyResult, error) {
	var res ApplyResult
	for i, o := range setup.Orgs {
		where := fmt.Sprintf("orgs[%d] (%s)", i, o.ID)
		if _, err := s.store.GetOrg(ctx, o.ID); apperr.Is(err, apperr.NotFound) {
			if _, err := s.CreateOrg(ctx, o.ID); err != nil {
				return res, fmt.Errorf("%s: %w", where, err)
			}
			res.Created = append(res.Created, "org "+o.ID)
		} else if err != nil {
			return res, fmt.Errorf("%s: %w", where, err)
		}
		for j, sp := range o.Projects {
			p := Project{ID: sp.ID, OrgID: o.ID, RepoURL: sp.Repo, BaseRef: sp.Ref, ForgeKind: sp.Forge, ForgeURL: sp.ForgeURL, TokenEnv: sp.TokenEnv, TokenFile: sp.TokenFile, DocsRoot: sp.DocsRoot, Model: sp.Model}
			change, err := s.applyProject(ctx, p)
			if err != nil {
				return res, fmt.Errorf("%s.projects[%d] (%s): %w", where, j, sp.ID, err)
			}
			res.record(change, "project "+sp.ID)
		}
		for j, sd := range o.Domains {
			d := Domain{ID: sd.ID, OrgID: o.ID, ProjectID: sd.Project, Ref: sd.Ref, SiteURL: sd.SiteURL, Model: sd.Model, AllowedOrigins: sd.AllowedOrigins, FinishThreadID: sd.FinishThreadID == nil || *sd.FinishThreadID}
			change, err := s.applyDomain(ctx, d)
			if err != nil {
				return res, fmt.Errorf("%s.domains[%d] (%s): %w", where, j, sd.ID, err)
			}
			res.record(change, "domain "+sd.ID)
		}
		if len(o.Keys) > 0 {
			existing, err := s.store.ListKeys(ctx, o.ID)
			if err != nil {
				return res, fmt.Errorf("%s: %w", where, err)
			}
			for j, sk := range o.Keys {
				kind, err := apikey.ParseKind(sk.Kind)
				if err != nil || sk.Name == "" {
					if err == nil {
						err = apperr.New(apperr.Invalid, "a key needs a name")
					}
					return res, fmt.Errorf("%s.keys[%d]: %w", where, j, err)
				}
				if hasActiveKey(existing, sk.Name, kind) {
					continue
				}
				_, secret, err := s.CreateKey(ctx, o.ID, kind, sk.Name)
				if err != nil {
					return res, fmt.Errorf("%s.keys[%d]: %w", where, j, err)
				}
				res.Keys = append(res.Keys, NewKey{OrgID: o.ID, Name: sk.Name, Kind: kind, Secret: secret})
			}
		}
	}
	return res, nil
}

type change int

const (
	unchanged change = iota
	created
	updatedChange
)

func (r *ApplyResult) record(c change, what string) {
	switch c {
	case created:
		r.Created = append(r.Created, what)
	case updatedChange:
		r.Updated = append(r.Updated, what)
	}
}

func (s *Service) applyProject(ctx context.Context, p Project) (change, error) {
	if err := p.Normalize(); err != nil {
		return unchanged, err
	}
	old, err := s.store.GetProject(ctx, p.ID)
	if apperr.Is(err, apperr.NotFound) {
		_, err := s.CreateProject(ctx, p)
		return created, err
	}
	if err != nil {
		return unchanged, err
	}
	if old.OrgID != p.OrgID {
		return unchanged, apperr.New(apperr.Conflict, "project %q already belongs to another organization", p.ID)
	}
	p.CreatedAt = old.CreatedAt
	if reflect.DeepEqual(old, p) {
		return unchanged, nil
	}
	return updatedChange, s.store.UpdateProject(ctx, p)
}

func (s *Service) applyDomain(ctx context.Context, d Domain) (change, error) {
	if err := d.Normalize(); err != nil {
		return unchanged, err
	}
	p, err := s.store.GetProject(ctx, d.ProjectID)
	if err != nil {
		return unchanged, err
	}
	if p.OrgID != d.OrgID {
		return unchanged, apperr.New(apperr.NotFound, "project %q not found in org %q", d.ProjectID, d.OrgID)
	}
	if d.Ref == "" {
		d.Ref = p.BaseRef
	}
	old, err := s.store.GetDomain(ctx, d.ID)
	if apperr.Is(err, apperr.NotFound) {
		_, err := s.CreateDomain(ctx, d)
		return created, err
	}
	if err != nil {
		return unchanged, err
	}
	if old.OrgID != d.OrgID {
		return unchanged, apperr.New(apperr.Conflict, "domain %q already belongs to another organization", d.ID)
	}
	d.CreatedAt = old.CreatedAt
	if reflect.DeepEqual(nonNilOrigins(old), nonNilOrigins(d)) {
		return unchanged, nil
	}
	return updatedChange, s.store.UpdateDomain(ctx, d)
}

func nonNilOrigins(d Domain) Domain {
	if d.AllowedOrigins == nil {
		d.AllowedOrigins = []string{}
	}
	return d
}

func hasActiveKey(keys []Key, name string, kind apikey.Kind) bool {
	for _, k := range keys {
		if k.Name == name && k.Kind == kind && k.RevokedAt == nil {
			return true
		}
	}
	return false
}
