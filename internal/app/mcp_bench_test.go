package app_test

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
)

// BenchmarkMCPSearch measures the MCP search tool as a client sees it: one
// tools/call over Streamable HTTP through the key check, the rate limits and
// the assistant's retrieval, from the official Go SDK client to a running
// server, one call at a time. It reports the p50 and p99 latency of a call.
// The site is DOCSMITH_BENCH_SITE, or the assistant's small fixture site:
//
//	DOCSMITH_BENCH_SITE=DIR go test ./internal/app -run '^$' -bench MCPSearch -benchtime 2000x
func BenchmarkMCPSearch(b *testing.B) {
	site := os.Getenv("DOCSMITH_BENCH_SITE")
	if site == "" {
		abs, err := filepath.Abs(assistantFixture)
		if err != nil {
			b.Fatal(err)
		}
		site = abs
	}
	dir := b.TempDir()
	cliRun := func(args ...string) string {
		b.Helper()
		var out, errOut bytes.Buffer
		env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) { return dir, k == "DOCSMITH_DATA_DIR" }}
		if code := cli.Run(context.Background(), args, env); code != 0 {
			b.Fatalf("docsmith %s: %s", strings.Join(args, " "), errOut.String())
		}
		return out.String()
	}
	cliRun("org", "create", "acme")
	cliRun("project", "create", "--org", "acme", "--id", "site", "--repo", site)
	cliRun("domain", "create", "--org", "acme", "--domain", "site", "--project", "site", "--site-url", "https://docs.example")
	key := strings.TrimSpace(cliRun("key", "create", "--org", "acme", "--kind", "assistant"))
	b.Logf("%s", strings.TrimSpace(cliRun("index", "site")))

	env := map[string]string{
		"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false",
		"DOCSMITH_LIMIT_ASSISTANT_PER_KEY_MONTH": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_ORG_HOUR": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_DAY": "0",
		"DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST": "0",
	}
	cfg, err := config.Bind(flag.NewFlagSet("bench", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		b.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler)}
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Shutdown(context.Background()) })

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   "http://" + m.Addr() + "/discovery/v1/mcp/site",
		HTTPClient: &http.Client{Transport: benchBearer{key: key, next: http.DefaultTransport}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	queries := []string{"How do I add a custom domain?", "navigation tabs", "hide a page from search", "API playground", "install the CLI", "exclude files from a sync"}

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": queries[i%len(queries)], "pageSize": 10}})
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("search: %v %+v", err, res)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

type benchBearer struct {
	key  string
	next http.RoundTripper
}

func (t benchBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.key)
	return t.next.RoundTrip(r)
}
