package gitcli_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docsmith/docsmith/internal/gitcli"
)

const (
	tokenUser  = "x-access-token"
	goodToken  = "tok-good-7f3a9c1e5b2d4f60"
	wrongToken = "tok-wrong-0e1d2c3b4a596877"
)

// smartHTTP serves w's remote over git's smart HTTP protocol (git
// http-backend through CGI), demanding Basic auth with goodToken. It returns
// the remote's URL and a counter of requests that carried good credentials.
func smartHTTP(t *testing.T, w *world) (string, *atomic.Int64) {
	t.Helper()
	backendPath := filepath.Join(strings.TrimSpace(w.fixGit(w.root, "--exec-path")), "git-http-backend")
	if _, err := os.Stat(backendPath); err != nil {
		t.Skipf("git-http-backend is not installed: %v", err)
	}
	backend := &cgi.Handler{
		Path: w.realGit,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + filepath.Dir(w.remote),
			"GIT_HTTP_EXPORT_ALL=1",
			"REMOTE_USER=" + tokenUser, // enables receive-pack (push)
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + filepath.Join(w.root, "fixture-home"),
		},
		Stderr: io.Discard,
	}
	var authed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != tokenUser || pass != goodToken {
			rw.Header().Set("WWW-Authenticate", `Basic realm="docsmith test"`)
			http.Error(rw, "authentication required", http.StatusUnauthorized)
			return
		}
		authed.Add(1)
		backend.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + filepath.Base(w.remote), &authed
}

// hangingServer accepts connections and never answers.
func hangingServer(t *testing.T) string {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // runs first, so that Close does not wait
	return srv.URL + "/docs.git"
}

func TestHTTPCredentials(t *testing.T) {
	t.Parallel()
	w := setup(t, withRecorder(), withConfig(func(cfg *gitcli.Config) { cfg.AllowHTTP = true }))
	url, authed := smartHTTP(t, w)
	ctx := t.Context()
	good := &gitcli.Credentials{Username: tokenUser, Password: goodToken}
	wrong := &gitcli.Credentials{Username: tokenUser, Password: wrongToken}

	// Without credentials git must fail at once, not wait at a prompt.
	if _, err := w.git.Clone(ctx, url, "main", filepath.Join(w.root, "anon"), nil); err == nil {
		t.Fatal("Clone without credentials succeeded")
	}
	_, err := w.git.Clone(ctx, url, "main", filepath.Join(w.root, "wrong"), wrong)
	if err == nil {
		t.Fatal("Clone with a wrong token succeeded")
	}
	if strings.Contains(err.Error(), wrongToken) {
		t.Fatalf("error shows the token: %v", err)
	}
	if authed.Load() != 0 {
		t.Fatal("a request carried good credentials before any were given")
	}

	repo, err := w.git.Clone(ctx, url, "main", filepath.Join(w.root, "good"), good)
	if err != nil {
		t.Fatalf("Clone with credentials: %v", err)
	}
	if authed.Load() == 0 {
		t.Fatal("the server saw no authenticated request")
	}
	if err := repo.CreateBranch(ctx, jobBranch); err != nil {
		t.Fatal(err)
	}
	commit(t, repo, "over http", map[string]string{"http.md": "pushed over smart HTTP\n"})

	err = repo.Push(ctx, jobBranch, wrong)
	if err == nil {
		t.Fatal("Push with a wrong token succeeded")
	}
	if strings.Contains(err.Error(), wrongToken) {
		t.Fatalf("error shows the token: %v", err)
	}
	if err := repo.Push(ctx, jobBranch, nil); err == nil {
		t.Fatal("Push without credentials succeeded")
	}
	if err := repo.Push(ctx, jobBranch, good); err != nil {
		t.Fatalf("Push with credentials: %v", err)
	}
	if exists, err := w.git.RemoteBranchExists(ctx, url, jobBranch, good); err != nil || !exists {
		t.Fatalf("RemoteBranchExists = %v, %v", exists, err)
	}
	if got := w.remoteLog(jobBranch); len(got) == 0 || got[0] != "over http" {
		t.Fatalf("remote log = %q", got)
	}
	// The credentials were not written anywhere in the clone.
	if cfg, err := os.ReadFile(filepath.Join(repo.Dir, ".git", "config")); err != nil || strings.Contains(string(cfg), "tok-") {
		t.Fatalf(".git/config: %v\n%s", err, cfg)
	}

	argv := strings.Join(w.recorded(), "\n")
	logs := w.logs.String()
	for name, text := range map[string]string{"argv": argv, "log": logs} {
		if !strings.Contains(text, "clone") || !strings.Contains(text, "push") {
			t.Fatalf("%s does not show the commands, is it captured?\n%s", name, text)
		}
		for _, token := range []string{goodToken, wrongToken} {
			if strings.Contains(text, token) {
				t.Fatalf("%s contains a token:\n%s", name, text)
			}
		}
	}
	if !strings.Contains(logs, "git command failed") {
		t.Fatalf("failures were not logged:\n%s", logs)
	}
}

// A redirect to another host must not take the credentials along.
func TestHTTPCredentialsStayOnTheirHost(t *testing.T) {
	t.Parallel()
	w := setup(t, withConfig(func(cfg *gitcli.Config) { cfg.AllowHTTP = true }))
	target, authed := smartHTTP(t, w)
	redirector := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		base := strings.TrimSuffix(target, "/"+filepath.Base(w.remote))
		http.Redirect(rw, r, base+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(redirector.Close)

	good := &gitcli.Credentials{Username: tokenUser, Password: goodToken}
	_, err := w.git.Clone(t.Context(), redirector.URL+"/"+filepath.Base(w.remote), "main", filepath.Join(w.root, "redirected"), good)
	if err == nil {
		t.Fatal("Clone through a redirect to another host succeeded: the credentials followed it")
	}
	if authed.Load() != 0 {
		t.Fatal("the other host received the credentials")
	}
	var gerr *gitcli.Error
	if !errors.As(err, &gerr) || gerr.Op != "clone" {
		t.Fatalf("error = %#v, want a *gitcli.Error for clone", err)
	}
}
