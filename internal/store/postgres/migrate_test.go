package postgres

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/docsmith/docsmith/internal/store/migration"
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

// TestMigrationsDryRunAndNewerSchema: Migrations lists every migration
// pending on an empty schema and creates nothing; after Open, none; and a
// schema a newer docsmith migrated is refused by Open and by Migrations,
// with the versions and what to do.
func TestMigrationsDryRunAndNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.PostgresURL(t)
	known, err := migration.Load(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	latest := known[len(known)-1].Version

	// A pool's parameter in the URL, as Open takes it, is no setting of
	// the server's.
	st, err := Migrations(ctx, url+"&pool_max_conns=3")
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != 0 || st.Latest != latest || len(st.Pending) != len(known) || st.Pending[0].Name != "init" {
		t.Errorf("empty schema: current %d, latest %d, %d pending; want 0, %d, %d", st.Current, st.Latest, len(st.Pending), latest, len(known))
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Errorf("a dry run made %d tables", tables)
	}

	s, err := Open(ctx, url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = Migrations(ctx, url); err != nil || st.Current != latest || len(st.Pending) != 0 {
		t.Errorf("after Open: %+v, %v; want version %d, nothing pending", st, err, latest)
	}

	if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())`, latest+3); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the database is at schema version %d, this docsmith knows up to %d: it was upgraded by a newer docsmith; run that version or restore a backup", latest+3, latest)
	_, openErr := Open(ctx, url, slog.New(slog.DiscardHandler))
	_, dryErr := Migrations(ctx, url)
	for name, err := range map[string]error{"Open": openErr, "Migrations": dryErr} {
		var tooNew *migration.TooNewError
		if !errors.As(err, &tooNew) || tooNew.Database != latest+3 || tooNew.Known != latest {
			t.Errorf("%s = %v, want a TooNewError", name, err)
		} else if !strings.Contains(err.Error(), want) {
			t.Errorf("%s = %q, want it to say %q", name, err, want)
		}
	}
}
