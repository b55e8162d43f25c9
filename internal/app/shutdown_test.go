package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// shutdownRunner blocks until its turn's context ends, like an agent in the
// middle of a long turn.
type shutdownRunner struct{ started chan string }

func (r shutdownRunner) RunTurn(ctx context.Context, t agentjob.Turn, _ agentjob.Progress) (agentjob.TurnOutcome, error) {
	r.started <- t.Job.ID
	<-ctx.Done()
	return agentjob.TurnOutcome{}, ctx.Err()
}

// TestGracefulShutdown: Shutdown ends open event streams, stops within its
// timeout although a turn is still running, and hands that turn back to the
// queue without using up an attempt.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := shutdownSeed(t, dir)

	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg, err := config.Bind(fs, true).Load(func(k string) (string, bool) {
		v, ok := map[string]string{
			"DOCSMITH_DATA_DIR":         dir,
			"DOCSMITH_ADDR":             "127.0.0.1:0",
			"DOCSMITH_DEMO":             "false",
			"DOCSMITH_SHUTDOWN_TIMEOUT": "500ms",
			"DOCSMITH_QUEUE_POLL":       "50ms",
		}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	runner := shutdownRunner{started: make(chan string, 1)}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), Runner: runner}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	base := "http://" + m.Addr()
	req, _ := http.NewRequest(http.MethodPost, base+"/v2/agent/docs/job", strings.NewReader(`{"prompt":"a long turn"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	select {
	case <-runner.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never started")
	}

	req, _ = http.NewRequest(http.MethodGet, base+"/v2/agent/docs/job/"+job.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	stream, err := http.DefaultClient.Do(req) //nolint:bodyclose // the reading goroutine closes it
	if err != nil {
		t.Fatal(err)
	}
	streamEnded := make(chan struct{})
	go func() {
		defer stream.Body.Close()
		sc := bufio.NewScanner(stream.Body)
		for sc.Scan() {
		}
		close(streamEnded)
	}()

	start := time.Now()
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Shutdown took %s with a 500ms timeout", took)
	}
	select {
	case <-streamEnded:
	case <-time.After(5 * time.Second):
		t.Fatal("the event stream was still open after Shutdown")
	}

	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	got, err := store.GetJob(t.Context(), "docs", job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != agentjob.Active || got.Messages[0].State != agentjob.TurnQueued || got.Messages[0].Attempts != 0 {
		t.Fatalf("after shutdown job is %s with turn %s after %d attempts; want active, queued, 0", got.Status, got.Messages[0].State, got.Messages[0].Attempts)
	}
}

func shutdownSeed(t *testing.T, dir string) string {
	t.Helper()
	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	svc := tenant.NewService(store, func() time.Time { return time.Now().UTC() })
	if _, err := svc.CreateOrg(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateProject(t.Context(), tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "/srv/docs"}); err != nil {
		t.Fatal(err)
	}
	_, secret, err := svc.CreateKey(t.Context(), "acme", apikey.Admin, "test")
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// TestShutdownFinishesRequestsInFlight: a request whose body is still
// arriving and an answer still streaming when Shutdown begins both finish
// whole (not as an empty 200), a request that arrives during shutdown is
// refused, and the answer's turn is stored.
func TestShutdownFinishesRequestsInFlight(t *testing.T) {
	t.Parallel()
	model := llmtest.NewOpenAIServer(t, llmtest.Turn{Text: []string{"Put patterns ", "in a ", ".ternignore ", "file [1]."}, ChunkDelay: 250 * time.Millisecond})
	s := assistantSetup(t, "DOCSMITH_OPENAI_BASE_URL="+model.URL, "DOCSMITH_OPENAI_API_KEY=test-key", "DOCSMITH_SHUTDOWN_TIMEOUT=10s")
	s.cli("domain", "create", "--org", orgA, "--domain", "slow", "--project", "tern", "--model", "openai/slow")
	s.cli("index", "slow")
	client := &http.Client{Transport: &http.Transport{}}

	// A job whose body is half sent.
	bodyR, bodyW := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, s.base+jobsPath(projA), bodyR)
	req.Header.Set("Authorization", "Bearer "+s.adminA)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	created := make(chan reply, 1)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			created <- reply{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		created <- reply{status: resp.StatusCode, header: resp.Header, body: b}
	}()
	if _, err := io.WriteString(bodyW, `{"prompt": "fix the `); err != nil {
		t.Fatal(err)
	}

	// An answer that is streaming.
	body, _ := json.Marshal(askBody("How do I exclude files from a sync?", ""))
	areq, _ := http.NewRequest(http.MethodPost, s.base+"/discovery/v2/assistant/slow/message", bytes.NewReader(body))
	areq.Header.Set("Authorization", "Bearer "+s.assistantA)
	areq.Header.Set("Content-Type", "application/json")
	aresp, err := client.Do(areq) //nolint:bodyclose // closed below, after the reading goroutine
	if err != nil {
		t.Fatal(err)
	}
	defer aresp.Body.Close()
	thread := aresp.Header.Get("X-Thread-Id")
	streamed := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(aresp.Body)
		streamed <- string(b)
	}()

	m := s.main
	s.main = nil
	shutdown := make(chan error, 1)
	go func() { shutdown <- m.Shutdown(context.Background()) }()
	time.Sleep(200 * time.Millisecond)

	// A new request while shutting down is refused.
	if resp, err := http.Get(s.base + "/readyz"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"error"`) {
			t.Errorf("a request during shutdown got %d %s, want 503 with a JSON error", resp.StatusCode, b)
		}
	} // or the listener is already closed: refused as well

	if _, err := io.WriteString(bodyW, `typo"}`); err != nil {
		t.Fatal(err)
	}
	_ = bodyW.Close()
	r := <-created
	var job struct {
		ID string `json:"id"`
	}
	if r.status != http.StatusCreated || json.Unmarshal(r.body, &job) != nil || job.ID == "" {
		t.Errorf("the job created during shutdown got %s, want 201 with the job", r)
	}
	text := <-streamed
	if !strings.Contains(text, `"type":"finish"`) || !strings.Contains(text, ".ternignore") {
		t.Errorf("the answer streaming during shutdown ended early:\n%s", text)
	}
	if err := <-shutdown; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	store, err := sqlite.Open(t.Context(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	turns, err := store.RecentTurns(t.Context(), thread, 5)
	if err != nil || len(turns) != 1 || turns[0].Status != "answered" {
		t.Errorf("turns of the answer = %+v, %v; want one answered", turns, err)
	}
}

// TestShutdownStopsAnswersAfterTheGrace: an answer still streaming when the
// shutdown timeout ends is stopped with an in-band error, Shutdown returns
// soon after, and the turn is stored as failed.
func TestShutdownStopsAnswersAfterTheGrace(t *testing.T) {
	t.Parallel()
	model := llmtest.NewOpenAIServer(t, llmtest.Stall("Put patterns "))
	s := assistantSetup(t, "DOCSMITH_OPENAI_BASE_URL="+model.URL, "DOCSMITH_OPENAI_API_KEY=test-key", "DOCSMITH_SHUTDOWN_TIMEOUT=500ms")
	s.cli("domain", "create", "--org", orgA, "--domain", "stuck", "--project", "tern", "--model", "openai/stuck")
	s.cli("index", "stuck")

	body, _ := json.Marshal(askBody("How do I exclude files from a sync?", ""))
	req, _ := http.NewRequest(http.MethodPost, s.base+"/discovery/v2/assistant/stuck/message", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.assistantA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	thread := resp.Header.Get("X-Thread-Id")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "text-delta") {
	}

	m := s.main
	s.main = nil
	start := time.Now()
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("Shutdown took %s with a 500ms timeout", took)
	}
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	if !strings.Contains(rest.String(), `"type":"error"`) {
		t.Errorf("the stopped answer ended without an in-band error:\n%s", rest.String())
	}

	store, err := sqlite.Open(t.Context(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	turns, err := store.RecentTurns(t.Context(), thread, 5)
	if err != nil || len(turns) != 1 || turns[0].Status != "failed" || !strings.Contains(turns[0].Error, "shutting down") {
		t.Errorf("turns of the stopped answer = %+v, %v; want one failed by the shutdown", turns, err)
	}
}
