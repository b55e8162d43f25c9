package cli

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// TestMigrateDryRun: on SQLite, --dry-run lists every migration for a new
// data directory and creates nothing; migrate applies them; a second dry
// run finds none pending. Then a database a newer docsmith migrated is
// refused by every command, serve included, with what to do.
func TestMigrateDryRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	r := run(t, dir, "migrate", "--dry-run")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "database schema version 0; this docsmith knows up to ") || !strings.Contains(r.stdout, "\n  0001_init\n") {
		t.Fatalf("migrate --dry-run on a new directory = %+v", r)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("migrate --dry-run created the data directory (%v)", err)
	}
	var latest int
	if _, err := fmt.Sscanf(r.stdout, "database schema version 0; this docsmith knows up to %d", &latest); err != nil || latest < 2 {
		t.Fatalf("no latest version in %q: %v", r.stdout, err)
	}
	if n := strings.Count(r.stdout, "\n  "); n != latest {
		t.Errorf("migrate --dry-run listed %d migrations, want %d:\n%s", n, latest, r.stdout)
	}

	r = run(t, dir, "migrate")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "applied 0001_init\n") || !strings.HasSuffix(r.stdout, fmt.Sprintf("database schema is up to date at version %d\n", latest)) {
		t.Fatalf("migrate = %+v", r)
	}
	r = run(t, dir, "migrate", "--dry-run")
	if want := fmt.Sprintf("database schema version %d; this docsmith knows up to %d\nno pending migrations\n", latest, latest); r.code != 0 || r.stdout != want {
		t.Fatalf("migrate --dry-run when up to date = %+v, want %q", r, want)
	}

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)`, latest+1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the database is at schema version %d, this docsmith knows up to %d: it was upgraded by a newer docsmith; run that version or restore a backup", latest+1, latest)
	for _, args := range [][]string{{"migrate", "--dry-run"}, {"migrate"}, {"org", "list"}, {"serve", "--addr", "127.0.0.1:0"}} {
		if r := run(t, dir, args...); r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("docsmith %s on a newer database = %+v, want exit 1 and %q", strings.Join(args, " "), r, want)
		}
	}
}

// TestMigrateDryRunPostgres is TestMigrateDryRun's first half on
// PostgreSQL, in a schema of its own.
func TestMigrateDryRunPostgres(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	runPG := func(args ...string) result {
		var out, errOut bytes.Buffer
		env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
			switch k {
			case "DOCSMITH_DATABASE_URL":
				return url, true
			case "DOCSMITH_DATA_DIR":
				return t.TempDir(), true
			}
			return "", false
		}}
		code := Run(t.Context(), args, env)
		return result{code, out.String(), errOut.String()}
	}
	r := runPG("migrate", "--dry-run")
	var latest int
	if _, err := fmt.Sscanf(r.stdout, "database schema version 0; this docsmith knows up to %d", &latest); r.code != 0 || err != nil || !strings.Contains(r.stdout, "\n  0001_init\n") {
		t.Fatalf("migrate --dry-run on an empty schema = %+v (%v)", r, err)
	}
	if r := runPG("migrate"); r.code != 0 || !strings.HasSuffix(r.stdout, fmt.Sprintf("up to date at version %d\n", latest)) {
		t.Fatalf("migrate = %+v", r)
	}
	if r := runPG("migrate", "--dry-run"); r.code != 0 || !strings.HasSuffix(r.stdout, "no pending migrations\n") {
		t.Fatalf("migrate --dry-run when up to date = %+v", r)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(t.Context(), `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())`, latest+1); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the database is at schema version %d, this docsmith knows up to %d", latest+1, latest)
	for _, args := range [][]string{{"migrate", "--dry-run"}, {"org", "list"}} {
		if r := runPG(args...); r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("docsmith %s on a newer schema = %+v, want exit 1 and %q", strings.Join(args, " "), r, want)
		}
	}
}
