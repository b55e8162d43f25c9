package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, dir string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
		if k == "DOCSMITH_DATA_DIR" {
			return dir, true
		}
		return "", false
	}}
	code := Run(t.Context(), args, env)
	return result{code, out.String(), errOut.String()}
}

func TestSetUpCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := run(t, dir, "org", "create", "acme"); r.code != 0 || r.stdout != "acme\n" {
		t.Fatalf("org create = %+v", r)
	}
	if r := run(t, dir, "project", "create", "--org", "acme", "--id", "docs", "--repo", docsFolder(t), "--forge", "local"); r.code != 0 || r.stdout != "docs\n" {
		t.Fatalf("project create = %+v", r)
	}
	if r := run(t, dir, "domain", "create", "--org", "acme", "--domain", "acme-docs", "--project", "docs", "--allowed-origin", "https://docs.acme.example"); r.code != 0 {
		t.Fatalf("domain create = %+v", r)
	}
	r := run(t, dir, "key", "create", "--org", "acme", "--kind", "admin")
	if r.code != 0 || !regexp.MustCompile(`^svc_[a-z2-7]{12}_[a-z2-7]+\n$`).MatchString(r.stdout) {
		t.Fatalf("key create must print only the secret: %+v", r)
	}
	secret := strings.TrimSpace(r.stdout)
	r = run(t, dir, "key", "list", "--org", "acme")
	if r.code != 0 || strings.Contains(r.stdout, secret) || !strings.Contains(r.stdout, "admin") {
		t.Fatalf("key list = %+v", r)
	}
	keyID := strings.Split(secret, "_")[1]
	if r := run(t, dir, "key", "revoke", "--org", "acme", keyID); r.code != 0 {
		t.Fatalf("key revoke = %+v", r)
	}
	if r := run(t, dir, "project", "list"); !strings.Contains(r.stdout, "docs") {
		t.Fatalf("project list = %+v", r)
	}
}

func TestCommandErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{}, 2, "Usage:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"org", "create"}, 1, "usage: docsmith org create ORG"},
		{[]string{"org", "create", "bad/id"}, 1, "org \"bad/id\" must be"},
		{[]string{"project", "create", "--org", "acme", "--id", "docs"}, 1, "--repo is required"},
		{[]string{"key", "create", "--org", "acme", "--kind", "root"}, 1, "--kind"},
		{[]string{"key", "create", "--org", "nope", "--kind", "admin"}, 1, `org "nope" not found`},
		{[]string{"serve", "--workers", "many"}, 1, "workers (from flag --workers)"},
	}
	for _, tc := range tests {
		r := run(t, dir, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("docsmith %s = code %d, stderr %q; want code %d and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.want)
		}
	}
}

func TestConfigShowAndHelp(t *testing.T) {
	t.Parallel()
	r := run(t, t.TempDir(), "config", "show", "--workers", "2")
	if r.code != 0 || !regexp.MustCompile(`workers\s+2\s+flag --workers`).MatchString(r.stdout) {
		t.Fatalf("config show = %+v", r)
	}
	r = run(t, t.TempDir(), "serve", "--help")
	if r.code != 0 || !strings.Contains(r.stderr, "DOCSMITH_LIMIT_AGENT_PER_PROJECT_HOUR") {
		t.Fatalf("serve --help = %+v", r)
	}
}
