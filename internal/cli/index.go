package cli

import (
	"context"
	"fmt"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
)

// indexDomain runs `docsmith index DOMAIN`: it builds or refreshes the
// domain's search index from its project's repository at the domain's ref,
// rewriting only the pages that changed.
func indexDomain(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("index", env)
	loader := config.Bind(fs, false)
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: docsmith index DOMAIN [--data DIR]\n\nBuilds the domain's search index from its project's docs (a shallow clone of the repository at the\ndomain's ref, or a plain local folder as it is); only pages that changed are rewritten.\n\n")
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	b, err := app.OpenBackend(ctx, cfg, cfg.Logger(env.Stderr))
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	d, err := b.Tenants.GetDomain(ctx, pos[0])
	if err != nil {
		return err
	}
	x, err := newIndexer(cfg, b, env)
	if err != nil {
		return err
	}
	res, err := x.Index(ctx, d)
	if err != nil {
		return err
	}
	from := "the folder of project " + res.ProjectID
	if res.Ref != "" {
		from = fmt.Sprintf("%s at %s (%.12s)", res.ProjectID, res.Ref, res.Commit)
	}
	fmt.Fprintf(env.Stdout, "indexed %s from %s: %d pages, %d passages; %d pages changed, %d removed, %d unchanged in %s\n",
		res.Domain, from, res.Pages, res.Chunks, res.Changed, res.Removed, res.Unchanged, res.Duration.Round(1e6))
	return nil
}
