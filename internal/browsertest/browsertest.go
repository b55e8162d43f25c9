// Package browsertest runs browser scenarios for Go tests: a Node script
// under clients/browser drives Debian's chromium through playwright-core
// (never a downloaded browser build). The Go test starts the servers, hands
// the script its input as JSON on stdin, and checks the JSON it prints.
//
// Without chromium, node or the installed playwright-core (make
// browser-deps) a test skips with the reason; in CI it fails instead.
package browsertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Browser is what a scenario needs to run.
type Browser struct {
	// Chromium is the browser binary, Node the node binary, and Dir the
	// clients/browser directory with playwright-core installed.
	Chromium, Node, Dir string
}

// Find locates chromium ($DOCSMITH_CHROMIUM, /usr/bin/chromium or chromium
// on PATH), node and clients/browser, or skips t (fails it in CI).
func Find(t testing.TB) *Browser {
	t.Helper()
	b, err := find()
	if err != nil {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" {
			t.Fatalf("browser test: %v", err)
		}
		t.Skipf("browser test skipped: %v", err)
	}
	return b
}

func find() (*Browser, error) {
	chromium := os.Getenv("DOCSMITH_CHROMIUM")
	if chromium == "" {
		if _, err := os.Stat("/usr/bin/chromium"); err == nil {
			chromium = "/usr/bin/chromium"
		} else if p, err := exec.LookPath("chromium"); err == nil {
			chromium = p
		} else {
			return nil, errors.New("no chromium (apt-get install chromium, or make browser-deps as root)")
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("no node on PATH (Node 20 or later runs playwright-core)")
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "clients", "browser")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		return nil, errors.New("playwright-core is not installed in clients/browser (make browser-deps)")
	}
	return &Browser{Chromium: chromium, Node: node, Dir: dir}, nil
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Run runs clients/browser/script with input (plus "chromium", the browser
// to launch) as JSON on stdin, logs what the script writes on stderr, and
// decodes its standard output into out. A script that exits non-zero fails t.
func (b *Browser) Run(t testing.TB, script string, input map[string]any, out any) {
	t.Helper()
	in := map[string]any{"chromium": b.Chromium}
	for k, v := range input {
		in[k] = v
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), b.Node, filepath.Join(b.Dir, script))
	cmd.Dir = b.Dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if stderr.Len() > 0 {
		t.Logf("%s:\n%s", script, stderr.String())
	}
	if err != nil {
		t.Fatalf("%s: %v\nstdout: %s", script, err, stdout.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%s printed %q, not JSON: %v", script, stdout.String(), err)
	}
}

// ArtifactsDir is where a test keeps screenshots: $DOCSMITH_ARTIFACTS/name
// when that is set (CI keeps it), else a temporary directory. It logs the
// path.
func ArtifactsDir(t testing.TB, name string) string {
	t.Helper()
	dir := t.TempDir()
	if base := os.Getenv("DOCSMITH_ARTIFACTS"); base != "" {
		dir = filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	return dir
}
