// Package giteatest starts a real Gitea server on 127.0.0.1 for tests: a
// fresh instance with its own SQLite database, an admin user and an API
// token. The binary comes from scripts/build-gitea.sh (make gitea); its path
// is DOCSMITH_GITEA_BIN, or the script's default cache location.
package giteatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Version is the Gitea release the tests run against.
const Version = "1.26.0"

// Server is a running Gitea.
type Server struct {
	URL      string // http://127.0.0.1:PORT
	User     string
	Password string
	Token    string
	dir      string
}

// Binary returns the Gitea binary's path, or "" when it has not been built.
func Binary() string {
	if p := os.Getenv("DOCSMITH_GITEA_BIN"); p != "" {
		return p
	}
	cache := os.Getenv("GITEA_CACHE_DIR")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "docsmith")
	}
	p := filepath.Join(cache, "gitea-"+Version, "gitea")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// Start runs a fresh Gitea for the test and stops it at cleanup. Without a
// built binary the test fails under CI (CI=true) and is skipped elsewhere,
// with the command that builds it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "the Gitea binary is not built: run `make gitea` (or set DOCSMITH_GITEA_BIN)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	s := &Server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), User: "docsmith", Password: randomHex(12), dir: dir}
	ini := filepath.Join(dir, "app.ini")
	if err := os.WriteFile(ini, []byte(s.appINI(port, filepath.Join(filepath.Dir(bin), "static"))), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--config", ini, "--work-path", dir}, args...)...)
		cmd.Env = giteaEnv(dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gitea %s: %v\n%s", args[0], err, out)
		}
		return string(out)
	}
	run("migrate")
	run("admin", "user", "create", "--admin", "--username", s.User, "--password", s.Password,
		"--email", "docsmith@example.invalid", "--must-change-password=false")
	tokens := regexp.MustCompile(`(?m)^[0-9a-f]{40}$`).FindAllString(
		run("admin", "user", "generate-access-token", "--username", s.User, "--token-name", "tests", "--scopes", "all", "--raw"), -1)
	if len(tokens) == 0 {
		t.Fatal("gitea printed no access token")
	}
	s.Token = tokens[len(tokens)-1]

	logFile, err := os.Create(filepath.Join(dir, "web.log"))
	if err != nil {
		t.Fatal(err)
	}
	web := exec.Command(bin, "--config", ini, "--work-path", dir, "web")
	web.Env = giteaEnv(dir)
	web.Stdout, web.Stderr = logFile, logFile
	if err := web.Start(); err != nil {
		t.Fatalf("start gitea web: %v", err)
	}
	t.Cleanup(func() {
		_ = web.Process.Kill()
		_, _ = web.Process.Wait()
		_ = logFile.Close()
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "web.log"))
			t.Fatalf("gitea did not answer on %s within 60s:\n%s", s.URL, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

func (s *Server) appINI(port int, static string) string {
	runUser := "root"
	if u, err := user.Current(); err == nil {
		runUser = u.Username
	}
	unsafeRoot := ""
	if os.Geteuid() == 0 {
		unsafeRoot = "I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true\n"
	}
	return fmt.Sprintf(`APP_NAME = docsmith tests
RUN_USER = %[1]s
RUN_MODE = prod
WORK_PATH = %[2]s
%[3]s
[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[4]d
ROOT_URL = http://127.0.0.1:%[4]d/
STATIC_ROOT_PATH = %[5]s
APP_DATA_PATH = %[2]s/data
DISABLE_SSH = true
OFFLINE_MODE = true
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = %[2]s/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = %[2]s/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %[6]s

[service]
DISABLE_REGISTRATION = true

[mailer]
ENABLED = false

[picture]
DISABLE_GRAVATAR = true
ENABLE_FEDERATED_AVATAR = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[indexer]
ISSUE_INDEXER_TYPE = db

[actions]
ENABLED = false

[cron.update_checker]
ENABLED = false

[webhook]
ALLOWED_HOST_LIST = loopback

[log]
MODE = file
LEVEL = Warn
ROOT_PATH = %[2]s/log
`, runUser, s.dir, unsafeRoot, port, static, randomHex(32))
}

// giteaEnv keeps Gitea away from the caller's git and home configuration.
func giteaEnv(dir string) []string {
	env := []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	if os.Geteuid() == 0 {
		env = append(env, "GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true")
	}
	return env
}

// CreateRepo creates a repository owned by the admin user with an initial
// commit on main, and returns its HTTP clone URL (without credentials).
func (s *Server) CreateRepo(t testing.TB, name string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "auto_init": true, "default_branch": "main"})
	var repo struct {
		CloneURL string `json:"clone_url"`
	}
	s.API(t, http.MethodPost, "/user/repos", body, http.StatusCreated, &repo)
	return repo.CloneURL
}

// API calls the Gitea REST API as the admin user and decodes the reply.
func (s *Server) API(t testing.TB, method, path string, body []byte, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/api/v1"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, _ = raw.ReadFrom(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, resp.StatusCode, want, strings.TrimSpace(raw.String()))
	}
	if out != nil {
		if err := json.Unmarshal(raw.Bytes(), out); err != nil {
			t.Fatalf("%s %s: decode reply: %v", method, path, err)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
