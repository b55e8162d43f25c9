package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

func storedDomain(t *testing.T, dir, id string) tenant.Domain {
	t.Helper()
	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	d, err := store.GetDomain(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDomainUpdate checks that domain update changes only the settings
// whose flags are given, the security settings among them, and refuses
// what Normalize refuses.
func TestDomainUpdate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	site := docsFolder(t)
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "docs", "--repo", site},
		{"domain", "create", "--org", "acme", "--domain", "help", "--project", "docs", "--index=false",
			"--allowed-origin", "https://docs.acme.example", "--answers-per-day", "50"},
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("docsmith %s = %+v", strings.Join(args, " "), r)
		}
	}
	d := storedDomain(t, dir, "help")
	if d.Settings.AnswersPerDay == nil || *d.Settings.AnswersPerDay != 50 || d.Settings.TokensPerDay != nil {
		t.Fatalf("after domain create --answers-per-day 50: %+v", d.Settings)
	}

	// Creating it again says how to change it instead.
	r := run(t, dir, "domain", "create", "--org", "acme", "--domain", "help", "--project", "docs", "--index=false", "--allowed-origin", "https://help.acme.example")
	if r.code == 0 || !strings.Contains(r.stderr, "docsmith domain update --domain help") {
		t.Fatalf("domain create of an existing domain = %+v", r)
	}

	r = run(t, dir, "domain", "update", "--domain", "help", "--reader-secret-env", "HELP_READER_SECRET", "--proof-of-work", "--tokens-per-day", "0", "--mcp-public", "--grounding", "strict",
		"--synonyms", "teamspace = workspace;sign in=log in")
	if r.code != 0 || r.stdout != "help\n" {
		t.Fatalf("domain update = %+v", r)
	}
	d = storedDomain(t, dir, "help")
	want := tenant.DomainSettings{ReaderSecretEnv: "HELP_READER_SECRET", AnswersPerDay: new(50), TokensPerDay: new(0), ProofOfWork: true, MCPPublic: true, Grounding: "strict",
		Synonyms: [][]string{{"teamspace", "workspace"}, {"sign in", "log in"}}}
	if !reflect.DeepEqual(d.Settings, want) || !reflect.DeepEqual(d.AllowedOrigins, []string{"https://docs.acme.example"}) {
		t.Fatalf("after domain update: settings %+v origins %q", d.Settings, d.AllowedOrigins)
	}

	// The domain may be named as an argument too; 'default' returns a
	// budget to the server's.
	if r := run(t, dir, "domain", "update", "help", "--answers-per-day", "default", "--allowed-origin", "", "--synonyms", ""); r.code != 0 {
		t.Fatalf("domain update help --answers-per-day default = %+v", r)
	}
	d = storedDomain(t, dir, "help")
	if d.Settings.AnswersPerDay != nil || len(d.AllowedOrigins) != 0 || d.Settings.ReaderSecretEnv != "HELP_READER_SECRET" || len(d.Settings.Synonyms) != 0 {
		t.Fatalf("after domain update to defaults: settings %+v origins %q", d.Settings, d.AllowedOrigins)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--domain", "help", "--reader-secret-file", "/run/s"}, "both set"},
		{[]string{"--domain", "help", "--tokens-per-day", "-5"}, "0 (no bound) or more"},
		{[]string{"--domain", "help"}, "nothing to change"},
		{[]string{"--domain", "help", "--grounding", "loose"}, `grounding "loose" must be mark`},
		{[]string{"--domain", "help", "--synonyms", "teamspace"}, "group 1 has 1 members"},
		{[]string{"--domain", "missing", "--proof-of-work"}, "not found"},
	} {
		r := run(t, dir, append([]string{"domain", "update"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("domain update %s = %+v, want an error with %q", strings.Join(tc.args, " "), r, tc.want)
		}
	}
}

// TestProjectContextRepos checks that only the operator's flags set a
// project's context repositories, and that they are checked.
func TestProjectContextRepos(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	site := docsFolder(t)
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "docs", "--repo", site, "--context-repo", "acme/api", "--context-repo", "acme/sdk"},
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("docsmith %s = %+v", strings.Join(args, " "), r)
		}
	}
	if got := storedProject(t, dir, "docs").ContextRepos; !reflect.DeepEqual(got, []string{"acme/api", "acme/sdk"}) {
		t.Fatalf("context repos after create = %q", got)
	}
	if r := run(t, dir, "project", "update", "--id", "docs", "--context-repo", ""); r.code != 0 {
		t.Fatalf("project update --context-repo '' = %+v", r)
	}
	if got := storedProject(t, dir, "docs").ContextRepos; got != nil {
		t.Fatalf("context repos after clearing = %q", got)
	}
	for _, bad := range []string{"../etc", "acme", "ext::sh -c x", "acme/api/../../x"} {
		r := run(t, dir, "project", "update", "--id", "docs", "--context-repo", bad)
		if r.code == 0 || !strings.Contains(r.stderr, "owner/name") {
			t.Errorf("project update --context-repo %q = %+v, want refused", bad, r)
		}
	}
}
