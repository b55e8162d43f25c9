package cli

import (
	"context"
	"fmt"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/migration"
)

// migrate brings the database schema up to date, or with --dry-run lists
// the migrations that would be applied and applies none. Either refuses a
// database a newer docsmith has migrated.
func migrate(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("migrate", env)
	loader := config.Bind(fs, false)
	dryRun := fs.Bool("dry-run", false, "list the pending migrations and apply none")
	positional, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	if len(positional) > 0 {
		fmt.Fprintln(env.Stderr, "Usage: docsmith migrate [--dry-run] [--data DIR]")
		return errUsage
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	st, err := app.Migrations(ctx, cfg)
	if err != nil {
		return err
	}
	if *dryRun {
		printPending(env, st)
		return nil
	}
	b, err := app.OpenBackend(ctx, cfg, cfg.Logger(env.Stderr))
	if err != nil {
		return err
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("close the database: %w", err)
	}
	// What was pending a moment ago is applied now, by this process or by
	// a replica that started at the same time.
	for _, m := range st.Pending {
		fmt.Fprintf(env.Stdout, "applied %04d_%s\n", m.Version, m.Name)
	}
	fmt.Fprintf(env.Stdout, "database schema is up to date at version %d\n", st.Latest)
	return nil
}

func printPending(env Env, st migration.Status) {
	fmt.Fprintf(env.Stdout, "database schema version %d; this docsmith knows up to %d\n", st.Current, st.Latest)
	if len(st.Pending) == 0 {
		fmt.Fprintln(env.Stdout, "no pending migrations")
		return
	}
	fmt.Fprintf(env.Stdout, "%d pending migrations (docsmith migrate, or starting docsmith, applies them):\n", len(st.Pending))
	for _, m := range st.Pending {
		fmt.Fprintf(env.Stdout, "  %04d_%s\n", m.Version, m.Name)
	}
}
