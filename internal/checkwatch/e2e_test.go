package checkwatch_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/alertwebhook"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/checkwatch"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// The docs of a made-up product, written for this test.
var orchardDocs = map[string]string{
	"docs/docs.json":          `{"name": "Orchard", "navigation": {"pages": ["index", "guides/install", "guides/sensors", "guides/backups"]}}`,
	"docs/guides/install.mdx": "---\ntitle: Install Orchard\n---\n\nInstall Orchard from the release archive: unpack it, then run `orchard init` to create its configuration.\n",
	"docs/guides/sensors.mdx": "---\ntitle: Sensors\n---\n\nA sensor sends one reading a minute over MQTT; Orchard keeps a year of readings per sensor.\n",
	"docs/index.mdx":          "---\ntitle: Orchard\n---\n\nOrchard stores time series for greenhouse sensors.\n",
	"docs/guides/backups.mdx": "---\ntitle: Backups\n---\n\nOrchard writes a snapshot of its data directory every night.\n\n## Restore a snapshot\n\nTo restore a snapshot of the data directory, stop Orchard, run `orchard snapshot restore FILE`, then start it again.\n",
	".docsmith/checks.yaml": `checks:
  - name: restore-snapshot
    question: How do I restore a snapshot of the data directory?
    cite: [guides/backups]
`,
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestScheduleEndToEnd runs the real runner on a real git repository and
// SQLite store: the first scheduled run passes; the backups page is then
// removed from the docs and the index rebuilt, and the next day's run
// regresses and alerts the team's webhook.
func TestScheduleEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	repo := filepath.Join(t.TempDir(), "docs")
	for name, content := range orchardDocs {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "--quiet", "--initial-branch=main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "--quiet", "-m", "docs")

	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	index := search.NewMemory(store, search.MemoryConfig{})
	t.Cleanup(index.Close)
	recv := &alertReceiver{t: t, secret: "orchard-secret", bodies: make(chan []byte, 4)}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	clock := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	tenants := tenant.NewService(store, now)
	if _, err := tenants.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.CreateProject(ctx, tenant.Project{ID: "orchard", OrgID: "acme", RepoURL: repo, DocsRoot: "docs"}); err != nil {
		t.Fatal(err)
	}
	d, err := tenants.CreateDomain(ctx, tenant.Domain{ID: "orchard-docs", OrgID: "acme", ProjectID: "orchard", Settings: tenant.DomainSettings{
		AlertWebhookURL: srv.URL + "/hooks/orchard", AlertWebhookSecretEnv: "ORCHARD_ALERT_SECRET"}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Skipf("git is not usable here: %v", err)
	}
	repos := projectrepo.New(projectrepo.Config{Git: g, WorkDir: t.TempDir()})
	x := indexer.New(indexer.Config{Repos: repos, Projects: store, Index: index, Catalogs: store})
	if res, err := x.Index(ctx, d); err != nil || res.Pages != 4 {
		t.Fatalf("index: %+v, %v", res, err)
	}
	runner := checkrun.New(checkrun.Config{Projects: store, Repos: repos, Index: index, Catalogs: store})
	watch := checkwatch.New(checkwatch.Config{
		Domains: store, Runner: runner, Runs: store, Schedule: store,
		Alerts:  alertwebhook.New(alertwebhook.Config{Policy: alertwebhook.Policy{AllowHTTP: true, AllowPrivate: true}}),
		Secrets: secretsReader(map[string]string{"ORCHARD_ALERT_SECRET": "orchard-secret"}),
		Now:     now,
	})

	first := watch.Tick(ctx)
	if len(first) != 1 || first[0].Report.Totals.Passed != 1 {
		t.Fatalf("first scheduled run: %+v", first)
	}
	if again := watch.Tick(ctx); len(again) != 0 {
		t.Fatalf("a run not due ran: %+v", again)
	}

	// The backups page goes; the served index follows the branch.
	git(t, repo, "rm", "--quiet", "docs/guides/backups.mdx")
	git(t, repo, "commit", "--quiet", "-m", "drop the backups page")
	if _, err := x.Index(ctx, d); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(24 * time.Hour)
	second := watch.Tick(ctx)
	watch.Wait()
	if len(second) != 1 || second[0].Report.Totals.Regressed != 1 {
		t.Fatalf("second scheduled run: %+v", second)
	}
	stored, err := store.ListRuns(ctx, d.ID, checkrun.TriggerSchedule, 10)
	if err != nil || len(stored) != 2 || len(checkwatch.Regressed(stored[0].Report)) != 1 {
		t.Fatalf("stored runs %+v, %v", stored, err)
	}
	select {
	case body := <-recv.bodies:
		checkSlackMessage(t, body)
		var got struct {
			Metadata struct {
				EventPayload struct {
					RunID       string                  `json:"run_id"`
					Regressions []struct{ Name string } `json:"regressions"`
				} `json:"event_payload"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &got); err != nil || got.Metadata.EventPayload.RunID != second[0].ID ||
			len(got.Metadata.EventPayload.Regressions) != 1 || got.Metadata.EventPayload.Regressions[0].Name != "restore-snapshot" {
			t.Fatalf("alert %s: %v", body, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no alert received")
	}
}
