package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
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
