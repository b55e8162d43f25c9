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
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/ratelimit"
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

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		base := filepath.Base(name)
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number: %w", base, err)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", base, err)
		}
		err = s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, version, toMicros(time.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", base, err)
		}
	}
	return nil
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
