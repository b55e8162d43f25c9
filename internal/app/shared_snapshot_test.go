package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// TestNewReplicaLoadsSharedSnapshot: with PostgreSQL, a replica started on
// an empty data directory loads a domain's index from the snapshot the
// database keeps, written by the replica that loaded it first from the
// chunks, and keeps it in its own data directory for its next start.
func TestNewReplicaLoadsSharedSnapshot(t *testing.T) {
	t.Parallel()
	site, err := filepath.Abs("../search/testdata/site")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DOCSMITH_DATA_DIR": t.TempDir(), "DOCSMITH_DATABASE_URL": storetest.PostgresURL(t)}
	key, cfg := indexedSite(t, site, env)

	// serve starts a replica on dataDir, asks it one question and stops it,
	// returning what it logged.
	serve := func(dataDir string) string {
		t.Helper()
		logs := &lockedBuffer{}
		c := cfg
		c.DataDir = dataDir
		m := &app.Main{Config: c, Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		if err := m.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := m.Shutdown(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		req, _ := http.NewRequest(http.MethodPost, "http://"+m.Addr()+"/discovery/v1/search/site", strings.NewReader(`{"query": "brewing tea", "pageSize": 5}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		client := &http.Client{Timeout: 30 * time.Second}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "guides/brewing") {
			t.Fatalf("search: %d %s", resp.StatusCode, body)
		}
		client.CloseIdleConnections()
		return logs.String()
	}

	if logs := serve(t.TempDir()); !strings.Contains(logs, `msg="search index loaded" domain=site from=store`) {
		t.Fatalf("the first replica did not load the domain from the chunks:\n%s", logs)
	}
	fresh := t.TempDir()
	if logs := serve(fresh); !strings.Contains(logs, `msg="search index loaded" domain=site from="shared snapshot"`) {
		t.Fatalf("a new replica did not load the domain from the database's snapshot:\n%s", logs)
	}
	if kept, _ := filepath.Glob(filepath.Join(fresh, "search-cache", "*.idx")); len(kept) != 1 {
		t.Fatalf("the new replica kept %d snapshots in its data directory, want 1", len(kept))
	}
	if logs := serve(fresh); !strings.Contains(logs, `msg="search index loaded" domain=site from=snapshot`) {
		t.Fatalf("the replica started again did not load its own snapshot:\n%s", logs)
	}
}
