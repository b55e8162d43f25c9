// Package tenant holds organizations, projects, domains and API keys: who may
// call docsmith, and what a project or assistant domain points at.
package tenant

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/gitcli"
)

// Org owns projects, domains and keys.
type Org struct {
	ID        string
	CreatedAt time.Time
}

// Forge kinds a project can use.
const (
	ForgeGitHub = "github"
	ForgeGitLab = "gitlab"
	ForgeGitea  = "gitea"
	ForgeLocal  = "local"
)

// Project is a docs repository the agent works on.
type Project struct {
	ID        string
	OrgID     string
	RepoURL   string
	BaseRef   string
	ForgeKind string
	ForgeURL  string
	// TokenEnv and TokenFile name where the forge token lives; the token
	// itself is never stored.
	TokenEnv  string
	TokenFile string
	DocsRoot  string
	Model     string
	// WebhookSecretEnv and WebhookSecretFile name where the secret that
	// signs the project's forge webhooks lives; like the token, the secret
	// itself is never stored.
	WebhookSecretEnv  string
	WebhookSecretFile string
	// AllowAutomerge lets workflows with automerge: true push straight to
	// the base branch.
	AllowAutomerge bool
	// ContextRepos are the other repositories (owner/name) that the
	// project's workflows may read as context. Only the operator sets them:
	// a workflow file in the repository cannot widen what its token reads.
	ContextRepos []string
	CreatedAt    time.Time
}

// Domain is an assistant site: the docs it answers from and who may call it.
type Domain struct {
	ID             string
	OrgID          string
	ProjectID      string
	Ref            string
	SiteURL        string
	Model          string
	AllowedOrigins []string
	// FinishThreadID controls the top-level threadId on the v2 finish chunk,
	// which strict-schema AI SDK clients reject.
	FinishThreadID bool
	Settings       DomainSettings
	CreatedAt      time.Time
}

// DomainSettings are a domain's optional settings. The stores keep them as
// one JSON document, so a new setting needs no migration; a field's zero
// value is the behaviour of a domain that never set it.
type DomainSettings struct {
	// ReaderSecretEnv and ReaderSecretFile name where the secret lives that
	// signs the domain's reader tokens (the team's backend issues them to
	// signed-in readers; they carry the reader's access groups). Like
	// every secret, it is never stored. Without one, readers have no
	// groups and see only pages without groups.
	ReaderSecretEnv  string `json:"reader_secret_env,omitempty"`
	ReaderSecretFile string `json:"reader_secret_file,omitempty"`
	// AnswersPerDay and TokensPerDay bound what one day of the domain's
	// model answers may spend: nil takes the server's default, 0 is no
	// bound. Past either, answers come from search alone.
	AnswersPerDay *int `json:"answers_per_day,omitempty"`
	TokensPerDay  *int `json:"tokens_per_day,omitempty"`
	// ProofOfWork makes every assistant answer carry a solved challenge,
	// for a domain under abuse.
	ProofOfWork bool `json:"proof_of_work,omitempty"`
	// MCPPublic lets MCP clients that send no assistant key (those that
	// cannot send a header) read the pages without access groups: search,
	// get_page and the page resources, counted against the per client IP
	// limits. Feedback still needs a key. Off by default.
	MCPPublic bool `json:"mcp_public,omitempty"`
	// Grounding is what a model answer does with a sentence the passages
	// it cites do not back: GroundingMark (or "") sends it and marks it,
	// GroundingStrict leaves it out.
	Grounding string `json:"grounding,omitempty"`
	// Synonyms are groups of words or phrases that mean the same in the
	// domain's docs, searched besides the built-in ones (see
	// CheckSynonyms).
	Synonyms [][]string `json:"synonyms,omitempty"`
	// ChecksEvery is how often the domain's answer checks run against the
	// served index: "" (daily), "hourly", "daily", "weekly", a duration
	// such as "6h", or "off" (see ChecksInterval).
	ChecksEvery string `json:"checks_every,omitempty"`
	// AlertWebhookURL receives a signed JSON alert when a scheduled run
	// finds checks that passed before and fail now; the secret that
	// signs it lives in the variable or the file the next two name (never
	// stored).
	AlertWebhookURL        string `json:"alert_webhook_url,omitempty"`
	AlertWebhookSecretEnv  string `json:"alert_webhook_secret_env,omitempty"`
	AlertWebhookSecretFile string `json:"alert_webhook_secret_file,omitempty"`
}

// Grounding modes of a domain (DomainSettings.Grounding).
const (
	GroundingMark   = "mark"
	GroundingStrict = "strict"
)

// CheckGrounding checks a domain's grounding mode: "", mark or strict.
func CheckGrounding(s DomainSettings) error {
	switch s.Grounding {
	case "", GroundingMark, GroundingStrict:
		return nil
	}
	return apperr.New(apperr.Invalid, "grounding %q must be mark (send unsupported sentences, marked) or strict (leave them out)", s.Grounding)
}

// StrictGrounding reports whether the domain's model answers leave out
// the sentences their cited passages do not back.
func (s DomainSettings) StrictGrounding() bool { return s.Grounding == GroundingStrict }

// Key is a stored API key; only the hash of its secret is kept.
type Key struct {
	ID        string
	OrgID     string
	Kind      apikey.Kind
	Name      string
	Hash      []byte
	CreatedAt time.Time
	RevokedAt *time.Time
}

// Store keeps tenants. Implementations return apperr NotFound for unknown
// ids and apperr Conflict for duplicates.
type Store interface {
	CreateOrg(ctx context.Context, org Org) error
	GetOrg(ctx context.Context, id string) (Org, error)
	ListOrgs(ctx context.Context) ([]Org, error)
	CreateProject(ctx context.Context, p Project) error
	UpdateProject(ctx context.Context, p Project) error
	GetProject(ctx context.Context, id string) (Project, error)
	ListProjects(ctx context.Context, orgID string) ([]Project, error)
	CreateDomain(ctx context.Context, d Domain) error
	UpdateDomain(ctx context.Context, d Domain) error
	GetDomain(ctx context.Context, id string) (Domain, error)
	ListDomains(ctx context.Context, orgID string) ([]Domain, error)
	CreateKey(ctx context.Context, k Key) error
	GetKey(ctx context.Context, id string) (Key, error)
	ListKeys(ctx context.Context, orgID string) ([]Key, error)
	RevokeKey(ctx context.Context, orgID, id string, at time.Time) error
}

// Defaults for a new project.
const (
	DefaultBaseRef = "main"
	DefaultModel   = "builtin"
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// envNamePattern is the portable shape of an environment variable name
// (POSIX: letters, digits and '_', not starting with a digit).
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,254}$`)

// ValidID checks an operator-chosen id (org, project, domain): URL-safe,
// 1–64 characters, starting with a letter or digit.
func ValidID(field, id string) error {
	if !idPattern.MatchString(id) {
		return apperr.New(apperr.Invalid, "%s %q must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", field, id)
	}
	return nil
}

// Normalize fills defaults and checks a project before it is stored. repos
// decides which repository locations are accepted, as it does again when
// the repository is cloned or fetched.
func (p *Project) Normalize(repos gitcli.RemotePolicy) error {
	if err := ValidID("project id", p.ID); err != nil {
		return err
	}
	if err := ValidID("org", p.OrgID); err != nil {
		return err
	}
	if strings.TrimSpace(p.RepoURL) == "" {
		return apperr.New(apperr.Invalid, "repo is required: a git URL or a local path")
	}
	if u, err := url.Parse(p.RepoURL); err == nil && u.User != nil {
		if _, hasPassword := u.User.Password(); hasPassword {
			return apperr.New(apperr.Invalid, "repo URL must not contain a password; name the token with --token-env or --token-file")
		}
	}
	if err := repos.CheckRemote(p.RepoURL); err != nil {
		return apperr.New(apperr.Invalid, "repo: %s", strings.TrimPrefix(err.Error(), gitcli.ErrInvalidArgument.Error()+": "))
	}
	if p.BaseRef == "" {
		p.BaseRef = DefaultBaseRef
	}
	if strings.HasPrefix(p.BaseRef, "-") || strings.ContainsAny(p.BaseRef, " ~^:?*[\\") {
		return apperr.New(apperr.Invalid, "ref %q is not a valid branch name", p.BaseRef)
	}
	if p.ForgeKind == "" {
		p.ForgeKind = ForgeLocal
	}
	switch p.ForgeKind {
	case ForgeGitHub, ForgeGitLab, ForgeGitea, ForgeLocal:
	default:
		return apperr.New(apperr.Invalid, "forge %q must be one of github, gitlab, gitea, local", p.ForgeKind)
	}
	if p.ForgeURL != "" {
		if err := checkHTTPURL("forge-url", p.ForgeURL); err != nil {
			return err
		}
	}
	if p.ForgeKind != ForgeLocal && p.ForgeKind != ForgeGitHub && p.ForgeURL == "" {
		return apperr.New(apperr.Invalid, "forge %s needs --forge-url (the API base URL)", p.ForgeKind)
	}
	p.DocsRoot = strings.Trim(p.DocsRoot, "/")
	if p.DocsRoot == "" {
		p.DocsRoot = "."
	}
	if strings.HasPrefix(p.DocsRoot, "..") || strings.Contains(p.DocsRoot, "/../") {
		return apperr.New(apperr.Invalid, "docs-root %q must stay inside the repository", p.DocsRoot)
	}
	if err := CheckWebhookSecret(*p, "--webhook-secret-env", "--webhook-secret-file"); err != nil {
		return err
	}
	if err := CheckContextRepos(p.ContextRepos); err != nil {
		return err
	}
	if p.Model == "" {
		p.Model = DefaultModel
	}
	return ValidAgentModel(p.Model)
}

// CheckWebhookSecret checks where a project names its webhook secret: at
// most one of an environment variable (a portable name) and a file (a
// path of one line). envKey and fileKey are what the caller calls the two
// (flags, set-up file keys), for its errors.
func CheckWebhookSecret(p Project, envKey, fileKey string) error {
	return checkSecretSource("webhook secret", p.WebhookSecretEnv, p.WebhookSecretFile, envKey, fileKey)
}

// CheckReaderSecret is CheckWebhookSecret for a domain's reader token
// secret.
func CheckReaderSecret(d Domain, envKey, fileKey string) error {
	return checkSecretSource("reader token secret", d.Settings.ReaderSecretEnv, d.Settings.ReaderSecretFile, envKey, fileKey)
}

// checkSecretSource checks the one place a secret is named: a variable
// or a file, not both.
func checkSecretSource(what, env, file, envKey, fileKey string) error {
	if env != "" && file != "" {
		return apperr.New(apperr.Invalid, "%s and %s are both set; name the %s's variable or its file, not both", envKey, fileKey, what)
	}
	if env != "" && !envNamePattern.MatchString(env) {
		// The value is not repeated: what was given may be the secret itself.
		return apperr.New(apperr.Invalid, "%s is not an environment variable name: use letters, digits and '_', not starting with a digit (the variable's name, never the secret itself)", envKey)
	}
	if file != "" && (strings.TrimSpace(file) != file || strings.ContainsFunc(file, unicode.IsControl)) {
		return apperr.New(apperr.Invalid, "%s %q is not a file path: no spaces around it and no control characters", fileKey, file)
	}
	return nil
}

// contextRepoPattern is owner/name as the forges spell it (GitLab's
// groups may nest: group/sub/name).
var contextRepoPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$`)

// validContextRepo is the one rule for a context repository's name, the
// operator's and a workflow's alike. The name becomes a path on the
// project's forge or beside its local repository, so no segment may climb
// ("." or ".."), look like an option, or carry the ".git" that resolving
// it adds.
func validContextRepo(name string) bool {
	if !contextRepoPattern.MatchString(name) || strings.Contains(name, "..") || strings.HasPrefix(name, ".") {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == "." || strings.HasPrefix(seg, "-") || strings.HasSuffix(seg, ".git") {
			return false
		}
	}
	return true
}

// contextRepoRule says what validContextRepo accepts, for errors.
const contextRepoRule = "owner/name (letters, digits, '.', '_', '-'; no .git), like acme/api"

// CheckContextRepos checks the context repositories an operator allows a
// project: owner/name each, no duplicates.
func CheckContextRepos(repos []string) error {
	seen := make(map[string]bool, len(repos))
	for _, r := range repos {
		if !validContextRepo(r) {
			return apperr.New(apperr.Invalid, "context repository %q must be %s", r, contextRepoRule)
		}
		if seen[r] {
			return apperr.New(apperr.Invalid, "context repository %q is listed twice", r)
		}
		seen[r] = true
	}
	return nil
}

// AllowedContextRepo decides whether workflow workflowID of the project
// may read the context repository it names, and returns the entry of
// ContextRepos that allows it. Names are compared as GitHub, GitLab and
// Gitea compare them, without regard to case (an exact match first, for a
// local install whose paths differ only in case). The entry, spelled as
// the operator wrote it, is what gets read, so a workflow never reaches a
// path or URL the operator did not write. A refusal says how to allow
// the repository.
func (p Project) AllowedContextRepo(workflowID, name string) (string, error) {
	if !validContextRepo(name) {
		return "", apperr.New(apperr.Invalid, "workflow %q names context repository %q, which must be %s", workflowID, name, contextRepoRule)
	}
	for _, r := range p.ContextRepos {
		if r == name {
			return r, nil
		}
	}
	for _, r := range p.ContextRepos {
		if strings.EqualFold(r, name) {
			return r, nil
		}
	}
	// --context-repo replaces the list, so the command repeats what is
	// already allowed.
	var allow strings.Builder
	fmt.Fprintf(&allow, "docsmith project update --id %s", p.ID)
	for _, r := range p.ContextRepos {
		fmt.Fprintf(&allow, " --context-repo %s", r)
	}
	fmt.Fprintf(&allow, " --context-repo %s", name)
	return "", apperr.New(apperr.Forbidden, "workflow %q reads context repository %s, which project %s does not allow; an operator allows it with: %s (or context_repos in the set-up file)", workflowID, name, p.ID, allow.String())
}

// CheckBudget checks a domain's daily budget: nil or a number of at
// least 0.
func CheckBudget(s DomainSettings) error {
	for name, v := range map[string]*int{"answers per day": s.AnswersPerDay, "tokens per day": s.TokensPerDay} {
		if v != nil && *v < 0 {
			return apperr.New(apperr.Invalid, "the budget's %s is %d; it must be 0 (no bound) or more", name, *v)
		}
	}
	return nil
}

// Normalize fills defaults and checks a domain before it is stored.
func (d *Domain) Normalize() error {
	if err := ValidID("domain", d.ID); err != nil {
		return err
	}
	if err := ValidID("project", d.ProjectID); err != nil {
		return err
	}
	if d.SiteURL != "" {
		if err := checkHTTPURL("site-url", d.SiteURL); err != nil {
			return err
		}
	}
	if d.Model == "" {
		d.Model = "extractive"
	}
	if err := ValidModel(d.Model); err != nil {
		return err
	}
	for _, o := range d.AllowedOrigins {
		if o == "*" {
			continue
		}
		if err := checkHTTPURL("allowed origin", o); err != nil {
			return err
		}
	}
	if err := CheckReaderSecret(*d, "--reader-secret-env", "--reader-secret-file"); err != nil {
		return err
	}
	if err := CheckGrounding(d.Settings); err != nil {
		return err
	}
	if err := CheckSynonyms(&d.Settings); err != nil {
		return err
	}
	if err := CheckChecksSchedule(d.Settings, "--checks-every", "--alert-webhook-url", "--alert-webhook-secret-env", "--alert-webhook-secret-file"); err != nil {
		return err
	}
	return CheckBudget(d.Settings)
}

// ValidAgentModel checks a project's agent model: the builtin agent or a
// PROVIDER/MODEL. The extractive model only quotes passages; it cannot edit.
func ValidAgentModel(m string) error {
	switch {
	case m == "builtin":
		return nil
	case m == "extractive":
		return apperr.New(apperr.Invalid, "model \"extractive\" is an assistant model (for domains); the agent model must be builtin, openai/NAME or anthropic/NAME")
	case strings.HasPrefix(m, "openai/") && len(m) > len("openai/"),
		strings.HasPrefix(m, "anthropic/") && len(m) > len("anthropic/"):
		return nil
	}
	return apperr.New(apperr.Invalid, "agent model %q must be builtin, openai/NAME or anthropic/NAME", m)
}

// ValidModel checks an assistant (domain) model name.
func ValidModel(m string) error {
	switch {
	case m == "builtin", m == "extractive":
		return nil
	case strings.HasPrefix(m, "openai/") && len(m) > len("openai/"),
		strings.HasPrefix(m, "anthropic/") && len(m) > len("anthropic/"):
		return nil
	}
	return apperr.New(apperr.Invalid, "model %q must be builtin, extractive, openai/NAME or anthropic/NAME", m)
}

func checkHTTPURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return apperr.New(apperr.Invalid, "%s %q must be an http(s) URL", field, s)
	}
	return nil
}

// Principal is an authenticated caller.
type Principal struct {
	OrgID string
	KeyID string
	Kind  apikey.Kind
}

// Service creates tenants and authenticates keys.
type Service struct {
	store Store
	now   func() time.Time
	repos gitcli.RemotePolicy
}

// NewService returns a Service over store.
func NewService(store Store, now func() time.Time) *Service {
	return &Service{store: store, now: now}
}

// WithRemotePolicy returns a copy of s that accepts the project repositories
// repos accepts; without it, only the strictest policy's (no http://, any
// host).
func (s *Service) WithRemotePolicy(repos gitcli.RemotePolicy) *Service {
	c := *s
	c.repos = repos
	return &c
}

// CreateOrg creates an organization.
func (s *Service) CreateOrg(ctx context.Context, id string) (Org, error) {
	if err := ValidID("org", id); err != nil {
		return Org{}, err
	}
	org := Org{ID: id, CreatedAt: s.now()}
	return org, s.store.CreateOrg(ctx, org)
}

// CreateProject checks and stores a project of an existing organization.
func (s *Service) CreateProject(ctx context.Context, p Project) (Project, error) {
	if err := p.Normalize(s.repos); err != nil {
		return Project{}, err
	}
	if _, err := s.store.GetOrg(ctx, p.OrgID); err != nil {
		return Project{}, err
	}
	p.CreatedAt = s.now()
	return p, s.store.CreateProject(ctx, p)
}

// CreateDomain checks and stores a domain over a project of the same
// organization.
func (s *Service) CreateDomain(ctx context.Context, d Domain) (Domain, error) {
	if err := d.Normalize(); err != nil {
		return Domain{}, err
	}
	p, err := s.store.GetProject(ctx, d.ProjectID)
	if err != nil {
		return Domain{}, err
	}
	if p.OrgID != d.OrgID {
		return Domain{}, apperr.New(apperr.NotFound, "project %q not found in org %q", d.ProjectID, d.OrgID)
	}
	if d.Ref == "" {
		d.Ref = p.BaseRef
	}
	d.CreatedAt = s.now()
	return d, s.store.CreateDomain(ctx, d)
}

// CreateKey makes a key and returns its secret, which is not kept.
func (s *Service) CreateKey(ctx context.Context, orgID string, kind apikey.Kind, name string) (Key, string, error) {
	if _, err := s.store.GetOrg(ctx, orgID); err != nil {
		return Key{}, "", err
	}
	g, err := apikey.Generate(kind)
	if err != nil {
		return Key{}, "", fmt.Errorf("generate key: %w", err)
	}
	k := Key{ID: g.ID, OrgID: orgID, Kind: kind, Name: name, Hash: g.Hash, CreatedAt: s.now()}
	if err := s.store.CreateKey(ctx, k); err != nil {
		return Key{}, "", err
	}
	return k, g.Secret, nil
}

// Authenticate checks a presented key. Malformed, unknown, revoked and
// mismatched keys are all Unauthorized with the same message, so a caller
// learns nothing about which keys exist.
func (s *Service) Authenticate(ctx context.Context, presented string) (Principal, error) {
	unknown := apperr.New(apperr.Unauthorized, "the API key is not valid; send Authorization: Bearer <key>")
	parsed, err := apikey.Parse(presented)
	if err != nil {
		return Principal{}, unknown
	}
	k, err := s.store.GetKey(ctx, parsed.ID)
	if apperr.Is(err, apperr.NotFound) {
		return Principal{}, unknown
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up key: %w", err)
	}
	if !apikey.Matches(presented, k.Hash) || k.RevokedAt != nil || k.Kind != parsed.Kind {
		return Principal{}, unknown
	}
	return Principal{OrgID: k.OrgID, KeyID: k.ID, Kind: k.Kind}, nil
}

// ProjectFor returns the project if it belongs to the principal's
// organization; any other project is NotFound, never a hint that it exists.
func (s *Service) ProjectFor(ctx context.Context, p Principal, projectID string) (Project, error) {
	proj, err := s.store.GetProject(ctx, projectID)
	if err == nil && proj.OrgID != p.OrgID {
		err = apperr.New(apperr.NotFound, "project not found")
	}
	if apperr.Is(err, apperr.NotFound) {
		return Project{}, apperr.New(apperr.NotFound, "project %q not found", projectID)
	}
	return proj, err
}

// DomainFor returns the domain if it belongs to the principal's organization.
func (s *Service) DomainFor(ctx context.Context, p Principal, domainID string) (Domain, error) {
	d, err := s.store.GetDomain(ctx, domainID)
	if err == nil && d.OrgID != p.OrgID {
		err = apperr.New(apperr.NotFound, "domain not found")
	}
	if apperr.Is(err, apperr.NotFound) {
		return Domain{}, apperr.New(apperr.NotFound, "domain %q not found", domainID)
	}
	return d, err
}

// Store returns the underlying store, for the set-up commands that list.
func (s *Service) Store() Store { return s.store }
