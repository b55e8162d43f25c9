package app_test

// Crash recovery with a real process killed by SIGKILL: no shutdown hook
// runs, no turn is handed back, leases simply stop being renewed. The test
// binary re-executes itself (TestCrashChild) as the docsmith process, so
// what dies is a whole process with its open SQLite file, exactly as in
// production when a host or container is killed.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
)

const (
	crashEnvChild = "CRASHTEST_CHILD" // "1" makes TestCrashChild run a docsmith process
	crashEnvMode  = "CRASHTEST_MODE"  // the child's runner: crashModeBlock or crashModeComplete
	crashAddrFile = "crash-child-addr"
	crashProject  = "docs"

	crashModeBlock    = "block"    // every turn runs until its context ends
	crashModeComplete = "complete" // every turn succeeds at once
	crashModeReal     = "real"     // the real agent (builtin model)
)

// crashRunner is the child's agent.
type crashRunner struct{ mode string }

func (r crashRunner) RunTurn(ctx context.Context, t agentjob.Turn, _ agentjob.Progress) (agentjob.TurnOutcome, error) {
	if r.mode == crashModeBlock {
		<-ctx.Done()
		return agentjob.TurnOutcome{}, context.Cause(ctx)
	}
	return agentjob.TurnOutcome{Summary: fmt.Sprintf("completed message %d on attempt %d", t.Message.Seq, t.Attempt)}, nil
}

// TestCrashChild is not a test: it is the docsmith process that the crash
// tests start and kill. It does nothing unless CRASHTEST_CHILD=1.
func TestCrashChild(t *testing.T) {
	if os.Getenv(crashEnvChild) != "1" {
		return
	}
	fs := flag.NewFlagSet("crash-child", flag.ContinueOnError)
	loader := config.Bind(fs, true)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := loader.Load(os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: cfg.Logger(os.Stderr)}
	if mode := os.Getenv(crashEnvMode); mode != crashModeReal {
		m.Runner = crashRunner{mode: mode}
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Publish the address atomically: the parent polls for the file.
	tmp := filepath.Join(cfg.DataDir, crashAddrFile+".tmp")
	if err := os.WriteFile(tmp, []byte(m.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(cfg.DataDir, crashAddrFile)); err != nil {
		t.Fatal(err)
	}
	// Wait to be killed. Standard input is a pipe the parent holds open, so
	// a child whose parent died does not linger.
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(3)
}

// crashChild is one running child process.
type crashChild struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   *os.File // the parent's end of the child's stdin; closing it ends an orphan
	logPath string
	done    chan struct{}
	waitErr error
	killed  sync.Once
	base    string // http://host:port
}

// crashStart starts a docsmith child on dir with the runner mode and the
// extra DOCSMITH_* options, and waits until it serves.
func crashStart(t *testing.T, dir, mode string, opts map[string]string) *crashChild {
	t.Helper()
	addrPath := filepath.Join(dir, crashAddrFile)
	if err := os.Remove(addrPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCSMITH_") && !strings.HasPrefix(kv, "CRASHTEST_") {
			env = append(env, kv)
		}
	}
	settings := map[string]string{
		"DOCSMITH_DATA_DIR":         dir,
		"DOCSMITH_ADDR":             "127.0.0.1:0",
		"DOCSMITH_DEMO":             "false",
		"DOCSMITH_WORKERS":          "2",
		"DOCSMITH_TURN_LEASE":       "1s",
		"DOCSMITH_QUEUE_POLL":       "100ms",
		"DOCSMITH_SHUTDOWN_TIMEOUT": "1s",
		"DOCSMITH_LOG_LEVEL":        "debug",
		crashEnvChild:               "1",
		crashEnvMode:                mode,
	}
	for k, v := range opts {
		settings[k] = v
	}
	for k, v := range settings {
		env = append(env, k+"="+v)
	}

	logFile, err := os.CreateTemp(t.TempDir(), "child-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, logFile, logFile
	if err := cmd.Start(); err != nil {
		stdinW.Close()
		t.Fatal(err)
	}
	c := &crashChild{t: t, cmd: cmd, stdin: stdinW, logPath: logFile.Name(), done: make(chan struct{})}
	go func() { c.waitErr = cmd.Wait(); close(c.done) }()
	t.Cleanup(c.kill)

	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(addrPath)
		if err == nil {
			c.base = "http://" + string(b)
			return c
		}
		select {
		case <-c.done:
			t.Fatalf("child (%s mode) exited before serving: %v\n%s", mode, c.waitErr, c.log())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("child (%s mode) did not serve within 20s\n%s", mode, c.log())
		}
	}
}

// kill sends SIGKILL (if the child still runs) and waits for it to die.
func (c *crashChild) kill() { c.killed.Do(c.killOnce) }

func (c *crashChild) killOnce() {
	select {
	case <-c.done:
	default:
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.stdin.Close()
	if log := c.log(); strings.Contains(log, "WARNING: DATA RACE") || strings.Contains(log, "panic:") {
		c.t.Errorf("child process reported a problem:\n%s", log)
	}
}

func (c *crashChild) log() string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return "(no child log: " + err.Error() + ")"
	}
	return string(b)
}

// crashSetup creates an organization, a project and an admin key on a
// fresh data directory through the CLI, and returns the directory and key.
func crashSetup(t testing.TB) (dir, key string) {
	t.Helper()
	dir = t.TempDir()
	run := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		env := cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, LookupEnv: func(string) (string, bool) { return "", false }}
		if code := cli.Run(context.Background(), append(args, "--data", dir), env); code != 0 {
			t.Fatalf("docsmith %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		return strings.TrimSpace(stdout.String())
	}
	run("org", "create", "acme")
	run("project", "create", "--org", "acme", "--id", crashProject, "--repo", filepath.Join(dir, "repo"), "--check=false")
	key = run("key", "create", "--org", "acme", "--kind", "admin")
	if !strings.HasPrefix(key, "svc_") {
		t.Fatalf("key create printed %q, want only an admin secret", key)
	}
	return dir, key
}

type crashJob struct {
	ID       string         `json:"id"`
	Status   string         `json:"status"`
	Error    *string        `json:"error"`
	Messages []crashMessage `json:"messages"`
}

type crashMessage struct {
	Seq        int     `json:"seq"`
	Prompt     string  `json:"prompt"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts"`
	Error      *string `json:"error"`
	StartedAt  *string `json:"startedAt"`
	FinishedAt *string `json:"finishedAt"`
}

// crashAPI talks to whichever child currently serves.
type crashAPI struct {
	t      *testing.T
	key    string
	client *http.Client
	base   string
}

func (a *crashAPI) do(method, path string, body any, wantStatus int, out any) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if resp.StatusCode != wantStatus {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, wantStatus, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

func (a *crashAPI) create(prompt string) crashJob {
	a.t.Helper()
	var j crashJob
	a.do(http.MethodPost, "/v2/agent/"+crashProject+"/job", map[string]string{"prompt": prompt}, http.StatusCreated, &j)
	return j
}

func (a *crashAPI) message(id, prompt string) crashJob {
	a.t.Helper()
	var j crashJob
	a.do(http.MethodPost, "/v2/agent/"+crashProject+"/job/"+id+"/message", map[string]string{"prompt": prompt}, http.StatusOK, &j)
	return j
}

func (a *crashAPI) get(id string) crashJob {
	a.t.Helper()
	var j crashJob
	a.do(http.MethodGet, "/v2/agent/"+crashProject+"/job/"+id, nil, http.StatusOK, &j)
	return j
}

// crashWait polls cond until it holds or the timeout passes; cond returns
// a description of the current state for the failure message.
func crashWait(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, state)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func crashDescribe(j crashJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %s %s", j.ID, j.Status)
	if j.Error != nil {
		fmt.Fprintf(&b, " (error %q)", *j.Error)
	}
	for _, m := range j.Messages {
		fmt.Fprintf(&b, " [seq %d %s attempts %d]", m.Seq, m.Status, m.Attempts)
	}
	return b.String()
}

func crashTime(t *testing.T, s *string, what string) time.Time {
	t.Helper()
	if s == nil {
		t.Fatalf("%s is null", what)
	}
	v, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// TestCrashRecovery kills a process while turns run and follow-ups wait
// behind them, starts another on the same data, and checks that every job
// finishes with every message carried out, in order, none lost.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	dir, key := crashSetup(t)
	opts := map[string]string{"DOCSMITH_TURN_MAX_ATTEMPTS": "3"}
	api := &crashAPI{t: t, key: key, client: &http.Client{Timeout: 10 * time.Second}}

	first := crashStart(t, dir, crashModeBlock, opts)
	api.base = first.base
	// Two workers: jobs 0 and 1 start running, jobs 2 and 3 stay queued.
	sent := map[string][]string{} // job id -> prompts in the order sent
	var ids []string
	for i := range 4 {
		prompt := fmt.Sprintf("job %d: first instruction", i)
		j := api.create(prompt)
		ids = append(ids, j.ID)
		sent[j.ID] = []string{prompt}
	}
	running := func(id string) func() (bool, string) {
		return func() (bool, string) {
			j := api.get(id)
			return len(j.Messages) > 0 && j.Messages[0].Status == "running", crashDescribe(j)
		}
	}
	crashWait(t, 10*time.Second, "job 0's first turn to run", running(ids[0]))
	crashWait(t, 10*time.Second, "job 1's first turn to run", running(ids[1]))
	// Follow-ups queue behind a running turn (jobs 0, 1) and behind a
	// queued one (job 2); job 3 has only its first message.
	followUps := map[int]int{0: 2, 1: 1, 2: 1}
	for i, n := range followUps {
		for k := range n {
			prompt := fmt.Sprintf("job %d: follow-up %d", i, k+1)
			j := api.message(ids[i], prompt)
			sent[ids[i]] = append(sent[ids[i]], prompt)
			if j.Status != "active" {
				t.Fatalf("after a follow-up: %s, want active", crashDescribe(j))
			}
		}
	}
	for _, i := range []int{0, 1} {
		if j := api.get(ids[i]); j.Messages[0].Status != "running" {
			t.Fatalf("before the kill: %s, want its first turn running", crashDescribe(j))
		}
	}

	first.kill()

	second := crashStart(t, dir, crashModeComplete, opts)
	api.base = second.base
	final := map[string]crashJob{}
	crashWait(t, 60*time.Second, "every job to finish after the restart", func() (bool, string) {
		var states []string
		for _, id := range ids {
			j := api.get(id)
			final[id] = j
			states = append(states, crashDescribe(j))
			if j.Status == "active" {
				return false, strings.Join(states, "; ")
			}
		}
		return true, ""
	})

	for _, id := range ids {
		j := final[id]
		t.Logf("after recovery: %s", crashDescribe(j))
		prompts := sent[id]
		if len(j.Messages) != len(prompts) {
			t.Errorf("%s: %d messages, want the %d sent", crashDescribe(j), len(j.Messages), len(prompts))
			continue
		}
		for k, m := range j.Messages {
			if m.Seq != k+1 || m.Prompt != prompts[k] {
				t.Errorf("job %s message %d: seq %d prompt %q, want seq %d prompt %q", id, k, m.Seq, m.Prompt, k+1, prompts[k])
			}
			switch {
			case m.Status == "done":
			case m.Status == "failed" && m.Error != nil && strings.Contains(*m.Error, "interrupted") && m.Attempts >= 3:
				// Allowed only once its attempts are used up, which one kill cannot do.
			default:
				t.Errorf("%s: message %d is %s, want done", crashDescribe(j), m.Seq, m.Status)
			}
		}
		switch {
		case j.Status == "completed":
		case j.Status == "failed" && j.Error != nil && strings.Contains(*j.Error, "interrupted"):
		default:
			t.Errorf("%s: want completed", crashDescribe(j))
		}
		// The turns that were running when the process died ran again.
		if id == ids[0] || id == ids[1] {
			if a := j.Messages[0].Attempts; a != 2 {
				t.Errorf("%s: first turn ran %d times, want 2 (killed once, then run again)", crashDescribe(j), a)
			}
		}
		// Each follow-up started only after the turn before it finished.
		for k := 1; k < len(j.Messages); k++ {
			prev, cur := j.Messages[k-1], j.Messages[k]
			prevStart := crashTime(t, prev.StartedAt, fmt.Sprintf("job %s seq %d startedAt", id, prev.Seq))
			prevEnd := crashTime(t, prev.FinishedAt, fmt.Sprintf("job %s seq %d finishedAt", id, prev.Seq))
			curStart := crashTime(t, cur.StartedAt, fmt.Sprintf("job %s seq %d startedAt", id, cur.Seq))
			if curStart.Before(prevEnd) || curStart.Before(prevStart) {
				t.Errorf("job %s: seq %d started at %s, before seq %d (started %s) finished at %s",
					id, cur.Seq, curStart.Format(time.RFC3339Nano), prev.Seq, prevStart.Format(time.RFC3339Nano), prevEnd.Format(time.RFC3339Nano))
			}
		}
	}
	var active struct {
		Jobs []crashJob `json:"jobs"`
	}
	api.do(http.MethodGet, "/v2/agent/"+crashProject+"/jobs?status=active", nil, http.StatusOK, &active)
	if len(active.Jobs) != 0 {
		t.Errorf("jobs still active after recovery: %d", len(active.Jobs))
	}
	if t.Failed() {
		t.Logf("second child's log:\n%s", second.log())
	}
}

// TestCrashRepeatedKillsFailJob kills the process running the same turn
// until its attempts are used up: the job must end failed, saying why,
// rather than stay active for ever or run the turn again.
func TestCrashRepeatedKillsFailJob(t *testing.T) {
	t.Parallel()
	dir, key := crashSetup(t)
	opts := map[string]string{"DOCSMITH_TURN_MAX_ATTEMPTS": "2"}
	api := &crashAPI{t: t, key: key, client: &http.Client{Timeout: 10 * time.Second}}

	var id string
	for attempt := 1; attempt <= 2; attempt++ {
		child := crashStart(t, dir, crashModeBlock, opts)
		api.base = child.base
		if id == "" {
			id = api.create("an instruction whose turn never survives").ID
		}
		crashWait(t, 10*time.Second, fmt.Sprintf("attempt %d of the turn to run", attempt), func() (bool, string) {
			j := api.get(id)
			m := j.Messages[0]
			return m.Status == "running" && m.Attempts == attempt, crashDescribe(j)
		})
		child.kill()
	}

	// The last process would complete the turn if it ran it again.
	last := crashStart(t, dir, crashModeComplete, opts)
	api.base = last.base
	var j crashJob
	crashWait(t, 30*time.Second, "the job to leave active", func() (bool, string) {
		j = api.get(id)
		return j.Status != "active", crashDescribe(j)
	})
	if j.Status != "failed" || j.Error == nil || !strings.Contains(*j.Error, "interrupted") {
		t.Errorf("%s: want failed with an error saying the turn was interrupted", crashDescribe(j))
	}
	if len(j.Messages) != 1 {
		t.Fatalf("%s: want exactly the one message sent", crashDescribe(j))
	}
	if m := j.Messages[0]; m.Status != "failed" || m.Attempts != 2 || m.Error == nil || !strings.Contains(*m.Error, "interrupted") {
		t.Errorf("%s: want its message failed after 2 attempts with an error saying it was interrupted", crashDescribe(j))
	}
	if t.Failed() {
		t.Logf("last child's log:\n%s", last.log())
	}
}

// TestCrashCancelWhileDead cancels a job whose turn was running on a
// process that died, through a process that runs no workers, then starts
// one that does: the dead turn must end canceled, not be queued again, and
// a later follow-up must run without bringing the canceled instruction back.
func TestCrashCancelWhileDead(t *testing.T) {
	t.Parallel()
	dir, key := crashSetup(t)
	opts := map[string]string{"DOCSMITH_TURN_MAX_ATTEMPTS": "3"}
	api := &crashAPI{t: t, key: key, client: &http.Client{Timeout: 10 * time.Second}}

	first := crashStart(t, dir, crashModeBlock, opts)
	api.base = first.base
	id := api.create("an instruction that gets canceled").ID
	crashWait(t, 10*time.Second, "the first turn to run", func() (bool, string) {
		j := api.get(id)
		return j.Messages[0].Status == "running", crashDescribe(j)
	})
	api.message(id, "a follow-up that gets canceled too")
	first.kill()

	apiOnly := crashStart(t, dir, crashModeComplete, map[string]string{"DOCSMITH_WORKERS": "0"})
	api.base = apiOnly.base
	var canceled crashJob
	api.do(http.MethodPost, "/v2/agent/"+crashProject+"/job/"+id+"/cancel", nil, http.StatusOK, &canceled)
	if canceled.Status != "failed" {
		t.Fatalf("after cancel: %s, want failed", crashDescribe(canceled))
	}
	apiOnly.kill()

	last := crashStart(t, dir, crashModeComplete, opts)
	api.base = last.base
	var j crashJob
	crashWait(t, 30*time.Second, "the dead turn to be taken back", func() (bool, string) {
		j = api.get(id)
		return j.Messages[0].Status != "running", crashDescribe(j)
	})
	if m := j.Messages[0]; m.Status != "canceled" || m.Attempts != 1 {
		t.Fatalf("%s: want the dead turn canceled after its one attempt", crashDescribe(j))
	}
	if j.Status != "failed" || j.Error == nil || !strings.Contains(*j.Error, "canceled") {
		t.Fatalf("%s: want the job still failed as canceled", crashDescribe(j))
	}

	api.message(id, "a follow-up after the cancel")
	crashWait(t, 30*time.Second, "the follow-up to finish", func() (bool, string) {
		j = api.get(id)
		return j.Status != "active", crashDescribe(j)
	})
	t.Logf("after the follow-up: %s", crashDescribe(j))
	want := []struct {
		status   string
		attempts int
	}{{"canceled", 1}, {"canceled", 0}, {"done", 1}}
	if j.Status != "completed" || len(j.Messages) != len(want) {
		t.Fatalf("%s: want completed with %d messages", crashDescribe(j), len(want))
	}
	for k, w := range want {
		if m := j.Messages[k]; m.Status != w.status || m.Attempts != w.attempts {
			t.Errorf("%s: message %d is %s after %d attempts, want %s after %d", crashDescribe(j), m.Seq, m.Status, m.Attempts, w.status, w.attempts)
		}
	}
	if t.Failed() {
		t.Logf("last child's log:\n%s", last.log())
	}
}
