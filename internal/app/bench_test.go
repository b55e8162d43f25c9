package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gcfloor"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// benchClients is how many clients drive the server at once.
const benchClients = 32

// benchWarmup is how many iterations run before the measured ones.
const benchWarmup = 1000

// benchRunner completes every turn at once, so the workers claim and finish
// turns as fast as the store lets them while the benchmark measures the API:
// a heavier worker load than production's, where a turn takes seconds. On
// PostgreSQL they keep up with about one create in eight; the rest stay
// queued until the run ends.
type benchRunner struct{}

func (benchRunner) RunTurn(context.Context, agentjob.Turn, agentjob.Progress) (agentjob.TurnOutcome, error) {
	return agentjob.TurnOutcome{Summary: "nothing to do"}, nil
}

// BenchmarkJobCreateGet measures the agent API end to end: a real Main with
// workers running turns, over real HTTP from 32 concurrent clients. Each
// iteration is one create and one get of that job; the measured ones follow
// a warm-up of benchWarmup iterations. The sub-benchmarks are
// the backends: SQLite in a temp dir, and (with DOCSMITH_TEST_DATABASE_URL
// and DOCSMITH_TEST_REDIS_URL set) PostgreSQL on a fresh schema, with the
// rate limits in PostgreSQL or in Redis. The first, backend=floor, is the
// same load against a server that keeps its jobs in a map (startJobFloor):
// the share of the machine and of the clients, measured in the same run, so
// that figures from windows where the machine runs at different speeds can
// be set side by side as ratios.
//
//	go test ./internal/app -run '^$' -bench BenchmarkJobCreateGet -benchtime 5000x
func BenchmarkJobCreateGet(b *testing.B) {
	b.Run("backend=floor", func(b *testing.B) {
		base, key := startJobFloor(b)
		measureJobCreateGet(b, base, key)
	})
	b.Run("backend=sqlite", func(b *testing.B) {
		dir, key := crashSetup(b)
		benchJobCreateGet(b, key, map[string]string{"DOCSMITH_DATA_DIR": dir})
	})
	b.Run("backend=postgres", func(b *testing.B) {
		dbURL := storetest.PostgresURL(b)
		benchJobCreateGet(b, seedPostgres(b, dbURL), map[string]string{"DOCSMITH_DATABASE_URL": dbURL})
	})
	b.Run("backend=postgres+redis", func(b *testing.B) {
		dbURL := storetest.PostgresURL(b)
		redisURL, _ := storetest.RedisURL(b)
		benchJobCreateGet(b, seedPostgres(b, dbURL), map[string]string{"DOCSMITH_DATABASE_URL": dbURL, "DOCSMITH_REDIS_URL": redisURL})
	})
}

// seedPostgres creates the organization, project and admin key of the
// benchmarks and crash tests in PostgreSQL and returns the key.
func seedPostgres(b testing.TB, dbURL string) string {
	b.Helper()
	store, err := postgres.Open(b.Context(), dbURL, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	storetest.DeleteRedisKeysAtEnd(b, "{docsmith:"+store.Name()+"}:")
	tenants := tenant.NewService(store, func() time.Time { return time.Now().UTC() })
	if _, err := tenants.CreateOrg(b.Context(), "acme"); err != nil {
		b.Fatal(err)
	}
	if _, err := tenants.CreateProject(b.Context(), tenant.Project{ID: crashProject, OrgID: "acme", RepoURL: "/srv/docs"}); err != nil {
		b.Fatal(err)
	}
	_, key, err := tenants.CreateKey(b.Context(), "acme", apikey.Admin, "bench")
	if err != nil {
		b.Fatal(err)
	}
	return key
}

func benchJobCreateGet(b *testing.B, key string, extra map[string]string) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	loader := config.Bind(fs, true)
	if err := fs.Parse(nil); err != nil {
		b.Fatal(err)
	}
	settings := map[string]string{
		"DOCSMITH_DATA_DIR":                     b.TempDir(),
		"DOCSMITH_ADDR":                         "127.0.0.1:0",
		"DOCSMITH_DEMO":                         "false",
		"DOCSMITH_WORKERS":                      "4",
		"DOCSMITH_LIMIT_AGENT_PER_PROJECT_HOUR": "1000000000",
	}
	for k, v := range extra {
		settings[k] = v
	}
	cfg, err := loader.Load(func(k string) (string, bool) { v, ok := settings[k]; return v, ok })
	if err != nil {
		b.Fatal(err)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		// As docsmith serve runs (see internal/cli).
		b.Cleanup(gcfloor.Start(gcfloor.ServerFloor))
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), Runner: benchRunner{}}
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := m.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	})
	measureJobCreateGet(b, "http://"+m.Addr()+"/v2/agent/"+crashProject, key)
}

// startJobFloor starts the floor of BenchmarkJobCreateGet: the job API's
// create and get as a server that stores nothing durable answers them,
// jobs in a map and each answered with a job object of docsmith's shape.
// It returns the API's base URL for crashProject and the key it takes.
func startJobFloor(b *testing.B) (base, key string) {
	key = "floor-key"
	var (
		mu   sync.Mutex
		jobs = make(map[string][]byte)
		seq  atomic.Int64
	)
	authorized := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return false
		}
		return true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v2/agent/{project}/job", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(w, r) {
			return
		}
		var req struct {
			Prompt string `json:"prompt"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || req.Prompt == "" {
			http.Error(w, "a JSON body with a prompt is required", http.StatusBadRequest)
			return
		}
		id := fmt.Sprintf("job_%020d", seq.Add(1))
		now := time.Now().UTC().Format(time.RFC3339Nano)
		body, err := json.Marshal(map[string]any{
			"id": id, "status": "active", "source": map[string]string{"repository": "/srv/docs", "ref": "docsmith/" + id},
			"model": "builtin", "prLink": nil, "createdAt": now, "archivedAt": nil,
			"projectId": r.PathValue("project"), "baseRef": "main", "updatedAt": now, "completedAt": nil,
			"summary": nil, "error": nil, "filesChanged": []string{}, "prNumber": nil,
			"usage":    map[string]int{"inputTokens": 0, "outputTokens": 0},
			"messages": []map[string]any{{"seq": 1, "prompt": req.Prompt, "status": "queued", "attempts": 0, "summary": nil, "error": nil, "createdAt": now, "startedAt": nil, "finishedAt": nil}},
			"trigger":  "api", "workflow": nil,
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		mu.Lock()
		jobs[id] = body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	})
	mux.HandleFunc("GET /v2/agent/{project}/job/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(w, r) {
			return
		}
		mu.Lock()
		body, ok := jobs[r.PathValue("id")]
		mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv.URL + "/v2/agent/" + crashProject, key
}

// measureJobCreateGet runs BenchmarkJobCreateGet's load against the job API
// at base (…/v2/agent/PROJECT) with key, and reports its figures.
func measureJobCreateGet(b *testing.B, base, key string) {
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 2 * benchClients, MaxIdleConnsPerHost: 2 * benchClients, IdleConnTimeout: time.Minute},
	}
	b.Cleanup(client.CloseIdleConnections)

	do := func(req *http.Request, want int) ([]byte, time.Duration, error) {
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		elapsed := time.Since(start)
		if err != nil {
			return nil, 0, err
		}
		if resp.StatusCode != want {
			return nil, 0, fmt.Errorf("%s %s: status %d, want %d: %s", req.Method, req.URL.Path, resp.StatusCode, want, body)
		}
		return body, elapsed, nil
	}
	iteration := func(i int64) (create, get time.Duration, err error) {
		payload, _ := json.Marshal(map[string]string{"prompt": fmt.Sprintf("benchmark instruction %d", i)})
		req, _ := http.NewRequest(http.MethodPost, base+"/job", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		body, create, err := do(req, http.StatusCreated)
		if err != nil {
			return 0, 0, err
		}
		var job struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body, &job); err != nil || job.ID == "" {
			return 0, 0, fmt.Errorf("create answered %s: %w", body, err)
		}
		req, _ = http.NewRequest(http.MethodGet, base+"/job/"+job.ID, nil)
		if _, get, err = do(req, http.StatusOK); err != nil {
			return 0, 0, err
		}
		return create, get, nil
	}

	// load runs n iterations from benchClients clients at once and
	// returns each client's create and get latencies.
	load := func(n int64) (creates, gets [][]time.Duration, err error) {
		var next atomic.Int64
		creates = make([][]time.Duration, benchClients)
		gets = make([][]time.Duration, benchClients)
		var wg sync.WaitGroup
		var failOnce sync.Once
		for c := range benchClients {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > n {
						return
					}
					create, get, iterErr := iteration(i)
					if iterErr != nil {
						failOnce.Do(func() { err = iterErr })
						next.Store(n) // stop the other clients too
						return
					}
					creates[c] = append(creates[c], create)
					gets[c] = append(gets[c], get)
				}
			})
		}
		wg.Wait()
		return creates, gets, err
	}
	// A warm-up, not measured, as the assistant's load generator does:
	// the clients' connections are open and the server's caches and
	// statements ready before the clock starts.
	if _, _, err := load(benchWarmup); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpuStart := benchCPU(b)
	start := time.Now()
	creates, gets, err := load(int64(b.N))
	elapsed := time.Since(start)
	cpu := benchCPU(b) - cpuStart
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}

	b.ReportMetric(float64(2*b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
	// This process's CPU time per iteration (server, workers and clients
	// alike; not PostgreSQL's or Redis's own): steadier than the rates on
	// a machine shared with other work.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	for _, s := range []struct {
		name string
		all  [][]time.Duration
	}{{"create", creates}, {"get", gets}} {
		lat := slices.Concat(s.all...)
		slices.Sort(lat)
		b.ReportMetric(benchPercentile(lat, 0.50), s.name+"-p50-ms")
		b.ReportMetric(benchPercentile(lat, 0.99), s.name+"-p99-ms")
	}
}

// benchCPU is the CPU time (user and system) the process has used so far.
func benchCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPercentile is the q-quantile of sorted latencies, in milliseconds.
func benchPercentile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(q*float64(len(sorted))), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Millisecond)
}
