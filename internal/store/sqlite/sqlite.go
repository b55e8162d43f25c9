// Package sqlite is docsmith's embedded store: one SQLite file in WAL mode,
// written through a single connection and read through a pool.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/store/migration"
	"github.com/docsmith/docsmith/internal/store/writehealth"
	"github.com/docsmith/docsmith/internal/tenant"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite store. It satisfies every store interface.
type Store struct {
	write      *writer
	writeDB    *sql.DB // the writer's pool of one connection
	checkpoint *checkpointer
	read       readDB
	health     writehealth.Tracker
}

var (
	_ tenant.Store           = (*Store)(nil)
	_ agentjob.Store         = (*Store)(nil)
	_ agentjob.CheckingStore = (*Store)(nil)
	_ ratelimit.Store        = (*Store)(nil)
)

// readConns is the size of the read pool, at least.
const readConns = 16

// FileName is the database file inside the data directory.
const FileName = "docsmith.db"

// Options tune Open.
type Options struct {
	// AllowNew creates an empty database in a data directory that has
	// lost its own (see MarkerName) instead of refusing it.
	AllowNew bool
	// checkpointEvery replaces checkpointEvery in tests.
	checkpointEvery time.Duration
}

// Open opens (creating if needed) the database in dir and brings its schema
// up to date. It refuses, with ErrDatabaseLost, a directory whose database
// is gone.
func Open(ctx context.Context, dir string) (*Store, error) {
	return OpenWith(ctx, dir, Options{})
}

// uriPath escapes a file path for a "file:" URI: unescaped, a '#' or '?'
// in the data directory's path would end the path there, and SQLite would
// open another file than the one in the data directory.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	marker := filepath.Join(dir, MarkerName)
	if err := checkMarker(dir, path, marker, opts.AllowNew); err != nil {
		return nil, err
	}
	// busy_timeout must come first: setting WAL mode itself can meet a lock.
	// Commits never checkpoint: the checkpointer does (checkpoint.go).
	pragmas := []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(ON)", "temp_store(MEMORY)",
		"wal_autocheckpoint(0)", "journal_size_limit(" + strconv.Itoa(walSizeLimit) + ")"}
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	checkpointDSN := "file:" + uriPath(path) + "?" + q.Encode()
	writeDSN := checkpointDSN + "&_txlock=immediate"
	q.Add("_pragma", "query_only(1)")
	readDSN := "file:" + uriPath(path) + "?" + q.Encode()

	write, err := sql.Open("sqlite", writeDSN)
	if err != nil {
		return nil, fmt.Errorf("open sqlite for writing: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	s := &Store{write: newWriter(write), writeDB: write}
	closeWrite := func() { _ = errors.Join(s.write.close(), write.Close()) }
	if err := s.migrate(ctx); err != nil {
		closeWrite()
		return nil, err
	}
	if err := writeMarker(marker, opts.AllowNew); err != nil {
		closeWrite()
		return nil, err
	}
	checkpointDB, err := sql.Open("sqlite", checkpointDSN)
	if err != nil {
		closeWrite()
		return nil, fmt.Errorf("open sqlite for checkpoints: %w", err)
	}
	checkpointDB.SetMaxOpenConns(1)
	checkpointDB.SetConnMaxIdleTime(0)
	s.checkpoint = newCheckpointer(checkpointDB, cmp.Or(opts.checkpointEvery, checkpointEvery))
	closeWrite = func() { _ = errors.Join(s.write.close(), s.checkpoint.close(), write.Close()) }
	read, err := sql.Open("sqlite", readDSN)
	if err != nil {
		closeWrite()
		return nil, fmt.Errorf("open sqlite for reading: %w", err)
	}
	// Every idle connection is kept: database/sql keeps two by default,
	// and opening a connection (its pragmas, its schema) costs more than
	// most reads under load. There are more connections than CPUs: a
	// reader the Go scheduler pauses mid-query keeps its connection, and
	// with one per CPU the requests behind it queued for one (an assistant
	// answer's first byte waited twice as long at 100 concurrent streams).
	conns := max(readConns, runtime.NumCPU())
	read.SetMaxOpenConns(conns)
	read.SetMaxIdleConns(conns)
	s.read = readDB{DB: read, cache: &stmtCache{stmts: map[string]*sql.Stmt{}}}
	return s, nil
}

// Close stops the writer, once the writes it took are committed, and the
// checkpointer, and closes the pools.
func (s *Store) Close() error {
	return errors.Join(s.write.close(), s.checkpoint.close(), s.read.closeAll(), s.writeDB.Close())
}

// migrate applies the migrations the database lacks, each in its own
// transaction, and refuses a database a newer docsmith has migrated.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migration.Load(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	if _, err := s.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var applied []int
	err = s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		applied, err = appliedVersions(ctx, tx)
		return err
	})
	if err != nil {
		return err
	}
	st, err := migration.Plan(ms, applied)
	if err != nil {
		return err
	}
	for _, m := range st.Pending {
		err = s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
			// Another process on the same file may have applied it since.
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, m.Version, toMicros(time.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// Migrations reports where the database in dir stands against this
// docsmith's migrations, changing nothing: a directory with no database yet
// is at version 0 with every migration pending. Like Open, it refuses a
// directory whose database is lost (unless opts.AllowNew), and returns a *migration.TooNewError
// for a database a newer docsmith has migrated.
func Migrations(ctx context.Context, dir string, opts Options) (migration.Status, error) {
	ms, err := migration.Load(migrations, "migrations/*.sql")
	if err != nil {
		return migration.Status{}, err
	}
	path := filepath.Join(dir, FileName)
	if err := checkMarker(dir, path, filepath.Join(dir, MarkerName), opts.AllowNew); err != nil {
		return migration.Status{}, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return migration.Plan(ms, nil)
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return migration.Status{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() { _ = db.Close() }()
	var exists int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&exists); err != nil {
		return migration.Status{}, fmt.Errorf("read %s: %w", path, err)
	}
	var applied []int
	if exists > 0 {
		if applied, err = appliedVersions(ctx, db); err != nil {
			return migration.Status{}, err
		}
	}
	return migration.Plan(ms, applied)
}

// appliedVersions reads schema_migrations.
func appliedVersions(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	var versions []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return versions, nil
}

// writeTx runs fn as one write transaction through the writer (see
// writer.go), noting in the store's health a write that failed. It returns
// once the transaction is committed, or with the error that kept it from
// being. fn gets a context that is never canceled: it must use that one,
// not ctx, for its statements; ctx ends only the wait before fn starts.
func (s *Store) writeTx(ctx context.Context, fn func(context.Context, *wtx) error) error {
	return s.noteWrite(s.write.run(ctx, fn))
}

func toMicros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: toMicros(*t), Valid: true}
}

func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code()
		return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

func isForeignKeyViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}
