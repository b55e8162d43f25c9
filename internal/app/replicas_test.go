package app_test

// Scale-out end to end: three docsmith processes on one PostgreSQL schema
// and one Redis, as in production. Two API replicas (role api) answer the
// API; a worker process (role worker) runs the turns. The test binary
// re-executes itself (TestReplicaChild) as each process, as the crash tests
// do, so the worker can be killed with SIGKILL and a scripted runner stands
// in for the agent.
//
// Needs DOCSMITH_TEST_DATABASE_URL and DOCSMITH_TEST_REDIS_URL; skipped
// when they are unset, failed when they are set and a server does not
// answer.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
)

const (
	replicaEnvChild = "REPLICATEST_CHILD" // "1" makes TestReplicaChild run a docsmith process
	replicaAddrFile = "replica-addr"
)

// replicaRunner is the agent of the child processes. Every turn reports a
// tool step; a prompt with "[block]" runs until canceled on its first
// attempt (a retry completes), one with "[slow]" takes a few steps with
// pauses, so a stream can watch it.
type replicaRunner struct{}

func (replicaRunner) RunTurn(ctx context.Context, t agentjob.Turn, progress agentjob.Progress) (agentjob.TurnOutcome, error) {
	p := t.Message.Prompt
	progress.Emit(ctx, "tool", map[string]any{"name": "read_file", "seq": t.Message.Seq, "attempt": t.Attempt})
	switch {
	case strings.Contains(p, "[block]") && t.Attempt == 1:
		<-ctx.Done()
		return agentjob.TurnOutcome{}, context.Cause(ctx)
	case strings.Contains(p, "[slow]"):
		for step := range 3 {
			select {
			case <-ctx.Done():
				return agentjob.TurnOutcome{}, context.Cause(ctx)
			case <-time.After(300 * time.Millisecond):
			}
			progress.Emit(ctx, "tool", map[string]any{"name": "str_replace", "step": step})
		}
	}
	return agentjob.TurnOutcome{Summary: fmt.Sprintf("carried out message %d on attempt %d", t.Message.Seq, t.Attempt)}, nil
}

// TestReplicaChild is not a test: it is a docsmith process of the replica
// tests, configured by DOCSMITH_* variables. It does nothing unless
// REPLICATEST_CHILD=1.
func TestReplicaChild(t *testing.T) {
	if os.Getenv(replicaEnvChild) != "1" {
		return
	}
	fs := flag.NewFlagSet("replica-child", flag.ContinueOnError)
	loader := config.Bind(fs, true)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := loader.Load(os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: cfg.Logger(os.Stderr), Runner: replicaRunner{}}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(cfg.DataDir, replicaAddrFile+".tmp")
	if err := os.WriteFile(tmp, []byte(m.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(cfg.DataDir, replicaAddrFile)); err != nil {
		t.Fatal(err)
	}
	// Standard input is a pipe the parent holds: EOF means stop cleanly
	// (the parent closed it), and an orphan does not linger.
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = m.Shutdown(context.Background())
	os.Exit(0)
}

// replicaCluster is the shared set-up: one schema, one Redis, the tenants.
type replicaCluster struct {
	t        *testing.T
	dbURL    string
	redisURL string
	key      string
	redis    *goredis.Client
	prefix   string // the deployment's Redis key prefix
}

func replicaSetup(t *testing.T) *replicaCluster {
	t.Helper()
	c := &replicaCluster{t: t, dbURL: storetest.PostgresURL(t)}
	c.redisURL, _ = storetest.RedisURL(t)

	store, err := postgres.Open(t.Context(), c.dbURL, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tenants := tenant.NewService(store, func() time.Time { return time.Now().UTC() })
	if _, err := tenants.CreateOrg(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{crashProject, "limits", "burst"} {
		if _, err := tenants.CreateProject(t.Context(), tenant.Project{ID: id, OrgID: "acme", RepoURL: "/srv/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, c.key, err = tenants.CreateKey(t.Context(), "acme", apikey.Admin, "replicas"); err != nil {
		t.Fatal(err)
	}

	opts, err := goredis.ParseURL(c.redisURL)
	if err != nil {
		t.Fatal(err)
	}
	c.redis = goredis.NewClient(opts)
	c.prefix = "{docsmith:" + store.Name() + "}:"
	t.Cleanup(func() { _ = c.redis.Close() })
	storetest.DeleteRedisKeysAtEnd(t, c.prefix)
	return c
}

// start runs a docsmith process of the cluster with the role, on a data
// directory of its own, and waits until it serves.
func (c *replicaCluster) start(name, role string) *crashChild {
	t := c.t
	t.Helper()
	dir := t.TempDir()
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCSMITH_") && !strings.HasPrefix(kv, "REPLICATEST_") && !strings.HasPrefix(kv, "CRASHTEST_") {
			env = append(env, kv)
		}
	}
	for k, v := range map[string]string{
		"DOCSMITH_DATA_DIR":         dir,
		"DOCSMITH_ADDR":             "127.0.0.1:0",
		"DOCSMITH_DATABASE_URL":     c.dbURL,
		"DOCSMITH_REDIS_URL":        c.redisURL,
		"DOCSMITH_ROLE":             role,
		"DOCSMITH_DEMO":             "false",
		"DOCSMITH_WORKERS":          "2",
		"DOCSMITH_TURN_LEASE":       "1s",
		"DOCSMITH_QUEUE_POLL":       "1s",
		"DOCSMITH_SHUTDOWN_TIMEOUT": "2s",
		"DOCSMITH_LOG_LEVEL":        "debug",
		replicaEnvChild:             "1",
	} {
		env = append(env, k+"="+v)
	}
	logFile, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaChild$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, logFile, logFile
	if err := cmd.Start(); err != nil {
		stdinW.Close()
		t.Fatal(err)
	}
	p := &crashChild{t: t, cmd: cmd, stdin: stdinW, logPath: logFile.Name(), done: make(chan struct{})}
	go func() { p.waitErr = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, p.log())
		}
	})
	addrPath := filepath.Join(dir, replicaAddrFile)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(addrPath); err == nil {
			p.base = "http://" + string(b)
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited before serving: %v\n%s", name, p.waitErr, p.log())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not serve within 30s\n%s", name, p.log())
		}
	}
}

func (c *replicaCluster) api(p *crashChild) *crashAPI {
	return &crashAPI{t: c.t, key: c.key, client: &http.Client{Timeout: 30 * time.Second}, base: p.base}
}

// post sends a create to a project and returns the status and the
// rate-limit headers.
func (c *replicaCluster) post(base, project, prompt string) (int, http.Header, error) {
	body, _ := json.Marshal(map[string]string{"prompt": prompt})
	req, err := http.NewRequest(http.MethodPost, base+"/v2/agent/"+project+"/job", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, nil
}

func replicaStatus(t *testing.T, target string) int {
	t.Helper()
	resp, err := http.Get(target)
	if err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// replicaEvent is one event of a job's stream.
type replicaEvent struct {
	ID   int64
	Type string
	Data map[string]any
}

// follow reads a job's event stream until the server ends it.
func (c *replicaCluster) follow(base, jobID string) ([]replicaEvent, error) {
	req, err := http.NewRequest(http.MethodGet, base+"/v2/agent/"+crashProject+"/job/"+jobID+"/events", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("events: status %d", resp.StatusCode)
	}
	var out []replicaEvent
	var cur replicaEvent
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Type != "" {
				out = append(out, cur)
			}
			cur = replicaEvent{}
		case strings.HasPrefix(line, "id: "):
			cur.ID, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				return out, fmt.Errorf("event data %q: %w", line, err)
			}
		}
	}
	return out, sc.Err()
}

func settledJob(j crashJob) bool {
	if j.Status == "active" {
		return false
	}
	for _, m := range j.Messages {
		if m.Status == "running" || m.Status == "queued" {
			return false
		}
	}
	return true
}

// TestReplicas runs two API replicas and a worker on one PostgreSQL schema
// and one Redis, and checks what scale-out promises: jobs created through
// one replica run on the worker and read the same through the other; one
// replica's stream follows a turn run elsewhere; the rate limit is one
// budget across replicas; a cancel reaches the worker; and a worker killed
// mid-turn loses no job to a second one.
func TestReplicas(t *testing.T) {
	t.Parallel()
	c := replicaSetup(t)
	api1 := c.start("api-1", app.RoleAPI)
	api2 := c.start("api-2", app.RoleAPI)
	worker := c.start("worker-1", app.RoleWorker)
	one, two := c.api(api1), c.api(api2)

	t.Run("Roles", func(t *testing.T) {
		for _, p := range []*crashChild{api1, api2, worker} {
			if got := replicaStatus(t, p.base+"/readyz"); got != http.StatusOK {
				t.Errorf("%s/readyz = %d, want 200", p.base, got)
			}
		}
		if got := replicaStatus(t, worker.base+"/metrics"); got != http.StatusOK {
			t.Errorf("worker /metrics = %d, want 200", got)
		}
		if got := replicaStatus(t, worker.base+"/v2/agent/docs/jobs"); got != http.StatusNotFound {
			t.Errorf("worker /v2/agent/docs/jobs = %d, want 404: a worker serves no API", got)
		}
	})

	t.Run("RevokedKeyAcrossReplicas", func(t *testing.T) {
		// Both replicas keep the key in memory once it has been used; an
		// operator revokes it with the CLI, a process of its own, and each
		// replica refuses it within the bound it promises (a second; the
		// database's notice usually makes it milliseconds).
		store, err := postgres.Open(t.Context(), c.dbURL, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		k, secret, err := tenant.NewService(store, time.Now).CreateKey(t.Context(), "acme", apikey.Admin, "revoked across replicas")
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		status := func(base string) int {
			req, _ := http.NewRequest(http.MethodGet, base+"/v2/agent/"+crashProject+"/jobs?limit=1", nil)
			req.Header.Set("Authorization", "Bearer "+secret)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("GET %s: %v", base, err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		for _, p := range []*crashChild{api1, api2} {
			for range 3 {
				if got := status(p.base); got != http.StatusOK {
					t.Fatalf("%s with the key before it is revoked: %d, want 200", p.base, got)
				}
			}
		}
		vars := map[string]string{"DOCSMITH_DATABASE_URL": c.dbURL, "DOCSMITH_DATA_DIR": t.TempDir()}
		var stdout, stderr bytes.Buffer
		env := cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
			LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
		if code := cli.Run(t.Context(), []string{"key", "revoke", "--org", "acme", k.ID}, env); code != 0 {
			t.Fatalf("docsmith key revoke: exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
		revoked := time.Now()
		// The promised second, and room for a loaded machine to answer.
		const bound = time.Second + 500*time.Millisecond
		for _, p := range []*crashChild{api1, api2} {
			for status(p.base) != http.StatusUnauthorized {
				if time.Since(revoked) > bound {
					t.Fatalf("%s still accepts the key %v after it was revoked", p.base, time.Since(revoked))
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Logf("%s refuses the revoked key %v after the revocation", p.base, time.Since(revoked).Round(time.Millisecond))
		}
	})

	t.Run("AssistantAcrossReplicas", func(t *testing.T) {
		// docsmith index, run on its own, writes the index to PostgreSQL;
		// replica 2, which never indexed anything, answers from it, and
		// replica 1 continues the thread replica 2 started.
		docsmith := func(args ...string) string {
			t.Helper()
			vars := map[string]string{"DOCSMITH_DATABASE_URL": c.dbURL, "DOCSMITH_DATA_DIR": t.TempDir()}
			var stdout, stderr bytes.Buffer
			env := cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
				LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
			if code := cli.Run(t.Context(), args, env); code != 0 {
				t.Fatalf("docsmith %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
			}
			return stdout.String()
		}
		docsmith("project", "create", "--org", "acme", "--id", "tern", "--repo", seedDocsRepo(t))
		docsmith("domain", "create", "--org", "acme", "--domain", "tern", "--project", "tern", "--site-url", "https://tern.example/docs")
		key := strings.TrimSpace(docsmith("key", "create", "--org", "acme", "--kind", "assistant", "--name", "replicas"))
		if out := docsmith("index", "tern"); !strings.Contains(out, "6 pages") {
			t.Fatalf("docsmith index printed %q", out)
		}
		ask := func(base, question, thread string) (string, string) {
			t.Helper()
			b, err := json.Marshal(askBody(question, thread))
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequest(http.MethodPost, base+"/discovery/v2/assistant/tern/message", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("ask %s: %d %v\n%s", base, resp.StatusCode, err, body)
			}
			return resp.Header.Get("X-Thread-Id"), string(body)
		}
		thread, body := ask(api2.base, "How do I exclude files from a sync?", "")
		if !threadIDPattern.MatchString(thread) || !strings.Contains(body, "https://tern.example/docs/guides/sync") {
			t.Fatalf("replica 2 answered in thread %q:\n%s", thread, body)
		}
		if got, _ := ask(api1.base, "And conflicts?", thread); got != thread {
			t.Errorf("replica 1 answered in thread %q, want %s (started on replica 2)", got, thread)
		}
	})

	t.Run("JobsAcrossReplicas", func(t *testing.T) {
		sent := map[string][]string{}
		var ids []string
		for i := range 6 {
			p := fmt.Sprintf("job %d: first instruction", i)
			j := one.create(p)
			ids = append(ids, j.ID)
			sent[j.ID] = []string{p}
		}
		// Follow-ups through the other replica, while the first turns run
		// or wait: they run after them, in order.
		for i, id := range ids {
			for k := range i % 3 {
				p := fmt.Sprintf("job %d: follow-up %d", i, k+1)
				two.message(id, p)
				sent[id] = append(sent[id], p)
			}
		}
		final := map[string]crashJob{}
		crashWait(t, 60*time.Second, "every job to settle, read through replica 2", func() (bool, string) {
			for _, id := range ids {
				j := two.get(id)
				final[id] = j
				if !settledJob(j) {
					return false, crashDescribe(j)
				}
			}
			return true, ""
		})
		for _, id := range ids {
			j := final[id]
			if j.Status != "completed" || len(j.Messages) != len(sent[id]) {
				t.Errorf("%s: want completed with %d messages", crashDescribe(j), len(sent[id]))
				continue
			}
			for k, m := range j.Messages {
				if m.Prompt != sent[id][k] || m.Status != "done" || m.Attempts != 1 {
					t.Errorf("job %s message %d: %q %s after %d attempts, want %q done after 1", id, m.Seq, m.Prompt, m.Status, m.Attempts, sent[id][k])
				}
				if k > 0 {
					prevEnd := crashTime(t, j.Messages[k-1].FinishedAt, "finishedAt")
					if start := crashTime(t, m.StartedAt, "startedAt"); start.Before(prevEnd) {
						t.Errorf("job %s: message %d started at %s, before message %d finished at %s", id, m.Seq, start, m.Seq-1, prevEnd)
					}
				}
			}
			// Both replicas read the same job.
			if a, b := one.get(id), two.get(id); crashDescribe(a) != crashDescribe(b) {
				t.Errorf("replicas disagree: %s vs %s", crashDescribe(a), crashDescribe(b))
			}
		}
	})

	t.Run("EventsAcrossReplicas", func(t *testing.T) {
		j := one.create("a [slow] instruction followed from the other replica")
		events, err := c.follow(api2.base, j.ID)
		if err != nil {
			t.Fatalf("follow on replica 2: %v (got %d events)", err, len(events))
		}
		var types []string
		for i, e := range events {
			types = append(types, e.Type)
			if i > 0 && e.ID <= events[i-1].ID {
				t.Errorf("event ids not increasing: %d after %d", e.ID, events[i-1].ID)
			}
		}
		want := []string{"status", "message.queued", "turn.started", "tool", "tool", "tool", "tool", "turn.finished", "status"}
		if !slices.Equal(types, want) {
			t.Fatalf("replica 2 streamed %v, want %v", types, want)
		}
		if last := events[len(events)-1].Data["status"]; last != "completed" {
			t.Errorf("last status event says %v, want completed", last)
		}
	})

	t.Run("CancelReachesWorker", func(t *testing.T) {
		j := one.create("an instruction that runs until canceled [block]")
		crashWait(t, 20*time.Second, "the turn to run on the worker", func() (bool, string) {
			g := two.get(j.ID)
			return g.Messages[0].Status == "running", crashDescribe(g)
		})
		var canceled crashJob
		two.do(http.MethodPost, "/v2/agent/"+crashProject+"/job/"+j.ID+"/cancel", nil, http.StatusOK, &canceled)
		if canceled.Status != "failed" {
			t.Fatalf("after cancel: %s, want failed", crashDescribe(canceled))
		}
		var g crashJob
		crashWait(t, 10*time.Second, "the worker to stop the turn", func() (bool, string) {
			g = one.get(j.ID)
			return g.Messages[0].Status != "running", crashDescribe(g)
		})
		if m := g.Messages[0]; m.Status != "canceled" || g.Status != "failed" || g.Error == nil || !strings.Contains(*g.Error, "canceled") {
			t.Errorf("%s: want the turn canceled and the job failed as canceled", crashDescribe(g))
		}
	})

	t.Run("RateLimitAcrossReplicas", func(t *testing.T) {
		// Interleaved, one at a time: exactly 100 in the hour, then 429.
		bases := []string{api1.base, api2.base}
		for i := range 100 {
			status, _, err := c.post(bases[i%2], "limits", fmt.Sprintf("limited %d", i))
			if err != nil || status != http.StatusCreated {
				t.Fatalf("request %d through replica %d: %d %v, want 201", i+1, i%2+1, status, err)
			}
		}
		for i, base := range bases {
			status, h, err := c.post(base, "limits", "one too many")
			if err != nil || status != http.StatusTooManyRequests {
				t.Fatalf("request 101 through replica %d: %d %v, want 429", i+1, status, err)
			}
			if h.Get("Retry-After") == "" || h.Get("RateLimit-Remaining") != "0" || h.Get("RateLimit-Limit") != "100" {
				t.Errorf("429 headers: Retry-After %q RateLimit-Limit %q RateLimit-Remaining %q", h.Get("Retry-After"), h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"))
			}
		}
		// The budget is kept in Redis.
		if n, err := c.redis.ZCard(t.Context(), c.prefix+"ratelimit:agent:project:limits").Result(); err != nil || n != 100 {
			t.Errorf("Redis holds %d hits of project limits (%v), want 100", n, err)
		}

		// All at once from both replicas: still exactly 100.
		var accepted, refused atomic.Int32
		var wg sync.WaitGroup
		for w := range 12 {
			wg.Go(func() {
				for k := range 10 {
					status, _, err := c.post(bases[(w+k)%2], "burst", "burst")
					switch {
					case err != nil:
						t.Errorf("burst request: %v", err)
					case status == http.StatusCreated:
						accepted.Add(1)
					case status == http.StatusTooManyRequests:
						refused.Add(1)
					default:
						t.Errorf("burst request: status %d", status)
					}
				}
			})
		}
		wg.Wait()
		if accepted.Load() != 100 || refused.Load() != 20 {
			t.Errorf("burst of 120 across both replicas: %d accepted, %d refused; want 100 and 20", accepted.Load(), refused.Load())
		}
	})

	t.Run("WorkerKilledMidTurn", func(t *testing.T) {
		// Let the queue drain of the earlier subtests' jobs first, so the
		// worker's two slots go to the blocking turns.
		crashWait(t, 120*time.Second, "the earlier jobs to settle", func() (bool, string) {
			for _, project := range []string{crashProject, "limits", "burst"} {
				var page struct {
					Jobs []crashJob `json:"jobs"`
				}
				one.do(http.MethodGet, "/v2/agent/"+project+"/jobs?status=active&limit=100", nil, http.StatusOK, &page)
				if len(page.Jobs) > 0 {
					return false, fmt.Sprintf("%d active in %s", len(page.Jobs), project)
				}
			}
			return true, ""
		})
		blocked := []string{one.create("first blocking instruction [block]").ID, two.create("second blocking instruction [block]").ID}
		for _, id := range blocked {
			crashWait(t, 20*time.Second, "the blocking turns to run", func() (bool, string) {
				g := one.get(id)
				return g.Messages[0].Status == "running", crashDescribe(g)
			})
		}
		waiting := one.create("a job queued behind the busy worker").ID
		two.message(blocked[0], "a follow-up behind the killed turn")
		ids := append(slices.Clone(blocked), waiting)

		worker.kill()
		// The turns stay running until their lease runs out; a new worker
		// takes them back and runs them again.
		c.start("worker-2", app.RoleWorker)
		final := map[string]crashJob{}
		crashWait(t, 60*time.Second, "every job to finish after the kill", func() (bool, string) {
			for _, id := range ids {
				g := two.get(id)
				final[id] = g
				if !settledJob(g) {
					return false, crashDescribe(g)
				}
			}
			return true, ""
		})
		for _, id := range ids {
			g := final[id]
			if g.Status != "completed" {
				t.Errorf("%s: want completed", crashDescribe(g))
			}
			for _, m := range g.Messages {
				if m.Status != "done" {
					t.Errorf("%s: message %d is %s, want done", crashDescribe(g), m.Seq, m.Status)
				}
			}
		}
		for _, id := range blocked {
			if a := final[id].Messages[0].Attempts; a != 2 {
				t.Errorf("%s: the killed turn ran %d times, want 2", crashDescribe(final[id]), a)
			}
		}
		for _, project := range []string{crashProject, "limits", "burst"} {
			var page struct {
				Jobs []crashJob `json:"jobs"`
			}
			two.do(http.MethodGet, "/v2/agent/"+project+"/jobs?status=active&limit=100", nil, http.StatusOK, &page)
			if len(page.Jobs) != 0 {
				t.Errorf("project %s: %d jobs still active", project, len(page.Jobs))
			}
		}
	})
}

// TestReadinessFollowsDatabase: /readyz answers 503 once PostgreSQL cannot
// be reached, and 200 again when it can; /healthz stays 200 throughout.
func TestReadinessFollowsDatabase(t *testing.T) {
	t.Parallel()
	dbURL := storetest.PostgresURL(t)
	proxy := startTCPProxy(t, dbURL)
	cfg := replicaConfig(t, map[string]string{"DOCSMITH_DATABASE_URL": proxy.url, "DOCSMITH_ROLE": app.RoleAPI})
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler)}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	base := "http://" + m.Addr()
	if got := replicaStatus(t, base+"/readyz"); got != http.StatusOK {
		t.Fatalf("/readyz with the database up = %d, want 200", got)
	}
	proxy.setDown(true)
	if got := replicaStatus(t, base+"/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the database away = %d, want 503", got)
	}
	if got := replicaStatus(t, base+"/healthz"); got != http.StatusOK {
		t.Errorf("/healthz with the database away = %d, want 200", got)
	}
	proxy.setDown(false)
	crashWait(t, 10*time.Second, "/readyz to recover", func() (bool, string) {
		got := replicaStatus(t, base+"/readyz")
		return got == http.StatusOK, strconv.Itoa(got)
	})
}

// TestRoles checks each role's HTTP surface and workers on the embedded
// SQLite store, which needs no server: api runs no turns, worker answers
// only the operational endpoints.
func TestRoles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		role     string
		api      bool // serves the agent API
		runsTurn bool
	}{
		{app.RoleAll, true, true},
		{app.RoleAPI, true, false},
		{app.RoleWorker, false, true},
	} {
		t.Run(tc.role, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			key := shutdownSeed(t, dir)
			cfg := replicaConfig(t, map[string]string{"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ROLE": tc.role, "DOCSMITH_QUEUE_POLL": "50ms"})
			runner := shutdownRunner{started: make(chan string, 1)}
			m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), Runner: runner}
			if err := m.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			base := "http://" + m.Addr()
			for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
				if got := replicaStatus(t, base+path); got != http.StatusOK {
					t.Errorf("%s = %d, want 200", path, got)
				}
			}
			wantAPI := http.StatusNotFound
			if tc.api {
				wantAPI = http.StatusUnauthorized // the API is there: it wants a key
			}
			if got := replicaStatus(t, base+"/v2/agent/docs/jobs"); got != wantAPI {
				t.Errorf("/v2/agent/docs/jobs without a key = %d, want %d", got, wantAPI)
			}
			if tc.api {
				c := &replicaCluster{t: t, key: key}
				if status, _, err := c.post(base, "docs", "a turn"); err != nil || status != http.StatusCreated {
					t.Fatalf("create: %d %v", status, err)
				}
				select {
				case <-runner.started:
					if !tc.runsTurn {
						t.Errorf("role %s ran a turn", tc.role)
					}
				case <-time.After(500 * time.Millisecond):
					if tc.runsTurn {
						t.Errorf("role %s did not run the turn", tc.role)
					}
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := m.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		})
	}
}

// replicaConfig is a test process's configuration: the defaults, a temp
// data directory, a random port, no demo, and the settings given.
func replicaConfig(t *testing.T, settings map[string]string) config.Config {
	t.Helper()
	all := map[string]string{
		"DOCSMITH_DATA_DIR":         t.TempDir(),
		"DOCSMITH_ADDR":             "127.0.0.1:0",
		"DOCSMITH_DEMO":             "false",
		"DOCSMITH_SHUTDOWN_TIMEOUT": "500ms",
	}
	for k, v := range settings {
		all[k] = v
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg, err := config.Bind(fs, true).Load(func(k string) (string, bool) { v, ok := all[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// tcpProxy forwards a local port to the database; down, it refuses
// connections and cuts the ones it carries, as a lost network would.
type tcpProxy struct {
	url string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

func startTCPProxy(t *testing.T, dbURL string) *tcpProxy {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil || u.Host == "" {
		t.Fatalf("database URL without a host: %v", err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{conns: make(map[net.Conn]struct{})}
	u.Host = ln.Addr().String()
	p.url = u.String()
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); p.setDown(true); wg.Wait() })
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			down := p.down
			p.mu.Unlock()
			if down {
				client.Close()
				continue
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			p.track(client, server)
			wg.Go(func() { _, _ = io.Copy(server, client); server.Close() })
			wg.Go(func() { _, _ = io.Copy(client, server); client.Close() })
		}
	})
	return p
}

func (p *tcpProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
}

func (p *tcpProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}
