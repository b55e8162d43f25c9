package app_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

type indexStatusRun struct {
	Failure string
	Console []string
	Index   []string
}

// TestDashboardShowsIndexStatus: the settings page shows each domain's
// search index in chromium: the commit built, the branch head, pages and
// passages; then, once the branch has moved and an update failed, that it
// is behind, failing, still serving the last good index, and why.
func TestDashboardShowsIndexStatus(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "dashboard-index")
	dir := t.TempDir()
	env := map[string]string{"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "true",
		"DOCSMITH_WORKERS": "1", "DOCSMITH_WORKFLOW_TICK": "1h", "DOCSMITH_INDEX_POLL_INTERVAL": "0"}
	cfg, err := config.Bind(flag.NewFlagSet("serve", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	m := &app.Main{Config: cfg, Log: cfg.Logger(io.Discard), Out: &out}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	base := "http://" + m.Addr()
	admin := demoAdminKey.FindStringSubmatch(out.String())
	if admin == nil {
		t.Fatalf("the first start printed:\n%s", out.String())
	}

	look := func(name string) string {
		t.Helper()
		var run indexStatusRun
		browser.Run(t, "index-status.mjs", map[string]any{"base": base, "adminKey": admin[1], "artifacts": artifacts, "name": name}, &run)
		if run.Failure != "" || len(run.Console) != 0 || len(run.Index) != 1 {
			t.Fatalf("browser: %s\nconsole: %q\nindex: %q", run.Failure, run.Console, run.Index)
		}
		return run.Index[0]
	}

	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	built, err := store.IndexState(t.Context(), app.DemoDomain)
	if err != nil {
		t.Fatal(err)
	}
	if built.IndexedAt.IsZero() || built.Pages == 0 {
		t.Fatalf("the demo domain's index was not recorded when it was built: %+v", built)
	}
	shown := look("settings-index-built")
	for _, want := range []string{"Search index", "Indexed", "Branch head", "pages", "passages"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the index facts lack %q:\n%s", want, shown)
		}
	}
	if built.Commit != "" && (!strings.Contains(shown, built.Commit[:12]) || !strings.Contains(shown, "at the branch head")) {
		t.Errorf("the index facts do not show commit %s at the head:\n%s", built.Commit, shown)
	}

	// The branch moves, and the update fails.
	now := time.Now().UTC()
	const moved = "0123456789abcdef0123456789abcdef01234567"
	if err := store.SeeHead(t.Context(), app.DemoDomain, moved, now); err != nil {
		t.Fatal(err)
	}
	const why = "reading main of https://git.example/quill/docs.git (project demo): the remote does not answer"
	for range 2 {
		if err := store.RecordFailure(t.Context(), app.DemoDomain, why, now, 3*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	shown = look("settings-index-failing")
	for _, want := range []string{"update failing", "still serving the last good index", moved[:12], why, "2 attempts in a row"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the failing index facts lack %q:\n%s", want, shown)
		}
	}
}
