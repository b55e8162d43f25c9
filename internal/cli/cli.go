// Package cli is docsmith's command line: serve, migrate, config, and the
// set-up commands that write organizations, projects, domains and keys.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gcfloor"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Env is what a command reads and writes besides its arguments.
type Env struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	LookupEnv func(string) (string, bool)
}

// errUsage marks an error already explained by a usage message.
var errUsage = errors.New("usage")

const usage = `docsmith: documentation agent jobs and assistant

Usage:
  docsmith serve [--addr 127.0.0.1:8080] [--data DIR] [options]   run the API and workers
  docsmith migrate [--dry-run] [--data DIR]                        bring the database schema up to date (--dry-run: list what is pending)
  docsmith backup --to FILE [--data DIR] [--force]                 copy the SQLite data directory, while the server runs
  docsmith restore --from FILE --data DIR [--force]                make a data directory from a backup (never a live one)
  docsmith config show [options]                                   print the configuration, secrets masked
  docsmith org create ORG | org list
  docsmith project create --org ORG --id PROJECT --repo URL_OR_PATH [--ref main]
                          [--forge github|gitlab|gitea|local] [--forge-url URL]
                          [--token-env VAR] [--token-file PATH] [--docs-root DIR] [--model PROVIDER/MODEL]
                          [--webhook-secret-env VAR | --webhook-secret-file PATH] [--allow-automerge]
                          [--context-repo OWNER/NAME ...]
  docsmith project update --id PROJECT [any flag of project create]   change only the flags given
  docsmith project list [--org ORG]
  docsmith domain create --org ORG --domain DOMAIN --project PROJECT [--ref REF] [--site-url URL]
                         [--model PROVIDER/MODEL] [--allowed-origin URL ...] [--finish-thread-id=false]
                         [--reader-secret-env VAR | --reader-secret-file PATH]
                         [--answers-per-day N] [--tokens-per-day N] [--proof-of-work] [--mcp-public]
                         [--grounding mark|strict] [--synonyms "teamspace=workspace;sign in=log in"]
                         [--checks-every daily|hourly|weekly|6h|off] [--alert-webhook-url URL
                          --alert-webhook-secret-env VAR | --alert-webhook-secret-file PATH]
  docsmith domain update --domain DOMAIN [any flag of domain create]   change only the flags given
  docsmith domain list [--org ORG]
  docsmith domain status DOMAIN                                    the domain's index: commit, head, lag, last error
  docsmith key create --org ORG --kind admin|assistant [--name NAME]   prints only the secret
  docsmith key list [--org ORG] | key revoke --org ORG KEY_ID
  docsmith apply FILE                                              create what a set-up file describes
  docsmith eval retrieval --corpus DIR --questions FILE            measure retrieval on a docs site
  docsmith eval answers --corpus DIR --questions FILE              measure the assistant's answers: status, facts, citations
  docsmith index DOMAIN [--data DIR]                               build or refresh a domain's search index
  docsmith export llms-txt DOMAIN DIR [--data DIR]                 write the domain's llms.txt and llms-full.txt into DIR
  docsmith job create --project P "INSTRUCTION" [--watch] | job get|watch --project P JOB_ID | job list --project P
                                                                   agent jobs over HTTP (--url, --key or DOCSMITH_URL, DOCSMITH_API_KEY)
  docsmith workflow list --project P | workflow run --project P NAME [--watch] | workflow sync [PROJECT]
                                                                   a project's workflows over HTTP (--url, --key as for jobs)
  docsmith analytics stats|conversations|gaps|feedback --domain D [--from DATE] [--to DATE] [--format table|json|csv]
                                                                   what readers asked a domain's assistant (--url, --key as for jobs)
  docsmith ui login                                                print a one-time sign-in link to the dashboard (--url, --key)
  docsmith check run DOMAIN [--ref REF] [--format table|json|junit]
                                                                   answer the domain's checks on a ref; exit 1 on a regression
                                                                   (--url, --key to run on a server, as for jobs; else --data)
  docsmith ask --domain D [--thread ID] "QUESTION"                 stream an assistant answer (--key or DOCSMITH_ASSISTANT_KEY)
  docsmith version [--format text|json]                            the version, commit and Go version of this binary

Every command finds its state through --data DIR or DOCSMITH_DATA_DIR (default ./data).
'docsmith serve --help' lists every option with its environment variable and default.
`

// Version is set at build time.
var Version = "dev"

// Run runs one command and returns the process exit code.
func Run(ctx context.Context, args []string, env Env) int {
	err := dispatch(ctx, args, env)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	var exit *exitError
	if errors.As(err, &exit) {
		if exit.err != nil {
			fmt.Fprintln(env.Stderr, "docsmith:", exit.err)
		}
		return exit.code
	}
	fmt.Fprintln(env.Stderr, "docsmith:", err)
	return 1
}

func dispatch(ctx context.Context, args []string, env Env) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return errUsage
	}
	cmd, rest := args[0], args[1:]
	sub := ""
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		sub = rest[0]
	}
	switch cmd + " " + sub {
	case "job create", "job get", "job list", "job watch":
		return jobCommand(ctx, sub, rest[1:], env)
	case "workflow list", "workflow run", "workflow sync":
		return workflowCommand(ctx, sub, rest[1:], env)
	case "analytics stats", "analytics conversations", "analytics gaps", "analytics feedback":
		return analyticsCommand(ctx, sub, rest[1:], env)
	case "ui login":
		return uiLogin(ctx, rest[1:], env)
	case "check run":
		return checkRunCommand(ctx, rest[1:], env)
	case "org create", "org list", "project create", "project update", "project list", "domain create", "domain update", "domain list",
		"domain status", "key create", "key list", "key revoke", "config show",
		"eval retrieval", "eval answers", "export llms-txt":
		rest = rest[1:]
		cmd += " " + sub
	}
	switch cmd {
	case "serve":
		return serve(ctx, rest, env)
	case "migrate":
		return migrate(ctx, rest, env)
	case "config show":
		return configShow(rest, env)
	case "backup":
		return backupCommand(ctx, rest, env)
	case "restore":
		return restoreCommand(ctx, rest, env)
	case "org create":
		return orgCreate(ctx, rest, env)
	case "org list":
		return orgList(ctx, rest, env)
	case "project create":
		return projectCreate(ctx, rest, env)
	case "project update":
		return projectUpdate(ctx, rest, env)
	case "project list":
		return projectList(ctx, rest, env)
	case "domain create":
		return domainCreate(ctx, rest, env)
	case "domain update":
		return domainUpdate(ctx, rest, env)
	case "domain list":
		return domainList(ctx, rest, env)
	case "domain status":
		return domainStatus(ctx, rest, env)
	case "key create":
		return keyCreate(ctx, rest, env)
	case "key list":
		return keyList(ctx, rest, env)
	case "key revoke":
		return keyRevoke(ctx, rest, env)
	case "apply":
		return apply(ctx, rest, env)
	case "ask":
		return ask(ctx, rest, env)
	case "eval retrieval":
		return evalRetrieval(ctx, rest, env)
	case "eval answers":
		return evalAnswers(ctx, rest, env)
	case "index":
		return indexDomain(ctx, rest, env)
	case "export llms-txt":
		return exportLLMsTxt(ctx, rest, env)
	case "version":
		return versionCommand(rest, env)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return nil
	}
	fmt.Fprintf(env.Stderr, "docsmith: unknown command %q\n\n%s", strings.TrimSpace(cmd), usage)
	return errUsage
}

// parse parses flags that may come before or after positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func newFlagSet(name string, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet("docsmith "+name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}

// withStore parses a command's flags (plus the common options), opens the
// store, and runs fn with the tenant service and the positional arguments.
func withStore(ctx context.Context, name string, args []string, env Env, define func(*flag.FlagSet), fn func(*tenant.Service, []string) error) error {
	return withBackend(ctx, name, args, env, define, func(cfg config.Config, b *app.Backend, pos []string) error {
		return fn(tenant.NewService(b.Tenants, now).WithRemotePolicy(app.RemotePolicy(cfg)), pos)
	})
}

// withBackend is withStore for commands that need the configuration and
// the whole backend (the search index too).
func withBackend(ctx context.Context, name string, args []string, env Env, define func(*flag.FlagSet), fn func(config.Config, *app.Backend, []string) error) error {
	fs := newFlagSet(name, env)
	loader := config.Bind(fs, false)
	if define != nil {
		define(fs)
	}
	positional, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
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
	return fn(cfg, b, positional)
}

func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func usageErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return errUsage
}

func required(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return fmt.Errorf("--%s is required", name)
	}
	return nil
}

func serve(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("serve", env)
	loader := config.Bind(fs, true)
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: docsmith serve [options]\n\nOptions (flag, environment variable, file key = name without dashes):\n")
		_ = config.Help(env.Stderr)
	}
	if _, err := parse(fs, args); err != nil {
		return usageErr(err)
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	if _, set := env.LookupEnv("GOGC"); !set { // GOGC replaces the floor
		defer gcfloor.Start(gcfloor.ServerFloor)()
	}
	build := readBuildInfo()
	m := &app.Main{Config: cfg, Log: cfg.Logger(env.Stderr), Out: env.Stdout, Version: build.Version, Commit: build.Commit}
	if err := m.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return m.Shutdown(context.Background())
}

func configShow(args []string, env Env) error {
	fs := newFlagSet("config show", env)
	loader := config.Bind(fs, true)
	if _, err := parse(fs, args); err != nil {
		return usageErr(err)
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	return cfg.Show(env.Stdout)
}

func orgCreate(ctx context.Context, args []string, env Env) error {
	return withStore(ctx, "org create", args, env, nil, func(t *tenant.Service, pos []string) error {
		if len(pos) != 1 {
			return errors.New("usage: docsmith org create ORG")
		}
		org, err := t.CreateOrg(ctx, pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, org.ID)
		return nil
	})
}

func orgList(ctx context.Context, args []string, env Env) error {
	return withStore(ctx, "org list", args, env, nil, func(t *tenant.Service, _ []string) error {
		orgs, err := t.Store().ListOrgs(ctx)
		if err != nil {
			return err
		}
		return table(env.Stdout, []string{"ORG", "CREATED"}, len(orgs), func(i int) []string {
			return []string{orgs[i].ID, orgs[i].CreatedAt.Format(time.RFC3339)}
		})
	})
}

// projectFlags defines the flags of a project's fields on p, for project
// create and (update true) project update.
func projectFlags(fs *flag.FlagSet, p *tenant.Project, contextRepos *stringList, check *checkMode, update bool) {
	org, repo := "organization that owns the project (required)", "git URL or local path of the docs repository (required)"
	if update {
		org, repo = "organization that owns the project (optional: refused if it is another)", "git URL or local path of the docs repository"
	}
	fs.StringVar(&p.OrgID, "org", "", org)
	fs.StringVar(&p.ID, "id", "", "project id, URL-safe (required)")
	fs.StringVar(&p.RepoURL, "repo", "", repo)
	fs.StringVar(&p.BaseRef, "ref", "", "base branch (default main)")
	fs.StringVar(&p.ForgeKind, "forge", "", "github, gitlab, gitea or local (default local)")
	fs.StringVar(&p.ForgeURL, "forge-url", "", "forge API base URL")
	fs.StringVar(&p.TokenEnv, "token-env", "", "environment variable that holds the forge token")
	fs.StringVar(&p.TokenFile, "token-file", "", "file that holds the forge token")
	fs.StringVar(&p.DocsRoot, "docs-root", "", "folder of the docs inside the repository (default the root)")
	fs.StringVar(&p.Model, "model", "", "agent model: builtin, openai/NAME or anthropic/NAME (default builtin)")
	fs.StringVar(&p.WebhookSecretEnv, "webhook-secret-env", "", "environment variable that holds the secret of the project's forge webhooks (POST /v2/hooks/PROJECT)")
	fs.StringVar(&p.WebhookSecretFile, "webhook-secret-file", "", "file that holds the secret of the project's forge webhooks")
	fs.BoolVar(&p.AllowAutomerge, "allow-automerge", false, "let workflows with automerge: true push straight to the base branch")
	contextHelp := "another repository (owner/name) the project's workflows may read as context (repeatable)"
	if update {
		contextHelp += "; replaces the list, and --context-repo '' empties it"
	}
	fs.Var(contextRepos, "context-repo", contextHelp)
	fs.Var(check, "check", "check that the repository, its base branch and the docs root can be read: true, false, or auto (default: local paths only)")
}

// webhookEnvFlag and webhookFileFlag are what CheckWebhookSecret's errors
// call the two on the command line.
const webhookEnvFlag, webhookFileFlag = "--webhook-secret-env", "--webhook-secret-file"

func projectCreate(ctx context.Context, args []string, env Env) error {
	var p tenant.Project
	var contextRepos stringList
	check := checkAuto
	define := func(fs *flag.FlagSet) { projectFlags(fs, &p, &contextRepos, &check, false) }
	return withBackend(ctx, "project create", args, env, define, func(cfg config.Config, b *app.Backend, _ []string) error {
		p.ContextRepos = contextRepos.nonEmpty()
		for name, v := range map[string]string{"org": p.OrgID, "id": p.ID, "repo": p.RepoURL} {
			if err := required(name, v); err != nil {
				return err
			}
		}
		if err := tenant.CheckWebhookSecret(p, webhookEnvFlag, webhookFileFlag); err != nil {
			return err
		}
		if err := checkProject(ctx, cfg, b, env, p, check); err != nil {
			return err
		}
		created, err := tenant.NewService(b.Tenants, now).WithRemotePolicy(app.RemotePolicy(cfg)).CreateProject(ctx, p)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, created.ID)
		return nil
	})
}

// projectUpdate changes the fields of a project that its flags name, and
// only those: --webhook-secret-env "" clears the variable, for example.
// The repository is checked again, as project create checks it, when
// --repo, --ref or --docs-root changes (or --check is given).
func projectUpdate(ctx context.Context, args []string, env Env) error {
	var given tenant.Project
	var contextRepos stringList
	var fs *flag.FlagSet
	check := checkAuto
	define := func(f *flag.FlagSet) {
		fs = f
		projectFlags(f, &given, &contextRepos, &check, true)
		f.Usage = func() {
			fmt.Fprint(env.Stderr, "Usage: docsmith project update --id PROJECT [flags]\n\nChanges only the fields whose flags are given; an empty value clears an optional one.\n\n")
			f.PrintDefaults()
		}
	}
	return withBackend(ctx, "project update", args, env, define, func(cfg config.Config, b *app.Backend, pos []string) error {
		if len(pos) != 0 {
			return fmt.Errorf("project update takes only flags, not %q", pos[0])
		}
		if err := required("id", given.ID); err != nil {
			return err
		}
		given.ContextRepos = contextRepos.nonEmpty()
		p, err := b.Tenants.GetProject(ctx, given.ID)
		if err != nil {
			return err
		}
		if flagGiven(fs, "org") && p.OrgID != given.OrgID {
			return apperr.New(apperr.NotFound, "project %q not found in org %q", given.ID, given.OrgID)
		}
		changed := 0
		recheck := check == checkOn
		fs.Visit(func(f *flag.Flag) {
			set, ok := projectFields[f.Name]
			if !ok {
				return
			}
			set(&p, given)
			changed++
			recheck = recheck || f.Name == "repo" || f.Name == "ref" || f.Name == "docs-root"
		})
		if changed == 0 {
			return errors.New("nothing to change: give the flags of the fields to change (see docsmith project update --help)")
		}
		if err := tenant.CheckWebhookSecret(p, webhookEnvFlag, webhookFileFlag); err != nil {
			return err
		}
		if recheck {
			if err := checkProject(ctx, cfg, b, env, p, check); err != nil {
				return err
			}
		}
		if err := p.Normalize(app.RemotePolicy(cfg)); err != nil {
			return err
		}
		if err := b.Tenants.UpdateProject(ctx, p); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, p.ID)
		return nil
	})
}

// projectFields copies one field, by its flag's name, from the flags'
// values onto the project being updated (--org and --id only name it).
var projectFields = map[string]func(dst *tenant.Project, src tenant.Project){
	"repo":                func(d *tenant.Project, s tenant.Project) { d.RepoURL = s.RepoURL },
	"ref":                 func(d *tenant.Project, s tenant.Project) { d.BaseRef = s.BaseRef },
	"forge":               func(d *tenant.Project, s tenant.Project) { d.ForgeKind = s.ForgeKind },
	"forge-url":           func(d *tenant.Project, s tenant.Project) { d.ForgeURL = s.ForgeURL },
	"token-env":           func(d *tenant.Project, s tenant.Project) { d.TokenEnv = s.TokenEnv },
	"token-file":          func(d *tenant.Project, s tenant.Project) { d.TokenFile = s.TokenFile },
	"docs-root":           func(d *tenant.Project, s tenant.Project) { d.DocsRoot = s.DocsRoot },
	"model":               func(d *tenant.Project, s tenant.Project) { d.Model = s.Model },
	"webhook-secret-env":  func(d *tenant.Project, s tenant.Project) { d.WebhookSecretEnv = s.WebhookSecretEnv },
	"webhook-secret-file": func(d *tenant.Project, s tenant.Project) { d.WebhookSecretFile = s.WebhookSecretFile },
	"allow-automerge":     func(d *tenant.Project, s tenant.Project) { d.AllowAutomerge = s.AllowAutomerge },
	"context-repo":        func(d *tenant.Project, s tenant.Project) { d.ContextRepos = s.ContextRepos },
}

func orgFilter(org *string) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) { fs.StringVar(org, "org", "", "only this organization's") }
}

func projectList(ctx context.Context, args []string, env Env) error {
	var org string
	return withStore(ctx, "project list", args, env, orgFilter(&org), func(t *tenant.Service, _ []string) error {
		ps, err := t.Store().ListProjects(ctx, org)
		if err != nil {
			return err
		}
		return table(env.Stdout, []string{"PROJECT", "ORG", "REPO", "REF", "FORGE", "DOCS ROOT", "MODEL", "WEBHOOK SECRET", "AUTOMERGE"}, len(ps), func(i int) []string {
			p := ps[i]
			return []string{p.ID, p.OrgID, p.RepoURL, p.BaseRef, p.ForgeKind, p.DocsRoot, p.Model, webhookSecretSource(p), yesNo(p.AllowAutomerge)}
		})
	})
}

// webhookSecretSource says where the project's webhook secret is read
// from: the variable's or the file's name, never the secret.
func webhookSecretSource(p tenant.Project) string {
	switch {
	case p.WebhookSecretEnv != "":
		return "env " + p.WebhookSecretEnv
	case p.WebhookSecretFile != "":
		return "file " + p.WebhookSecretFile
	}
	return "-"
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// nonEmpty is the list without empty values, nil when none is left: a
// flag given as ” clears a list.
func (l stringList) nonEmpty() []string {
	var out []string
	for _, v := range l {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// optionalInt is an integer flag that knows whether it was given, for a
// setting whose absence means "the server's default".
type optionalInt struct{ v *int }

func (o *optionalInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optionalInt) Set(s string) error {
	if s == "" || s == "default" {
		o.v = nil
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a whole number (or 'default')", s)
	}
	o.v = &n
	return nil
}

// domainFlags defines the flags of a domain's settings on d, for domain
// create and (update true) domain update.
func domainFlags(fs *flag.FlagSet, d *tenant.Domain, origins *stringList, answers, tokens *optionalInt, update bool) {
	org, project := "organization that owns the domain (required)", "project whose docs the assistant answers from (required)"
	if update {
		org, project = "organization that owns the domain (optional: refused if it is another)", "project whose docs the assistant answers from"
	}
	fs.StringVar(&d.OrgID, "org", "", org)
	fs.StringVar(&d.ID, "domain", "", "domain id: the assistant site's id (required)")
	fs.StringVar(&d.ProjectID, "project", "", project)
	fs.StringVar(&d.Ref, "ref", "", "ref of the docs (default the project's base ref)")
	fs.StringVar(&d.SiteURL, "site-url", "", "public base URL of the docs site, for citation links")
	fs.StringVar(&d.Model, "model", "", "assistant model, PROVIDER/MODEL (default extractive)")
	originHelp := "browser origin allowed to call the assistant (repeatable)"
	if update {
		originHelp += "; replaces the list, and --allowed-origin '' empties it"
	}
	fs.Var(origins, "allowed-origin", originHelp)
	fs.BoolVar(&d.FinishThreadID, "finish-thread-id", true, "send the top-level threadId on the v2 finish chunk (false for strict-schema clients)")
	fs.StringVar(&d.Settings.ReaderSecretEnv, "reader-secret-env", "", "environment variable that holds the secret signing the domain's reader tokens (their groups open restricted pages)")
	fs.StringVar(&d.Settings.ReaderSecretFile, "reader-secret-file", "", "file that holds the secret signing the domain's reader tokens")
	fs.Var(answers, "answers-per-day", "model answers a day before the assistant answers from search alone (0: no bound; default: the server's assistant_answers_per_day)")
	fs.Var(tokens, "tokens-per-day", "model tokens a day before the assistant answers from search alone (0: no bound; default: the server's assistant_tokens_per_day)")
	fs.BoolVar(&d.Settings.ProofOfWork, "proof-of-work", false, "make every assistant request carry a solved proof-of-work challenge (for a domain under abuse)")
	fs.BoolVar(&d.Settings.MCPPublic, "mcp-public", false, "let MCP clients without an assistant key read the pages without access groups (search, get_page, resources; no feedback), counted against the per client IP limits")
	fs.StringVar(&d.Settings.Grounding, "grounding", "", "what a model answer does with a sentence its cited passages do not back: mark (send it, marked; the default) or strict (leave it out)")
	synonymsHelp := "groups of words or phrases that mean the same in the docs, searched besides the built-in ones: members joined by =, groups by ; (\"teamspace=workspace;sign in=log in\")"
	if update {
		synonymsHelp += "; replaces the groups, and --synonyms '' removes them"
	}
	fs.Func("synonyms", synonymsHelp, func(v string) error {
		groups, err := tenant.ParseSynonyms(v)
		d.Settings.Synonyms = groups
		return err
	})
	fs.StringVar(&d.Settings.ChecksEvery, "checks-every", "", "how often the answer checks run against the served index: hourly, daily (the default), weekly, a duration such as 6h, or off")
	fs.StringVar(&d.Settings.AlertWebhookURL, "alert-webhook-url", "", "https:// URL (a Slack incoming webhook, say) that a scheduled run's regressions are posted to, signed")
	fs.StringVar(&d.Settings.AlertWebhookSecretEnv, "alert-webhook-secret-env", "", "environment variable that holds the secret signing the alerts")
	fs.StringVar(&d.Settings.AlertWebhookSecretFile, "alert-webhook-secret-file", "", "file that holds the secret signing the alerts")
}

func domainCreate(ctx context.Context, args []string, env Env) error {
	var d tenant.Domain
	var origins stringList
	var answers, tokens optionalInt
	index := true
	define := func(fs *flag.FlagSet) {
		domainFlags(fs, &d, &origins, &answers, &tokens, false)
		fs.BoolVar(&index, "index", true, "build the domain's search index now (false: later, with 'docsmith index')")
	}
	return withBackend(ctx, "domain create", args, env, define, func(cfg config.Config, b *app.Backend, _ []string) error {
		for name, v := range map[string]string{"org": d.OrgID, "domain": d.ID, "project": d.ProjectID} {
			if err := required(name, v); err != nil {
				return err
			}
		}
		d.AllowedOrigins = origins
		d.Settings.AnswersPerDay, d.Settings.TokensPerDay = answers.v, tokens.v
		created, err := tenant.NewService(b.Tenants, now).CreateDomain(ctx, d)
		if apperr.Is(err, apperr.Conflict) {
			return apperr.New(apperr.Conflict, "domain %q already exists; change its settings with docsmith domain update --domain %s "+
				"and the flags to change (for example --allowed-origin URL, which replaces the list)", d.ID, d.ID)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, created.ID)
		if index {
			indexNew(ctx, cfg, b, env, created)
		}
		return nil
	})
}

// domainUpdate changes the settings of a domain that its flags name, and
// only those, as project update does.
func domainUpdate(ctx context.Context, args []string, env Env) error {
	var given tenant.Domain
	var origins stringList
	var answers, tokens optionalInt
	var fs *flag.FlagSet
	define := func(f *flag.FlagSet) {
		fs = f
		domainFlags(f, &given, &origins, &answers, &tokens, true)
		f.Usage = func() {
			fmt.Fprint(env.Stderr, "Usage: docsmith domain update --domain DOMAIN [flags]\n\nChanges only the settings whose flags are given; an empty value clears an optional one.\n\n")
			f.PrintDefaults()
		}
	}
	return withStore(ctx, "domain update", args, env, define, func(t *tenant.Service, pos []string) error {
		if len(pos) == 1 && given.ID == "" {
			given.ID = pos[0]
		} else if len(pos) != 0 {
			return fmt.Errorf("domain update takes the domain as --domain DOMAIN, then flags; %q is extra", pos[0])
		}
		if err := required("domain", given.ID); err != nil {
			return err
		}
		given.AllowedOrigins = origins.nonEmpty()
		given.Settings.AnswersPerDay, given.Settings.TokensPerDay = answers.v, tokens.v
		d, err := t.Store().GetDomain(ctx, given.ID)
		if err != nil {
			return err
		}
		if flagGiven(fs, "org") && d.OrgID != given.OrgID {
			return apperr.New(apperr.NotFound, "domain %q not found in org %q", given.ID, given.OrgID)
		}
		changed := 0
		fs.Visit(func(f *flag.Flag) {
			if set, ok := domainFields[f.Name]; ok {
				set(&d, given)
				changed++
			}
		})
		if changed == 0 {
			return errors.New("nothing to change: give the flags of the settings to change (see docsmith domain update --help)")
		}
		if flagGiven(fs, "project") {
			p, err := t.Store().GetProject(ctx, d.ProjectID)
			if err != nil {
				return err
			}
			if p.OrgID != d.OrgID {
				return apperr.New(apperr.NotFound, "project %q not found in org %q", d.ProjectID, d.OrgID)
			}
		}
		if err := d.Normalize(); err != nil {
			return err
		}
		if err := t.Store().UpdateDomain(ctx, d); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, d.ID)
		return nil
	})
}

// domainFields copies one setting, by its flag's name, from the flags'
// values onto the domain being updated (--org and --domain only name it).
var domainFields = map[string]func(dst *tenant.Domain, src tenant.Domain){
	"project":            func(d *tenant.Domain, s tenant.Domain) { d.ProjectID = s.ProjectID },
	"ref":                func(d *tenant.Domain, s tenant.Domain) { d.Ref = s.Ref },
	"site-url":           func(d *tenant.Domain, s tenant.Domain) { d.SiteURL = s.SiteURL },
	"model":              func(d *tenant.Domain, s tenant.Domain) { d.Model = s.Model },
	"allowed-origin":     func(d *tenant.Domain, s tenant.Domain) { d.AllowedOrigins = s.AllowedOrigins },
	"finish-thread-id":   func(d *tenant.Domain, s tenant.Domain) { d.FinishThreadID = s.FinishThreadID },
	"reader-secret-env":  func(d *tenant.Domain, s tenant.Domain) { d.Settings.ReaderSecretEnv = s.Settings.ReaderSecretEnv },
	"reader-secret-file": func(d *tenant.Domain, s tenant.Domain) { d.Settings.ReaderSecretFile = s.Settings.ReaderSecretFile },
	"answers-per-day":    func(d *tenant.Domain, s tenant.Domain) { d.Settings.AnswersPerDay = s.Settings.AnswersPerDay },
	"tokens-per-day":     func(d *tenant.Domain, s tenant.Domain) { d.Settings.TokensPerDay = s.Settings.TokensPerDay },
	"proof-of-work":      func(d *tenant.Domain, s tenant.Domain) { d.Settings.ProofOfWork = s.Settings.ProofOfWork },
	"mcp-public":         func(d *tenant.Domain, s tenant.Domain) { d.Settings.MCPPublic = s.Settings.MCPPublic },
	"grounding":          func(d *tenant.Domain, s tenant.Domain) { d.Settings.Grounding = s.Settings.Grounding },
	"synonyms":           func(d *tenant.Domain, s tenant.Domain) { d.Settings.Synonyms = s.Settings.Synonyms },
	"checks-every":       func(d *tenant.Domain, s tenant.Domain) { d.Settings.ChecksEvery = s.Settings.ChecksEvery },
	"alert-webhook-url":  func(d *tenant.Domain, s tenant.Domain) { d.Settings.AlertWebhookURL = s.Settings.AlertWebhookURL },
	"alert-webhook-secret-env": func(d *tenant.Domain, s tenant.Domain) {
		d.Settings.AlertWebhookSecretEnv = s.Settings.AlertWebhookSecretEnv
	},
	"alert-webhook-secret-file": func(d *tenant.Domain, s tenant.Domain) {
		d.Settings.AlertWebhookSecretFile = s.Settings.AlertWebhookSecretFile
	},
}

func domainList(ctx context.Context, args []string, env Env) error {
	var org string
	return withStore(ctx, "domain list", args, env, orgFilter(&org), func(t *tenant.Service, _ []string) error {
		ds, err := t.Store().ListDomains(ctx, org)
		if err != nil {
			return err
		}
		return table(env.Stdout, []string{"DOMAIN", "ORG", "PROJECT", "REF", "SITE URL", "MODEL", "ORIGINS"}, len(ds), func(i int) []string {
			d := ds[i]
			return []string{d.ID, d.OrgID, d.ProjectID, d.Ref, d.SiteURL, d.Model, strings.Join(d.AllowedOrigins, ",")}
		})
	})
}

func keyCreate(ctx context.Context, args []string, env Env) error {
	var org, kind, name string
	define := func(fs *flag.FlagSet) {
		fs.StringVar(&org, "org", "", "organization the key belongs to (required)")
		fs.StringVar(&kind, "kind", "", "admin (agent endpoints) or assistant (assistant endpoints) (required)")
		fs.StringVar(&name, "name", "", "a label for the key")
	}
	return withStore(ctx, "key create", args, env, define, func(t *tenant.Service, _ []string) error {
		if err := required("org", org); err != nil {
			return err
		}
		k, err := apikey.ParseKind(kind)
		if err != nil {
			return fmt.Errorf("--kind: %w", err)
		}
		_, secret, err := t.CreateKey(ctx, org, k, name)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, secret)
		return nil
	})
}

func keyList(ctx context.Context, args []string, env Env) error {
	var org string
	return withStore(ctx, "key list", args, env, orgFilter(&org), func(t *tenant.Service, _ []string) error {
		keys, err := t.Store().ListKeys(ctx, org)
		if err != nil {
			return err
		}
		return table(env.Stdout, []string{"KEY ID", "ORG", "KIND", "NAME", "CREATED", "REVOKED"}, len(keys), func(i int) []string {
			k := keys[i]
			revoked := "-"
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.Format(time.RFC3339)
			}
			return []string{k.ID, k.OrgID, string(k.Kind), k.Name, k.CreatedAt.Format(time.RFC3339), revoked}
		})
	})
}

func keyRevoke(ctx context.Context, args []string, env Env) error {
	var org string
	define := func(fs *flag.FlagSet) { fs.StringVar(&org, "org", "", "organization of the key (required)") }
	return withStore(ctx, "key revoke", args, env, define, func(t *tenant.Service, pos []string) error {
		if len(pos) != 1 {
			return errors.New("usage: docsmith key revoke --org ORG KEY_ID (the id from 'docsmith key list')")
		}
		if err := required("org", org); err != nil {
			return err
		}
		if err := t.Store().RevokeKey(ctx, org, pos[0], now()); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, "revoked", pos[0])
		return nil
	})
}

func apply(ctx context.Context, args []string, env Env) error {
	index := true
	define := func(fs *flag.FlagSet) {
		fs.BoolVar(&index, "index", true, "build the search index of each domain created or changed (false: later, with 'docsmith index')")
	}
	return withBackend(ctx, "apply", args, env, define, func(cfg config.Config, b *app.Backend, pos []string) error {
		t := tenant.NewService(b.Tenants, now).WithRemotePolicy(app.RemotePolicy(cfg))
		if len(pos) != 1 {
			return errors.New("usage: docsmith apply FILE (a YAML set-up file; '-' reads standard input)")
		}
		r := env.Stdin
		if pos[0] != "-" {
			f, err := os.Open(pos[0])
			if err != nil {
				return err
			}
			defer func() { _ = f.Close() }()
			r = f
		}
		setup, err := tenant.ParseSetup(r)
		if err != nil {
			return err
		}
		// Projects over local paths are checked as project create checks
		// them, before anything is written.
		for i, o := range setup.Orgs {
			for j, sp := range o.Projects {
				// Named by the file's keys, before Normalize names them by
				// the flags.
				if err := tenant.CheckWebhookSecret(sp.Project(o.ID), "webhook_secret_env", "webhook_secret_file"); err != nil {
					return fmt.Errorf("orgs[%d] (%s).projects[%d] (%s): %w", i, o.ID, j, sp.ID, err)
				}
				if err := checkProject(ctx, cfg, b, env, sp.Project(o.ID), checkAuto); err != nil {
					return fmt.Errorf("orgs[%d].projects[%d] (%s): %w", i, j, sp.ID, err)
				}
			}
		}
		res, err := t.Apply(ctx, setup)
		for _, c := range res.Created {
			fmt.Fprintln(env.Stdout, "created", c)
		}
		for _, u := range res.Updated {
			fmt.Fprintln(env.Stdout, "updated", u)
		}
		for _, k := range res.Keys {
			fmt.Fprintf(env.Stdout, "created %s key %q for org %s (shown once): %s\n", k.Kind, k.Name, k.OrgID, k.Secret)
		}
		if index {
			for _, what := range append(slices.Clone(res.Created), res.Updated...) {
				id, ok := strings.CutPrefix(what, "domain ")
				if !ok {
					continue
				}
				if d, err := b.Tenants.GetDomain(ctx, id); err == nil {
					indexNew(ctx, cfg, b, env, d)
				}
			}
		}
		return err
	})
}

func table(w io.Writer, header []string, n int, row func(int) []string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for i := 0; i < n; i++ {
		fmt.Fprintln(tw, strings.Join(row(i), "\t"))
	}
	return tw.Flush()
}
