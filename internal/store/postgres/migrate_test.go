package postgres

import (
	"context"
	"io/fs"
	"log/slog"
	"path"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestMigrateWorkflowsKeepsRows: a schema from before migration 0011, with
// a project and a job in it, migrates in place: the job is an API job with
// no run spec or push, the project has no webhook secret and no automerge.
func TestMigrateWorkflowsKeepsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)`)
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	for _, name := range names {
		if path.Base(name) >= "0011" {
			break
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO schema_migrations (version, applied_at) VALUES ($1::integer, now())`, strings.SplitN(path.Base(name), "_", 2)[0])
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	exec(`INSERT INTO orgs (id, created_at) VALUES ('acme', $1)`, at)
	exec(`INSERT INTO projects (id, org_id, repo_url, base_ref, forge_kind, docs_root, model, created_at) VALUES ('docs', 'acme', '/srv/docs', 'main', 'local', '.', 'builtin', $1)`, at)
	exec(`INSERT INTO jobs (id, project_id, status, repository, branch, base_ref, model, created_at, updated_at) VALUES ('j1', 'docs', 'active', '/srv/docs', 'docsmith/j1', 'main', 'builtin', $1, $1)`, at)
	exec(`INSERT INTO job_turns (job_id, seq, prompt, state, created_at) VALUES ('j1', 1, 'fix it', 'queued', $1)`, at)
	if err := conn.Close(ctx); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open the old schema: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	p, err := s.GetProject(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	want := tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "/srv/docs", BaseRef: "main", ForgeKind: "local", DocsRoot: ".", Model: "builtin", CreatedAt: at}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("migrated project = %+v, want %+v", p, want)
	}
	j, err := s.GetJob(ctx, "docs", "j1")
	if err != nil {
		t.Fatal(err)
	}
	if j.Trigger != agentjob.TriggerAPI || j.Workflow != "" || j.Run != nil || len(j.Messages) != 1 || j.Messages[0].Push != nil {
		t.Errorf("migrated job: trigger %q, workflow %q, run %+v, messages %+v", j.Trigger, j.Workflow, j.Run, j.Messages)
	}
}
