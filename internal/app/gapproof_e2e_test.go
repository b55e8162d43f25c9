package app_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/giteatest"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

// The page the scripted model writes to answer the snapshot questions.
const snapshotsPage = `---
title: "Snapshots"
description: "Keep and restore snapshots of the built site."
---

Quill keeps a snapshot of the built site after every build, in ` + "`.quill/snapshots`" + `.

## Restore a snapshot

To restore a snapshot of the site, run ` + "`quill snapshot restore NAME`" + `. Restoring a snapshot replaces
the built site with the snapshot's pages; older snapshots are restored the same way.
`

// TestGapClosesWithProofWhenItsJobMerges is a gap's whole lifecycle
// against a real Gitea and real git: readers' questions the docs do not
// answer make two gaps; a job started from each (Gap → job in the
// dashboard) runs with a scripted model and opens a pull request; merging
// the first (a git merge into main) makes the next index build ask its
// questions again, which the new page answers: the gap closes with the
// answer and the cited page as proof. Merging the second, which does not
// answer its questions, reopens its gap with what the assistant said. The
// questions asked again never count as readers' questions.
func TestGapClosesWithProofWhenItsJobMerges(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	docsURL := srv.CreateRepo(t, "docs")
	giteaE2EPush(t, docsURL, srv.User, srv.Token)

	model := llmtest.NewOpenAIServer(t,
		// The snapshot gap's job: a new page, in the navigation.
		llmtest.ToolCalls(llmtest.ToolCall{Name: "create_file", Arguments: mustJSON(t, map[string]string{"path": "guides/snapshots.mdx", "content": snapshotsPage})}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "str_replace", Arguments: mustJSON(t, map[string]string{"path": "docs.json",
			"old_str": `"guides/pages", "guides/themes"]`, "new_str": `"guides/pages", "guides/themes", "guides/snapshots"]`})}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "finish", Arguments: `{"summary":"Added a page on restoring snapshots."}`}),
		// The Helm gap's job: an edit that does not answer it.
		llmtest.ToolCalls(llmtest.ToolCall{Name: "str_replace", Arguments: mustJSON(t, map[string]string{"path": "guides/themes.mdx",
			"old_str": "Quill ships with two themes,", "new_str": "Quill ships with two built-in themes,"})}),
		llmtest.ToolCalls(llmtest.ToolCall{Name: "finish", Arguments: `{"summary":"Clarified the themes page."}`}),
	)

	dir := t.TempDir()
	giteaE2ECLI(t, dir, "org", "create", "acme")
	giteaE2ECLI(t, dir, "project", "create", "--org", "acme", "--id", "docs", "--repo", docsURL,
		"--forge", "gitea", "--forge-url", srv.URL, "--token-env", "DOCS_FORGE_TOKEN", "--model", "openai/test-model", "--check=false")
	giteaE2ECLI(t, dir, "domain", "create", "--org", "acme", "--domain", "quill", "--project", "docs",
		"--site-url", "https://docs.quill.example", "--index=false")
	admin := strings.TrimSpace(giteaE2ECLI(t, dir, "key", "create", "--org", "acme", "--kind", "admin"))
	reader := strings.TrimSpace(giteaE2ECLI(t, dir, "key", "create", "--org", "acme", "--kind", "assistant"))
	base, logs := startGapServer(t, dir, srv, model.URL)
	started := time.Now()
	waitIndexed(t, base, admin, "quill", "")
	t.Logf("indexed after %s", time.Since(started))
	snapshotQuestions := []string{"How do I restore a snapshot of the site?", "Can I restore an older snapshot?"}
	helmQuestions := []string{"Is there a Helm chart to deploy Quill on Kubernetes?", "How do I install the Helm chart on Kubernetes?"}
	for _, q := range append(append([]string{}, snapshotQuestions...), helmQuestions...) {
		if status := askAsReader(t, base, reader, "quill", q); status != "not_covered" {
			t.Fatalf("%q was answered %s before any fix; the test needs it not covered", q, status)
		}
	}
	readerQuestions := insightsQuestions(t, base, admin, "quill")

	ui := signInUI(t, base, admin)
	snapshotJob := ui.startGapJob(t, "quill", snapshotQuestions[0], "")
	job := giteaE2EWait(t, admin, base+"/v2/agent/docs/job/"+snapshotJob)
	if job.Status != "completed" || job.PRLink == nil {
		t.Fatalf("the snapshot gap's job = %+v", job)
	}
	t.Logf("the first job done after %s", time.Since(started))
	if g := gapOf(t, base, admin, "quill", snapshotQuestions[0]); g.State != "in_progress" || g.Lifecycle == nil || g.Lifecycle.JobID != snapshotJob {
		t.Fatalf("before the merge the gap is %+v", g)
	}

	// The pull request is merged: the next build holds the job's commit.
	merged := mergeBranch(t, docsURL, srv.User, srv.Token, jobBranch(t, base, admin, snapshotJob))
	waitIndexed(t, base, admin, "quill", merged)
	closed := waitGapState(t, base, admin, "quill", snapshotQuestions[0], "closed", logs)
	t.Logf("closed after %s", time.Since(started))
	l := closed.Lifecycle
	if l.CheckedCommit != merged || l.ClosedAt == nil || len(l.Answers) != len(snapshotQuestions) {
		t.Fatalf("closed lifecycle = %+v, want checked at %s", l, merged)
	}
	for _, a := range l.Answers {
		if a.Status != "answered" || len(a.Cited) == 0 || a.Cited[0] != "guides/snapshots" || !strings.Contains(strings.ToLower(a.Text), "restore") || a.Commit != merged {
			t.Errorf("proof of %q = %+v", a.Question, a)
		}
	}

	// The Helm gap's job changes the docs without answering it.
	helmJob := ui.startGapJob(t, "quill", helmQuestions[0], "")
	if job := giteaE2EWait(t, admin, base+"/v2/agent/docs/job/"+helmJob); job.Status != "completed" {
		t.Fatalf("the Helm gap's job = %+v", job)
	}
	merged2 := mergeBranch(t, docsURL, srv.User, srv.Token, jobBranch(t, base, admin, helmJob))
	waitIndexed(t, base, admin, "quill", merged2)
	reopened := waitGapState(t, base, admin, "quill", helmQuestions[0], "reopened", logs)
	if l := reopened.Lifecycle; l.CheckedCommit != merged2 || l.ClosedAt != nil || len(l.Answers) == 0 || l.Answers[0].Status == "answered" || l.Answers[0].Text == "" {
		t.Fatalf("reopened lifecycle = %+v", l)
	}
	// The closed gap stays closed: its job has nothing new to look at.
	if g := gapOf(t, base, admin, "quill", snapshotQuestions[0]); g.State != "closed" || g.Lifecycle.CheckedCommit != merged {
		t.Errorf("after the second merge the snapshot gap is %+v", g)
	}
	// The questions asked again are not readers' questions.
	if got := insightsQuestions(t, base, admin, "quill"); got != readerQuestions {
		t.Errorf("insights count %d questions after the checks, want the readers' %d", got, readerQuestions)
	}

	// A reader asks the snapshot question again: answered, and counted as
	// answered since its gap closed.
	if status := askAsReader(t, base, reader, "quill", "How can I restore a snapshot?"); status != "answered" {
		t.Fatalf("a reader's snapshot question after the close was %s", status)
	}
	code, body := adminGet(t, base, admin, "/v2/analytics/quill/insights")
	var in struct {
		AnsweredSinceClosed int `json:"answeredSinceClosed"`
	}
	if err := json.Unmarshal(body, &in); code != http.StatusOK || err != nil || in.AnsweredSinceClosed != 1 {
		t.Fatalf("insights: %d %s", code, body)
	}
	// The dashboard shows both lifecycles, with the proof.
	page := ui.get(t, "/ui/domains/quill/gaps")
	for _, want := range []string{`badge g-closed">closed`, `badge g-reopened">reopened`, "Cited <code>guides/snapshots</code>", "quill snapshot restore NAME", *job.PRLink} {
		if !strings.Contains(page, want) {
			t.Errorf("the gaps page lacks %q", want)
		}
	}
	if p := ui.get(t, "/ui/domains/quill/insights"); !strings.Contains(p, `<span class="n">1</span> answered since their gap closed`) {
		t.Errorf("the insights page does not count the question answered since its gap closed")
	}
	t.Run("in a browser", func(t *testing.T) {
		browser := browsertest.Find(t)
		var run struct {
			Failure             string   `json:"failure"`
			Console             []string `json:"console"`
			States              []string `json:"states"`
			Proofs              []string `json:"proofs"`
			AnsweredSinceClosed string   `json:"answeredSinceClosed"`
		}
		browser.Run(t, "gap-proof.mjs", map[string]any{"base": base, "adminKey": admin, "domain": "quill", "artifacts": browsertest.ArtifactsDir(t, "gap-proof")}, &run)
		if run.Failure != "" || len(run.Console) > 0 {
			t.Fatalf("browser: %s\nconsole: %q", run.Failure, run.Console)
		}
		if !slices.Contains(run.States, "closed") || !slices.Contains(run.States, "reopened") || len(run.Proofs) != 2 ||
			!strings.Contains(strings.Join(run.Proofs, "\n"), "Cited guides/snapshots") || !strings.HasPrefix(run.AnsweredSinceClosed, "1") {
			t.Errorf("the browser saw states %q, proofs %q, %q", run.States, run.Proofs, run.AnsweredSinceClosed)
		}
	})
}

// TestBuiltinGapJobRunsToACommit: on a project whose model is builtin,
// Gap → job drafts a command the builtin model runs, and the job started
// with the draft as it is ends with a commit and a pull request, not a
// failure.
func TestBuiltinGapJobRunsToACommit(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	docsURL := srv.CreateRepo(t, "docs")
	giteaE2EPush(t, docsURL, srv.User, srv.Token)
	dir := t.TempDir()
	giteaE2ECLI(t, dir, "org", "create", "acme")
	giteaE2ECLI(t, dir, "project", "create", "--org", "acme", "--id", "docs", "--repo", docsURL,
		"--forge", "gitea", "--forge-url", srv.URL, "--token-env", "DOCS_FORGE_TOKEN", "--check=false")
	giteaE2ECLI(t, dir, "domain", "create", "--org", "acme", "--domain", "quill", "--project", "docs",
		"--site-url", "https://docs.quill.example", "--index=false")
	admin := strings.TrimSpace(giteaE2ECLI(t, dir, "key", "create", "--org", "acme", "--kind", "admin"))
	reader := strings.TrimSpace(giteaE2ECLI(t, dir, "key", "create", "--org", "acme", "--kind", "assistant"))
	base, _ := startGapServer(t, dir, srv, "http://127.0.0.1:1")
	waitIndexed(t, base, admin, "quill", "")
	for _, q := range []string{"How do I restore a snapshot of the site?", "Can I restore an older snapshot?"} {
		askAsReader(t, base, reader, "quill", q)
	}
	ui := signInUI(t, base, admin)
	jobID := ui.startGapJob(t, "quill", "Can I restore an older snapshot?", "cannot write the documentation")
	job := giteaE2EWait(t, admin, base+"/v2/agent/docs/job/"+jobID)
	if job.Status != "completed" || job.PRLink == nil {
		t.Fatalf("the builtin job = %+v", job)
	}
	var full struct {
		FilesChanged []string `json:"filesChanged"`
	}
	apiCall(t, admin, http.MethodGet, base+"/v2/agent/docs/job/"+jobID, "", http.StatusOK, &full)
	slices.Sort(full.FilesChanged)
	if len(full.FilesChanged) != 2 || full.FilesChanged[0] != "docs.json" || !strings.HasPrefix(full.FilesChanged[1], "restore-snapshot") || !strings.HasSuffix(full.FilesChanged[1], ".mdx") {
		t.Fatalf("the builtin job changed %v, want a new page and the navigation", full.FilesChanged)
	}
}

// startGapServer starts docsmith on dir, polling the branches every 200ms,
// with the model provider at modelURL.
func startGapServer(t *testing.T, dir string, srv *giteatest.Server, modelURL string) (string, *lockedBuffer) {
	t.Helper()
	env := map[string]string{
		"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false",
		"DOCSMITH_GIT_ALLOW_HTTP": "true", "DOCSMITH_QUEUE_POLL": "100ms", "DOCSMITH_INDEX_POLL_INTERVAL": "200ms",
		"DOCSMITH_OPENAI_BASE_URL": modelURL, "DOCSMITH_OPENAI_API_KEY": "test-key", "DOCSMITH_WORKFLOW_TICK": "1h",
		"DOCSMITH_LIMIT_ASSISTANT_PER_IP_BURST": "0", "DOCSMITH_LIMIT_ASSISTANT_PER_IP_MINUTE": "0",
	}
	cfg, err := config.Bind(flag.NewFlagSet("test", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	m := &app.Main{Config: cfg, Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), LookupEnv: func(k string) (string, bool) {
		if k == "DOCS_FORGE_TOKEN" {
			return srv.Token, true
		}
		return "", false
	}}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.Shutdown(t.Context())
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return "http://" + m.Addr(), logs
}

func adminGet(t *testing.T, base, key, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// waitIndexed waits until the domain's index is built (from commit, when
// given).
func waitIndexed(t *testing.T, base, key, domain, commit string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := adminGet(t, base, key, "/v2/domains/"+domain)
		var d struct {
			Index struct {
				Commit *string `json:"commit"`
			} `json:"index"`
		}
		if code == http.StatusOK && json.Unmarshal(body, &d) == nil && d.Index.Commit != nil && (commit == "" || *d.Index.Commit == commit) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("domain %s not indexed at %q within a minute: %d %s", domain, commit, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// askAsReader asks the domain's assistant as a reader and returns the
// answer's status.
func askAsReader(t *testing.T, base, key, domain, question string) string {
	t.Helper()
	body, _ := json.Marshal(askBody(question, ""))
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/discovery/v2/assistant/"+domain+"/message", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ask %q: %d %s", question, resp.StatusCode, stream)
	}
	status := ""
	for _, c := range uiChunks(t, stream) {
		if c["type"] == "data-answer-status" {
			if d, ok := c["data"].(map[string]any); ok {
				status, _ = d["status"].(string)
			}
		}
	}
	return status
}

func insightsQuestions(t *testing.T, base, key, domain string) int {
	t.Helper()
	code, body := adminGet(t, base, key, "/v2/analytics/"+domain+"/insights")
	var in struct {
		Questions int `json:"questions"`
	}
	if err := json.Unmarshal(body, &in); code != http.StatusOK || err != nil {
		t.Fatalf("insights: %d %s", code, body)
	}
	return in.Questions
}

type gapLifecycleJSON struct {
	State         string     `json:"state"`
	JobID         string     `json:"jobId"`
	CheckedCommit string     `json:"checkedCommit"`
	ClosedAt      *time.Time `json:"closedAt"`
	Answers       []struct {
		Question string   `json:"question"`
		Status   string   `json:"status"`
		Text     string   `json:"text"`
		Cited    []string `json:"cited"`
		Commit   string   `json:"commit"`
	} `json:"answers"`
}

type gapJSON struct {
	Key       string `json:"key"`
	State     string `json:"state"`
	Questions []struct {
		Question string `json:"question"`
	} `json:"questions"`
	Lifecycle *gapLifecycleJSON `json:"lifecycle"`
}

// gapOf is the gap of the analytics API that holds the question.
func gapOf(t *testing.T, base, key, domain, question string) gapJSON {
	t.Helper()
	code, body := adminGet(t, base, key, "/v2/analytics/"+domain+"/gaps")
	var list struct {
		Gaps []gapJSON `json:"gaps"`
	}
	if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil {
		t.Fatalf("gaps: %d %s", code, body)
	}
	for _, g := range list.Gaps {
		for _, q := range g.Questions {
			if q.Question == question {
				return g
			}
		}
	}
	t.Fatalf("no gap holds %q: %s", question, body)
	return gapJSON{}
}

func waitGapState(t *testing.T, base, key, domain, question, state string, logs *lockedBuffer) gapJSON {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		g := gapOf(t, base, key, domain, question)
		if g.State == state && g.Lifecycle != nil {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gap of %q is %s after a minute, want %s: %+v", question, g.State, state, g.Lifecycle)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jobBranch is the branch the job pushed to.
func jobBranch(t *testing.T, base, key, jobID string) string {
	t.Helper()
	var job struct {
		Source struct {
			Ref string `json:"ref"`
		} `json:"source"`
	}
	apiCall(t, key, http.MethodGet, base+"/v2/agent/docs/job/"+jobID, "", http.StatusOK, &job)
	if job.Source.Ref == "" {
		t.Fatalf("job %s has no branch", jobID)
	}
	return job.Source.Ref
}

// mergeBranch merges branch into main of the repository (a merge commit,
// as a forge's merge button makes) and pushes it; it returns the merge.
func mergeBranch(t *testing.T, cloneURL, user, token, branch string) string {
	t.Helper()
	u, err := url.Parse(cloneURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, token)
	work := filepath.Join(t.TempDir(), "merge")
	run := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
			"GIT_AUTHOR_NAME=Maintainer", "GIT_AUTHOR_EMAIL=m@example.invalid", "GIT_COMMITTER_NAME=Maintainer", "GIT_COMMITTER_EMAIL=m@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(t.TempDir(), "clone", u.String(), work)
	run(work, "merge", "--no-ff", "-m", "Merge "+branch, "origin/"+branch)
	run(work, "push", "origin", "main")
	return run(work, "rev-parse", "HEAD")
}

// uiSession is a signed-in dashboard client that does not follow
// redirects.
type uiSession struct {
	base   string
	client *http.Client
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func signInUI(t *testing.T, base, key string) *uiSession {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &uiSession{base: base, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	login := s.get(t, "/ui/login")
	m := csrfField.FindStringSubmatch(login)
	if m == nil {
		t.Fatalf("no CSRF token on the login page:\n%s", login)
	}
	if code, _, _ := s.post(t, "/ui/login", url.Values{"csrf": {m[1]}, "key": {key}}); code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", code)
	}
	return s
}

func (s *uiSession) get(t *testing.T, path string) string {
	t.Helper()
	resp, err := s.client.Get(s.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d\n%s", path, resp.StatusCode, body)
	}
	return string(body)
}

func (s *uiSession) post(t *testing.T, path string, form url.Values) (int, http.Header, string) {
	t.Helper()
	resp, err := s.client.PostForm(s.base+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

var (
	gapJobHref  = regexp.MustCompile(`href="(/ui/projects/[^"]+/jobs\?[^"]+)"`)
	hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)
	draftArea   = regexp.MustCompile(`(?s)<textarea id="prompt" name="prompt"[^>]*>(.*?)</textarea>`)
)

// startGapJob presses Gap → job on the gap holding question, checks the
// form says want (when given), starts the job with the drafted prompt as it
// is and returns the job's id.
func (s *uiSession) startGapJob(t *testing.T, domain, question, want string) string {
	t.Helper()
	page := s.get(t, "/ui/domains/"+domain+"/gaps")
	var link string
	for _, article := range strings.Split(page, "<article")[1:] {
		if strings.Contains(article, html.EscapeString(question)) {
			if m := gapJobHref.FindStringSubmatch(article); m != nil {
				link = html.UnescapeString(m[1])
			}
		}
	}
	if link == "" {
		t.Fatalf("no Gap → job for %q:\n%s", question, page)
	}
	form := s.get(t, strings.TrimSuffix(link, "#new-job"))
	if want != "" && !strings.Contains(form, want) {
		t.Fatalf("the new-job form does not say %q:\n%s", want, form)
	}
	vals := url.Values{}
	for _, m := range hiddenField.FindAllStringSubmatch(form[strings.Index(form, `id="new-job"`):], -1) {
		vals.Set(m[1], html.UnescapeString(m[2]))
	}
	draft := draftArea.FindStringSubmatch(form)
	if draft == nil || vals.Get("gap") == "" {
		t.Fatalf("no drafted form:\n%s", form)
	}
	vals.Set("prompt", html.UnescapeString(draft[1]))
	code, header, body := s.post(t, strings.Split(link, "?")[0], vals)
	loc := header.Get("Location")
	if code != http.StatusSeeOther || !strings.Contains(loc, "/jobs/") {
		t.Fatalf("start the job: %d %s\n%s", code, loc, body)
	}
	return loc[strings.LastIndex(loc, "/")+1:]
}
