// Package config is docsmith's configuration as one table: every option has
// a name, an environment variable, a flag, a default and a description, and
// may be secret. Values come from flags, then DOCSMITH_* variables, then an
// optional YAML file, then the default.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	// Workflow schedules name IANA zones; the embedded database makes them
	// load the same on a host (or a slim container) without zoneinfo.
	_ "time/tzdata"

	"go.yaml.in/yaml/v3"
)

// Config is the resolved configuration.
type Config struct {
	ConfigFile  string
	DataDir     string
	Addr        string
	DatabaseURL string // PostgreSQL instead of the SQLite file in DataDir
	// AllowNewDatabase lets a data directory that lost its SQLite database
	// start over with an empty one.
	AllowNewDatabase bool
	RedisURL         string // rate limits in Redis instead of the database
	Role             string // api, worker or all
	LogLevel         slog.Level
	LogFormat        string
	Demo             bool
	Workers          int
	TurnTimeout      time.Duration
	TurnLease        time.Duration
	TurnMaxAttempts  int
	QueuePoll        time.Duration
	ShutdownTimeout  time.Duration
	MaxBodyBytes     int64
	TrustedProxies   []netip.Prefix
	Limits           Limits
	Budget           Budget
	Agent            Agent
	Models           Models
	Workflows        Workflows
	ProofOfWork      ProofOfWork
	Embeddings       Embeddings
	Rerank           Rerank
	// IndexPollInterval is how often the branch each domain reads is
	// compared with the commit its index was built from (0: never; push
	// webhooks and our own pushes still rebuild at once).
	IndexPollInterval time.Duration
	// Checks configures the scheduled answer checks and their alerts.
	Checks Checks
	// PublicURL is where people reach this server (its dashboard), for
	// the links docsmith posts on pull requests and in check alerts.
	PublicURL string

	sources map[string]string // option name -> where its value came from
	raw     map[string]string // option name -> value as given
}

// Checks configures the scheduled runs of the domains' answer checks and
// the alerts they send to the teams' webhooks.
type Checks struct {
	// AlertAllowPrivate lets alerts reach loopback, private and other
	// non-public addresses.
	AlertAllowPrivate bool
}

// ProofOfWork configures the challenges a domain may ask its widget to
// solve (tenant.DomainSettings.ProofOfWork switches them on per domain).
type ProofOfWork struct {
	// HMACKey signs the challenges; empty: a key generated once and kept in
	// the database, which every replica shares.
	HMACKey   string
	MaxNumber int
}

// Embeddings names the provider of passage and query vectors; with none
// (Model empty) search ranks by keywords alone.
type Embeddings struct {
	// Model is the model's name at the provider, without the "openai/" of
	// the option's value; empty: no embeddings.
	Model string
	// BaseURL is an OpenAI-compatible API up to /v1: embeddings_base_url,
	// else openai_base_url, else empty for OpenAI's own.
	BaseURL string
	// APIKey is embeddings_api_key, else the OpenAI key when the vectors
	// come from the same API the models use.
	APIKey string
	// Batch is how many texts one request embeds at most.
	Batch int
	// Concurrency is how many such requests an index build has in flight.
	Concurrency int
	// Timeout bounds the embedding of a reader's question, retries
	// included; past it the search ranks by keywords alone.
	Timeout time.Duration
}

// Enabled reports whether an embeddings provider is configured.
func (e Embeddings) Enabled() bool { return e.Model != "" }

// Rerank names a reranker that reorders the best results of a search.
type Rerank struct {
	URL    string // the full endpoint, such as https://host/v1/rerank; empty: no reranking
	Model  string // may be empty for a server that serves one model
	APIKey string
	// Budget bounds one rerank call; past it the results keep the order
	// search gave them.
	Budget time.Duration
}

// Enabled reports whether a reranker is configured.
func (r Rerank) Enabled() bool { return r.URL != "" }

// Agent configures agent turns.
type Agent struct {
	WorkDir         string // per-turn checkouts; empty means DATA_DIR/work
	GitAllowHTTP    bool
	AuthorName      string
	AuthorEmail     string
	MaxSteps        int
	MaxTokens       int
	MaxFilesChanged int
	MaxLinesChanged int

	// RepoHosts, when not empty, are the only hosts repository URLs may
	// name (host or host:port, lower case).
	RepoHosts []string
}

// Models says where the model providers are. Keys are secrets.
type Models struct {
	OpenAIBaseURL    string
	OpenAIAPIKey     string
	AnthropicBaseURL string
	AnthropicAPIKey  string
	CallTimeout      time.Duration
}

// Workflows configures agent workflows: their schedules, caps and the
// background work that keeps them in step with each project's repository.
type Workflows struct {
	// Location is the zone cron expressions are read in.
	Location *time.Location
	// DailyCap is how many runs of one workflow may start in 24 hours
	// (0: no cap).
	DailyCap int
	// NewRunWhileActive starts a second job when a workflow is triggered
	// while its run is active, instead of queueing the trigger on that run.
	NewRunWhileActive bool
	// SyncInterval is how often each project's base ref is checked for
	// changed workflow files.
	SyncInterval time.Duration
	// Tick is how often due schedule slots are looked for.
	Tick time.Duration
	// WebhookReads is how many forge webhooks one process handles at
	// once; more are answered 503 without reading their bodies.
	WebhookReads int
}

// Limits are SPEC §6's rate limits; 0 turns a limit off.
type Limits struct {
	AgentPerProjectHour   int
	AssistantPerKeyMonth  int
	AssistantPerOrgHour   int
	AssistantPerIPDay     int
	AssistantPerIPMinute  int
	AssistantPerIPBurst   int // per client IP per 10 seconds
	AssistantPerKeyWindow time.Duration
}

// Budget is a domain's daily model budget where the domain sets none of its
// own; 0 is no bound. A model answer costs about 2,000–4,000 tokens
// (passages and history in, at most 1,500 out), so 2,000,000 tokens a day
// is some 500–1,000 answers, a few dollars on the models a docs assistant
// uses; 2,000 answers a day is six times a key's monthly request limit
// spread evenly, room for a busy day.
type Budget struct {
	AnswersPerDay int
	TokensPerDay  int
}

type option struct {
	name   string // file key; the flag is the name with '-', the variable DOCSMITH_ + upper name
	def    string
	desc   string
	secret bool
	common bool // offered as a flag by every command, not only serve
	set    func(c *Config, v string) error
}

func (o option) flagName() string { return strings.ReplaceAll(o.name, "_", "-") }

// EnvName is the option's environment variable.
func (o option) EnvName() string { return "DOCSMITH_" + strings.ToUpper(o.name) }

func table() []option {
	return []option{
		{name: "data_dir", def: "./data", common: true, desc: "directory of the SQLite database and other state", set: func(c *Config, v string) error {
			if v == "" {
				return errors.New("must not be empty")
			}
			c.DataDir = v
			return nil
		}},
		{name: "addr", def: "127.0.0.1:8080", desc: "address the HTTP server listens on", set: func(c *Config, v string) error {
			if _, _, err := splitHostPort(v); err != nil {
				return err
			}
			c.Addr = v
			return nil
		}},
		{name: "database_url", def: "", secret: true, common: true, desc: "PostgreSQL URL (postgres://user:pass@host:5432/db?sslmode=disable) for scale-out; empty: SQLite in data_dir (or DOCSMITH_DATABASE_URL_FILE)", set: func(c *Config, v string) error {
			if v != "" && !strings.HasPrefix(v, "postgres://") && !strings.HasPrefix(v, "postgresql://") {
				return errors.New("must be empty (SQLite) or a postgres:// URL")
			}
			c.DatabaseURL = v
			return nil
		}},
		{name: "allow_new_database", def: "false", common: true, desc: "start with an empty SQLite database in a data directory whose database is gone (its docsmith-database.created marker is there but docsmith.db is not); without it docsmith refuses to start there", set: boolean(func(c *Config) *bool { return &c.AllowNewDatabase })},
		{name: "redis_url", def: "", secret: true, desc: "Redis URL (redis://host:6379/0) for rate limits shared by replicas; empty: limits in the database (or DOCSMITH_REDIS_URL_FILE)", set: func(c *Config, v string) error {
			if v != "" && !strings.HasPrefix(v, "redis://") && !strings.HasPrefix(v, "rediss://") && !strings.HasPrefix(v, "unix://") {
				return errors.New("must be empty or a redis://, rediss:// or unix:// URL")
			}
			c.RedisURL = v
			return nil
		}},
		{name: "role", def: "all", desc: "what serve runs: all (API and workers), api (API only, no workers) or worker (workers; HTTP only /healthz, /readyz, /metrics)", set: oneOf(func(c *Config) *string { return &c.Role }, "all", "api", "worker")},
		{name: "log_level", def: "info", common: true, desc: "debug, info, warn or error", set: func(c *Config, v string) error {
			return c.LogLevel.UnmarshalText([]byte(v))
		}},
		{name: "log_format", def: "text", common: true, desc: "text or json", set: oneOf(func(c *Config) *string { return &c.LogFormat }, "text", "json")},
		{name: "demo", def: "true", desc: "on first start with an empty store, create a demo organization and print its keys", set: boolean(func(c *Config) *bool { return &c.Demo })},
		{name: "workers", def: "4", desc: "agent turns run at once by this process (0: run no turns here)", set: integer(func(c *Config) *int { return &c.Workers }, 0)},
		{name: "turn_timeout", def: "15m", desc: "wall-time budget of one agent turn", set: duration(func(c *Config) *time.Duration { return &c.TurnTimeout })},
		{name: "turn_lease", def: "30s", desc: "a turn whose worker stops renewing its lease for this long is taken back", set: duration(func(c *Config) *time.Duration { return &c.TurnLease })},
		{name: "turn_max_attempts", def: "3", desc: "runs of one turn (each crash costs one) before the job fails", set: integer(func(c *Config) *int { return &c.TurnMaxAttempts }, 1)},
		{name: "queue_poll", def: "1s", desc: "how often idle workers look for turns queued by other processes", set: duration(func(c *Config) *time.Duration { return &c.QueuePoll })},
		{name: "shutdown_timeout", def: "30s", desc: "on shutdown, how long requests and running turns may finish before turns are handed back", set: duration(func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
		{name: "max_body_bytes", def: "1048576", desc: "largest request body accepted (413 above)", set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1024 {
				return errors.New("must be a whole number of bytes, at least 1024")
			}
			c.MaxBodyBytes = n
			return nil
		}},
		{name: "trusted_proxies", def: "", desc: "comma-separated CIDRs whose X-Forwarded-For is believed for the client IP", set: func(c *Config, v string) error {
			c.TrustedProxies = nil
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s == "" {
					continue
				}
				p, err := netip.ParsePrefix(s)
				if err != nil {
					return fmt.Errorf("%q is not a CIDR like 10.0.0.0/8", s)
				}
				c.TrustedProxies = append(c.TrustedProxies, p)
			}
			return nil
		}},
		{name: "work_dir", def: "", desc: "where agent turns check out repositories (default DATA_DIR/work)", set: func(c *Config, v string) error { c.Agent.WorkDir = v; return nil }},
		{name: "git_allow_http", def: "false", desc: "allow plain http:// git remotes (credentials would cross the network in clear)", set: boolean(func(c *Config) *bool { return &c.Agent.GitAllowHTTP })},
		{name: "repo_hosts", def: "", desc: "comma-separated hosts (github.com, git.example.com:8443) that project and context repository URLs may name; empty: any host (local paths are always allowed)", set: func(c *Config, v string) error {
			c.Agent.RepoHosts = nil
			for _, h := range strings.Split(v, ",") {
				if h = strings.ToLower(strings.TrimSpace(h)); h == "" {
					continue
				}
				if strings.ContainsAny(h, "/@ \t") {
					return fmt.Errorf("%q is not a host: give host or host:port, without scheme, user or path", h)
				}
				c.Agent.RepoHosts = append(c.Agent.RepoHosts, h)
			}
			return nil
		}},
		{name: "agent_author_name", def: "docsmith", desc: "author name of the agent's commits", set: nonEmpty(func(c *Config) *string { return &c.Agent.AuthorName })},
		{name: "agent_author_email", def: "docsmith@localhost", desc: "author email of the agent's commits", set: nonEmpty(func(c *Config) *string { return &c.Agent.AuthorEmail })},
		{name: "agent_max_steps", def: "40", desc: "model calls per turn before it fails", set: integer(func(c *Config) *int { return &c.Agent.MaxSteps }, 1)},
		{name: "agent_max_tokens", def: "400000", desc: "model tokens (in + out) per turn before it fails (0: no limit)", set: integer(func(c *Config) *int { return &c.Agent.MaxTokens }, 0)},
		{name: "agent_max_files_changed", def: "50", desc: "files one turn may change (0: no limit)", set: integer(func(c *Config) *int { return &c.Agent.MaxFilesChanged }, 0)},
		{name: "agent_max_lines_changed", def: "3000", desc: "lines one turn may change (0: no limit)", set: integer(func(c *Config) *int { return &c.Agent.MaxLinesChanged }, 0)},
		{name: "openai_base_url", def: "", desc: "base URL of an OpenAI-compatible API, up to /v1 (default OpenAI's)", set: optionalURL(func(c *Config) *string { return &c.Models.OpenAIBaseURL })},
		{name: "openai_api_key", def: "", secret: true, desc: "API key for openai/... models (or DOCSMITH_OPENAI_API_KEY_FILE)", set: func(c *Config, v string) error { c.Models.OpenAIAPIKey = v; return nil }},
		{name: "anthropic_base_url", def: "", desc: "base URL of the Anthropic Messages API (default Anthropic's)", set: optionalURL(func(c *Config) *string { return &c.Models.AnthropicBaseURL })},
		{name: "anthropic_api_key", def: "", secret: true, desc: "API key for anthropic/... models (or DOCSMITH_ANTHROPIC_API_KEY_FILE)", set: func(c *Config, v string) error { c.Models.AnthropicAPIKey = v; return nil }},
		{name: "embeddings", def: "", desc: "embeddings model for hybrid search, as openai/MODEL (such as openai/text-embedding-3-small); served by OpenAI's API, openai_base_url or embeddings_base_url; empty: keyword search alone", set: func(c *Config, v string) error {
			name, err := embeddingsModel(v)
			if err != nil {
				return err
			}
			c.Embeddings.Model = name
			return nil
		}},
		{name: "embeddings_base_url", def: "", desc: "base URL, up to /v1, of any OpenAI-compatible embeddings API (vLLM, Ollama, LiteLLM, TEI); empty: openai_base_url, else OpenAI's", set: optionalURL(func(c *Config) *string { return &c.Embeddings.BaseURL })},
		{name: "embeddings_api_key", def: "", secret: true, desc: "API key of the embeddings API (or DOCSMITH_EMBEDDINGS_API_KEY_FILE); empty: openai_api_key when embeddings_base_url is empty or the same as openai_base_url", set: func(c *Config, v string) error { c.Embeddings.APIKey = v; return nil }},
		{name: "embeddings_batch", def: "64", desc: "texts embedded per request to the embeddings API at index time (requests are also kept under 1 MiB of text)", set: integerRange(func(c *Config) *int { return &c.Embeddings.Batch }, 1, 2048)},
		{name: "embeddings_concurrency", def: "2", desc: "requests to the embeddings API one index build has in flight at once", set: integerRange(func(c *Config) *int { return &c.Embeddings.Concurrency }, 1, 32)},
		{name: "embeddings_timeout", def: "1s", desc: "bound on embedding a reader's question; past it that search ranks by keywords alone", set: duration(func(c *Config) *time.Duration { return &c.Embeddings.Timeout })},
		{name: "rerank_url", def: "", desc: "rerank endpoint (such as https://host/v1/rerank) speaking the request and reply shape Cohere, Jina, Voyage, vLLM and TEI share; empty: no reranking", set: optionalURL(func(c *Config) *string { return &c.Rerank.URL })},
		{name: "rerank_model", def: "", desc: "model the rerank endpoint should use; may be empty for a server of one model", set: func(c *Config, v string) error {
			if strings.TrimSpace(v) != v || strings.ContainsAny(v, " \t\n") {
				return errors.New("must be a model name without spaces")
			}
			c.Rerank.Model = v
			return nil
		}},
		{name: "rerank_api_key", def: "", secret: true, desc: "API key of the rerank endpoint (or DOCSMITH_RERANK_API_KEY_FILE)", set: func(c *Config, v string) error { c.Rerank.APIKey = v; return nil }},
		{name: "rerank_budget", def: "300ms", desc: "bound on one rerank call; past it the results keep the order search gave them", set: duration(func(c *Config) *time.Duration { return &c.Rerank.Budget })},
		{name: "model_timeout", def: "10m", desc: "bound on one model call, retries included", set: duration(func(c *Config) *time.Duration { return &c.Models.CallTimeout })},
		{name: "limit_agent_per_project_hour", def: "100", desc: "agent creates and messages per project per hour (0: no limit)", set: integer(func(c *Config) *int { return &c.Limits.AgentPerProjectHour }, 0)},
		{name: "limit_assistant_per_key_month", def: "10000", desc: "assistant requests per key per 30 days (0: no limit)", set: integer(func(c *Config) *int { return &c.Limits.AssistantPerKeyMonth }, 0)},
		{name: "limit_assistant_per_org_hour", def: "10000", desc: "assistant requests per organization per hour (0: no limit)", set: integer(func(c *Config) *int { return &c.Limits.AssistantPerOrgHour }, 0)},
		{name: "limit_assistant_per_ip_day", def: "10000", desc: "assistant requests per client IP per day (0: no limit)", set: integer(func(c *Config) *int { return &c.Limits.AssistantPerIPDay }, 0)},
		{name: "pow_hmac_key", def: "", secret: true, desc: "key (16 characters or more) that signs the widget's proof-of-work challenges; empty: one generated and kept in the database (or DOCSMITH_POW_HMAC_KEY_FILE)", set: func(c *Config, v string) error {
			if v != "" && len(v) < 16 {
				return errors.New("must be at least 16 characters, or empty for a generated key")
			}
			c.ProofOfWork.HMACKey = v
			return nil
		}},
		{name: "pow_max_number", def: "50000", desc: "complexity of a proof-of-work challenge: the browser tries half this many SHA-256 hashes on average", set: integer(func(c *Config) *int { return &c.ProofOfWork.MaxNumber }, 1000)},
		{name: "assistant_answers_per_day", def: "2000", desc: "model answers per domain per UTC day before the assistant answers from search alone; a domain may set its own (0: no bound)", set: integer(func(c *Config) *int { return &c.Budget.AnswersPerDay }, 0)},
		{name: "assistant_tokens_per_day", def: "2000000", desc: "model tokens (in + out) per domain per UTC day before the assistant answers from search alone; a domain may set its own (0: no bound)", set: integer(func(c *Config) *int { return &c.Budget.TokensPerDay }, 0)},
		{name: "limit_assistant_per_ip_minute", def: "60", desc: "assistant requests per client IP per minute, so one client cannot spend the key's month or the organization's hour (0: no limit)", set: integer(func(c *Config) *int { return &c.Limits.AssistantPerIPMinute }, 0)},
		{name: "limit_assistant_per_ip_burst", def: "20", desc: "assistant requests per client IP per 10 seconds (0: no limit)", set: integer(func(c *Config) *int { return &c.Limits.AssistantPerIPBurst }, 0)},
		{name: "workflow_timezone", def: "UTC", desc: "IANA time zone that workflow cron schedules are read in, such as Europe/Berlin", set: func(c *Config, v string) error {
			loc, err := loadZone(v)
			if err != nil {
				return err
			}
			c.Workflows.Location = loc
			return nil
		}},
		{name: "workflow_daily_cap", def: "50", desc: "runs of one workflow that may start in 24 hours, failed runs not counted (0: no cap)", set: integer(func(c *Config) *int { return &c.Workflows.DailyCap }, 0)},
		{name: "workflow_new_run_while_active", def: "false", desc: "start a new job when a workflow is triggered while its run is active (false: queue the trigger on that run as a follow-up)", set: boolean(func(c *Config) *bool { return &c.Workflows.NewRunWhileActive })},
		{name: "workflow_sync_interval", def: "5m", desc: "how often each project's base branch is checked for changed workflow files (a push webhook to it syncs at once)", set: durationAtLeast(func(c *Config) *time.Duration { return &c.Workflows.SyncInterval }, 10*time.Second)},
		{name: "workflow_tick", def: "30s", desc: "how often due workflow schedules are looked for", set: durationAtLeast(func(c *Config) *time.Duration { return &c.Workflows.Tick }, time.Second)},
		{name: "alert_allow_private", def: "false", desc: "let check alerts reach webhooks on loopback, private and link-local addresses (a receiver inside the network); off, a domain's alert URL can only reach public addresses", set: boolean(func(c *Config) *bool { return &c.Checks.AlertAllowPrivate })},
		{name: "index_poll_interval", def: "60s", desc: "how often the branch each domain reads is checked for new commits, and its index rebuilt when it moved (0: no polling; a push webhook from the docs repository rebuilds at once)", set: durationOrOff(func(c *Config) *time.Duration { return &c.IndexPollInterval })},
		{name: "public_url", def: "", desc: "the address people reach this server at (https://docsmith.example.com), for the dashboard links of pull request checks and check alerts; empty: pull requests get no links, alerts the path alone", set: optionalURL(func(c *Config) *string { return &c.PublicURL })},
		{name: "webhook_concurrency", def: "16", desc: "forge webhooks one process reads at once, each up to 5 MiB before its signature is checked; more are answered 503 with Retry-After", set: integer(func(c *Config) *int { return &c.Workflows.WebhookReads }, 1)},
	}
}

func splitHostPort(v string) (string, int, error) {
	i := strings.LastIndex(v, ":")
	if i < 0 {
		return "", 0, errors.New("must be host:port, e.g. 127.0.0.1:8080")
	}
	port, err := strconv.Atoi(v[i+1:])
	if err != nil || port < 0 || port > 65535 {
		return "", 0, errors.New("port must be a number from 0 to 65535")
	}
	return v[:i], port, nil
}

func oneOf(field func(*Config) *string, allowed ...string) func(*Config, string) error {
	return func(c *Config, v string) error {
		for _, a := range allowed {
			if v == a {
				*field(c) = v
				return nil
			}
		}
		return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
	}
}

func nonEmpty(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("must not be empty")
		}
		*field(c) = v
		return nil
	}
}

func optionalURL(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v != "" {
			u, err := url.Parse(v)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errors.New("must be an http(s) URL")
			}
		}
		*field(c) = v
		return nil
	}
}

// embeddingsModel reads the embeddings option: empty, or openai/ and a
// model name.
func embeddingsModel(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	provider, name, ok := strings.Cut(v, "/")
	if !ok || provider != "openai" || name == "" || strings.ContainsAny(name, " \t\n") {
		return "", errors.New("must be empty (off) or openai/MODEL, such as openai/text-embedding-3-small; a self-hosted OpenAI-compatible server is openai/ with its model name, and its address goes in embeddings_base_url")
	}
	return name, nil
}

// integerRange is integer with a ceiling, for values a provider refuses
// above some size.
func integerRange(field func(*Config) *int, minimum, maximum int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < minimum || n > maximum {
			return fmt.Errorf("must be a whole number from %d to %d", minimum, maximum)
		}
		*field(c) = n
		return nil
	}
}

func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*field(c) = b
		return nil
	}
}

func integer(field func(*Config) *int, minimum int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < minimum {
			return fmt.Errorf("must be a whole number, at least %d", minimum)
		}
		*field(c) = n
		return nil
	}
}

func duration(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return errors.New("must be a positive duration like 30s or 15m")
		}
		*field(c) = d
		return nil
	}
}

// durationAtLeast is duration with a floor, for intervals of background
// work that would hammer the store or a forge if set too short.
func durationAtLeast(field func(*Config) *time.Duration, minimum time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < minimum {
			return fmt.Errorf("must be a duration like 30s or 5m, at least %s", minimum)
		}
		*field(c) = d
		return nil
	}
}

// durationOrOff is a duration where 0 turns the work off.
func durationOrOff(field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if v == "0" {
			d, err = 0, nil
		}
		if err != nil || d < 0 {
			return errors.New("must be a duration like 30s or 5m, or 0 for never")
		}
		*field(c) = d
		return nil
	}
}

// loadZone reads an IANA zone name. "Local" is refused: it would make a
// schedule depend on the host it runs on, and replicas could disagree.
func loadZone(v string) (*time.Location, error) {
	bad := fmt.Errorf("must be an IANA time zone name such as UTC, Europe/Berlin or America/New_York")
	if v == "" || v == "Local" || strings.TrimSpace(v) != v {
		return nil, bad
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, bad
	}
	return loc, nil
}

// Loader binds the table to a command's flags.
type Loader struct {
	fs      *flag.FlagSet
	flags   map[string]*string
	options []option
	file    *string
}

// Bind registers the options on fs: all of them when all is true (serve,
// config show), else only the common ones (data directory, logging).
func Bind(fs *flag.FlagSet, all bool) *Loader {
	l := &Loader{fs: fs, flags: make(map[string]*string), options: table()}
	l.file = fs.String("config", "", "YAML file of options (keys as in 'docsmith config show'); also DOCSMITH_CONFIG")
	dataHelp := ""
	for _, o := range l.options {
		if all || o.common {
			help := fmt.Sprintf("%s (env %s, default %q)", o.desc, o.EnvName(), o.def)
			if o.name == "data_dir" {
				dataHelp = help
				help += "; --data is the same flag"
			}
			l.flags[o.name] = fs.String(o.flagName(), "", help)
		}
	}
	// SPEC §7 spells it --data; both names say the same in every help.
	fs.StringVar(l.flags["data_dir"], "data", "", dataHelp+"; --data-dir is the same flag")
	return l
}

// Load resolves every option after fs was parsed. lookupEnv is os.LookupEnv
// in production.
func (l *Loader) Load(lookupEnv func(string) (string, bool)) (Config, error) {
	c := Config{sources: make(map[string]string), raw: make(map[string]string)}
	fileValues := map[string]string{}
	c.ConfigFile = *l.file
	if v, ok := lookupEnv("DOCSMITH_CONFIG"); ok && c.ConfigFile == "" {
		c.ConfigFile = v
	}
	if c.ConfigFile != "" {
		var err error
		if fileValues, err = readFile(c.ConfigFile, l.options); err != nil {
			return Config{}, err
		}
	}
	var errs []error
	for _, o := range l.options {
		value, source := o.def, "default"
		if v, ok := fileValues[o.name]; ok {
			value, source = v, "file"
		}
		if v, ok := lookupEnv(o.EnvName()); ok {
			value, source = v, "env "+o.EnvName()
		}
		if o.secret {
			if path, ok := lookupEnv(o.EnvName() + "_FILE"); ok {
				b, err := os.ReadFile(path)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s_FILE: %w", o.EnvName(), err))
					continue
				}
				value, source = strings.TrimSpace(string(b)), "file "+o.EnvName()+"_FILE"
			}
		}
		if f := l.flags[o.name]; f != nil && flagSet(l.fs, o) {
			value, source = *f, "flag --"+o.flagName()
		}
		if err := o.set(&c, value); err != nil {
			errs = append(errs, o.valueError(source, value, err))
			continue
		}
		c.sources[o.name], c.raw[o.name] = source, value
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := c.resolveProviders(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// resolveProviders checks the search providers' options against each other
// and fills in what the embeddings take from the model options: an option
// that does nothing without another is a mistake worth stopping on.
func (c *Config) resolveProviders() error {
	e := &c.Embeddings
	if !e.Enabled() && (e.BaseURL != "" || e.APIKey != "") {
		return errors.New("embeddings_base_url or embeddings_api_key is set but embeddings is empty: set embeddings to openai/MODEL, or unset them")
	}
	if c.Rerank.URL == "" && (c.Rerank.Model != "" || c.Rerank.APIKey != "") {
		return errors.New("rerank_model or rerank_api_key is set but rerank_url is empty: set rerank_url to the rerank endpoint, or unset them")
	}
	if !e.Enabled() {
		return nil
	}
	sameAPI := e.BaseURL == "" || e.BaseURL == c.Models.OpenAIBaseURL
	if e.BaseURL == "" {
		e.BaseURL = c.Models.OpenAIBaseURL
	}
	if e.APIKey == "" && sameAPI {
		e.APIKey = c.Models.OpenAIAPIKey
	}
	return nil
}

// mask stands for a secret value wherever one would be shown.
const mask = "********"

// display is a value as it may be shown: a secret one masked, keeping only
// the scheme of a URL, which says what kind of value was given without
// what is in it, and any other URL without the password it may carry.
func (o option) display(v string) string {
	if v == "" {
		return v
	}
	if !o.secret {
		return withoutPassword(v)
	}
	if scheme, _, ok := strings.Cut(v, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "@:/") {
		return scheme + "://" + mask
	}
	return mask
}

// valueError reports a value the option refused. A secret value never
// appears in it, not even where the validator's own message repeats it.
func (o option) valueError(source, value string, err error) error {
	if value == "" || (!o.secret && withoutPassword(value) == value) {
		return fmt.Errorf("%s (from %s) = %q: %w", o.name, source, value, err)
	}
	msg := err.Error()
	for _, part := range secretParts(value) {
		msg = strings.ReplaceAll(msg, part, mask)
	}
	return fmt.Errorf("%s (from %s) = %q (secret, masked): %s", o.name, source, o.display(value), msg)
}

// withoutPassword is v, or for a URL that carries a password (an
// endpoint's address with its credentials, say), the URL with the password
// masked.
func withoutPassword(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.User == nil {
		return v
	}
	if _, ok := u.User.Password(); !ok {
		return v
	}
	return u.Redacted()
}

// secretParts are the pieces of a secret value a message must not show:
// the value, and for a URL its user information and password on their own
// (a piece shorter than 4 bytes would mask letters of ordinary words).
func secretParts(v string) []string {
	parts := []string{v}
	if u, err := url.Parse(v); err == nil && u.User != nil {
		parts = append(parts, u.User.String())
		if p, ok := u.User.Password(); ok && len(p) >= 4 {
			parts = append(parts, p)
		}
	}
	return parts
}

func flagSet(fs *flag.FlagSet, o option) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == o.flagName() || (o.name == "data_dir" && f.Name == "data") {
			set = true
		}
	})
	return set
}

func readFile(path string, options []option) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("config file %s is not valid YAML: %w", path, err)
	}
	known := make(map[string]bool, len(options))
	for _, o := range options {
		known[o.name] = true
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if !known[k] {
			return nil, fmt.Errorf("config file %s: unknown option %q (see 'docsmith config show' for the names)", path, k)
		}
		switch v := v.(type) {
		case []any:
			parts := make([]string, len(v))
			for i, p := range v {
				parts[i] = fmt.Sprint(p)
			}
			out[k] = strings.Join(parts, ",")
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(v)
		}
	}
	return out, nil
}

// Show writes every option with its value (secrets masked) and source.
func (c Config) Show(w io.Writer) error { return c.show(w, table()) }

func (c Config) show(w io.Writer, options []option) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPTION\tVALUE\tSOURCE")
	for _, o := range options {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", o.name, o.display(c.raw[o.name]), c.sources[o.name])
	}
	return tw.Flush()
}

// Help writes the table: option, flag, variable, default and description.
func Help(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tENVIRONMENT\tDEFAULT\tDESCRIPTION")
	fmt.Fprintln(tw, "--config\tDOCSMITH_CONFIG\t\tYAML file with any of the options below, keyed by their names (data_dir, addr, ...)")
	for _, o := range table() {
		def := o.def
		if def == "" {
			def = `""`
		}
		flagName := "--" + o.flagName()
		if o.name == "data_dir" {
			flagName += ", --data"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", flagName, o.EnvName(), def, o.desc)
	}
	return tw.Flush()
}

// OptionDoc describes one option of the table for the documentation.
type OptionDoc struct {
	// Name is the key in a configuration file.
	Name string
	// Env is the environment variable; a secret option is also read from
	// the file that Env+"_FILE" names.
	Env string
	// Flags are the command-line flags, "--name" first.
	Flags       []string
	Default     string
	Description string
	Secret      bool
	// Common options are flags of every command, not only of serve.
	Common bool
}

// Options lists every option in the table's order, for the generated
// configuration reference.
func Options() []OptionDoc {
	var out []OptionDoc
	for _, o := range table() {
		d := OptionDoc{Name: o.name, Env: o.EnvName(), Flags: []string{"--" + o.flagName()}, Default: o.def, Description: o.desc, Secret: o.secret, Common: o.common}
		if o.name == "data_dir" {
			d.Flags = append(d.Flags, "--data")
		}
		out = append(out, d)
	}
	return out
}

// Logger builds the process logger from the configuration.
func (c Config) Logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
