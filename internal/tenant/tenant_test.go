package tenant_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

func newService(t *testing.T) *tenant.Service {
	t.Helper()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return tenant.NewService(store, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) })
}

func TestProjectNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    tenant.Project
		msg  string // empty: valid
	}{
		{"defaults", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "/srv/docs"}, ""},
		{"github needs no url", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "https://github.com/a/b.git", ForgeKind: "github"}, ""},
		{"bad id", tenant.Project{ID: "-x", OrgID: "acme", RepoURL: "r"}, "project id"},
		{"id with slash", tenant.Project{ID: "a/b", OrgID: "acme", RepoURL: "r"}, "project id"},
		{"no repo", tenant.Project{ID: "docs", OrgID: "acme"}, "repo is required"},
		{"option-like repo", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "--upload-pack=x"}, "starts with '-'"},
		{"password in url", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "https://u:secret@h/r.git"}, "must not contain a password"},
		{"bad ref", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", BaseRef: "a b"}, "not a valid branch"},
		{"bad forge", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", ForgeKind: "svn"}, "forge"},
		{"gitea needs url", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", ForgeKind: "gitea"}, "--forge-url"},
		{"docs root escapes", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", DocsRoot: "../x"}, "inside the repository"},
		{"bad model", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", Model: "gpt"}, "model"},
		{"webhook secret env", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "DOCS_WEBHOOK_SECRET"}, ""},
		{"webhook secret env lower case", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "_hook_secret2"}, ""},
		{"webhook secret file", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretFile: "/run/secrets/hook"}, ""},
		{"webhook secret env and file", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "HOOK", WebhookSecretFile: "/run/secrets/hook"},
			"--webhook-secret-env and --webhook-secret-file are both set"},
		{"webhook secret env with a digit first", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "1HOOK"}, "--webhook-secret-env"},
		{"webhook secret env with a dash", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "HOOK-SECRET"}, "--webhook-secret-env"},
		{"webhook secret env with a dollar", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "$HOOK"}, "--webhook-secret-env"},
		{"webhook secret env with a value", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "HOOK=s3cret"}, "--webhook-secret-env"},
		{"webhook secret env with a space", tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "r", WebhookSecretEnv: "HOOK "}, "--webhook-secret-env"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tc.p
			err := p.Normalize(gitcli.RemotePolicy{})
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Normalize: %v", err)
				}
				if p.BaseRef == "" || p.ForgeKind == "" || p.DocsRoot == "" || p.Model == "" {
					t.Fatalf("defaults not filled: %+v", p)
				}
				return
			}
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(apperr.MessageOf(err), tc.msg) {
				t.Fatalf("Normalize = %v, want Invalid mentioning %q", err, tc.msg)
			}
			if v := tc.p.WebhookSecretEnv; v != "" && strings.Contains(apperr.MessageOf(err), v) {
				t.Fatalf("Normalize = %v repeats the webhook secret env %q, which may be the secret", err, v)
			}
		})
	}
}

// TestProjectNormalizeRepoLocations: a repository location that clone and
// fetch would refuse is refused when the project is stored, with the forms
// that are accepted; the operator's policy (http, hosts) applies there too.
func TestProjectNormalizeRepoLocations(t *testing.T) {
	t.Parallel()
	hosts := gitcli.RemotePolicy{Hosts: []string{"github.com", "git.example.com:8443"}}
	tests := []struct {
		name  string
		repo  string
		repos gitcli.RemotePolicy
		msg   string // empty: accepted
	}{
		{"https", "https://github.com/acme/docs.git", gitcli.RemotePolicy{}, ""},
		{"local path", "/srv/git/docs.git", gitcli.RemotePolicy{}, ""},
		{"file url", "file:///srv/git/docs.git", gitcli.RemotePolicy{}, ""},
		{"ext transport", "ext::sh -c touch% /tmp/pwned", gitcli.RemotePolicy{}, "transport::address"},
		{"fd transport", "fd::17", gitcli.RemotePolicy{}, "transport::address"},
		{"scp-like", "git@github.com:acme/docs.git", gitcli.RemotePolicy{}, "host:path"},
		{"ssh url", "ssh://git@github.com/acme/docs.git", gitcli.RemotePolicy{}, "accepted: https://"},
		{"git protocol", "git://github.com/acme/docs.git", gitcli.RemotePolicy{}, "unsupported protocol"},
		{"plain http off", "http://git.local/acme/docs.git", gitcli.RemotePolicy{}, "http:// only with git_allow_http"},
		{"plain http on", "http://git.local/acme/docs.git", gitcli.RemotePolicy{AllowHTTP: true}, ""},
		{"listed host", "https://GitHub.com/acme/docs.git", hosts, ""},
		{"listed host and port", "https://git.example.com:8443/acme/docs.git", hosts, ""},
		{"listed host on another port", "https://git.example.com/acme/docs.git", hosts, "did not allow"},
		{"unlisted host", "https://evil.example/acme/docs.git", hosts, "github.com, git.example.com:8443 (repo_hosts)"},
		{"local path with hosts", "/srv/git/docs.git", hosts, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := tenant.Project{ID: "docs", OrgID: "acme", RepoURL: tc.repo}
			err := p.Normalize(tc.repos)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Normalize(%q): %v", tc.repo, err)
				}
				return
			}
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(apperr.MessageOf(err), tc.msg) {
				t.Fatalf("Normalize(%q) = %v, want Invalid mentioning %q", tc.repo, err, tc.msg)
			}
			if !strings.Contains(apperr.MessageOf(err), "accepted: ") {
				t.Fatalf("Normalize(%q) = %v, which does not say what is accepted", tc.repo, err)
			}
		})
	}
}

// TestCreateProjectRefusesRepoLocations: the service stores no project whose
// repository clone would refuse, and applies the policy it was given.
func TestCreateProjectRefusesRepoLocations(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s := tenant.NewService(store, time.Now)
	if _, err := s.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateProject(ctx, tenant.Project{ID: "ext", OrgID: "acme", RepoURL: "ext::sh -c id"}); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("CreateProject(ext::) = %v, want Invalid", err)
	}
	narrow := s.WithRemotePolicy(gitcli.RemotePolicy{Hosts: []string{"github.com"}})
	if _, err := narrow.CreateProject(ctx, tenant.Project{ID: "other", OrgID: "acme", RepoURL: "https://gitlab.com/a/b.git"}); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("CreateProject on an unlisted host = %v, want Invalid", err)
	}
	if _, err := narrow.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "https://github.com/a/b.git"}); err != nil {
		t.Fatalf("CreateProject on a listed host: %v", err)
	}
	for _, id := range []string{"ext", "other"} {
		if _, err := store.GetProject(ctx, id); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("project %s was stored: %v", id, err)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc := newService(t)
	if _, err := svc.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	key, secret, err := svc.CreateKey(ctx, "acme", apikey.Admin, "ci")
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, secret)
	if err != nil || p.OrgID != "acme" || p.Kind != apikey.Admin || p.KeyID != key.ID {
		t.Fatalf("Authenticate = %+v, %v", p, err)
	}
	forged := secret[:len(secret)-1] + "a"
	if forged == secret {
		forged = secret[:len(secret)-1] + "b"
	}
	for _, bad := range []string{"", "nope", forged, "svc_dsc_" + strings.TrimPrefix(secret, "svc_")} {
		if _, err := svc.Authenticate(ctx, bad); !apperr.Is(err, apperr.Unauthorized) {
			t.Errorf("Authenticate(%q) = %v, want Unauthorized", bad, err)
		}
	}
	if err := svc.Store().RevokeKey(ctx, "acme", key.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, secret); !apperr.Is(err, apperr.Unauthorized) {
		t.Fatalf("revoked key accepted: %v", err)
	}
}

func TestProjectForHidesOtherOrgs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc := newService(t)
	for _, org := range []string{"acme", "globex"} {
		if _, err := svc.CreateOrg(ctx, org); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateProject(ctx, tenant.Project{ID: "acme-docs", OrgID: "acme", RepoURL: "/r"}); err != nil {
		t.Fatal(err)
	}
	_, errOther := svc.ProjectFor(ctx, tenant.Principal{OrgID: "globex"}, "acme-docs")
	_, errMissing := svc.ProjectFor(ctx, tenant.Principal{OrgID: "globex"}, "no-such")
	if !apperr.Is(errOther, apperr.NotFound) || !apperr.Is(errMissing, apperr.NotFound) {
		t.Fatalf("errors = %v / %v, want NotFound", errOther, errMissing)
	}
	if strings.ReplaceAll(apperr.MessageOf(errOther), "acme-docs", "X") != strings.ReplaceAll(apperr.MessageOf(errMissing), "no-such", "X") {
		t.Fatalf("another org's project is told apart from a missing one: %q vs %q", apperr.MessageOf(errOther), apperr.MessageOf(errMissing))
	}
	if _, err := svc.CreateDomain(ctx, tenant.Domain{ID: "d", OrgID: "globex", ProjectID: "acme-docs"}); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("domain over another org's project: %v", err)
	}
}

const setupYAML = `
orgs:
  - id: acme
    projects:
      - id: docs
        repo: https://github.com/acme/docs.git
        forge: github
        token_env: ACME_GITHUB_TOKEN
        docs_root: docs
    domains:
      - id: acme-docs
        project: docs
        site_url: https://docs.acme.example
        allowed_origins: [https://docs.acme.example]
        finish_thread_id: false
        mcp_public: true
        synonyms: [[teamspace, workspace], [sign in, log in]]
    keys:
      - {name: ci, kind: admin}
      - {name: widget, kind: assistant}
`

func TestApplySetup(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc := newService(t)
	setup, err := tenant.ParseSetup(strings.NewReader(setupYAML))
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Apply(ctx, setup)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Created, ",") != "org acme,project docs,domain acme-docs" || len(res.Keys) != 2 {
		t.Fatalf("first apply = %+v", res)
	}
	for _, k := range res.Keys {
		if p, err := svc.Authenticate(ctx, k.Secret); err != nil || p.OrgID != "acme" || p.Kind != k.Kind {
			t.Fatalf("key %s from apply does not authenticate: %+v %v", k.Name, p, err)
		}
	}
	d, err := svc.Store().GetDomain(ctx, "acme-docs")
	if err != nil || d.FinishThreadID || d.Ref != "main" || len(d.AllowedOrigins) != 1 || !d.Settings.MCPPublic || len(d.Settings.Synonyms) != 2 {
		t.Fatalf("domain = %+v, %v", d, err)
	}

	// Applying again changes nothing and makes no new keys.
	res, err = svc.Apply(ctx, setup)
	if err != nil || len(res.Created)+len(res.Updated)+len(res.Keys) != 0 {
		t.Fatalf("second apply = %+v, %v", res, err)
	}

	// A changed field updates the project, and the domain, which names no
	// ref of its own, follows the project's base ref.
	setup.Orgs[0].Projects[0].Ref = "develop"
	res, err = svc.Apply(ctx, setup)
	if err != nil || strings.Join(res.Updated, ",") != "project docs,domain acme-docs" {
		t.Fatalf("update apply = %+v, %v", res, err)
	}
	if p, _ := svc.Store().GetProject(ctx, "docs"); p.BaseRef != "develop" {
		t.Fatalf("project ref = %q", p.BaseRef)
	}
}

func TestApplySetupErrors(t *testing.T) {
	t.Parallel()
	if _, err := tenant.ParseSetup(strings.NewReader("orgs:\n  - id: a\n    projcts: []\n")); err == nil || !strings.Contains(err.Error(), "projcts") {
		t.Fatalf("unknown field: %v", err)
	}
	svc := newService(t)
	setup, err := tenant.ParseSetup(strings.NewReader("orgs:\n  - id: acme\n    projects:\n      - id: docs\n        repo: /r\n        forge: svn\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Apply(t.Context(), setup)
	if err == nil || !strings.Contains(err.Error(), "orgs[0] (acme).projects[0] (docs)") || !strings.Contains(err.Error(), "svn") {
		t.Fatalf("error does not name the entry: %v", err)
	}
}

// TestAllowedContextRepo checks that a workflow reads only the context
// repositories the project's operator allows, spelled as the operator
// wrote them, and that a refusal says how to allow one.
func TestAllowedContextRepo(t *testing.T) {
	t.Parallel()
	p := tenant.Project{ID: "docs", ContextRepos: []string{"acme/api", "Tools/CLI", "tools/cli", "group/sub/sdk"}}
	tests := []struct {
		name, repo string
		want       string // the allowed entry; "" when refused
		code       apperr.Code
		msg        string
	}{
		{"listed", "acme/api", "acme/api", "", ""},
		{"other case", "ACME/Api", "acme/api", "", ""},
		{"exact case first", "tools/cli", "tools/cli", "", ""},
		{"nested group", "Group/Sub/SDK", "group/sub/sdk", "", ""},
		{"another organization", "victim/private", "", apperr.Forbidden,
			`workflow "sync" reads context repository victim/private, which project docs does not allow; an operator allows it with: ` +
				"docsmith project update --id docs --context-repo acme/api --context-repo Tools/CLI --context-repo tools/cli --context-repo group/sub/sdk --context-repo victim/private"},
		{"a prefix of a listed one", "acme/ap", "", apperr.Forbidden, "does not allow"},
		{"a group of a listed one", "group/sub", "", apperr.Forbidden, "does not allow"},
		{"climbs", "../victim", "", apperr.Invalid, `context repository "../victim", which must be owner/name`},
		{"climbs inside", "acme/../victim", "", apperr.Invalid, "must be owner/name"},
		{"dot segment", "acme/./api", "", apperr.Invalid, "must be owner/name"},
		{"absolute", "/srv/git/victim/private", "", apperr.Invalid, "must be owner/name"},
		{"encoded dots", "%2e%2e/victim", "", apperr.Invalid, "must be owner/name"},
		{"encoded slash", "acme%2F..%2Fvictim/private", "", apperr.Invalid, "must be owner/name"},
		{"backslash", `acme\..\victim`, "", apperr.Invalid, "must be owner/name"},
		{"url", "https://evil.example/victim/private", "", apperr.Invalid, "must be owner/name"},
		{"option", "-u/x", "", apperr.Invalid, "must be owner/name"},
		{"with .git", "acme/api.git", "", apperr.Invalid, "must be owner/name"},
		{"kelvin sign", "acme/\u212api", "", apperr.Invalid, "must be owner/name"},
		{"one segment", "api", "", apperr.Invalid, "must be owner/name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := p.AllowedContextRepo("sync", tc.repo)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("AllowedContextRepo(%q) = %q, %v; want %q", tc.repo, got, err, tc.want)
				}
				return
			}
			if got != "" || !apperr.Is(err, tc.code) || !strings.Contains(apperr.MessageOf(err), tc.msg) {
				t.Fatalf("AllowedContextRepo(%q) = %q, %v; want %s saying %q", tc.repo, got, err, tc.code, tc.msg)
			}
		})
	}

	none := tenant.Project{ID: "docs"}
	_, err := none.AllowedContextRepo("sync", "acme/api")
	if want := "docsmith project update --id docs --context-repo acme/api (or context_repos"; !strings.Contains(apperr.MessageOf(err), want) {
		t.Fatalf("a project that allows none: %v, want it to say %q", err, want)
	}
}

func TestCheckContextRepos(t *testing.T) {
	t.Parallel()
	for _, ok := range [][]string{nil, {"acme/api"}, {"acme/.github", "group/sub/name", "a_b/c-d.e"}} {
		if err := tenant.CheckContextRepos(ok); err != nil {
			t.Errorf("CheckContextRepos(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"acme", "../x", "acme/..", "acme/.", "acme/./api", ".acme/api", "-acme/api", "acme/-api", "acme/api.git", "acme//api", "acme/api/", "/acme/api", "acme/api x"} {
		if err := tenant.CheckContextRepos([]string{bad}); !apperr.Is(err, apperr.Invalid) || !strings.Contains(apperr.MessageOf(err), "owner/name") {
			t.Errorf("CheckContextRepos(%q) = %v, want refused", bad, err)
		}
	}
	if err := tenant.CheckContextRepos([]string{"acme/api", "acme/api"}); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("a repository listed twice: %v", err)
	}
}
