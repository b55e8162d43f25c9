package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDomainStatus: `docsmith domain status` shows the commit the index was
// built from, which `domain create` and `docsmith index` record, and the
// failure of a later build, which keeps the commit served.
func TestDomainStatus(t *testing.T) {
	t.Parallel()
	repo := filepath.Join(t.TempDir(), "docs")
	if err := os.CopyFS(repo, os.DirFS("../search/testdata/site")); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
			"GIT_AUTHOR_NAME=W", "GIT_AUTHOR_EMAIL=w@example.invalid", "GIT_COMMITTER_NAME=W", "GIT_COMMITTER_EMAIL=w@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "--quiet", "--initial-branch=main")
	git("add", "-A")
	git("commit", "--quiet", "-m", "docs")
	head := git("rev-parse", "HEAD")

	dir := t.TempDir()
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "docs", "--repo", repo, "--forge", "local"},
		{"domain", "create", "--org", "acme", "--domain", "acme-docs", "--project", "docs"},
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("%s = %+v", strings.Join(args, " "), r)
		}
	}
	r := run(t, dir, "domain", "status", "acme-docs")
	if r.code != 0 {
		t.Fatalf("domain status = %+v", r)
	}
	for _, want := range []string{
		`(?m)^domain:\s+acme-docs$`, `(?m)^ref:\s+main$`, `(?m)^commit:\s+` + head + `$`, `(?m)^head:\s+` + head + `$`,
		`(?m)^pages:\s+[1-9][0-9]*$`, `(?m)^passages:\s+[1-9][0-9]*$`, `(?m)^last error:\s+-$`, `(?m)^lag:\s+0s$`,
	} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("domain status does not match %s:\n%s", want, r.stdout)
		}
	}

	// The repository goes away: the index build fails, the status keeps
	// the commit and says why.
	if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	if r := run(t, dir, "index", "acme-docs"); r.code == 0 {
		t.Fatalf("index of a repository that is gone = %+v", r)
	}
	r = run(t, dir, "domain", "status", "acme-docs")
	if r.code != 0 || !regexp.MustCompile(`(?m)^commit:\s+`+head+`$`).MatchString(r.stdout) ||
		regexp.MustCompile(`(?m)^last error:\s+-$`).MatchString(r.stdout) || !strings.Contains(r.stdout, "docs") {
		t.Fatalf("domain status after a failed build:\n%s", r.stdout)
	}

	if r := run(t, dir, "domain", "status", "nope"); r.code == 0 || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("status of an unknown domain = %+v", r)
	}
}
