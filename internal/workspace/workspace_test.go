//go:build unix && !solaris && !aix

package workspace_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/workspace"
)

const helperEnv = "DOCSMITH_WORKSPACE_HELPER_PARENT"

// TestHelperProcess is not a test: run with helperEnv set, it makes a
// workspace as a turn of another worker process would, prints its path and
// waits to be killed.
func TestHelperProcess(t *testing.T) {
	parent := os.Getenv(helperEnv)
	if parent == "" {
		t.Skip("a helper for TestKilledProcessWorkspaceIsSwept")
	}
	d, err := workspace.Create(parent, "turn-other-1-")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(d.Path)
	time.Sleep(time.Hour)
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestKilledProcessWorkspaceIsSwept: a workspace of another live process is
// left alone; once that process is killed, the next sweep removes it.
func TestKilledProcessWorkspaceIsSwept(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(strings.TrimSpace(line), parent) {
		t.Fatalf("helper said %q, %v", line, err)
	}
	theirs := filepath.Base(strings.TrimSpace(line))
	if err := os.WriteFile(filepath.Join(parent, theirs, "file"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	ours, err := workspace.Create(parent, "turn-ours-1-")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	removed, err := workspace.Sweep(parent, "turn-", log)
	if err != nil || len(removed) != 0 {
		t.Fatalf("sweep with both owners alive removed %v, %v", removed, err)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	removed, err = workspace.Sweep(parent, "turn-", log)
	if err != nil || !slices.Equal(removed, []string{theirs}) {
		t.Fatalf("sweep after the kill removed %v, %v; want %s", removed, err, theirs)
	}
	if got := names(t, parent); !slices.Equal(got, []string{filepath.Base(ours.Path)}) {
		t.Fatalf("left %v, want only our live workspace", got)
	}
	if err := ours.Remove(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, parent); len(got) != 0 {
		t.Fatalf("left %v after Remove", got)
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	// What a process killed mid-turn leaves: a workspace nobody locks, and
	// a staging directory from before the lock, old enough to be stale.
	for _, d := range []string{"turn-a-1-x/repo", "index-d-1/repo", "other/keep", ".new-turn-b-2-y", ".new-turn-c-3-z"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(parent, ".new-turn-b-2-y"), old, old); err != nil {
		t.Fatal(err)
	}
	removed, err := workspace.Sweep(parent, "turn-", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".new-turn-b-2-y", "turn-a-1-x"}; !slices.Equal(removed, want) {
		t.Fatalf("removed %v, want %v", removed, want)
	}
	if got, want := names(t, parent), []string{".new-turn-c-3-z", "index-d-1", "other"}; !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if removed, err := workspace.Sweep(filepath.Join(parent, "missing"), "turn-", slog.New(slog.DiscardHandler)); err != nil || removed != nil {
		t.Fatalf("sweep of a missing dir = %v, %v", removed, err)
	}
	if _, err := workspace.Create(parent, "../x"); err == nil {
		t.Fatal("a prefix with a slash was accepted")
	}
}
