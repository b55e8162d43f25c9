package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/store/migration"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestMigrateWorkflowsKeepsRows: a database from before migration 0011,
// with a project and a job in it, migrates in place: the job is an API job
// with no run spec or push, the project has no webhook secret and no
// automerge.
func TestMigrateWorkflowsKeepsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, exec := databaseBefore(t, dir, "0011")
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	exec(`INSERT INTO orgs (id, created_at) VALUES ('acme', ?)`, toMicros(at))
	exec(`INSERT INTO projects (id, org_id, repo_url, base_ref, forge_kind, docs_root, model, created_at) VALUES ('docs', 'acme', '/srv/docs', 'main', 'local', '.', 'builtin', ?)`, toMicros(at))
	exec(`INSERT INTO jobs (id, project_id, status, repository, branch, base_ref, model, created_at, updated_at) VALUES ('j1', 'docs', 'active', '/srv/docs', 'docsmith/j1', 'main', 'builtin', ?, ?)`, toMicros(at), toMicros(at))
	exec(`INSERT INTO job_turns (job_id, seq, prompt, state, created_at) VALUES ('j1', 1, 'fix it', 'queued', ?)`, toMicros(at))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("open the old database: %v", err)
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

// databaseBefore makes in dir the database an older docsmith left: every
// migration before version applied, none after. exec runs a statement on
// it; the caller closes db before opening the store.
func databaseBefore(t *testing.T, dir, version string) (db *sql.DB, exec func(q string, args ...any)) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+uriPath(filepath.Join(dir, FileName)))
	if err != nil {
		t.Fatal(err)
	}
	exec = func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`)
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	for _, name := range names {
		if filepath.Base(name) >= version {
			break
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)`, strings.SplitN(filepath.Base(name), "_", 2)[0])
	}
	return db, exec
}

// TestMigrationsDryRun: Migrations lists what an older database lacks and
// applies none of it; a new directory has everything pending and is left
// without a database.
func TestMigrationsDryRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	known, err := migration.Load(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	latest := known[len(known)-1].Version

	empty := filepath.Join(t.TempDir(), "data")
	st, err := Migrations(ctx, empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != 0 || st.Latest != latest || len(st.Pending) != len(known) {
		t.Errorf("new directory: current %d, latest %d, %d pending; want 0, %d, %d", st.Current, st.Latest, len(st.Pending), latest, len(known))
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run made the data directory: %v", err)
	}

	dir := t.TempDir()
	db, _ := databaseBefore(t, dir, "0011")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the first run must have changed nothing
		st, err := Migrations(ctx, dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Current != 10 || len(st.Pending) != latest-10 || st.Pending[0].Version != 11 || st.Pending[0].Name != "workflows" {
			t.Fatalf("database before 0011: current %d, pending %+v", st.Current, st.Pending)
		}
	}

	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = Migrations(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != latest || len(st.Pending) != 0 {
		t.Errorf("after Open: current %d, pending %+v; want %d, none", st.Current, st.Pending, latest)
	}
}

// TestOpenRefusesNewerDatabase: a database a newer docsmith migrated (its
// schema_migrations holds a version this one does not know) is refused by
// Open and by Migrations, with the versions and what to do, and left as it was.
func TestOpenRefusesNewerDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	known, err := migration.Load(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	latest := known[len(known)-1].Version
	db, err := sql.Open("sqlite", "file:"+uriPath(filepath.Join(dir, FileName)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)`, latest+3); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	want := fmt.Sprintf("the database is at schema version %d, this docsmith knows up to %d: it was upgraded by a newer docsmith; run that version or restore a backup", latest+3, latest)
	_, openErr := Open(ctx, dir)
	_, dryErr := Migrations(ctx, dir, Options{})
	for name, err := range map[string]error{"Open": openErr, "Migrations": dryErr} {
		var tooNew *migration.TooNewError
		if !errors.As(err, &tooNew) || tooNew.Database != latest+3 || tooNew.Known != latest {
			t.Errorf("%s = %v, want a TooNewError", name, err)
		} else if !strings.Contains(err.Error(), want) {
			t.Errorf("%s = %q, want it to say %q", name, err, want)
		}
	}
}
