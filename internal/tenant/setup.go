package tenant

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

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
	// The webhook secret is named like the token: a variable or a file.
	WebhookSecretEnv  string `yaml:"webhook_secret_env"`
	WebhookSecretFile string `yaml:"webhook_secret_file"`
	AllowAutomerge    bool   `yaml:"allow_automerge"`
	// ContextRepos are the repositories (owner/name) its workflows may
	// read as context; a workflow that names another is refused.
	ContextRepos []string `yaml:"context_repos"`
}

// Project is the project the entry describes, in organization orgID.
func (sp SetupProject) Project(orgID string) Project {
	return Project{ID: sp.ID, OrgID: orgID, RepoURL: sp.Repo, BaseRef: sp.Ref, ForgeKind: sp.Forge, ForgeURL: sp.ForgeURL,
		TokenEnv: sp.TokenEnv, TokenFile: sp.TokenFile, DocsRoot: sp.DocsRoot, Model: sp.Model,
		WebhookSecretEnv: sp.WebhookSecretEnv, WebhookSecretFile: sp.WebhookSecretFile, AllowAutomerge: sp.AllowAutomerge,
		ContextRepos: sp.ContextRepos}
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
	// The reader token secret is named like a project's webhook secret.
	ReaderSecretEnv  string `yaml:"reader_secret_env"`
	ReaderSecretFile string `yaml:"reader_secret_file"`
	// The daily budget of model answers: absent takes the server's
	// default, 0 is no bound.
	AnswersPerDay *int `yaml:"answers_per_day"`
	TokensPerDay  *int `yaml:"tokens_per_day"`
	ProofOfWork   bool `yaml:"proof_of_work"`
	// MCPPublic serves public pages over MCP without a key.
	MCPPublic bool `yaml:"mcp_public"`
	// Grounding is mark (the default) or strict.
	Grounding string `yaml:"grounding"`
	// Synonyms are groups of words that mean the same in the docs:
	// [[teamspace, workspace], [sign in, log in]].
	Synonyms [][]string `yaml:"synonyms"`
	// ChecksEvery is how often the answer checks run: hourly, daily (the
	// default), weekly, a duration such as 6h, or off.
	ChecksEvery string `yaml:"checks_every"`
	// The alert webhook, and its signing secret named like the reader
	// token secret.
	AlertWebhookURL        string `yaml:"alert_webhook_url"`
	AlertWebhookSecretEnv  string `yaml:"alert_webhook_secret_env"`
	AlertWebhookSecretFile string `yaml:"alert_webhook_secret_file"`
}

// Domain is the domain the entry describes, in organization orgID.
func (sd SetupDomain) Domain(orgID string) Domain {
	return Domain{ID: sd.ID, OrgID: orgID, ProjectID: sd.Project, Ref: sd.Ref, SiteURL: sd.SiteURL, Model: sd.Model,
		AllowedOrigins: sd.AllowedOrigins, FinishThreadID: sd.FinishThreadID == nil || *sd.FinishThreadID,
		Settings: DomainSettings{ReaderSecretEnv: sd.ReaderSecretEnv, ReaderSecretFile: sd.ReaderSecretFile,
			AnswersPerDay: sd.AnswersPerDay, TokensPerDay: sd.TokensPerDay, ProofOfWork: sd.ProofOfWork, MCPPublic: sd.MCPPublic, Grounding: sd.Grounding,
			Synonyms: sd.Synonyms, ChecksEvery: sd.ChecksEvery,
			AlertWebhookURL: sd.AlertWebhookURL, AlertWebhookSecretEnv: sd.AlertWebhookSecretEnv, AlertWebhookSecretFile: sd.AlertWebhookSecretFile}}
}

// SetupKey is a key to create once, identified by its name.
type SetupKey struct {
	Name string `yaml:"name"`
	Kind string `yaml:"kind"`
}

// ParseSetup reads a set-up file; unknown keys are errors, so a typo does
// not silently drop a setting. Errors name the file's keys and lines
// (orgs[0].projects[1].repo), never the Go types they are read into.
func ParseSetup(r io.Reader) (Setup, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSetupBytes+1))
	if err != nil {
		return Setup{}, fmt.Errorf("read the set-up file: %w", err)
	}
	if len(data) > maxSetupBytes {
		return Setup{}, apperr.New(apperr.Invalid, "set-up file is larger than %d bytes", maxSetupBytes)
	}
	var s Setup
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		var doc yaml.Node
		_ = yaml.Unmarshal(data, &doc) // for the keys' names; a syntax error has none
		return Setup{}, apperr.New(apperr.Invalid, "set-up file: %s", setupProblems(err, &doc))
	}
	return s, nil
}

// maxSetupBytes bounds a set-up file: a few thousand entries fit.
const maxSetupBytes = 4 << 20

var (
	unknownKeyError = regexp.MustCompile(`^line (\d+): field (.+) not found in type (\S+)$`)
	typeError       = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
	nodeTypeError   = regexp.MustCompile(`^line (\d+): cannot unmarshal !!(\w+) into (\S+)$`)
	goTypeName      = regexp.MustCompile(`[\[\]*]*tenant\.\w+`)
)

// setupProblems rewrites the YAML decoder's errors in the file's terms.
func setupProblems(err error, doc *yaml.Node) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	paths := map[int]string{}
	kinds := map[string]map[int]string{} // YAML tag -> line -> path of a node of that kind
	keyPaths(doc, "", paths, kinds)
	out := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := unknownKeyError.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			where := strings.TrimSuffix(strings.TrimSuffix(paths[line], m[2]), ".")
			if where == "" {
				where = "the top level"
			}
			msg := fmt.Sprintf("line %d: unknown key %q in %s", line, m[2], where)
			if known := setupKeys[m[3]]; known != "" {
				msg += "; the keys there are " + known
			}
			out = append(out, msg)
			continue
		}
		if m := typeError.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			out = append(out, fmt.Sprintf("line %d: %s is %q; it must be %s", line, orWhat(paths[line]), m[3], setupKind(m[4])))
			continue
		}
		if m := nodeTypeError.FindStringSubmatch(e); m != nil {
			line, _ := strconv.Atoi(m[1])
			where := kinds[m[2]][line]
			if where == "" {
				where = paths[line]
			}
			if where == "" || m[3] == "tenant.Setup" {
				where = "the top level"
			}
			out = append(out, fmt.Sprintf("line %d: %s is %s; it must be %s", line, where, yamlKind(m[2]), setupKind(m[3])))
			continue
		}
		out = append(out, goTypeName.ReplaceAllString(e, "a value"))
	}
	return strings.Join(out, "; ")
}

// yamlKind names a YAML tag as the file's author knows it.
func yamlKind(tag string) string {
	switch tag {
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "str":
		return "a string"
	case "int", "float":
		return "a number"
	case "bool":
		return "true or false"
	case "null":
		return "empty"
	}
	return "a " + tag
}

func orWhat(path string) string {
	if path == "" {
		return "a value"
	}
	return path
}

// keyPaths records, for each line of the document, the path of the
// deepest key or item on it, and the same by the kind of node there (a
// line of flow style holds several).
func keyPaths(n *yaml.Node, path string, out map[int]string, kinds map[string]map[int]string) {
	if path != "" {
		out[n.Line] = path
		tag := strings.TrimPrefix(n.ShortTag(), "!!")
		if kinds[tag] == nil {
			kinds[tag] = map[int]string{}
		}
		kinds[tag][n.Line] = path
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			keyPaths(c, path, out, kinds)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			keyPaths(c, fmt.Sprintf("%s[%d]", path, i), out, kinds)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			out[k.Line] = p
			keyPaths(v, p, out, kinds)
		}
	}
}

// setupKeys lists the keys of each part of the file, by the Go type the
// decoder names in its errors.
var setupKeys = func() map[string]string {
	m := map[string]string{}
	for _, v := range []any{Setup{}, SetupOrg{}, SetupProject{}, SetupDomain{}, SetupKey{}} {
		t := reflect.TypeOf(v)
		var keys []string
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
				keys = append(keys, k)
			}
		}
		m[t.String()] = strings.Join(keys, ", ")
	}
	return m
}()

// setupKind says in YAML's terms what a Go type the decoder names holds.
func setupKind(goType string) string {
	goType = strings.TrimPrefix(goType, "*")
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case goType == "bool" || goType == "*bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "int"):
		return "a whole number"
	case setupKeys[goType] != "":
		return "a mapping of " + setupKeys[goType]
	}
	return "another kind of value"
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
			if err := CheckWebhookSecret(sp.Project(o.ID), "webhook_secret_env", "webhook_secret_file"); err != nil {
				return res, fmt.Errorf("%s.projects[%d] (%s): %w", where, j, sp.ID, err)
			}
			change, err := s.applyProject(ctx, sp.Project(o.ID))
			if err != nil {
				return res, fmt.Errorf("%s.projects[%d] (%s): %w", where, j, sp.ID, err)
			}
			res.record(change, "project "+sp.ID)
		}
		for j, sd := range o.Domains {
			d := sd.Domain(o.ID)
			if err := CheckReaderSecret(d, "reader_secret_env", "reader_secret_file"); err != nil {
				return res, fmt.Errorf("%s.domains[%d] (%s): %w", where, j, sd.ID, err)
			}
			if err := CheckChecksSchedule(d.Settings, "checks_every", "alert_webhook_url", "alert_webhook_secret_env", "alert_webhook_secret_file"); err != nil {
				return res, fmt.Errorf("%s.domains[%d] (%s): %w", where, j, sd.ID, err)
			}
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
	if err := p.Normalize(s.repos); err != nil {
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
