package app_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// startWith starts a process on dir with these options besides the usual
// test ones; the caller shuts it down.
func startWith(t *testing.T, dir string, env map[string]string) (*app.Main, error) {
	t.Helper()
	values := map[string]string{
		"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false", "DOCSMITH_WORKERS": "0",
		"DOCSMITH_SHUTDOWN_TIMEOUT": "2s", "DOCSMITH_LIMIT_AGENT_PER_PROJECT_HOUR": "0",
	}
	for k, v := range env {
		values[k] = v
	}
	cfg, err := config.Bind(flag.NewFlagSet("test", flag.ContinueOnError), true).Load(func(k string) (string, bool) {
		v, ok := values[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), Runner: testRunner{}}
	return m, m.Start(t.Context())
}

type plainReply struct {
	status int
	body   string
}

func call(t *testing.T, method, url, key, body string) plainReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
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
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return plainReply{status: resp.StatusCode, body: string(b)}
}

// TestFullDiskSaysSo: with the data directory on a small tmpfs that fills
// up, creating a job answers 507 with a message that says the disk is full
// (never a bare 500), /readyz turns 503 and says why, and both recover once
// space is freed. It needs to mount a tmpfs (root); the same faults without
// a real disk are covered by the sqlite package's tests.
func TestFullDiskSaysSo(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("skipping the full-disk test on a real filesystem: mounting a tmpfs was refused (%v: %s); TestFullDatabaseSaysSo in the sqlite package covers the same fault", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	dir := filepath.Join(mnt, "data")
	key := shutdownSeed(t, dir)
	m, err := startWith(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Shutdown(context.Background()) }()
	base := "http://" + m.Addr()
	if r := call(t, http.MethodGet, base+"/readyz", "", ""); r.status != http.StatusOK {
		t.Fatalf("readyz before the disk filled: %d %s", r.status, r.body)
	}

	filler := filepath.Join(mnt, "filler")
	fillDisk(t, filler)
	var full plainReply
	for range 200 {
		r := call(t, http.MethodPost, base+"/v2/agent/docs/job", key, `{"prompt":"`+strings.Repeat("fix the typo ", 200)+`"}`)
		if r.status == http.StatusCreated {
			continue
		}
		full = r
		break
	}
	if full.status != http.StatusInsufficientStorage || !strings.Contains(full.body, "disk is full") || !strings.Contains(full.body, `"error"`) {
		t.Fatalf("a job created on a full disk got %d %s, want 507 saying the disk is full", full.status, full.body)
	}
	r := call(t, http.MethodGet, base+"/readyz", "", "")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "disk is full") || !strings.Contains(r.body, "SQLite") {
		t.Errorf("readyz on a full disk: %d %s, want 503 naming the database and the full disk", r.status, r.body)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if r := call(t, http.MethodGet, base+"/readyz", "", ""); r.status != http.StatusOK {
		t.Errorf("readyz once space is freed: %d %s", r.status, r.body)
	}
	if r := call(t, http.MethodPost, base+"/v2/agent/docs/job", key, `{"prompt":"fix the typo"}`); r.status != http.StatusCreated {
		t.Errorf("a job once space is freed: %d %s", r.status, r.body)
	}
}

// fillDisk writes path until the filesystem has no room left.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for len(chunk) > 1 { // the last blocks too
		chunk = chunk[:len(chunk)/2]
		for {
			if _, err := f.Write(chunk); err != nil {
				break
			}
		}
	}
}

// TestLostDatabaseRefusesToStart: a data directory whose database was
// deleted does not start over empty (where every key would 401): the
// process refuses to start, says what is missing and which option allows
// a fresh database, and starts with it.
func TestLostDatabaseRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shutdownSeed(t, dir)
	for _, name := range []string{sqlite.FileName, sqlite.FileName + "-wal", sqlite.FileName + "-shm"} {
		_ = os.Remove(filepath.Join(dir, name))
	}
	m, err := startWith(t, dir, nil)
	if err == nil {
		_ = m.Shutdown(context.Background())
		t.Fatal("started on a data directory that lost its database")
	}
	for _, want := range []string{dir, sqlite.FileName, "--allow-new-database=true", "DOCSMITH_ALLOW_NEW_DATABASE"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	m, err = startWith(t, dir, map[string]string{"DOCSMITH_ALLOW_NEW_DATABASE": "true"})
	if err != nil {
		t.Fatalf("start with a fresh database allowed: %v", err)
	}
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestReadinessNamesRedis: when Redis stops answering, /readyz says that
// Redis is down, not the database. Redis is reached through a proxy the
// test cuts.
func TestReadinessNamesRedis(t *testing.T) {
	t.Parallel()
	redisURL, _ := storetest.RedisURL(t) // skips without a Redis to test against
	u, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.addr()
	m, err := startWith(t, t.TempDir(), map[string]string{"DOCSMITH_REDIS_URL": u.String(), "DOCSMITH_DEMO": "true"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Shutdown(context.Background()) }()
	base := "http://" + m.Addr()
	if r := call(t, http.MethodGet, base+"/readyz", "", ""); r.status != http.StatusOK {
		t.Fatalf("readyz with Redis up: %d %s", r.status, r.body)
	}
	proxy.cut()
	r := call(t, http.MethodGet, base+"/readyz", "", "")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "Redis") || strings.Contains(r.body, "database") {
		t.Errorf("readyz with Redis down: %d %s, want 503 naming Redis only", r.status, r.body)
	}
	// A request that must be counted against a limit is not served, and
	// says that Redis is why.
	r = call(t, http.MethodGet, base+"/discovery/v1/llms.txt/demo", "", "")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "Redis") || !strings.Contains(r.body, `"error"`) {
		t.Errorf("a rate-limited request with Redis down: %d %s, want a 503 JSON error naming Redis", r.status, r.body)
	}
}

// cutProxy forwards TCP connections to a server until cut, which closes
// the listener and every connection.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln}
	t.Cleanup(p.cut)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) cut() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// TestIndexUnreachableRepositoryIs502: indexing a domain whose repository
// does not answer is a 502 that says so and what git reported, not a 409.
func TestIndexUnreachableRepositoryIs502(t *testing.T) {
	t.Parallel()
	s := setup(t)
	s.cli("project", "create", "--org", orgA, "--id", "gone", "--repo", "https://127.0.0.1:1/docs.git")
	s.cli("domain", "create", "--org", orgA, "--domain", "gone", "--project", "gone")
	r := s.post("/v2/domains/gone/index", s.adminA, nil)
	expectError(t, "index of an unreachable repository", r, http.StatusBadGateway, "project gone could not be reached", "git said:")
}
