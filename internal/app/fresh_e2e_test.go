package app_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/giteatest"
	"github.com/docsmith/docsmith/internal/store/storetest"
)

// freshSite is a docs repository on a real Gitea and a docsmith data
// directory with a domain over it, and the docsmith serving it now.
type freshSite struct {
	t       testing.TB
	srv     *giteatest.Server
	repoURL string
	dir     string
	admin   string
	reader  string
	secret  string
	main    *app.Main
	base    string
	client  *http.Client
	logs    *lockedBuffer
	// dbURL, when set, is the PostgreSQL database the replicas share;
	// each replica then has a data directory of its own.
	dbURL string
}

const freshDomain = "quill"

func newFreshSite(t testing.TB, dbURL string) *freshSite {
	t.Helper()
	f := &freshSite{t: t, srv: giteatest.Start(t), dir: t.TempDir(), secret: "docs-hook-secret-0123456789", logs: &lockedBuffer{}, dbURL: dbURL}
	f.repoURL = f.srv.CreateRepo(t, "docs")
	giteaE2EPush(t, f.repoURL, f.srv.User, f.srv.Token)
	f.cli("org", "create", "acme")
	f.cli("project", "create", "--org", "acme", "--id", "docs", "--repo", f.repoURL,
		"--forge", "gitea", "--forge-url", f.srv.URL, "--token-env", "DOCS_FORGE_TOKEN",
		"--webhook-secret-env", "DOCS_HOOK_SECRET", "--check=false")
	// Not indexed by the command: the server does it.
	f.cli("domain", "create", "--org", "acme", "--domain", freshDomain, "--project", "docs",
		"--site-url", "https://docs.quill.example", "--index=false")
	f.admin = strings.TrimSpace(f.cli("key", "create", "--org", "acme", "--kind", "admin"))
	f.reader = strings.TrimSpace(f.cli("key", "create", "--org", "acme", "--kind", "assistant"))
	transport := http.DefaultTransport.(*http.Transport).Clone()
	f.client = &http.Client{Transport: &validatingTransport{t: t, spec: mustSpec(t), next: transport}}
	t.Cleanup(func() {
		f.stop()
		transport.CloseIdleConnections()
		if t.Failed() {
			t.Logf("server log:\n%s", f.logs.String())
		}
	})
	return f
}

// cli runs a docsmith command on the site's data directory or database.
func (f *freshSite) cli(args ...string) string {
	f.t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"DOCSMITH_DATA_DIR": f.dir, "DOCSMITH_GIT_ALLOW_HTTP": "true", "DOCSMITH_DATABASE_URL": f.dbURL}
	if code := cli.Run(f.t.Context(), args, cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok && v != "" }}); code != 0 {
		f.t.Fatalf("docsmith %s: %d %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// start starts docsmith on the data directory, polling every poll (0: no
// polling).
func (f *freshSite) start(poll string) {
	f.t.Helper()
	dataDir := f.dir
	if f.dbURL != "" {
		dataDir = f.t.TempDir()
	}
	env := map[string]string{
		"DOCSMITH_DATA_DIR": dataDir, "DOCSMITH_DATABASE_URL": f.dbURL, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false",
		"DOCSMITH_GIT_ALLOW_HTTP": "true", "DOCSMITH_QUEUE_POLL": "100ms", "DOCSMITH_LOG_LEVEL": "debug",
		"DOCSMITH_INDEX_POLL_INTERVAL": poll, "DOCSMITH_WORKFLOW_TICK": "1h",
		// The test reads every surface many times a second from one IP.
		"DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE": "0",
	}
	cfg, err := config.Bind(flag.NewFlagSet("test", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok && v != "" })
	if err != nil {
		f.t.Fatal(err)
	}
	f.main = &app.Main{Config: cfg, Log: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), LookupEnv: func(k string) (string, bool) {
		switch k {
		case "DOCS_FORGE_TOKEN":
			return f.srv.Token, true
		case "DOCS_HOOK_SECRET":
			return f.secret, true
		}
		return "", false
	}}
	if err := f.main.Start(f.t.Context()); err != nil {
		f.t.Fatal(err)
	}
	f.base = "http://" + f.main.Addr()
}

func (f *freshSite) stop() {
	if f.main != nil {
		if err := f.main.Shutdown(f.t.Context()); err != nil {
			f.t.Errorf("shutdown: %v", err)
		}
		f.main = nil
	}
}

// call sends a request to docsmith and returns the status and body.
func (f *freshSite) call(method, path, key, body string, header ...string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.base+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// domainIndex is the index object of GET /v2/domains/{domain}.
type domainIndex struct {
	Commit      *string `json:"commit"`
	Head        *string `json:"head"`
	Pages       int     `json:"pages"`
	Passages    int     `json:"passages"`
	LastError   *string `json:"lastError"`
	LastErrorAt *string `json:"lastErrorAt"`
	LagSeconds  int64   `json:"lagSeconds"`
}

func (f *freshSite) status() domainIndex {
	f.t.Helper()
	code, body := f.call(http.MethodGet, "/v2/domains/"+freshDomain, f.admin, "")
	if code != http.StatusOK {
		f.t.Fatalf("GET /v2/domains/%s = %d: %s", freshDomain, code, body)
	}
	var d struct {
		Index domainIndex `json:"index"`
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		f.t.Fatal(err)
	}
	return d.Index
}

// surfaces are the three ways readers reach the docs, each with what it
// returns for a phrase.
func (f *freshSite) surfaces(phrase, page string) map[string]string {
	f.t.Helper()
	out := map[string]string{}
	q, _ := json.Marshal(map[string]any{"query": phrase, "pageSize": 5})
	code, body := f.call(http.MethodPost, "/discovery/v1/search/"+freshDomain, f.reader, string(q))
	out["search"] = fmt.Sprintf("%d %s", code, body)
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "get_page", "arguments": map[string]string{"path": page}}})
	code, body = f.call(http.MethodPost, "/discovery/v1/mcp/"+freshDomain, f.reader, string(call), "Accept", "application/json, text/event-stream")
	out["mcp get_page"] = fmt.Sprintf("%d %s", code, body)
	code, body = f.call(http.MethodGet, "/discovery/v1/llms-full.txt/"+freshDomain, "", "")
	out["llms-full.txt"] = fmt.Sprintf("%d %s", code, body)
	return out
}

// waitServed waits until every surface serves the phrase (gone: none does)
// and returns how long that took.
func (f *freshSite) waitServed(phrase, page string, gone bool, within time.Duration) time.Duration {
	f.t.Helper()
	start := time.Now()
	for {
		got := f.surfaces(phrase, page)
		done := true
		for _, body := range got {
			if strings.Contains(body, phrase) == gone {
				done = false
			}
		}
		if done {
			return time.Since(start)
		}
		if time.Since(start) > within {
			for name, body := range got {
				f.t.Logf("%s: %.600s", name, body)
			}
			f.t.Fatalf("after %s the surfaces do not all serve %q (gone: %v); status %+v", within, phrase, gone, f.status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gitWork is a clone of the docs repository to change and push.
func (f *freshSite) gitWork() (string, func(args ...string)) {
	f.t.Helper()
	u, err := url.Parse(f.repoURL)
	if err != nil {
		f.t.Fatal(err)
	}
	u.User = url.UserPassword(f.srv.User, f.srv.Token)
	home := f.t.TempDir()
	work := filepath.Join(f.t.TempDir(), "work")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+home,
			"GIT_AUTHOR_NAME=Writer", "GIT_AUTHOR_EMAIL=w@example.invalid", "GIT_COMMITTER_NAME=Writer", "GIT_COMMITTER_EMAIL=w@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(f.t.TempDir(), "clone", "--quiet", u.String(), work)
	return work, func(args ...string) { run(work, args...) }
}

// appendToPage adds a paragraph to a page and pushes it to main.
func (f *freshSite) appendToPage(page, paragraph string) {
	f.t.Helper()
	work, git := f.gitWork()
	p := filepath.Join(work, filepath.FromSlash(page)+".mdx")
	text, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, append(text, []byte("\n"+paragraph+"\n")...), 0o644); err != nil {
		f.t.Fatal(err)
	}
	git("commit", "--quiet", "-am", "Add to "+page)
	git("push", "--quiet", "origin", "main")
}

const (
	pollPhrase    = "Rotate your API token every ninety days with quill token rotate"
	hookPhrase    = "Quill renders footnotes as numbered asides since version four"
	themesPhrase  = "Quill ships with two themes"
	unusedPhrase  = "Nobody ever wrote this sentence into the docs"
	installPage   = "guides/install"
	themesPage    = "guides/themes"
	firstSitePage = "guides/first-site"
)

// TestRealGiteaIndexFollowsTheRepository: a docs repository on a real
// Gitea, and no index command run after the first build. A page changed
// and pushed reaches search, MCP get_page and llms-full.txt through a
// signed Gitea push webhook, then, with the webhook's target gone, through
// the poll; a force-push that removes a page removes it from all three; a
// repository that goes away keeps the last index serving while the domain
// status says why.
func TestRealGiteaIndexFollowsTheRepository(t *testing.T) {
	t.Parallel()
	f := newFreshSite(t, "")

	// Webhooks only: no poll.
	f.start("0")
	code, body := f.call(http.MethodPost, "/v2/domains/"+freshDomain+"/index", f.admin, "")
	if code != http.StatusOK {
		t.Fatalf("first index: %d %s", code, body)
	}
	st := f.status()
	if st.Commit == nil || st.Head == nil || *st.Commit != *st.Head || st.Pages == 0 || st.Passages == 0 || st.LastError != nil || st.LagSeconds != 0 {
		t.Fatalf("status after the first build: %+v", st)
	}
	f.waitServed(themesPhrase, themesPage, false, 10*time.Second)

	rec := newDeliveryRecorder(t, f.base)
	hook := map[string]any{
		"type": "gitea", "active": true, "events": []string{"push"}, "branch_filter": "*",
		"config": map[string]string{"url": rec.URL + "/v2/hooks/docs", "content_type": "json", "secret": f.secret},
	}
	f.srv.API(t, http.MethodPost, "/repos/"+f.srv.User+"/docs/hooks", mustJSONBytes(t, hook), http.StatusCreated, nil)

	f.appendToPage(firstSitePage, hookPhrase)
	delivery := rec.wait(t)
	delivered := time.Now()
	if delivery.status != http.StatusOK || !bytes.Contains(delivery.reply, []byte(`"reindexed":["`+freshDomain+`"]`)) {
		t.Fatalf("the push delivery: %d %s", delivery.status, delivery.reply)
	}
	f.waitServed(hookPhrase, firstSitePage, false, 30*time.Second)
	t.Logf("push webhook: served %s after the delivery was answered", time.Since(delivered).Round(time.Millisecond))

	// A force-push that replaces that commit with one that drops the
	// themes page (and its navigation entry).
	work, git := f.gitWork()
	git("reset", "--quiet", "--hard", "HEAD~1")
	if err := os.Remove(filepath.Join(work, "guides", "themes.mdx")); err != nil {
		t.Fatal(err)
	}
	nav, err := os.ReadFile(filepath.Join(work, "docs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "docs.json"), bytes.Replace(nav, []byte(`, "guides/themes"`), nil, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "--quiet", "-m", "Drop the themes page")
	git("push", "--quiet", "--force", "origin", "main")
	f.waitServed(themesPhrase, themesPage, true, 30*time.Second)
	// The page before it, edited in the commit the force-push replaced,
	// is back to what it was.
	f.waitServed(hookPhrase, firstSitePage, true, 10*time.Second)

	// Polling only: docsmith moves to a new address, the webhook's
	// target is gone.
	f.stop()
	f.start("1s")
	f.appendToPage(installPage, pollPhrase)
	took := f.waitServed(pollPhrase, installPage, false, 60*time.Second)
	t.Logf("poll every 1s: served %s after the push", took.Round(time.Millisecond))
	st = f.status()
	if st.Commit == nil || st.Head == nil || *st.Commit != *st.Head || st.LastError != nil || st.LagSeconds != 0 {
		t.Fatalf("status after the poll's build: %+v", st)
	}

	// The repository goes away: the last index serves on, the status says
	// why, and the metrics count the rebuilds.
	served := *st.Commit
	f.srv.API(t, http.MethodDelete, "/repos/"+f.srv.User+"/docs", nil, http.StatusNoContent, nil)
	deadline := time.Now().Add(30 * time.Second)
	for st = f.status(); st.LastError == nil; st = f.status() {
		if time.Now().After(deadline) {
			t.Fatalf("30s after the repository was deleted, the status shows no error: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st.Commit == nil || *st.Commit != served || st.LastErrorAt == nil || !strings.Contains(*st.LastError, "docs") {
		t.Fatalf("status with the repository gone: %+v", st)
	}
	t.Logf("the status says: %s", *st.LastError)
	f.waitServed(pollPhrase, installPage, false, time.Second)
	if _, out := f.call(http.MethodGet, "/v2/domains/nope", f.admin, ""); !strings.Contains(out, "nope") {
		t.Errorf("an unknown domain: %s", out)
	}
	code, metrics := f.call(http.MethodGet, "/metrics", "", "")
	for _, want := range []string{
		`docsmith_index_lag_seconds{domain="quill"} 0`,
		`docsmith_index_rebuilds_total{domain="quill",result="ok"}`,
		`docsmith_index_rebuild_duration_seconds_count`,
	} {
		if code != http.StatusOK || !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(f.logs.String(), f.srv.Token) {
		t.Errorf("the log holds the forge token")
	}
}

// TestRealGiteaPushServedByEveryReplica: two replicas on one PostgreSQL
// database; Gitea delivers the push webhook to one of them, which
// rebuilds the index; the other serves the new text through search, MCP
// and llms-full.txt too, with no command run and no poll.
func TestRealGiteaPushServedByEveryReplica(t *testing.T) {
	t.Parallel()
	a := newFreshSite(t, storetest.PostgresURL(t))
	a.start("0")
	b := *a
	b.main = nil
	b.start("0")
	t.Cleanup(b.stop)
	code, body := a.call(http.MethodPost, "/v2/domains/"+freshDomain+"/index", a.admin, "")
	if code != http.StatusOK {
		t.Fatalf("first index: %d %s", code, body)
	}
	b.waitServed(themesPhrase, themesPage, false, 10*time.Second)

	rec := newDeliveryRecorder(t, a.base)
	hook := map[string]any{
		"type": "gitea", "active": true, "events": []string{"push"}, "branch_filter": "main",
		"config": map[string]string{"url": rec.URL + "/v2/hooks/docs", "content_type": "json", "secret": a.secret},
	}
	a.srv.API(t, http.MethodPost, "/repos/"+a.srv.User+"/docs/hooks", mustJSONBytes(t, hook), http.StatusCreated, nil)
	a.appendToPage(firstSitePage, hookPhrase)
	if d := rec.wait(t); d.status != http.StatusOK {
		t.Fatalf("the push delivery to replica a: %d %s", d.status, d.reply)
	}
	delivered := time.Now()
	a.waitServed(hookPhrase, firstSitePage, false, 30*time.Second)
	onA := time.Since(delivered)
	b.waitServed(hookPhrase, firstSitePage, false, 10*time.Second)
	t.Logf("served by the replica that took the webhook %s after the delivery, by the other %s after it",
		onA.Round(time.Millisecond), time.Since(delivered).Round(time.Millisecond))
	if sa, sb := a.status(), b.status(); sa.Commit == nil || sb.Commit == nil || *sa.Commit != *sb.Commit {
		t.Fatalf("the replicas disagree on the indexed commit: %+v, %+v", sa, sb)
	}
}
