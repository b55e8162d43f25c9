package tenant_test

import (
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// FuzzParseSetup feeds the set-up parser arbitrary files: it never panics,
// and its errors are Invalid and speak of the file, never of Go types.
func FuzzParseSetup(f *testing.F) {
	for _, seed := range []string{
		"orgs:\n  - id: acme\n    projects:\n      - {id: docs, repo: /srv/docs}\n",
		"orgs:\n  - id: acme\n    projects:\n      - {id: docs, repo: /srv/docs, webhook_secret_env: HOOK, allow_automerge: true}\n",
		"orgs:\n  - id: acme\n    projects:\n      - {id: docs, repo: /srv/docs, webhook_secret_file: [x], allow_automerge: maybe}\n",
		"orgs:\n  - id: acme\n    projects: nope\n",
		"orgs:\n  - id: acme\n    domains:\n      - id: x\n        finish_thread_id: maybe\n        allowed_origins: {a: b}\n",
		"org: [\n",
		"orgs: [{id: 1, keys: [{name: [x]}]}]\n",
		"- a\n- b\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_, err := tenant.ParseSetup(strings.NewReader(text))
		if err == nil {
			return
		}
		if !apperr.Is(err, apperr.Invalid) {
			t.Fatalf("error is not Invalid: %v", err)
		}
		if msg := err.Error(); strings.Contains(msg, "tenant.") || strings.Contains(msg, "[]tenant") {
			t.Fatalf("error names a Go type: %v", err)
		}
	})
}
