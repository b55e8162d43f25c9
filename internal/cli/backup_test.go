package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
)

var demoAdminKey = regexp.MustCompile(`admin key \(agent endpoints\):\s+(svc_\S+)`)

// startServer starts a demo server on dir, as docsmith serve does.
func startServer(t *testing.T, dir string) (*app.Main, string) {
	t.Helper()
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
	return m, out.String()
}

// TestBackupAndRestoreAServer backs up the data directory of a running
// demo server, is refused a restore over it while it runs, restores the
// backup elsewhere, and starts a server there that serves the first one's
// keys, jobs and demo page.
func TestBackupAndRestoreAServer(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	first, out := startServer(t, dir)
	stopped := false
	defer func() {
		if !stopped {
			_ = first.Shutdown(context.Background())
		}
	}()
	admin := demoAdminKey.FindStringSubmatch(out)
	if admin == nil {
		t.Fatalf("no demo admin key in:\n%s", out)
	}
	base := "http://" + first.Addr()
	jobs := get(t, base+"/v2/agent/demo/jobs", admin[1])
	job := request(t, http.MethodPost, base+"/v2/agent/demo/job", admin[1], `{"prompt": "replace \"4000\" with \"4321\" in reference/serve"}`)
	jobID := regexp.MustCompile(`"id":"([^"]+)"`).FindStringSubmatch(job)
	if jobID == nil {
		t.Fatalf("job create = %s (jobs before: %s)", job, jobs)
	}

	archive := filepath.Join(t.TempDir(), "docsmith.tar.gz")
	if r := run(t, dir, "backup", "--to", archive); r.code != 0 || !strings.Contains(r.stdout, "backed up") {
		t.Fatalf("backup = %+v", r)
	}
	if r := run(t, dir, "backup", "--to", archive); r.code != 1 || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("backup over an existing file = %+v", r)
	}
	if r := run(t, dir, "restore", "--from", archive, "--force"); r.code != 1 || !strings.Contains(r.stderr, "in use by a running docsmith") {
		t.Fatalf("restore over a live data directory = %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "docsmith.db")); err != nil {
		t.Fatalf("the refused restore touched the live directory: %v", err)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	r := run(t, restored, "restore", "--from", archive)
	if r.code != 0 || !strings.Contains(r.stdout, "--id demo --repo "+filepath.Join(restored, "demo-docs.git")) {
		t.Fatalf("restore = %+v", r)
	}
	if r := run(t, restored, "project", "update", "--id", "demo", "--repo", filepath.Join(restored, "demo-docs.git")); r.code != 0 {
		t.Fatalf("project update = %+v", r)
	}
	stopped = true
	if err := first.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	second, _ := startServer(t, restored)
	defer func() { _ = second.Shutdown(context.Background()) }()
	base = "http://" + second.Addr()
	if body := get(t, base+"/v2/agent/demo/job/"+jobID[1], admin[1]); !strings.Contains(body, jobID[1]) {
		t.Fatalf("the job is not served after the restore: %s", body)
	}
	if body := get(t, base+"/demo/", ""); !strings.Contains(body, "data-") {
		t.Fatalf("the demo page is not served after the restore: %s", body)
	}
	// The restored demo page keeps its key: no new one was made.
	if b, err := os.ReadFile(filepath.Join(restored, "demo-widget-key")); err != nil || len(bytes.TrimSpace(b)) == 0 {
		t.Fatalf("demo-widget-key = %q, %v", b, err)
	}
}

func get(t *testing.T, url, key string) string {
	t.Helper()
	return request(t, http.MethodGet, url, key, "")
}

func request(t *testing.T, method, url, key, body string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s = %d %s", method, url, resp.StatusCode, b)
	}
	return string(b)
}
