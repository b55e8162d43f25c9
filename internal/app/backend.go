package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/datadir"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/prcheck"
	"github.com/docsmith/docsmith/internal/ratelimit"
	redislimit "github.com/docsmith/docsmith/internal/ratelimit/redis"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/migration"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/writehealth"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/trafficcheck"
	"github.com/docsmith/docsmith/internal/websession"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// Backend kinds.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Roles of a serve process (the role option).
const (
	RoleAll    = "all"    // the API and workers
	RoleAPI    = "api"    // the API only
	RoleWorker = "worker" // workers; HTTP only for health, readiness and metrics
)

// tenantMaxAge bounds how long a replica may go on accepting a key revoked
// (or using a project changed) on another replica should the database's
// change notice not reach it; the notice itself arrives within
// milliseconds, and a change made through this process is seen at once.
// Requests then read their key and project from memory instead of from
// the database: once a second per key and project at most.
const tenantMaxAge = time.Second

// tenantCheckEvery is how long, with SQLite, the lookups of keys, projects
// and domains share one read of the store's change counter: a key the CLI
// revokes in another process is refused within it.
const tenantCheckEvery = time.Millisecond

// Backend is what a process keeps its state in, as the configuration says:
// the SQLite file in the data directory by default (one process), or
// PostgreSQL when database_url is set (replicas share it, and a bridge over
// LISTEN/NOTIFY carries the hub's signals between them). With redis_url the
// rate limits live in Redis instead of the database (a worker, which takes
// no requests, does not connect to it).
type Backend struct {
	Kind    string // BackendSQLite or BackendPostgres
	Tenants tenant.Store
	Jobs    agentjob.Store
	Limits  ratelimit.Store
	Hub     *agentjob.Hub
	// Index holds the domains' search indexes and Threads the assistant's
	// threads: with PostgreSQL they are shared by every replica too, so a
	// domain indexed once (docsmith index, or the index endpoint of any
	// replica) is searched by all, and a thread continues on any replica.
	// Searches run on each domain's index in memory (search.Memory), kept
	// fresh from the store.
	Index   search.Index
	Threads assistant.ThreadStore
	// Spend sums the threads' model answers for the daily budgets.
	Spend assistant.SpendStore
	// Catalogs holds each domain's page catalog, beside its index.
	Catalogs assistant.CatalogStore
	// PageFeedback keeps agents' feedback on pages, beside the threads.
	PageFeedback assistant.PageFeedbackStore
	// Analytics reads the threads for the dashboard and the analytics API;
	// Sessions keeps the dashboard's sign-ins. Both live where the threads do.
	Analytics analytics.Store
	Sessions  websession.Store
	// Workflows keeps each project's workflows, schedule slots and webhook
	// deliveries.
	Workflows workflowrun.Store
	// IndexStates keeps what is known of each domain's index: the commit
	// it was built from, the branch head last seen, the last failure.
	IndexStates freshness.Store
	// TrafficChecks keeps the answer checks found in each domain's
	// traffic; CheckRuns the runs of answer checks.
	TrafficChecks trafficcheck.Store
	CheckRuns     checkrun.Store
	// PRChecks is the queue of pull request heads to check.
	PRChecks prcheck.Store
	// Local is the SQLite store of the data directory, which holds
	// everything; nil with PostgreSQL.
	Local *sqlite.Store
	// Postgres is the shared store; nil with SQLite.
	Postgres *postgres.Store

	redis   *redislimit.Store
	signals *postgres.Signals
	// dirLock is the SQLite data directory's shared lock.
	dirLock *datadir.Lock
	// tenants keeps the keys, projects and domains requests look up;
	// PostgreSQL's change feed invalidates it, and with SQLite it reads
	// the store's change counter.
	tenants *tenant.CachedStore
	memory  *search.Memory
	// semantic are the embeddings and rerank providers configured, if
	// any, for the indexer (through memory) and the retrievers.
	semantic semanticProviders
	stop     context.CancelFunc
	wg       sync.WaitGroup
}

// sqliteOpenError explains why the data directory's database did not open.
func sqliteOpenError(cfg config.Config, err error) error {
	if errors.Is(err, sqlite.ErrDatabaseLost) {
		return fmt.Errorf("%w; restore %s from a backup, "+
			"or start with an empty database, losing every organization, key and job, with --allow-new-database=true (DOCSMITH_ALLOW_NEW_DATABASE=true)",
			err, filepath.Join(cfg.DataDir, sqlite.FileName))
	}
	return fmt.Errorf("open store in %s: %w", cfg.DataDir, err)
}

// Migrations reports where the configured database stands against this
// docsmith's schema migrations, applying none (OpenBackend applies them).
// A database a newer docsmith migrated is a *migration.TooNewError.
func Migrations(ctx context.Context, cfg config.Config) (migration.Status, error) {
	if cfg.DatabaseURL == "" {
		st, err := sqlite.Migrations(ctx, cfg.DataDir, sqlite.Options{AllowNew: cfg.AllowNewDatabase})
		if err != nil {
			return st, sqliteOpenError(cfg, err)
		}
		return st, nil
	}
	st, err := postgres.Migrations(ctx, cfg.DatabaseURL)
	if err != nil {
		return st, fmt.Errorf("open the database: %w", err)
	}
	return st, nil
}

// OpenBackend opens the configured stores and brings their schemas up to
// date. Close releases them.
func OpenBackend(ctx context.Context, cfg config.Config, log *slog.Logger) (*Backend, error) {
	return openBackend(ctx, cfg, log, nil)
}

// openBackend is OpenBackend, with reg taking the providers' metrics (nil:
// kept unregistered).
func openBackend(ctx context.Context, cfg config.Config, log *slog.Logger, reg prometheus.Registerer) (*Backend, error) {
	b := &Backend{Kind: BackendSQLite, Hub: agentjob.NewHub()}
	sem, err := newSemanticProviders(cfg, reg, log)
	if err != nil {
		return nil, err
	}
	b.semantic = sem
	redisPrefix := "{docsmith}:ratelimit:"
	if cfg.DatabaseURL == "" {
		// Held until Close: docsmith restore refuses a directory in use.
		if b.dirLock, err = lockDataDir(cfg.DataDir); err != nil {
			return nil, err
		}
		local, err := sqlite.OpenWith(ctx, cfg.DataDir, sqlite.Options{AllowNew: cfg.AllowNewDatabase})
		if err != nil {
			_ = b.dirLock.Release()
			return nil, sqliteOpenError(cfg, err)
		}
		b.Local = local
		b.memory = search.NewMemory(local, memoryConfig(cfg, sem, log))
		b.tenants = tenant.NewCachedStore(local, tenantMaxAge, time.Now).CheckChanges(local.TenantChanges, tenantCheckEvery)
		b.Tenants, b.Jobs, b.Limits, b.Index, b.Threads, b.Spend, b.Catalogs = b.tenants, local, local, b.memory, local, local, local
		b.PageFeedback = local
		b.Analytics, b.Sessions, b.Workflows, b.IndexStates = local, local, local, local
		b.TrafficChecks, b.CheckRuns = local, local
		b.PRChecks = local
	} else {
		pg, err := postgres.Open(ctx, cfg.DatabaseURL, log)
		if err != nil {
			return nil, fmt.Errorf("open the database: %w", err)
		}
		b.Kind, b.Postgres = BackendPostgres, pg
		// The database also keeps the newest snapshot of each domain, for
		// a replica that has none of its own.
		memCfg := memoryConfig(cfg, sem, log)
		memCfg.Shared = pg
		b.memory = search.NewMemory(pg, memCfg)
		b.tenants = tenant.NewCachedStore(pg, tenantMaxAge, time.Now)
		b.Tenants, b.Jobs, b.Limits, b.Index, b.Threads, b.Spend, b.Catalogs = b.tenants, pg, pg, b.memory, pg, pg, pg
		b.PageFeedback = pg
		b.Analytics, b.Sessions, b.Workflows, b.IndexStates = pg, pg, pg, pg
		b.TrafficChecks, b.CheckRuns = pg, pg
		b.PRChecks = pg
		b.signals = pg.NewSignals(b.Hub, log)
		// Replicas of one deployment share the keys, whatever host name
		// they reach the database by; another deployment gets its own.
		redisPrefix = "{docsmith:" + pg.Name() + "}:ratelimit:"
	}
	// A worker takes no requests, so it counts none against a limit.
	if cfg.RedisURL != "" && cfg.Role != RoleWorker {
		r, err := redislimit.Open(ctx, cfg.RedisURL, redisPrefix)
		if err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("open redis for rate limits: %w", err)
		}
		b.redis, b.Limits = r, r
	}
	return b, nil
}

// memoryConfig is the configuration of a process's indexes in memory: their
// snapshots live in the data directory (each replica's own, with
// PostgreSQL), so that the process loads them from there when it starts
// again and the store holds the same pages.
func memoryConfig(cfg config.Config, sem semanticProviders, log *slog.Logger) search.MemoryConfig {
	return search.MemoryConfig{Log: log, SnapshotDir: filepath.Join(cfg.DataDir, "search-cache"), Embedder: sem.embedder}
}

// Start begins the background work of the backend: with PostgreSQL, the
// bridge that carries signals between processes and the watch on other
// processes' index changes; with warmSearch (a process answering the
// assistant), loading the domains' search indexes into memory, so that the
// first questions after a start do not wait for them. Close stops it.
func (b *Backend) Start(ctx context.Context, warmSearch bool, log *slog.Logger) {
	if b.stop != nil {
		return
	}
	ctx, b.stop = context.WithCancel(context.WithoutCancel(ctx))
	if b.signals != nil {
		b.wg.Go(func() { b.signals.Run(ctx) })
		b.wg.Go(func() { b.Postgres.WatchSearch(ctx, b.memory.Changed, nil) })
		b.wg.Go(func() { b.Postgres.WatchTenants(ctx, b.tenants.Invalidate, nil) })
	}
	if warmSearch {
		b.wg.Go(func() {
			domains, err := b.Tenants.ListDomains(ctx, "")
			if err != nil {
				log.Warn("search: listing the domains to load failed", "err", err)
				return
			}
			ids := make([]string, len(domains))
			for i, d := range domains {
				ids[i] = d.ID
			}
			if err := b.memory.Warm(ctx, ids); err != nil && ctx.Err() == nil {
				log.Warn("search: loading the domains' indexes failed", "err", err)
			}
		})
	}
}

// Ping checks that every store answers and that the database can be
// written; readiness fails otherwise, with an apperr Unavailable error
// whose message names each store that failed and how.
func (b *Backend) Ping(ctx context.Context) error {
	// A pool whose connections are all busy must not hang the probe.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var errs []error
	var problems []string
	if b.Postgres != nil {
		if err := b.Postgres.Ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("postgres: %w", err))
			problems = append(problems, "the database (PostgreSQL) "+storeProblem(err, postgres.IsDiskFull))
		}
	} else if err := b.Local.Ping(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sqlite: %w", err))
		problems = append(problems, "the database (SQLite) "+storeProblem(err, sqlite.IsDiskFull))
	}
	if b.redis != nil {
		if err := b.redis.Ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("redis: %w", err))
			problems = append(problems, "Redis (rate limits) does not answer")
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apperr.Wrap(errors.Join(errs...), apperr.Unavailable, "not ready: %s", strings.Join(problems, "; "))
}

// storeProblem says how a database failed its readiness check.
func storeProblem(err error, diskFull func(error) bool) string {
	switch {
	case diskFull(err):
		return "cannot be written: its disk is full"
	case errors.Is(err, writehealth.ErrWritesFail):
		return "answers but cannot be written (the server log has the cause)"
	}
	return "does not answer"
}

// Close stops the background work and closes every store.
func (b *Backend) Close() error {
	if b.stop != nil {
		b.stop()
		b.wg.Wait()
	}
	b.memory.Close()
	var errs []error
	if b.redis != nil {
		errs = append(errs, b.redis.Close())
	}
	if b.Postgres != nil {
		errs = append(errs, b.Postgres.Close())
	}
	if b.Local != nil {
		errs = append(errs, b.Local.Close())
	}
	errs = append(errs, b.dirLock.Release())
	return errors.Join(errs...)
}

// lockDataDir takes the data directory's shared lock, creating the
// directory if needed.
func lockDataDir(dir string) (*datadir.Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	return datadir.Share(dir)
}

// runsWorkers reports whether this process runs agent turns.
func runsWorkers(cfg config.Config) bool {
	return cfg.Role != RoleAPI && cfg.Workers > 0
}

// forRole is the HTTP surface of a role: a worker answers only health,
// readiness and metrics, so a load balancer can check it but sends it no
// API traffic by mistake.
func forRole(role string, h http.Handler) http.Handler {
	if role != RoleWorker {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]string{
			"error": "this process runs workers only (role worker); it serves /healthz, /readyz and /metrics",
		})
	})
}
