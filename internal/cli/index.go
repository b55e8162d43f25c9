package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gitcli"
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
	log := cfg.Logger(env.Stderr)
	git, err := gitcli.New(gitcli.Config{HomeDir: filepath.Join(cfg.DataDir, "git-home"), Log: log, AllowHTTP: cfg.Agent.GitAllowHTTP})
	if err != nil {
		return fmt.Errorf("docsmith needs git: %w", err)
	}
	b, err := app.OpenBackend(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() { _ = b.Close() }()
	d, err := b.Tenants.GetDomain(ctx, pos[0])
	if err != nil {
		return err
	}
	lookupEnv := env.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	res, err := app.NewIndexer(cfg, git, b.Tenants, b.Index, b.Catalogs, lookupEnv, log).Index(ctx, d)
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
