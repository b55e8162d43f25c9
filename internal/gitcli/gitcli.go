// Package gitcli runs the git binary for docsmith's agent: clone a docs
// repository, branch, commit, push, and rebase when someone pushed first.
//
// It follows Gitea's gitcmd. Argv is built from literal options plus values
// that are validated never to start with '-', with "--" before paths. Every
// run gets an environment of its own (no system or user config, no inherited
// GIT_* variables, no hooks, no prompts, LC_ALL=C so that git's messages can
// be parsed) and a timeout. Credentials reach git only through the
// environment of the one child process that needs them, read by a credential
// helper; they are never in argv, and errors and logs are redacted.
package gitcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for Config.
const (
	DefaultGitPath        = "git"
	DefaultTimeout        = 2 * time.Minute
	DefaultCommitterName  = "docsmith"
	DefaultCommitterEmail = "docsmith@localhost"
)

// Oldest git we accept: GIT_CONFIG_GLOBAL and commit --trailer arrived in
// 2.32 (GIT_CONFIG_COUNT in 2.31).
const minMajor, minMinor = 2, 32

// waitDelay is how long Wait waits for git's output pipes after the process
// is gone or killed, in case a grandchild escaped the process group.
const waitDelay = 5 * time.Second

// maxStderr bounds the git diagnostics kept in an Error; the end of the
// output is kept, since that is where git says what went wrong.
const maxStderr = 2000

// Config configures a Git.
type Config struct {
	// GitPath is the git binary, a path or a name looked up in PATH.
	// Default "git".
	GitPath string
	// HomeDir is a private directory that becomes git's HOME and holds its
	// (empty) global config and an empty hooks directory. Created if
	// missing. Required.
	HomeDir string
	// Timeout bounds each git command. Default 2 minutes.
	Timeout time.Duration
	// Log receives a debug line per git command, redacted. Default: none.
	Log *slog.Logger
	// CommitterName and CommitterEmail are the committer of every commit
	// and rebase (the author comes from CommitOptions). Default
	// "docsmith <docsmith@localhost>".
	CommitterName, CommitterEmail string
	// AllowHTTP permits plain http:// remotes. Off by default because
	// credentials would cross the network in clear; tests and forges on
	// localhost turn it on.
	AllowHTTP bool
	// RepoHosts, when not empty, are the only hosts remotes may be on; see
	// RemotePolicy.
	RepoHosts []string
}

// Git runs git commands. It is safe for concurrent use.
type Git struct {
	path           string
	home           string
	globalConfig   string
	hooksDir       string
	timeout        time.Duration
	log            *slog.Logger
	committerName  string
	committerEmail string
	remotes        RemotePolicy
	version        string

	// mirrorsHeld are the lock files of the mirrors open in this process.
	mirrorsMu   sync.Mutex
	mirrorsHeld map[string]bool
}

// New checks the configuration, prepares HomeDir and checks that git runs
// and is recent enough.
func New(cfg Config) (*Git, error) {
	if cfg.GitPath == "" {
		cfg.GitPath = DefaultGitPath
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.CommitterName == "" {
		cfg.CommitterName = DefaultCommitterName
	}
	if cfg.CommitterEmail == "" {
		cfg.CommitterEmail = DefaultCommitterEmail
	}
	if err := validateIdent("committer name", cfg.CommitterName); err != nil {
		return nil, fmt.Errorf("gitcli config: %w", err)
	}
	if err := validateIdent("committer email", cfg.CommitterEmail); err != nil {
		return nil, fmt.Errorf("gitcli config: %w", err)
	}
	if cfg.HomeDir == "" {
		return nil, errors.New("gitcli config: HomeDir is required")
	}
	gitPath, err := exec.LookPath(cfg.GitPath)
	if err != nil {
		return nil, fmt.Errorf("gitcli config: find git: %w", err)
	}
	if gitPath, err = filepath.Abs(gitPath); err != nil {
		return nil, fmt.Errorf("gitcli config: find git: %w", err)
	}
	home, err := filepath.Abs(cfg.HomeDir)
	if err != nil {
		return nil, fmt.Errorf("gitcli config: home dir: %w", err)
	}
	g := &Git{
		path:           gitPath,
		home:           home,
		globalConfig:   filepath.Join(home, "gitconfig"),
		hooksDir:       filepath.Join(home, "no-hooks"),
		timeout:        cfg.Timeout,
		log:            cfg.Log,
		committerName:  cfg.CommitterName,
		committerEmail: cfg.CommitterEmail,
		remotes:        RemotePolicy{AllowHTTP: cfg.AllowHTTP, Hosts: cfg.RepoHosts},
	}
	if err := os.MkdirAll(g.hooksDir, 0o700); err != nil {
		return nil, fmt.Errorf("gitcli: create home dir: %w", err)
	}
	// An empty file, rewritten on every start: nothing may have been left
	// in it, and GIT_CONFIG_GLOBAL needs a file to point at.
	if err := os.WriteFile(g.globalConfig, nil, 0o600); err != nil {
		return nil, fmt.Errorf("gitcli: write empty global config: %w", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
	defer cancel()
	out, err := g.run(ctx, gitCommand("version"), invocation{dir: g.home})
	if err != nil {
		return nil, fmt.Errorf("gitcli: check git version: %w", err)
	}
	g.version = strings.TrimSpace(string(out))
	major, minor, ok := parseVersion(g.version)
	if !ok {
		return nil, fmt.Errorf("gitcli: cannot read git version from %q", g.version)
	}
	if major < minMajor || major == minMajor && minor < minMinor {
		return nil, fmt.Errorf("gitcli: %s is too old, need git %d.%d or later", g.version, minMajor, minMinor)
	}
	return g, nil
}

// Version is what `git version` printed, e.g. "git version 2.39.5".
func (g *Git) Version() string { return g.version }

// parseVersion reads "git version 2.39.5" (or "2.39.5.windows.1", …).
func parseVersion(s string) (major, minor int, ok bool) {
	rest, found := strings.CutPrefix(s, "git version ")
	if !found {
		return 0, 0, false
	}
	parts := strings.SplitN(rest, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}

// Credentials authenticate to an HTTPS remote, e.g. username
// "x-access-token" and a forge token as the password. They are offered only
// to the host of the remote being contacted.
type Credentials struct {
	Username, Password string
}

// String keeps the password out of %v and friends.
func (c *Credentials) String() string {
	if c == nil {
		return "<none>"
	}
	return "Credentials{Username: " + c.Username + ", Password: ***}"
}

// LogValue keeps the password out of slog.
func (c *Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

func (c *Credentials) validate() error {
	if c == nil {
		return nil
	}
	if c.Username == "" || c.Password == "" {
		return fmt.Errorf("%w: credentials need both a username and a password", ErrInvalidArgument)
	}
	if strings.ContainsAny(c.Username+c.Password, "\n\r\x00") {
		return fmt.Errorf("%w: credentials contain a line break or NUL", ErrInvalidArgument)
	}
	return nil
}

func (c *Credentials) secrets() []string {
	if c == nil {
		return nil
	}
	return []string{c.Password}
}

// credentialHelper answers git's "get" with the username and password from
// variables set on this one child process, and only for the protocol and
// host being contacted (a redirect to another host gets nothing). It
// ignores "store" and "erase". Git appends the action as "$1".
const credentialHelper = `!f() { test "$1" = get || exit 0; p=; h=; ` +
	`while IFS= read -r l; do case "$l" in protocol=*) p=${l#protocol=};; host=*) h=${l#host=};; esac; done; ` +
	`test "$p" = "$DOCSMITH_GIT_PROTOCOL" && test "$h" = "$DOCSMITH_GIT_HOST" || exit 0; ` +
	`printf 'username=%s\npassword=%s\n' "$DOCSMITH_GIT_USERNAME" "$DOCSMITH_GIT_PASSWORD"; }; f`

// command is a git argv under construction. Options are literals written
// in this package; values from callers go through value, which refuses
// anything git could read as an option.
type command struct {
	args []string
	err  error
}

func gitCommand(sub string, options ...string) *command {
	return &command{args: append([]string{sub}, options...)}
}

// opt appends literal options.
func (c *command) opt(options ...string) *command {
	c.args = append(c.args, options...)
	return c
}

// value appends caller-supplied values; one that is empty, starts with '-'
// or holds a NUL fails the command before git runs.
func (c *command) value(what string, values ...string) *command {
	for _, v := range values {
		if c.err == nil && (v == "" || strings.HasPrefix(v, "-") || strings.ContainsRune(v, 0)) {
			c.err = invalid(what, v, "is empty, starts with '-' or holds a NUL")
		}
		c.args = append(c.args, v)
	}
	return c
}

// paths appends "--" and then the given paths, so none is read as an option
// or a revision.
func (c *command) paths(paths ...string) *command {
	c.args = append(c.args, "--")
	for _, p := range paths {
		if c.err == nil && (p == "" || strings.ContainsRune(p, 0)) {
			c.err = invalid("path", p, "is empty or holds a NUL")
		}
		c.args = append(c.args, p)
	}
	return c
}

// invocation is how one command runs.
type invocation struct {
	dir    string
	stdin  string
	remote *remote      // the transport used, nil for local-only commands
	creds  *Credentials // offered to remote's host, if HTTP(S)
	env    []string     // extra variables, e.g. the author
	// stdout, when set, receives the command's output instead of the
	// buffer run returns (which is then empty): for output whose size the
	// caller bounds.
	stdout io.Writer
}

// run runs one git command under the Git's timeout and returns its stdout.
// Failures are *Error, redacted.
func (g *Git) run(ctx context.Context, c *command, inv invocation) ([]byte, error) {
	if c.err != nil {
		return nil, c.err
	}
	op := c.args[0]
	secrets := inv.creds.secrets()
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = Redact(a, secrets...)
	}

	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.path, c.args...)
	cmd.Dir = inv.dir
	cmd.Env = g.environ(inv)
	if inv.stdin != "" {
		cmd.Stdin = strings.NewReader(inv.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if inv.stdout != nil {
		cmd.Stdout = inv.stdout
	}
	cmd.WaitDelay = waitDelay
	setProcessGroup(cmd)

	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err == nil {
		g.log.DebugContext(ctx, "git command", "op", op, "args", strings.Join(args, " "),
			"dir", inv.dir, "duration", elapsed, "exit", 0)
		return stdout.Bytes(), nil
	}

	gerr := &Error{Op: op, Args: args, ExitCode: -1, Stderr: cleanStderr(stderr.String(), secrets), Err: err}
	var exitErr *exec.ExitError
	switch ctxErr := ctx.Err(); {
	case errors.Is(ctxErr, context.DeadlineExceeded):
		gerr.Err = fmt.Errorf("timed out after %s: %w", elapsed.Round(time.Millisecond), context.DeadlineExceeded)
	case ctxErr != nil:
		gerr.Err = fmt.Errorf("canceled: %w", ctxErr)
	case errors.As(err, &exitErr):
		gerr.ExitCode = exitErr.ExitCode()
	}
	g.log.DebugContext(ctx, "git command failed", "op", op, "args", strings.Join(args, " "),
		"dir", inv.dir, "duration", elapsed, "exit", gerr.ExitCode, "error", gerr.Err.Error(), "stderr", gerr.Stderr)
	return stdout.Bytes(), gerr
}

// cleanStderr redacts git's diagnostics, drops "hint:" lines (advice for a
// person at a terminal) and keeps the end if it is long.
func cleanStderr(s string, secrets []string) string {
	s = Redact(s, secrets...)
	var kept []string
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimRight(line, "\r ")
		if line == "" || strings.HasPrefix(line, "hint:") {
			continue
		}
		kept = append(kept, line)
	}
	s = strings.Join(kept, "\n")
	if len(s) > maxStderr {
		s = "…" + s[len(s)-maxStderr:]
	}
	return s
}

// environ builds the whole environment of one git process; nothing from
// ours is passed on except what inherited allows.
func (g *Git) environ(inv invocation) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); inherited(k) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"HOME="+g.home,
		"XDG_CONFIG_HOME="+filepath.Join(g.home, ".config"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+g.globalConfig,
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_EDITOR=:",
		"LC_ALL=C",
		"GIT_COMMITTER_NAME="+g.committerName,
		"GIT_COMMITTER_EMAIL="+g.committerEmail,
		"GIT_AUTHOR_NAME="+g.committerName,
		"GIT_AUTHOR_EMAIL="+g.committerEmail,
	)

	// Command-scope config: it outranks anything in the repository's own
	// .git/config.
	config := [][2]string{
		{"core.hooksPath", g.hooksDir},
		{"core.fsmonitor", "false"},
		// A checkout never holds a live symbolic link: git writes each link
		// as a small file holding its target, so nothing in a repository
		// can point a reader or a writer outside the checkout.
		{"core.symlinks", "false"},
		{"commit.gpgSign", "false"},
		{"gc.auto", "0"},
		{"maintenance.auto", "false"},
		{"credential.helper", ""}, // empties the list of helpers
		{"protocol.allow", "never"},
	}
	if inv.remote != nil {
		switch inv.remote.kind {
		case remoteLocal:
			config = append(config, [2]string{"protocol.file.allow", "always"})
		case remoteHTTP:
			config = append(config, [2]string{"protocol.http.allow", "always"})
		case remoteHTTPS:
			config = append(config, [2]string{"protocol.https.allow", "always"})
		}
		if inv.creds != nil && inv.remote.kind != remoteLocal {
			config = append(config, [2]string{"credential.helper", credentialHelper})
			scheme := "https"
			if inv.remote.kind == remoteHTTP {
				scheme = "http"
			}
			env = append(env,
				"DOCSMITH_GIT_PROTOCOL="+scheme,
				"DOCSMITH_GIT_HOST="+inv.remote.host,
				"DOCSMITH_GIT_USERNAME="+inv.creds.Username,
				"DOCSMITH_GIT_PASSWORD="+inv.creds.Password,
			)
		}
	}
	env = append(env, "GIT_CONFIG_COUNT="+strconv.Itoa(len(config)))
	for i, kv := range config {
		n := strconv.Itoa(i)
		env = append(env, "GIT_CONFIG_KEY_"+n+"="+kv[0], "GIT_CONFIG_VALUE_"+n+"="+kv[1])
	}
	// Last, so that they win over the defaults above (exec.Cmd keeps the
	// last value of a repeated key).
	return append(env, inv.env...)
}

// inherited lists the variables git may see from our environment: how to
// find programs and temporary space, TLS trust and proxies. Everything
// else, GIT_* above all, is dropped.
func inherited(key string) bool {
	switch key {
	case "PATH", "TMPDIR", "TZ", "SYSTEMROOT",
		"SSL_CERT_FILE", "SSL_CERT_DIR",
		"http_proxy", "https_proxy", "no_proxy", "all_proxy",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
		return true
	}
	return false
}

// Clone makes a shallow (depth 1), single-branch clone of branch into dir,
// which must not exist or be empty; if the clone fails, what it wrote there
// is removed. remote is a local path, a file:// URL or an http(s):// URL
// without credentials in it; creds may be nil.
//
// Shallow rather than partial (--filter=blob:none): the agent reads every
// file of the tip anyway, and a partial clone fetches missing blobs lazily,
// which turns later diffs and rebases into network calls that need the
// credentials and can fail half-way. A rebase needs only the commits since
// the clone, which a fetch into a shallow clone brings.
func (g *Git) Clone(ctx context.Context, remoteURL, branch, dir string, creds *Credentials) (*Repo, error) {
	rem, err := g.remotes.parse(remoteURL)
	if err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	if err := ValidateRef(branch); err != nil {
		return nil, fmt.Errorf("clone: branch: %w", err)
	}
	if err := creds.validate(); err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	if dir == "" {
		return nil, fmt.Errorf("clone: %w: target directory is empty", ErrInvalidArgument)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("clone: target directory: %w", err)
	}
	c := gitCommand("clone", "--quiet", "--template=", "--depth=1", "--single-branch", "--no-tags", "--branch").
		value("branch", branch)
	if rem.kind == remoteLocal {
		// Use the transport even for a path: --depth works, and objects are
		// copied, not hard-linked from a repository we do not own.
		c.opt("--no-local")
	}
	c.paths(rem.url, abs)
	existed, err := emptyDirOrMissing(abs)
	if err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	if _, err := g.run(ctx, c, invocation{dir: g.home, remote: &rem, creds: creds}); err != nil {
		err = fmt.Errorf("clone branch %q of %s: %w", branch, Redact(rem.url), err)
		// A killed clone leaves a partial work tree that no Repo will ever
		// Remove. Only clean up what git may have written.
		var gerr *Error
		if errors.As(err, &gerr) {
			if cleanErr := cleanFailedClone(abs, existed); cleanErr != nil {
				err = errors.Join(err, cleanErr)
			}
		}
		return nil, err
	}
	r := &Repo{Dir: abs, git: g, remote: rem, bases: make(map[string]string)}
	head, err := r.HeadSHA(ctx)
	if err != nil {
		return nil, fmt.Errorf("clone: %w", err)
	}
	r.bases[branch] = head
	return r, nil
}

// emptyDirOrMissing checks that a clone may go into dir, and says whether
// it exists already.
func emptyDirOrMissing(dir string) (existed bool, err error) {
	info, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("target directory: %w", err)
	}
	if !info.IsDir() {
		return true, fmt.Errorf("%w: target %q is not a directory", ErrInvalidArgument, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true, fmt.Errorf("target directory: %w", err)
	}
	if len(entries) > 0 {
		return true, fmt.Errorf("%w: target directory %q is not empty", ErrInvalidArgument, dir)
	}
	return true, nil
}

// cleanFailedClone removes what a failed clone left in dir: dir itself if
// it did not exist before, else its contents (it was empty before).
func cleanFailedClone(dir string, existed bool) error {
	if !existed {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove failed clone: %w", err)
		}
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("clean failed clone: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("clean failed clone: %w", err)
		}
	}
	return nil
}

// RemoteBranchExists reports whether remote has refs/heads/<branch>.
func (g *Git) RemoteBranchExists(ctx context.Context, remoteURL, branch string, creds *Credentials) (bool, error) {
	_, found, err := g.RemoteBranchSHA(ctx, remoteURL, branch, creds)
	return found, err
}
