package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// readDB is the pool of read connections with its statements prepared once:
// database/sql prepares a *sql.Stmt of the pool on each connection the
// first time it runs there and keeps it, so a read parses its SQL once per
// connection instead of on every call.
type readDB struct {
	*sql.DB
	cache *stmtCache
}

type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// stmt returns the pool's prepared statement for query, or nil when the
// cache is full (see maxCachedStatements) or the preparation failed; the
// caller then runs the query unprepared, which reports the error.
func (r readDB) stmt(ctx context.Context, query string) *sql.Stmt {
	c := r.cache
	c.mu.Lock()
	st, ok := c.stmts[query]
	full := len(c.stmts) >= maxCachedStatements
	c.mu.Unlock()
	if ok || full {
		return st
	}
	st, err := r.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.stmts[query]; ok {
		// Another caller prepared it meanwhile.
		_ = st.Close()
		return old
	}
	c.stmts[query] = st
	return st
}

func (r readDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return r.DB.QueryContext(ctx, query, args...)
}

func (r readDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := r.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return r.DB.QueryRowContext(ctx, query, args...)
}

// closeAll closes the prepared statements and the pool.
func (r readDB) closeAll() error {
	var errs []error
	if r.cache != nil {
		r.cache.mu.Lock()
		for q, st := range r.cache.stmts {
			errs = append(errs, st.Close())
			delete(r.cache.stmts, q)
		}
		r.cache.mu.Unlock()
	}
	if r.DB != nil {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}
