package app_test

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
)

type jobCLIRunner struct{}

func (jobCLIRunner) RunTurn(ctx context.Context, t agentjob.Turn, p agentjob.Progress) (agentjob.TurnOutcome, error) {
	p.Emit(ctx, "tool", map[string]any{"name": "str_replace", "target": "str_replace guides/a.mdx", "ok": true})
	return agentjob.TurnOutcome{Summary: "Edited a page.", PRLink: "https://forge.example/pr/7", PRNumber: 7, FilesChanged: []string{"guides/a.mdx"}}, nil
}

// TestJobCLIClient drives the job commands of the CLI against the real
// server: create --watch prints the progress as it happens, list and get
// show the job.
func TestJobCLIClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(env map[string]string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := cli.Run(t.Context(), args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		}})
		return code, out.String(), errOut.String()
	}
	local := map[string]string{"DOCSMITH_DATA_DIR": dir}
	run(local, "org", "create", "acme")
	run(local, "project", "create", "--org", "acme", "--id", "docs", "--repo", "/srv/docs", "--check=false")
	_, key, _ := run(local, "key", "create", "--org", "acme", "--kind", "admin")

	cfg, err := config.Bind(flag.NewFlagSet("t", flag.ContinueOnError), true).Load(func(k string) (string, bool) {
		v, ok := map[string]string{"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), Runner: jobCLIRunner{}}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(context.Background()) })

	remote := map[string]string{"DOCSMITH_URL": "http://" + m.Addr(), "DOCSMITH_API_KEY": strings.TrimSpace(key), "DOCSMITH_PROJECT": "docs"}
	code, out, errOut := run(remote, "job", "create", "--watch", "Document the new --watch flag")
	if code != 0 {
		t.Fatalf("job create --watch = %d: %s", code, errOut)
	}
	for _, want := range []string{"on branch docsmith/", "turn #1 started", "tool str_replace guides/a.mdx (ok)", "turn #1 done", "status completed  https://forge.example/pr/7: Edited a page."} {
		if !strings.Contains(out, want) {
			t.Errorf("watch output lacks %q:\n%s", want, out)
		}
	}
	id := strings.Fields(out)[1]
	if code, out, _ := run(remote, "job", "list"); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "completed") {
		t.Errorf("job list = %d:\n%s", code, out)
	}
	if code, out, _ := run(remote, "job", "get", id); code != 0 || !strings.Contains(out, "summary  Edited a page.") {
		t.Errorf("job get = %d:\n%s", code, out)
	}
	if code, _, errOut := run(remote, "job", "get", "no-such-job"); code != 1 || !strings.Contains(errOut, "not found (HTTP 404)") {
		t.Errorf("job get of an unknown job = %d: %s", code, errOut)
	}
	if code, _, errOut := run(map[string]string{}, "job", "list"); code != 1 || !strings.Contains(errOut, "DOCSMITH_API_KEY") {
		t.Errorf("job list without a key = %d: %s", code, errOut)
	}

	// Watching the finished job later shows when each event happened, not
	// the time of reading: wait for the clock to pass into another second.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	code, out, errOut = run(remote, "job", "watch", id)
	if code != 0 {
		t.Fatalf("job watch of a finished job = %d: %s", code, errOut)
	}
	now := time.Now().Format("15:04:05")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, now) {
			t.Errorf("job watch shows the time of reading, %s, on %q", now, line)
		}
	}

	// A server that does not answer is named with the flag that sets it.
	down := map[string]string{"DOCSMITH_URL": "http://127.0.0.1:1", "DOCSMITH_API_KEY": "svc_x", "DOCSMITH_PROJECT": "docs"}
	if code, _, errOut := run(down, "job", "list"); code != 1 || !strings.Contains(errOut, "--url or DOCSMITH_URL") {
		t.Errorf("job list with no server = %d: %s", code, errOut)
	}
}
