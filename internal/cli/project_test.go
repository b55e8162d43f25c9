package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// storedProject reads a project from the data directory's store, as the
// server would.
func storedProject(t *testing.T, dir, id string) tenant.Project {
	t.Helper()
	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p, err := store.GetProject(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// requireStoreKeepsWorkflowFields skips a test when the SQLite store does
// not keep a project's webhook secret and automerge fields yet (its
// columns come with the store's own change), so the test starts checking
// them as soon as it does.
func requireStoreKeepsWorkflowFields(t *testing.T) {
	t.Helper()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := t.Context()
	if err := store.CreateOrg(ctx, tenant.Org{ID: "probe"}); err != nil {
		t.Fatal(err)
	}
	p := tenant.Project{ID: "probe", OrgID: "probe", RepoURL: "r", BaseRef: "main", ForgeKind: "local", DocsRoot: ".", Model: "builtin",
		WebhookSecretEnv: "PROBE", WebhookSecretFile: "/probe", AllowAutomerge: true}
	if err := store.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err := store.GetProject(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if got.WebhookSecretEnv != p.WebhookSecretEnv || got.WebhookSecretFile != p.WebhookSecretFile || !got.AllowAutomerge {
		t.Skip("the SQLite store does not keep webhook_secret_env, webhook_secret_file and allow_automerge yet")
	}
}

// TestProjectUpdate checks that project update changes only the fields
// whose flags are given, checks what create checks, and refuses what it
// cannot do with a message.
func TestProjectUpdate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	site := docsFolder(t)
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"org", "create", "globex"},
		{"project", "create", "--org", "acme", "--id", "docs", "--repo", site, "--token-env", "ACME_TOKEN", "--forge", "github"},
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("docsmith %s = %+v", strings.Join(args, " "), r)
		}
	}
	if r := run(t, dir, "project", "update", "--id", "docs", "--model", "anthropic/claude-sonnet-4-5"); r.code != 0 || r.stdout != "docs\n" {
		t.Fatalf("project update --model = %+v", r)
	}
	p := storedProject(t, dir, "docs")
	if p.Model != "anthropic/claude-sonnet-4-5" || p.TokenEnv != "ACME_TOKEN" || p.ForgeKind != "github" || p.RepoURL != site {
		t.Fatalf("after project update --model: %+v", p)
	}
	if r := run(t, dir, "project", "update", "--id", "docs", "--org", "acme", "--token-env", ""); r.code != 0 {
		t.Fatalf("project update --token-env '' = %+v", r)
	}
	if p := storedProject(t, dir, "docs"); p.TokenEnv != "" || p.Model != "anthropic/claude-sonnet-4-5" {
		t.Fatalf("an empty flag did not clear only its field: %+v", p)
	}

	missing := filepath.Join(t.TempDir(), "gone")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no id", []string{"--model", "builtin"}, "--id is required"},
		{"nothing to change", []string{"--id", "docs"}, "nothing to change"},
		{"unknown project", []string{"--id", "nope", "--model", "builtin"}, `project "nope" not found`},
		{"another organization", []string{"--id", "docs", "--org", "globex", "--model", "builtin"}, `project "docs" not found in org "globex"`},
		{"a bad model", []string{"--id", "docs", "--model", "extractive"}, "assistant model"},
		{"the repository is checked again", []string{"--id", "docs", "--repo", missing}, "no such directory"},
		{"both secrets", []string{"--id", "docs", "--webhook-secret-env", "HOOK", "--webhook-secret-file", "/run/hook"}, "--webhook-secret-env and --webhook-secret-file are both set"},
		{"not a variable name", []string{"--id", "docs", "--webhook-secret-env", "whsec_abc-1"}, "--webhook-secret-env is not an environment variable name"},
	}
	for _, tc := range tests {
		r := run(t, dir, append([]string{"project", "update"}, tc.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: project update %s = %+v; want %q", tc.name, strings.Join(tc.args, " "), r, tc.want)
		}
	}
	if p := storedProject(t, dir, "docs"); p.RepoURL != site || p.Model != "anthropic/claude-sonnet-4-5" {
		t.Fatalf("a refused update changed the project: %+v", p)
	}
	if r := run(t, dir, "project", "update", "--id", "docs", "--repo", missing, "--check=false"); r.code != 0 {
		t.Errorf("project update --check=false = %+v", r)
	}
	if r := run(t, dir, "project", "update", "--help"); r.code != 0 || !strings.Contains(r.stderr, "Changes only the fields whose flags are given") || !strings.Contains(r.stderr, "-allow-automerge") {
		t.Errorf("project update --help = %+v", r)
	}
}

// TestProjectWebhookAndAutomergeFlags checks --webhook-secret-env,
// --webhook-secret-file and --allow-automerge on project create and
// update, and that project list names the secret's source, never a
// secret.
func TestProjectWebhookAndAutomergeFlags(t *testing.T) {
	t.Parallel()
	requireStoreKeepsWorkflowFields(t)
	dir := t.TempDir()
	secretFile := filepath.Join(t.TempDir(), "hook-secret")
	if err := os.WriteFile(secretFile, []byte("whsec_do_not_show\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DOCS_HOOK": "whsec_do_not_show_either"}
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "docs", "--repo", docsFolder(t), "--webhook-secret-env", "DOCS_HOOK", "--allow-automerge"},
		{"project", "create", "--org", "acme", "--id", "api", "--repo", docsFolder(t), "--webhook-secret-file", secretFile},
	} {
		if r := runWith(t, dir, vars, args...); r.code != 0 {
			t.Fatalf("docsmith %s = %+v", strings.Join(args, " "), r)
		}
	}
	if p := storedProject(t, dir, "docs"); p.WebhookSecretEnv != "DOCS_HOOK" || p.WebhookSecretFile != "" || !p.AllowAutomerge {
		t.Fatalf("docs = %+v", p)
	}
	r := runWith(t, dir, vars, "project", "list")
	if r.code != 0 || !regexp.MustCompile(`WEBHOOK SECRET\s+AUTOMERGE`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^docs\s.*\senv DOCS_HOOK\s+yes$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^api\s.*\sfile `+regexp.QuoteMeta(secretFile)+`\s+no$`).MatchString(r.stdout) {
		t.Fatalf("project list = %+v", r)
	}
	if strings.Contains(r.stdout, "whsec_") {
		t.Fatalf("project list shows a secret:\n%s", r.stdout)
	}

	// Update: the secret moves from the variable to a file, automerge is
	// turned off, and nothing else changes.
	if r := runWith(t, dir, vars, "project", "update", "--id", "docs", "--webhook-secret-env", "", "--webhook-secret-file", secretFile, "--allow-automerge=false"); r.code != 0 {
		t.Fatalf("project update = %+v", r)
	}
	if p := storedProject(t, dir, "docs"); p.WebhookSecretEnv != "" || p.WebhookSecretFile != secretFile || p.AllowAutomerge || p.Model != "builtin" {
		t.Fatalf("docs after the update = %+v", p)
	}
	if r := runWith(t, dir, vars, "project", "update", "--id", "api", "--allow-automerge"); r.code != 0 {
		t.Fatalf("project update --allow-automerge = %+v", r)
	}
	if p := storedProject(t, dir, "api"); !p.AllowAutomerge || p.WebhookSecretFile != secretFile {
		t.Fatalf("api after the update = %+v", p)
	}
}

// TestProjectCreateWebhookSecretErrors checks that create refuses a
// webhook secret it could not read, before anything is stored.
func TestProjectCreateWebhookSecretErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := run(t, dir, "org", "create", "acme"); r.code != 0 {
		t.Fatalf("org create = %+v", r)
	}
	site := docsFolder(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--webhook-secret-env", "HOOK", "--webhook-secret-file", "/run/hook"}, "--webhook-secret-env and --webhook-secret-file are both set"},
		{[]string{"--webhook-secret-env", "2FAST"}, "--webhook-secret-env is not an environment variable name"},
		{[]string{"--allow-automerge=maybe"}, "invalid boolean value"},
	} {
		args := append([]string{"project", "create", "--org", "acme", "--id", "docs", "--repo", site}, tc.args...)
		if r := run(t, dir, args...); r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("docsmith %s = %+v; want %q", strings.Join(args, " "), r, tc.want)
		}
	}
	if r := run(t, dir, "project", "list"); strings.Contains(r.stdout, "docs") {
		t.Errorf("a refused project was stored:\n%s", r.stdout)
	}
}
