package app_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// BenchmarkColdStart measures the first search after a start: each
// iteration starts a server (app.Main, as `docsmith serve` does) on a data
// directory or database where a large docs site is indexed, sends one
// search as soon as it listens, and shuts it down. The domain's index is
// not in memory at the start, so the answer waits for it to be loaded:
// from the snapshot the previous start left in the data directory
// (snapshot=kept); with PostgreSQL, from the snapshot the database keeps
// for a replica that has none of its own (snapshot=shared: the data
// directory's removed before each start); or from the store's chunks
// (snapshot=none: every snapshot removed before each start, as on the
// first load after the domain changed). It reports, at the median and the slowest iteration, the time
// from the start of Main.Start to the answer ("start-to-answer") and from
// the listener being up to the answer ("first-query"), on SQLite and, with
// DOCSMITH_TEST_DATABASE_URL, PostgreSQL. The Go runtime is warm between
// iterations (a new process also pays for its own start, a few ms).
//
//	DOCSMITH_BENCH_SITE=DIR go test ./internal/app -run '^$' -bench ColdStart -benchtime 10x
func BenchmarkColdStart(b *testing.B) {
	site := os.Getenv("DOCSMITH_BENCH_SITE")
	if site == "" {
		b.Skip("set DOCSMITH_BENCH_SITE to a docs site directory")
	}
	for _, snapshot := range []string{"none", "shared", "kept"} {
		if snapshot != "shared" {
			b.Run("backend=sqlite/snapshot="+snapshot, func(b *testing.B) {
				benchColdStart(b, site, snapshot, map[string]string{"DOCSMITH_DATA_DIR": b.TempDir()})
			})
		}
		b.Run("backend=postgres/snapshot="+snapshot, func(b *testing.B) {
			benchColdStart(b, site, snapshot, map[string]string{"DOCSMITH_DATA_DIR": b.TempDir(), "DOCSMITH_DATABASE_URL": storetest.PostgresURL(b)})
		})
	}
}

func benchColdStart(b *testing.B, site, snapshot string, env map[string]string) {
	key, cfg := indexedSite(b, site, env)
	body := `{"query": "How do I add a custom domain?", "pageSize": 5}`

	snapshots := filepath.Join(env["DOCSMITH_DATA_DIR"], "search-cache")
	start := func() *app.Main {
		m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler)}
		if err := m.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		return m
	}
	if snapshot != "none" {
		// A start whose load writes the snapshots the others read.
		m := start()
		time.Sleep(time.Second) // the warm-up load and its snapshots
		if err := m.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}

	var toAnswer, firstQuery []time.Duration
	for b.Loop() {
		if snapshot != "kept" {
			b.StopTimer()
			if err := os.RemoveAll(snapshots); err != nil {
				b.Fatal(err)
			}
			if url := env["DOCSMITH_DATABASE_URL"]; url != "" && snapshot == "none" {
				dropSharedSnapshots(b, url)
			}
			b.StartTimer()
		}
		client := &http.Client{Timeout: time.Minute}
		t0 := time.Now()
		m := start()
		t1 := time.Now()
		req, _ := http.NewRequest(http.MethodPost, "http://"+m.Addr()+"/discovery/v1/search/site", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		t2 := time.Now()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"path"`) {
			b.Fatalf("search: status %d, %v: %.300s", resp.StatusCode, err, got)
		}
		toAnswer, firstQuery = append(toAnswer, t2.Sub(t0)), append(firstQuery, t2.Sub(t1))
		client.CloseIdleConnections()
		if err := m.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	ms := func(d []time.Duration, q float64) float64 {
		slices.Sort(d)
		return float64(d[int(q*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(toAnswer, 0.5), "start-to-answer-p50-ms")
	b.ReportMetric(ms(toAnswer, 1), "start-to-answer-max-ms")
	b.ReportMetric(ms(firstQuery, 0.5), "first-query-p50-ms")
	b.ReportMetric(ms(firstQuery, 1), "first-query-max-ms")
}

// dropSharedSnapshots deletes the snapshots the database at url keeps.
func dropSharedSnapshots(b *testing.B, url string) {
	b.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Exec(context.Background(), `DELETE FROM search_snapshots`); err != nil {
		b.Fatal(err)
	}
}

// indexedSite prepares a server's configuration from env (DOCSMITH_DATA_DIR
// and, for PostgreSQL, DOCSMITH_DATABASE_URL) with the docs site in the
// directory site indexed as domain "site", as `docsmith index` does, and
// returns it with an assistant key of the domain's organization.
func indexedSite(tb testing.TB, site string, env map[string]string) (key string, cfg config.Config) {
	tb.Helper()
	env["DOCSMITH_ADDR"] = "127.0.0.1:0"
	env["DOCSMITH_DEMO"] = "false"
	env["DOCSMITH_WORKERS"] = "0"
	env["DOCSMITH_LOG_LEVEL"] = "warn"
	for _, k := range []string{"DOCSMITH_LIMIT_ASSISTANT_PER_KEY_MONTH", "DOCSMITH_LIMIT_ASSISTANT_PER_ORG_HOUR", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_DAY", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST"} {
		env[k] = "0"
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cliRun := func(args ...string) string {
		tb.Helper()
		var out, errOut bytes.Buffer
		if code := cli.Run(context.Background(), args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: lookup}); code != 0 {
			tb.Fatalf("docsmith %s: %s", strings.Join(args, " "), errOut.String())
		}
		return out.String()
	}
	cliRun("org", "create", "acme")
	cliRun("project", "create", "--org", "acme", "--id", "site", "--repo", site)
	cliRun("domain", "create", "--org", "acme", "--domain", "site", "--project", "site", "--index=false")
	cliRun("index", "site")
	key = strings.TrimSpace(cliRun("key", "create", "--org", "acme", "--kind", "assistant"))
	cfg, err := config.Bind(flag.NewFlagSet("serve", flag.ContinueOnError), true).Load(lookup)
	if err != nil {
		tb.Fatal(err)
	}
	return key, cfg
}
