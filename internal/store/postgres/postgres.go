// Package postgres is docsmith's scale-out store: tenants, agent jobs with
// their durable queue of turns and events, idempotency keys and rate limits
// in PostgreSQL, shared by every replica. It satisfies the same store
// interfaces, with the same semantics, as package sqlite; the conformance
// suite in storetest runs against both.
//
// Concurrency: statements run at READ COMMITTED. Every transaction that
// changes a job, its turns or its events locks the job's row first (jobs,
// then turns), so writers of one job are serialized, event ids of a job are
// committed in order, and no lock cycle can form. Workers claim turns with
// FOR UPDATE SKIP LOCKED; a partial unique index keeps one running turn per
// job whatever they race to do.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/migration"
	"github.com/docsmith/docsmith/internal/store/writehealth"
	"github.com/docsmith/docsmith/internal/tenant"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL store. It satisfies every store interface.
type Store struct {
	pool    *pgxpool.Pool
	log     *slog.Logger
	schema  string // the schema the tables live in: the first of search_path
	dbName  string
	channel string // the LISTEN/NOTIFY channel of this schema's replicas
	health  writehealth.Tracker

	jobBatch *jobBatcher // job creates without an idempotency key
	listener listener    // the connection that hears other processes
}

var (
	_ tenant.Store           = (*Store)(nil)
	_ agentjob.Store         = (*Store)(nil)
	_ agentjob.CheckingStore = (*Store)(nil)
	_ ratelimit.Store        = (*Store)(nil)
)

// Advisory lock namespaces (the first key of the two-key form); the
// migration lock uses the one-key form, a separate space. The rate_take
// function of the schema uses 0x64730002 (1685258242) for the rate-limit
// keys.
const (
	lockIdempotency    int32 = 0x64730001
	lockSearchDomain   int32 = 0x64730003
	lockSearchSnapshot int32 = 0x64730004
)

// Open connects to the database at url (postgres://…; pgxpool options such
// as pool_max_conns and a search_path may be given as query parameters),
// and brings the schema up to date under an advisory lock, so replicas that
// start together apply each migration once.
func Open(ctx context.Context, url string, log *slog.Logger) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parser's message may repeat the URL, password and all.
		return nil, errors.New("the database URL is not a valid postgres:// URL: check its host, port, database and query parameters")
	}
	if !strings.Contains(url, "pool_max_conns=") {
		// pgxpool's default (the CPU count, at least 4) starves a replica
		// whose requests and workers wait on the database more than on CPU.
		// More than twice that costs the database more per request: its
		// backends contend for locks and snapshots. On 2 CPUs, 8
		// connections against 16 took 15–20% less of PostgreSQL's CPU per
		// job create and get, and the create p99 fell (BenchmarkJobCreateGet).
		cfg.MaxConns = int32(max(8, 2*runtime.NumCPU()))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres at %s: %w", describe(cfg.ConnConfig), err)
	}
	s := &Store{pool: pool, log: log, jobBatch: &jobBatcher{pool: pool}}
	if err := s.init(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres at %s: %w", describe(cfg.ConnConfig), err)
	}
	return s, nil
}

// describe names a database without its credentials, for logs and errors.
func describe(c *pgx.ConnConfig) string {
	return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database)
}

func (s *Store) init(ctx context.Context) error {
	var schema *string
	if err := s.pool.QueryRow(ctx, `SELECT current_database(), current_schema()`).Scan(&s.dbName, &schema); err != nil {
		return fmt.Errorf("find the current schema: %w", err)
	}
	if schema == nil {
		return errors.New("no schema of the search_path exists; create it first")
	}
	s.schema = *schema
	s.channel = channelName(s.schema)
	return s.migrate(ctx)
}

// channelName is the NOTIFY channel of a schema: replicas on another schema
// of the same database do not hear each other.
func channelName(schema string) string {
	name := "docsmith." + schema
	if len(name) > 63 {
		h := fnv.New64a()
		_, _ = h.Write([]byte(schema))
		name = "docsmith." + strconv.FormatUint(h.Sum64(), 16)
	}
	return name
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Name is the database and schema the store's tables live in, as the
// server names them ("docsmith.public"): the same for every replica of a
// deployment however it reaches the server.
func (s *Store) Name() string { return s.dbName + "." + s.schema }

// migrate applies the migrations the schema lacks, each in its own
// transaction, under a lock so that replicas starting together apply each
// once, and refuses a schema a newer docsmith has migrated.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migration.Load(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire a connection to migrate: %w", err)
	}
	defer conn.Release()
	h := fnv.New64a()
	_, _ = h.Write([]byte("docsmith migrate " + s.schema))
	lockKey := int64(h.Sum64())
	// A session lock, held across the migrations' own transactions; it dies
	// with the connection if this process does.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey); err != nil {
			// Closing the connection releases the lock for sure.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	applied, err := appliedVersions(ctx, conn.Conn())
	if err != nil {
		return err
	}
	st, err := migration.Plan(ms, applied)
	if err != nil {
		return err
	}
	for _, m := range st.Pending {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, now())`, m.Version)
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// Migrations reports where the schema of the database at url stands
// against this docsmith's migrations, changing nothing: a schema without
// docsmith's tables is at version 0 with every migration pending. It
// returns a *migration.TooNewError for a schema a newer docsmith has
// migrated.
func Migrations(ctx context.Context, url string) (migration.Status, error) {
	ms, err := migration.Load(migrations, "migrations/*.sql")
	if err != nil {
		return migration.Status{}, err
	}
	// As Open does, so that the pool's own parameters are not sent to the
	// server as settings.
	poolCfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return migration.Status{}, errors.New("the database URL is not a valid postgres:// URL: check its host, port, database and query parameters")
	}
	cfg := poolCfg.ConnConfig
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return migration.Status{}, fmt.Errorf("connect to postgres at %s: %w", describe(cfg), err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	var table *string
	if err := conn.QueryRow(ctx, `SELECT to_regclass(quote_ident(current_schema()) || '.schema_migrations')::text`).Scan(&table); err != nil {
		return migration.Status{}, fmt.Errorf("postgres at %s: find schema_migrations: %w", describe(cfg), err)
	}
	var applied []int
	if table != nil {
		if applied, err = appliedVersions(ctx, conn); err != nil {
			return migration.Status{}, fmt.Errorf("postgres at %s: %w", describe(cfg), err)
		}
	}
	return migration.Plan(ms, applied)
}

// appliedVersions reads schema_migrations.
func appliedVersions(ctx context.Context, conn *pgx.Conn) ([]int, error) {
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return versions, nil
}

// tx runs fn in a transaction. A deadlock or serialization failure, which
// the lock order should prevent, is retried a few times rather than
// surfacing as a 500.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, fn)
		if err == nil {
			return s.noteWrite(nil) // a success counts too: see Ping
		}
		if attempt < 3 && retryable(err) {
			s.log.Warn("postgres transaction retried", "attempt", attempt, "err", err)
			continue
		}
		return s.noteWrite(err)
	}
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func isForeignKeyViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23503"
}

func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
