package app_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/giteatest"
)

// The docs of a made-up bookkeeping tool, written for this test, with a
// checks file: one question the docs do not answer yet, one they do.
var ledgerDocs = map[string]string{
	"docs.json": `{"name": "Tallyhouse", "navigation": {"pages": ["index", "guides/keys", "guides/invoices", "guides/printing", "guides/staff"]}}`,
	"guides/invoices.mdx": "---\ntitle: Invoices\n---\n\nEvery sale becomes an invoice numbered by the day it was made. " +
		"Void an invoice with `tally invoice void NUMBER`; a voided invoice stays in the ledger, struck through.\n",
	"guides/printing.mdx": "---\ntitle: Printing\n---\n\nTallyhouse prints the monthly ledger on the first day of each month. " +
		"Choose the printer in the settings under Output; a PDF copy is kept for seven years.\n",
	"guides/staff.mdx": "---\ntitle: Staff accounts\n---\n\nEach cashier signs in with a staff account. " +
		"An owner adds a cashier with `tally staff add NAME` and removes one with `tally staff remove NAME`.\n",
	"index.mdx": "---\ntitle: Tallyhouse\n---\n\nTallyhouse keeps the books of a small shop and prints its monthly ledger.\n",
	"guides/keys.mdx": "---\ntitle: API keys\n---\n\nTallyhouse signs every request with an API key. " +
		"Rotate the API keys every ninety days with `tally keys rotate`; the old key keeps working for one hour.\n",
	".docsmith/checks.yaml": `checks:
  - name: restore-ledger
    question: How do I restore the ledger from an export file?
    cite: [guides/restore]
  - name: rotate-keys
    question: How do I rotate the API keys?
    cite: [guides/keys]
`,
}

const restorePage = "---\ntitle: Restore the ledger\n---\n\n" +
	"To restore the ledger from an export file, stop Tallyhouse and run `tally ledger restore FILE`. " +
	"The restore replaces the whole ledger with the export.\n"

// TestRealGiteaPullRequestAnswerChecks is a docs pull request on a real
// Gitea, announced by Gitea's own signed pull_request webhooks: the pull
// request that adds the page answering a check gets the commit status
// docsmith/answers success and a comment listing that question as newly
// answered; a second push that removes the page another check cites gets
// failure naming the regression, and the same comment, edited. The same
// delivery again, or under a new delivery id, changes nothing.
func TestRealGiteaPullRequestAnswerChecks(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	docsURL := srv.CreateRepo(t, "docs")
	giteaCommit(t, docsURL, srv.User, srv.Token, ledgerDocs, "Tallyhouse docs")

	const secret = "pr-hook-secret-0123456789"
	dir := t.TempDir()
	giteaE2ECLI(t, dir, "org", "create", "acme")
	giteaE2ECLI(t, dir, "project", "create", "--org", "acme", "--id", "docs", "--repo", docsURL,
		"--forge", "gitea", "--forge-url", srv.URL, "--token-env", "DOCS_FORGE_TOKEN",
		"--webhook-secret-env", "DOCS_HOOK_SECRET", "--check=false")
	out := giteaE2ECLI(t, dir, "domain", "create", "--org", "acme", "--domain", "tally", "--project", "docs", "--site-url", "https://docs.tally.example", "--index=false")
	out += tokenCLI(t, dir, srv.Token, "index", "tally")
	if !strings.Contains(out, "tally") {
		t.Fatalf("index: %s", out)
	}

	env := map[string]string{
		"DOCSMITH_DATA_DIR": dir, "DOCSMITH_ADDR": "127.0.0.1:0", "DOCSMITH_DEMO": "false",
		"DOCSMITH_GIT_ALLOW_HTTP": "true", "DOCSMITH_QUEUE_POLL": "100ms", "DOCSMITH_WORKFLOW_TICK": "1h",
		"DOCSMITH_PUBLIC_URL": "https://docsmith.tally.example",
	}
	cfg, err := config.Bind(flag.NewFlagSet("test", flag.ContinueOnError), true).Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	m := &app.Main{Config: cfg, Log: slog.New(slog.DiscardHandler), LookupEnv: func(k string) (string, bool) {
		switch k {
		case "DOCS_FORGE_TOKEN":
			return srv.Token, true
		case "DOCS_HOOK_SECRET":
			return secret, true
		}
		return "", false
	}}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown(t.Context()) })

	rec := newDeliveryRecorder(t, "http://"+m.Addr())
	hook := map[string]any{
		"type": "gitea", "active": true, "events": []string{"pull_request", "pull_request_sync"},
		"config": map[string]string{"url": rec.URL + "/v2/hooks/docs", "content_type": "json", "secret": secret},
	}
	srv.API(t, http.MethodPost, "/repos/"+srv.User+"/docs/hooks", mustJSONBytes(t, hook), http.StatusCreated, nil)

	// The pull request adds the page that answers restore-ledger.
	head1 := giteaBranchPush(t, docsURL, srv.User, srv.Token, "restore-guide", map[string]string{
		"guides/restore.mdx": restorePage,
		"docs.json":          `{"name": "Tallyhouse", "navigation": {"pages": ["index", "guides/keys", "guides/invoices", "guides/printing", "guides/staff", "guides/restore"]}}`,
	}, nil, "Document restoring the ledger")
	var pr struct {
		Number int `json:"number"`
	}
	srv.API(t, http.MethodPost, "/repos/"+srv.User+"/docs/pulls",
		mustJSONBytes(t, map[string]string{"head": "restore-guide", "base": "main", "title": "Restore guide"}), http.StatusCreated, &pr)

	opened := rec.holding(t, head1)
	if opened.status != http.StatusOK || !strings.Contains(string(opened.reply), `"queued":true`) {
		t.Fatalf("docsmith answered the opened pull request's delivery with %d: %s", opened.status, opened.reply)
	}
	st := waitStatus(t, srv, head1)
	if st.Status != "success" || !strings.HasSuffix(st.Description, "reader questions now answered, 0 regressed") && !strings.HasSuffix(st.Description, "reader question now answered, 0 regressed") ||
		!strings.HasPrefix(st.TargetURL, "https://docsmith.tally.example/ui/domains/tally/checks/runs/") {
		t.Fatalf("status of the first head = %+v\n%+v", st, answerComments(t, srv, pr.Number))
	}
	comments := waitComment(t, srv, pr.Number, head1[:12])
	if len(comments) != 1 {
		t.Fatalf("%d answer comments, want 1", len(comments))
	}
	first := comments[0]
	if !strings.Contains(first.Body, st.Description) ||
		!strings.Contains(first.Body, "**Newly answered**\n\n- **restore-ledger**: How do I restore the ledger from an export file?") ||
		!strings.Contains(first.Body, "citing [guides/restore](https://docs.tally.example/guides/restore)") ||
		strings.Contains(first.Body, "**Regressed**") {
		t.Fatalf("first comment:\n%s", first.Body)
	}

	// A second push removes the page rotate-keys cites: a regression.
	head2 := giteaBranchPush(t, docsURL, srv.User, srv.Token, "restore-guide", map[string]string{
		"docs.json": `{"name": "Tallyhouse", "navigation": {"pages": ["index", "guides/invoices", "guides/printing", "guides/staff", "guides/restore"]}}`,
	}, []string{"guides/keys.mdx"}, "Drop the keys page")
	synced := rec.holding(t, head2)
	if synced.status != http.StatusOK || !strings.Contains(string(synced.reply), `"queued":true`) {
		t.Fatalf("docsmith answered the push's delivery with %d: %s", synced.status, synced.reply)
	}
	st = waitStatus(t, srv, head2)
	comments = waitComment(t, srv, pr.Number, head2[:12])
	if len(comments) != 1 || comments[0].ID != first.ID {
		t.Fatalf("after the second push: %d answer comments (first id %d), want the first, edited", len(comments), first.ID)
	}
	edited := comments[0].Body
	if !strings.Contains(edited, "Asked on `"+head2[:12]+"`") {
		t.Fatalf("the comment was not edited for the second head:\n%s", edited)
	}
	// The served index passes rotate-keys, so its page gone is a regression.
	if st.Status != "failure" || !strings.Contains(st.Description, "1 regressed") || !strings.Contains(st.Description, "rotate-keys") ||
		!strings.Contains(edited, "**Regressed**\n\n- **rotate-keys**: How do I rotate the API keys?") ||
		!strings.Contains(edited, "citing [guides/keys](https://docs.tally.example/guides/keys)") ||
		!strings.Contains(edited, "expected a citation of guides/keys") {
		t.Fatalf("status of the second head = %+v, comment:\n%s", st, edited)
	}

	// The first delivery again, and under a new delivery id: nothing
	// queued, nothing posted.
	again := rec.replay(t, opened, nil)
	if again.status != http.StatusOK || !strings.Contains(string(again.reply), `"replayed":true`) {
		t.Fatalf("redelivery: %d %s", again.status, again.reply)
	}
	renamed := rec.replay(t, synced, func(h http.Header) {
		h.Set("X-Gitea-Delivery", "a-new-delivery-id")
		h.Set("X-GitHub-Delivery", "a-new-delivery-id")
	})
	if renamed.status != http.StatusOK || !strings.Contains(string(renamed.reply), `"queued":false`) {
		t.Fatalf("the same head under a new delivery id: %d %s", renamed.status, renamed.reply)
	}
	time.Sleep(time.Second)
	if comments := answerComments(t, srv, pr.Number); len(comments) != 1 || comments[0].Body != edited {
		t.Fatalf("after the redeliveries: %d comments", len(comments))
	}
	if n := len(statusesOf(t, srv, head2)); n != 2 { // pending, then failure
		t.Fatalf("%d statuses on the second head after the redeliveries, want 2", n)
	}
}

// tokenCLI runs the CLI with the project's forge token set, as an
// operator's shell would have it.
func tokenCLI(t *testing.T, dir, token string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
		switch k {
		case "DOCSMITH_DATA_DIR":
			return dir, true
		case "DOCSMITH_GIT_ALLOW_HTTP":
			return "true", true
		case "DOCS_FORGE_TOKEN":
			return token, true
		}
		return "", false
	}}
	if code := cli.Run(t.Context(), args, env); code != 0 {
		t.Fatalf("docsmith %s: %d %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

type giteaStatus struct {
	Status      string `json:"status"`
	Context     string `json:"context"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

func statusesOf(t *testing.T, srv *giteatest.Server, sha string) []giteaStatus {
	t.Helper()
	var all []giteaStatus
	srv.API(t, http.MethodGet, "/repos/"+srv.User+"/docs/statuses/"+sha, nil, http.StatusOK, &all)
	var ours []giteaStatus
	for _, s := range all {
		if s.Context == "docsmith/answers" {
			ours = append(ours, s)
		}
	}
	return ours
}

// waitStatus waits for the final docsmith/answers status of sha.
func waitStatus(t *testing.T, srv *giteatest.Server, sha string) giteaStatus {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		for _, s := range statusesOf(t, srv, sha) {
			if s.Status != "pending" {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no final docsmith/answers status on %s within 3 minutes: %+v", sha, statusesOf(t, srv, sha))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitComment waits for the answer comment to name text (a head), and
// returns the answer comments then.
func waitComment(t *testing.T, srv *giteatest.Server, number int, text string) []giteaComment {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := answerComments(t, srv, number)
		for _, c := range got {
			if strings.Contains(c.Body, text) {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer comment naming %s within a minute: %+v", text, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type giteaComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
}

// answerComments are the pull request's comments that hold docsmith's
// answer-check marker.
func answerComments(t *testing.T, srv *giteatest.Server, number int) []giteaComment {
	t.Helper()
	var all []giteaComment
	srv.API(t, http.MethodGet, "/repos/"+srv.User+"/docs/issues/"+itoa(number)+"/comments", nil, http.StatusOK, &all)
	var ours []giteaComment
	for _, c := range all {
		if strings.Contains(c.Body, answercheck.CommentMarker) {
			ours = append(ours, c)
		}
	}
	return ours
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// giteaBranchPush commits files (and removes paths) on branch, made from
// main when it does not exist, pushes it and returns its new head.
func giteaBranchPush(t *testing.T, cloneURL, user, token, branch string, files map[string]string, remove []string, message string) string {
	t.Helper()
	u, err := url.Parse(cloneURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, token)
	work := filepath.Join(t.TempDir(), "work")
	run := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
			"GIT_AUTHOR_NAME=Writer", "GIT_AUTHOR_EMAIL=writer@example.invalid", "GIT_COMMITTER_NAME=Writer", "GIT_COMMITTER_EMAIL=writer@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(t.TempDir(), "clone", u.String(), work)
	if run(work, "ls-remote", "--heads", "origin", branch) != "" {
		run(work, "checkout", branch)
	} else {
		run(work, "checkout", "-b", branch)
	}
	for name, text := range files {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range remove {
		run(work, "rm", "-q", "--", name)
	}
	run(work, "add", "-A")
	run(work, "commit", "-m", message)
	run(work, "push", "origin", branch)
	return run(work, "rev-parse", "HEAD")
}
