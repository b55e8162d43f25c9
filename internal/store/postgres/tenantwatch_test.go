package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestWatchTenants: a process that keeps keys and projects in memory hears
// of every change to them, whoever makes it: another process through its
// store, or an operator's SQL. The cache here would keep entries for an
// hour, so only the notice can explain a refusal.
func TestWatchTenants(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	other, here := open(t, url), open(t, url)
	otherTenants := tenant.NewService(other, time.Now)
	ctx := t.Context()
	if _, err := otherTenants.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := otherTenants.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "/srv/docs"}); err != nil {
		t.Fatal(err)
	}
	first, firstSecret, err := otherTenants.CreateKey(ctx, "acme", apikey.Admin, "first")
	if err != nil {
		t.Fatal(err)
	}
	second, secondSecret, err := otherTenants.CreateKey(ctx, "acme", apikey.Admin, "second")
	if err != nil {
		t.Fatal(err)
	}

	cache := tenant.NewCachedStore(here, time.Hour, time.Now)
	tenants := tenant.NewService(cache, time.Now)
	watchCtx, stop := context.WithCancel(context.Background())
	ready := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { here.WatchTenants(watchCtx, cache.Invalidate, ready) })
	t.Cleanup(func() { stop(); wg.Wait() })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("not listening for tenant changes")
	}
	for _, secret := range []string{firstSecret, secondSecret} {
		if _, err := tenants.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	refusedSoon := func(what, secret string) {
		t.Helper()
		changed := time.Now()
		for {
			_, err := tenants.Authenticate(ctx, secret)
			if apperr.Is(err, apperr.Unauthorized) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(changed) > 5*time.Second {
				t.Fatalf("%s: still accepted 5s later", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	if err := other.RevokeKey(ctx, "acme", first.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	refusedSoon("a key revoked by another process", firstSecret)

	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `UPDATE api_keys SET revoked_at = now() WHERE id = $1`, second.ID); err != nil {
		t.Fatal(err)
	}
	refusedSoon("a key revoked with SQL", secondSecret)

	// A project changed with SQL is read again.
	p, err := tenants.ProjectFor(ctx, tenant.Principal{OrgID: "acme"}, "docs")
	if err != nil || p.RepoURL != "/srv/docs" {
		t.Fatalf("ProjectFor = %+v, %v", p, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE projects SET repo_url = '/srv/moved' WHERE id = 'docs'`); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	for {
		p, err := tenants.ProjectFor(ctx, tenant.Principal{OrgID: "acme"}, "docs")
		if err != nil {
			t.Fatal(err)
		}
		if p.RepoURL == "/srv/moved" {
			break
		}
		if time.Since(changed) > 5*time.Second {
			t.Fatal("a changed project: the old one still served 5s later")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
