package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/backup"
	"github.com/docsmith/docsmith/internal/config"
)

// pgDumpHelp is what backup and restore say on PostgreSQL, whose own
// tools copy a live database consistently.
const pgDumpHelp = `the database is PostgreSQL (database_url is set): back it up with PostgreSQL's own tools, e.g.
  pg_dump --format=custom --file=docsmith.dump "$DOCSMITH_DATABASE_URL"
and restore it into an empty database with
  pg_restore --no-owner --dbname="$DOCSMITH_DATABASE_URL" docsmith.dump`

// backupCommand is docsmith backup: a consistent copy of the SQLite data
// directory, taken while the server runs.
func backupCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("backup", env)
	loader := config.Bind(fs, false)
	to := fs.String("to", "", "the backup file to write, a .tar.gz (required)")
	force := fs.Bool("force", false, "replace the backup file if it exists")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: docsmith backup --to FILE [--data DIR] [--force]\n\n")
		fs.PrintDefaults()
	}
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	if cfg.DatabaseURL != "" {
		return errors.New("backup: " + pgDumpHelp)
	}
	if err := required("to", *to); err != nil {
		return err
	}
	started := time.Now()
	res, err := backup.Create(ctx, backup.Options{DataDir: cfg.DataDir, To: *to, Force: *force, Version: Version, Log: cfg.Logger(env.Stderr)})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "docsmith: backed up %s (schema version %d, %d files, %s) to %s (%s) in %s\n",
		res.Manifest.DataDir, res.Manifest.SchemaVersion, len(res.Manifest.Files), bytesString(res.Manifest.TotalSize()),
		res.Path, bytesString(res.Size), time.Since(started).Round(time.Millisecond))
	return nil
}

// restoreCommand is docsmith restore: a data directory made again from a
// backup, never one a running docsmith holds.
func restoreCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("restore", env)
	loader := config.Bind(fs, false)
	from := fs.String("from", "", "the backup file to restore (required)")
	force := fs.Bool("force", false, "restore into a data directory that holds something, moving what it holds aside (never one a running docsmith holds)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: docsmith restore --from FILE --data DIR [--force]\n\n")
		fs.PrintDefaults()
	}
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	if cfg.DatabaseURL != "" {
		return errors.New("restore: " + pgDumpHelp)
	}
	if err := required("from", *from); err != nil {
		return err
	}
	res, err := backup.Restore(ctx, backup.RestoreOptions{From: *from, DataDir: cfg.DataDir, Force: *force})
	if err != nil {
		return err
	}
	m := res.Manifest
	fmt.Fprintf(env.Stdout, "docsmith: restored %s from %s (taken %s by docsmith %s, schema version %d, %d files)\n",
		res.DataDir, *from, m.CreatedAt.Format(time.RFC3339), m.Docsmith, m.SchemaVersion, len(m.Files))
	if res.Aside != "" {
		fmt.Fprintf(env.Stdout, "docsmith: what %s held before is in %s; delete it once the restored server runs\n", res.DataDir, res.Aside)
	}
	if m.DataDir != "" && m.DataDir != res.DataDir {
		return movedProjects(ctx, cfg, env, m.DataDir, res.DataDir)
	}
	return nil
}

// movedProjects names the projects whose repository lives inside the data
// directory the backup was taken of (the demo's sample repository), which
// still point there, and the command that points each at its copy.
func movedProjects(ctx context.Context, cfg config.Config, env Env, from, to string) error {
	b, err := app.OpenBackend(ctx, cfg, cfg.Logger(env.Stderr))
	if err != nil {
		return fmt.Errorf("restored, but not opened: %w", err)
	}
	defer func() { _ = b.Close() }()
	projects, err := b.Tenants.ListProjects(ctx, "")
	if err != nil {
		return fmt.Errorf("restored, but its projects not read: %w", err)
	}
	for _, p := range projects {
		rel, err := filepath.Rel(from, p.RepoURL)
		if !filepath.IsAbs(p.RepoURL) || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		fmt.Fprintf(env.Stdout, "docsmith: project %s still uses the repository in the old data directory; point it at its restored copy with\n  docsmith project update --data %s --id %s --repo %s\n",
			p.ID, to, p.ID, filepath.Join(to, rel))
	}
	return nil
}

// parseNoArgs parses flags of a command that takes no positional
// arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", pos[0])
		fs.Usage()
		return errUsage
	}
	return nil
}

func bytesString(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
