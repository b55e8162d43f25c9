package cli

import (
	"strings"
	"testing"
)

// TestDomainChecksSchedule sets a domain's schedule of answer checks and
// its alert webhook with domain update, changes one without the others,
// and refuses what the schedule cannot use.
func TestDomainChecksSchedule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	site := docsFolder(t)
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "docs", "--repo", site},
		{"domain", "create", "--org", "acme", "--domain", "help", "--project", "docs", "--index=false", "--checks-every", "weekly"},
		{"domain", "update", "--domain", "help", "--alert-webhook-url", "https://alerts.example.com/docs", "--alert-webhook-secret-env", "HELP_ALERT_SECRET"},
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("docsmith %s = %+v", strings.Join(args, " "), r)
		}
	}
	s := storedDomain(t, dir, "help").Settings
	if s.ChecksEvery != "weekly" || s.AlertWebhookURL != "https://alerts.example.com/docs" || s.AlertWebhookSecretEnv != "HELP_ALERT_SECRET" {
		t.Fatalf("settings = %+v", s)
	}
	if r := run(t, dir, "domain", "update", "help", "--checks-every", "off"); r.code != 0 {
		t.Fatalf("domain update --checks-every off = %+v", r)
	}
	if s := storedDomain(t, dir, "help").Settings; s.ChecksEvery != "off" || s.AlertWebhookURL == "" {
		t.Fatalf("after --checks-every off: %+v", s)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--domain", "help", "--checks-every", "5m"}, `--checks-every "5m" must be hourly, daily, weekly, off`},
		{[]string{"--domain", "help", "--alert-webhook-secret-env", ""}, "--alert-webhook-url needs --alert-webhook-secret-env or --alert-webhook-secret-file"},
		{[]string{"--domain", "help", "--alert-webhook-url", "ftp://alerts.example.com/x"}, "must be an https:// URL"},
	} {
		r := run(t, dir, append([]string{"domain", "update"}, tc.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("domain update %s = %+v, want an error with %q", strings.Join(tc.args, " "), r, tc.want)
		}
	}
}
