package tenant_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// workflowKeepingStore is the SQLite store with the projects' workflow
// fields kept beside it, so these tests check what Apply hands the store
// whether or not the store's own columns for them exist yet.
type workflowKeepingStore struct {
	tenant.Store
	mu   sync.Mutex
	kept map[string]tenant.Project
}

func (s *workflowKeepingStore) keep(p tenant.Project) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept[p.ID] = p
}

func (s *workflowKeepingStore) CreateProject(ctx context.Context, p tenant.Project) error {
	if err := s.Store.CreateProject(ctx, p); err != nil {
		return err
	}
	s.keep(p)
	return nil
}

func (s *workflowKeepingStore) UpdateProject(ctx context.Context, p tenant.Project) error {
	if err := s.Store.UpdateProject(ctx, p); err != nil {
		return err
	}
	s.keep(p)
	return nil
}

func (s *workflowKeepingStore) GetProject(ctx context.Context, id string) (tenant.Project, error) {
	p, err := s.Store.GetProject(ctx, id)
	if err != nil {
		return p, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.kept[id]; ok {
		p.WebhookSecretEnv, p.WebhookSecretFile, p.AllowAutomerge = k.WebhookSecretEnv, k.WebhookSecretFile, k.AllowAutomerge
	}
	return p, nil
}

func newWorkflowService(t *testing.T) (*tenant.Service, *workflowKeepingStore) {
	t.Helper()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ks := &workflowKeepingStore{Store: store, kept: map[string]tenant.Project{}}
	return tenant.NewService(ks, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }), ks
}

const workflowSetupYAML = `
orgs:
  - id: acme
    projects:
      - id: docs
        repo: https://github.com/acme/docs.git
        webhook_secret_env: ACME_WEBHOOK_SECRET
        allow_automerge: true
      - id: api-docs
        repo: https://github.com/acme/api-docs.git
        webhook_secret_file: /run/secrets/api-docs-webhook
`

// TestApplyWorkflowKeys checks the projects' webhook secret and automerge
// keys: read from the file, handed to the store, and a change to one of
// them is an update like any other.
func TestApplyWorkflowKeys(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc, store := newWorkflowService(t)
	setup, err := tenant.ParseSetup(strings.NewReader(workflowSetupYAML))
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Apply(ctx, setup)
	if err != nil || strings.Join(res.Created, ",") != "org acme,project docs,project api-docs" {
		t.Fatalf("first apply = %+v, %v", res, err)
	}
	docs, apiDocs := store.kept["docs"], store.kept["api-docs"]
	if docs.WebhookSecretEnv != "ACME_WEBHOOK_SECRET" || docs.WebhookSecretFile != "" || !docs.AllowAutomerge {
		t.Errorf("docs = %+v", docs)
	}
	if apiDocs.WebhookSecretEnv != "" || apiDocs.WebhookSecretFile != "/run/secrets/api-docs-webhook" || apiDocs.AllowAutomerge {
		t.Errorf("api-docs = %+v", apiDocs)
	}

	if res, err := svc.Apply(ctx, setup); err != nil || len(res.Created)+len(res.Updated) != 0 {
		t.Fatalf("second apply = %+v, %v", res, err)
	}

	setup.Orgs[0].Projects[0].AllowAutomerge = false
	setup.Orgs[0].Projects[1].WebhookSecretFile = ""
	setup.Orgs[0].Projects[1].WebhookSecretEnv = "API_DOCS_WEBHOOK"
	res, err = svc.Apply(ctx, setup)
	if err != nil || strings.Join(res.Updated, ",") != "project docs,project api-docs" {
		t.Fatalf("update apply = %+v, %v", res, err)
	}
	if p, _ := store.GetProject(ctx, "docs"); p.AllowAutomerge {
		t.Errorf("allow_automerge: false left the project allowing it")
	}
	if p, _ := store.GetProject(ctx, "api-docs"); p.WebhookSecretEnv != "API_DOCS_WEBHOOK" || p.WebhookSecretFile != "" {
		t.Errorf("api-docs after the update = %+v", p)
	}
}

// TestApplyWorkflowKeyErrors checks that a wrong value of the workflow
// keys is refused before anything of the entry is written, with an error
// that names the entry and the key.
func TestApplyWorkflowKeyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, project string
		want          []string
	}{
		{"not a bool", "{id: docs, repo: /r, allow_automerge: maybe}",
			[]string{`line 4: orgs[0].projects[0].allow_automerge is "maybe"; it must be true or false`}},
		{"a list for a name", "{id: docs, repo: /r, webhook_secret_env: [A, B]}",
			[]string{"orgs[0].projects[0].webhook_secret_env", "it must be a string"}},
		{"unknown key", "{id: docs, repo: /r, webhook_secret: x}",
			[]string{`unknown key "webhook_secret" in orgs[0].projects[0]`, "webhook_secret_env, webhook_secret_file, allow_automerge"}},
		{"not a variable name", "{id: docs, repo: /r, webhook_secret_env: 'whsec_abc-123'}",
			[]string{"orgs[0] (acme).projects[0] (docs)", "webhook_secret_env is not an environment variable name"}},
		{"both", "{id: docs, repo: /r, webhook_secret_env: HOOK, webhook_secret_file: /run/hook}",
			[]string{"orgs[0] (acme).projects[0] (docs)", "webhook_secret_env and webhook_secret_file are both set"}},
		{"a file with a newline", `{id: docs, repo: /r, webhook_secret_file: "/run/hook\nx"}`,
			[]string{"orgs[0] (acme).projects[0] (docs)", "webhook_secret_file", "not a file path"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, store := newWorkflowService(t)
			text := "orgs:\n  - id: acme\n    projects:\n      - " + tc.project + "\n"
			setup, err := tenant.ParseSetup(strings.NewReader(text))
			if err == nil {
				_, err = svc.Apply(t.Context(), setup)
			}
			if err == nil || !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("err = %v, want Invalid", err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if len(store.kept) != 0 {
				t.Errorf("a refused entry was written: %v", store.kept)
			}
		})
	}
}

// TestCheckWebhookSecret checks the webhook secret's names under the keys
// the caller gives (the CLI's flags here).
func TestCheckWebhookSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env, file, want string
	}{
		{"", "", ""},
		{"DOCS_WEBHOOK_SECRET", "", ""},
		{"_x1", "", ""},
		{"", "/run/secrets/hook", ""},
		{"", "relative/hook.txt", ""},
		{"1X", "", "--webhook-secret-env is not an environment variable name"},
		{"A-B", "", "not an environment variable name"},
		{strings.Repeat("A", 256), "", "not an environment variable name"},
		{"", " /run/hook", `--webhook-secret-file " /run/hook" is not a file path`},
		{"A", "/f", "--webhook-secret-env and --webhook-secret-file are both set"},
	} {
		err := tenant.CheckWebhookSecret(tenant.Project{WebhookSecretEnv: tc.env, WebhookSecretFile: tc.file}, "--webhook-secret-env", "--webhook-secret-file")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("env %q file %q: %v", tc.env, tc.file, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("env %q file %q: err = %v, want %q", tc.env, tc.file, err, tc.want)
		}
	}
}

// TestApplySecuritySettings checks a project's context repositories and a
// domain's security settings: read from the file, stored, unchanged on a
// second apply, and checked before anything is written.
func TestApplySecuritySettings(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := tenant.NewService(store, func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) })
	const file = `
orgs:
  - id: acme
    projects:
      - id: docs
        repo: /srv/docs
        context_repos: [acme/api, acme/sdk]
    domains:
      - id: help
        project: docs
        reader_secret_file: /run/secrets/reader
        answers_per_day: 200
        tokens_per_day: 0
        proof_of_work: true
        grounding: strict
`
	setup, err := tenant.ParseSetup(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Apply(ctx, setup); err != nil {
		t.Fatal(err)
	}
	p, err := store.GetProject(ctx, "docs")
	if err != nil || strings.Join(p.ContextRepos, ",") != "acme/api,acme/sdk" {
		t.Fatalf("project = %+v, %v", p, err)
	}
	d, err := store.GetDomain(ctx, "help")
	want := tenant.DomainSettings{ReaderSecretFile: "/run/secrets/reader", AnswersPerDay: new(200), TokensPerDay: new(0), ProofOfWork: true, Grounding: "strict"}
	if err != nil || !reflect.DeepEqual(d.Settings, want) {
		t.Fatalf("domain settings = %+v, %v; want %+v", d.Settings, err, want)
	}
	if res, err := svc.Apply(ctx, setup); err != nil || len(res.Created)+len(res.Updated) != 0 {
		t.Fatalf("second apply = %+v, %v", res, err)
	}

	for _, tc := range []struct{ entry, want string }{
		{"projects: [{id: docs, repo: /srv/docs, context_repos: [victim]}]", "owner/name"},
		{"domains: [{id: help, project: docs, reader_secret_env: A, reader_secret_file: /b}]", "reader_secret_env and reader_secret_file are both set"},
		{"domains: [{id: help, project: docs, answers_per_day: lots}]", "must be a whole number"},
		{"domains: [{id: help, project: docs, tokens_per_day: -1}]", "0 (no bound) or more"},
		{"domains: [{id: help, project: docs, grounding: hard}]", `grounding "hard" must be mark`},
	} {
		s, err := tenant.ParseSetup(strings.NewReader("orgs:\n  - id: acme\n    " + tc.entry + "\n"))
		if err == nil {
			_, err = svc.Apply(ctx, s)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.entry, err, tc.want)
		}
	}
}
