package tenant_test

import (
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/tenant"
)

func TestChecksInterval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		every string
		want  time.Duration
		on    bool
	}{
		{"", 24 * time.Hour, true},
		{"daily", 24 * time.Hour, true},
		{"Hourly", time.Hour, true},
		{"weekly", 7 * 24 * time.Hour, true},
		{"6h", 6 * time.Hour, true},
		{"15m", 15 * time.Minute, true},
		{"off", 0, false},
		{"OFF", 0, false},
	} {
		got, on := tenant.DomainSettings{ChecksEvery: tc.every}.ChecksInterval()
		if got != tc.want || on != tc.on {
			t.Errorf("ChecksInterval(%q) = %s, %v; want %s, %v", tc.every, got, on, tc.want, tc.on)
		}
	}
}

func TestCheckChecksSchedule(t *testing.T) {
	t.Parallel()
	const hook = "https://hooks.example.com/services/T0/B0/abc"
	for _, tc := range []struct {
		name string
		s    tenant.DomainSettings
		msg  string // empty: valid
	}{
		{"defaults", tenant.DomainSettings{}, ""},
		{"off", tenant.DomainSettings{ChecksEvery: "off"}, ""},
		{"webhook with a secret variable", tenant.DomainSettings{AlertWebhookURL: hook, AlertWebhookSecretEnv: "ALERT_SECRET"}, ""},
		{"webhook with a secret file", tenant.DomainSettings{AlertWebhookURL: hook, AlertWebhookSecretFile: "/run/secrets/alert"}, ""},
		{"too often", tenant.DomainSettings{ChecksEvery: "1m"}, `--checks-every "1m" must be hourly, daily, weekly, off, or a duration from 15m to 744h`},
		{"too rare", tenant.DomainSettings{ChecksEvery: "9000h"}, "--checks-every"},
		{"not a duration", tenant.DomainSettings{ChecksEvery: "sometimes"}, "such as 6h"},
		{"webhook without a secret", tenant.DomainSettings{AlertWebhookURL: hook}, "--alert-webhook-url needs --alert-webhook-secret-env or --alert-webhook-secret-file"},
		{"secret without a webhook", tenant.DomainSettings{AlertWebhookSecretEnv: "ALERT_SECRET"}, "without --alert-webhook-url"},
		{"both secrets", tenant.DomainSettings{AlertWebhookURL: hook, AlertWebhookSecretEnv: "A", AlertWebhookSecretFile: "/b"}, "both set"},
		{"secret given as a value", tenant.DomainSettings{AlertWebhookURL: hook, AlertWebhookSecretEnv: "s3cr3t!"}, "not an environment variable name"},
		{"not http", tenant.DomainSettings{AlertWebhookURL: "ftp://h/x", AlertWebhookSecretEnv: "A"}, "must be an https:// URL"},
		{"no host", tenant.DomainSettings{AlertWebhookURL: "https:///x", AlertWebhookSecretEnv: "A"}, "must be an https:// URL"},
		{"credentials", tenant.DomainSettings{AlertWebhookURL: "https://u:p@h/x", AlertWebhookSecretEnv: "A"}, "user or password"},
		{"line break", tenant.DomainSettings{AlertWebhookURL: "https://h/x\nHost: y", AlertWebhookSecretEnv: "A"}, "control characters"},
		{"too long", tenant.DomainSettings{AlertWebhookURL: "https://h/" + strings.Repeat("a", 3000), AlertWebhookSecretEnv: "A"}, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tenant.CheckChecksSchedule(tc.s, "--checks-every", "--alert-webhook-url", "--alert-webhook-secret-env", "--alert-webhook-secret-file")
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %v, want one with %q", err, tc.msg)
			}
			if tc.s.AlertWebhookURL != "" && strings.Contains(err.Error(), "abc") {
				t.Fatalf("error %q repeats the webhook URL, which may be a secret", err)
			}
		})
	}
}

// TestApplyChecksSchedule reads the schedule and the alert webhook from a
// set-up file, stores them with the domain, and names the file's keys in
// its errors.
func TestApplyChecksSchedule(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc := newService(t)
	const file = `
orgs:
  - id: acme
    projects:
      - id: docs
        repo: /srv/docs
    domains:
      - id: help
        project: docs
        checks_every: 6h
        alert_webhook_url: https://alerts.example.com/docs
        alert_webhook_secret_file: /run/secrets/alerts
`
	setup, err := tenant.ParseSetup(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Apply(ctx, setup); err != nil {
		t.Fatal(err)
	}
	d, err := svc.Store().GetDomain(ctx, "help")
	if err != nil {
		t.Fatal(err)
	}
	want := tenant.DomainSettings{ChecksEvery: "6h", AlertWebhookURL: "https://alerts.example.com/docs", AlertWebhookSecretFile: "/run/secrets/alerts"}
	if d.Settings.ChecksEvery != want.ChecksEvery || d.Settings.AlertWebhookURL != want.AlertWebhookURL || d.Settings.AlertWebhookSecretFile != want.AlertWebhookSecretFile {
		t.Fatalf("settings = %+v; want %+v", d.Settings, want)
	}
	if every, on := d.Settings.ChecksInterval(); every != 6*time.Hour || !on {
		t.Fatalf("ChecksInterval = %s, %v", every, on)
	}

	for _, tc := range []struct{ entry, want string }{
		{"domains: [{id: help, project: docs, checks_every: never}]", `checks_every "never" must be hourly`},
		{"domains: [{id: help, project: docs, alert_webhook_url: 'https://h/x'}]", "alert_webhook_url needs alert_webhook_secret_env or alert_webhook_secret_file"},
		{"domains: [{id: help, project: docs, alert_webhook_urls: x}]", `unknown key "alert_webhook_urls"`},
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
