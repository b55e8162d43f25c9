package dashboard

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/websession"
)

// The store a page benchmark runs on.
const (
	benchJobs    = 10_000
	benchThreads = 10_000
	benchTurns   = 10 // per thread: 100,000 turns
)

type benchStore interface {
	tenant.Store
	agentjob.Store
	analytics.Store
	websession.Store
}

// benchSite is a dashboard over a store holding 10,000 jobs of one project
// and 100,000 assistant turns (10,000 conversations) of one domain, and a
// signed-in session.
type benchSite struct {
	handler http.Handler
	cookie  *http.Cookie
}

// BenchmarkPages measures the render time of the jobs list and the
// conversations list (first page, and filtered) with 10,000 jobs and
// 100,000 assistant turns in the store, on SQLite and on PostgreSQL (with
// DOCSMITH_TEST_DATABASE_URL), and reports p50 and p99 per page:
//
//	make bench-dashboard
func BenchmarkPages(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) (benchStore, func(ctx context.Context, q string) error)
	}{
		{"sqlite", func(b *testing.B) (benchStore, func(context.Context, string) error) {
			dir := b.TempDir()
			s, err := sqlite.Open(b.Context(), dir)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = db.Close() })
			return s, func(ctx context.Context, q string) error { _, err := db.ExecContext(ctx, q); return err }
		}},
		{"postgres", func(b *testing.B) (benchStore, func(context.Context, string) error) {
			url := storetest.PostgresURL(b)
			s, err := postgres.Open(b.Context(), url, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s, func(ctx context.Context, q string) error {
				conn, err := pgx.Connect(ctx, url)
				if err != nil {
					return err
				}
				defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
				_, err = conn.Exec(ctx, q)
				return err
			}
		}},
	}
	pages := []struct{ name, path string }{
		{"jobs", "/ui/projects/docs/jobs"},
		{"jobs-failed", "/ui/projects/docs/jobs?status=failed"},
		{"conversations", "/ui/domains/site/conversations"},
		{"conversations-down", "/ui/domains/site/conversations?feedback=down"},
		{"conversations-week", "/ui/domains/site/conversations?from=2026-01-10&to=2026-01-16&status=not_covered"},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			// Seeded here, so the store outlives each page's run.
			site := seedBench(b, be.open)
			for _, p := range pages {
				b.Run(p.name, func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						req := httptest.NewRequest(http.MethodGet, p.path, nil)
						req.AddCookie(site.cookie)
						rec := httptest.NewRecorder()
						start := time.Now()
						site.handler.ServeHTTP(rec, req)
						took = append(took, time.Since(start))
						if rec.Code != http.StatusOK {
							b.Fatalf("GET %s: %d\n%s", p.path, rec.Code, rec.Body.String())
						}
					}
					slices.Sort(took)
					ms := func(q float64) float64 {
						return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000
					}
					b.ReportMetric(ms(0.50), "p50-ms")
					b.ReportMetric(ms(0.99), "p99-ms")
				})
			}
		})
	}
}

func seedBench(b *testing.B, open func(b *testing.B) (benchStore, func(context.Context, string) error)) *benchSite {
	b.Helper()
	ctx := b.Context()
	s, exec := open(b)
	now := func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	tenants := tenant.NewService(s, now)
	check := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	_, err := tenants.CreateOrg(ctx, "acme")
	check(err)
	p, err := tenants.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "docs"})
	check(err)
	_, err = tenants.CreateDomain(ctx, tenant.Domain{ID: "site", OrgID: "acme", ProjectID: "docs"})
	check(err)
	_, secret, err := tenants.CreateKey(ctx, "acme", apikey.Admin, "bench")
	check(err)
	principal, err := tenants.Authenticate(ctx, secret)
	check(err)

	jobs := agentjob.NewService(s, agentjob.NewHub(), now)
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range benchJobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			j, _, err := jobs.Create(ctx, p, fmt.Sprintf("Document feature %d: add a page about setting %d and link it from the guide", i, i%97), "")
			if err == nil && i%10 == 0 {
				_, err = jobs.Cancel(ctx, p.ID, j.ID)
			}
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.Logf("seeded %d jobs in %v", benchJobs, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	check(exec(ctx, seedTurnsSQL(s)))
	b.Logf("seeded %d threads, %d turns in %v", benchThreads, benchThreads*benchTurns, time.Since(start).Round(time.Millisecond))

	sessions := websession.NewManager(s, s, now)
	id, _, err := sessions.Start(ctx, principal)
	check(err)
	h, err := New(Deps{Tenants: tenants, Jobs: jobs, Analytics: analytics.NewService(s), Sessions: sessions, Log: slog.New(slog.NewTextHandler(benchLog{b}, &slog.HandlerOptions{Level: slog.LevelError})), Now: now})
	check(err)
	return &benchSite{handler: h, cookie: &http.Cookie{Name: sessionCookie, Value: id}}
}

// seedTurnsSQL writes the conversations in one statement per table: every
// 7th turn not covered, every 11th rated down and every 13th up, spread
// over January 2026.
func seedTurnsSQL(s benchStore) string {
	const base = 1767225600 // 2026-01-01T00:00:00Z
	if _, ok := s.(*postgres.Store); ok {
		return fmt.Sprintf(`
INSERT INTO threads (id, domain, org_id, fp, created_at, updated_at)
SELECT 'thr_' || lpad(i::text, 8, '0'), 'site', 'acme', 'anonymous', to_timestamp(%[1]d + i * 240), to_timestamp(%[1]d + i * 240 + 60)
FROM generate_series(0, %[2]d - 1) i;
INSERT INTO thread_turns (thread_id, seq, message_id, fp, question, answer, sources, model, status, created_at, rating, rating_comment, rated_at)
SELECT 'thr_' || lpad(i::text, 8, '0'), k, 'msg_' || i || '_' || k, 'anonymous',
       'How do I configure setting ' || ((i * 10 + k) %% 500) || ' for my site?', 'See the guide.',
       ('[{"id":"src_1","url":"https://docs.example/p' || ((i + k) %% 300) || '","title":"Page","path":"p' || ((i + k) %% 300) || '","score":0.6}]')::jsonb,
       'extractive', CASE WHEN (i * 10 + k) %% 7 = 0 THEN 'not_covered' ELSE 'answered' END,
       to_timestamp(%[1]d + i * 240 + k),
       CASE WHEN (i * 10 + k) %% 11 = 0 THEN 'down' WHEN (i * 10 + k) %% 13 = 0 THEN 'up' ELSE '' END, '',
       CASE WHEN (i * 10 + k) %% 11 = 0 OR (i * 10 + k) %% 13 = 0 THEN to_timestamp(%[1]d + i * 240 + 30) END
FROM generate_series(0, %[2]d - 1) i, generate_series(1, %[3]d) k;
ANALYZE threads; ANALYZE thread_turns;`, base, benchThreads, benchTurns)
	}
	const us = 1_000_000
	return fmt.Sprintf(`
BEGIN;
INSERT INTO threads (id, domain, org_id, fp, created_at, updated_at)
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %[2]d - 1)
SELECT 'thr_' || printf('%%08d', i), 'site', 'acme', 'anonymous', (%[1]d + i * 240) * %[4]d, (%[1]d + i * 240 + 60) * %[4]d FROM n;
INSERT INTO thread_turns (thread_id, seq, message_id, fp, question, answer, sources, model, status, created_at, rating, rating_comment, rated_at)
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %[2]d - 1),
     m(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM m WHERE k < %[3]d)
SELECT 'thr_' || printf('%%08d', i), k, 'msg_' || i || '_' || k, 'anonymous',
       'How do I configure setting ' || ((i * 10 + k) %% 500) || ' for my site?', 'See the guide.',
       '[{"id":"src_1","url":"https://docs.example/p' || ((i + k) %% 300) || '","title":"Page","path":"p' || ((i + k) %% 300) || '","score":0.6}]',
       'extractive', CASE WHEN (i * 10 + k) %% 7 = 0 THEN 'not_covered' ELSE 'answered' END,
       (%[1]d + i * 240 + k) * %[4]d,
       CASE WHEN (i * 10 + k) %% 11 = 0 THEN 'down' WHEN (i * 10 + k) %% 13 = 0 THEN 'up' ELSE '' END, '',
       CASE WHEN (i * 10 + k) %% 11 = 0 OR (i * 10 + k) %% 13 = 0 THEN (%[1]d + i * 240 + 30) * %[4]d END
FROM n, m;
COMMIT;
ANALYZE;`, base, benchThreads, benchTurns, us)
}

// benchLog writes the handler's errors to the benchmark's log.
type benchLog struct{ b *testing.B }

func (l benchLog) Write(p []byte) (int, error) { l.b.Log(string(p)); return len(p), nil }
