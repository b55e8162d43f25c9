package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// fakeFreshness answers with a fixed state.
type fakeFreshness struct {
	status freshness.Status
}

func (f *fakeFreshness) Status(_ context.Context, domain string) (freshness.Status, error) {
	st := f.status
	st.Domain = domain
	return st, nil
}

// TestDomainStatusAndPushes: GET /v2/domains/{domain} shows the domain
// and its index state to an admin key of its organization (another's gets
// 404, an assistant key 403); the reply to a push to the docs repository
// lists the domains it rebuilds.
func TestDomainStatusAndPushes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	fresh := &fakeFreshness{status: freshness.Status{State: freshness.State{
		Commit: "c1c1", IndexedAt: at, Head: "h2h2", HeadSeenAt: at.Add(time.Minute), Pages: 12, Passages: 340,
		Duration: 1500 * time.Millisecond, LastError: "reading main of https://git.example/acme/docs.git (project docs): not found", LastErrorAt: at.Add(2 * time.Minute), Failures: 3,
	}, Lag: 90*time.Second + time.Millisecond}}
	s := newWorkflowServerWith(t, Limits{}, true, func(d *Deps) {
		d.Freshness = fresh
		if _, err := d.Tenants.CreateDomain(t.Context(), tenant.Domain{ID: "help", OrgID: "acme", ProjectID: "docs", SiteURL: "https://docs.acme.example"}); err != nil {
			t.Fatal(err)
		}
	})
	r := s.do(http.MethodGet, "/v2/domains/help", s.admin, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /v2/domains/help: %d %s", r.status, r.body)
	}
	for _, want := range []string{
		`"domain":"help"`, `"projectId":"docs"`, `"ref":"main"`, `"siteUrl":"https://docs.acme.example"`,
		`"index":{"commit":"c1c1","indexedAt":"2026-03-01T12:00:00.000Z","head":"h2h2","headSeenAt":"2026-03-01T12:01:00.000Z","pages":12,"passages":340,"durationMs":1500,` +
			`"lastError":"reading main of https://git.example/acme/docs.git (project docs): not found","lastErrorAt":"2026-03-01T12:02:00.000Z","failures":3,"lagSeconds":91}`,
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the domain lacks %s:\n%s", want, r.body)
		}
	}
	if r := s.do(http.MethodGet, "/v2/domains/help", s.globexAdm, nil); r.status != http.StatusNotFound {
		t.Errorf("another organization's admin key: %d %s", r.status, r.body)
	}
	if r := s.do(http.MethodGet, "/v2/domains/help", s.assistant, nil); r.status != http.StatusForbidden {
		t.Errorf("an assistant key: %d %s", r.status, r.body)
	}

	s.fake.mu.Lock()
	s.fake.webhook = func(tenant.Project, http.Header, []byte) (workflowrun.WebhookResult, error) {
		return workflowrun.WebhookResult{Forge: "gitea", Delivery: "d-1", Reindexed: []string{"help"}}, nil
	}
	s.fake.mu.Unlock()
	r = s.do(http.MethodPost, "/v2/hooks/docs", "", strings.NewReader(`{}`))
	if r.status != http.StatusOK || !strings.Contains(r.body, `"reindexed":["help"]`) {
		t.Fatalf("a docs push: %d %s", r.status, r.body)
	}
}
