package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsFolder writes a small docs site (docs.json and two pages) under
// root/sub (root itself when sub is empty) and returns root.
func docsFolder(t *testing.T, sub ...string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(append([]string{root}, sub...)...)
	files := map[string]string{
		"docs.json": `{"name": "Kettle", "navigation": {"groups": [{"group": "Start", "pages": ["index", "brew"]}]}}`,
		"index.mdx": "---\ntitle: Kettle\n---\n\nKettle boils water on a schedule.\n",
		"brew.mdx":  "---\ntitle: Brew tea\n---\n\n## Steep\n\nSteep green tea for two minutes at 80 degrees.\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProjectCreateChecks checks what project create can check at once:
// the agent model, and for a local path the repository and docs root.
func TestProjectCreateChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := run(t, dir, "org", "create", "acme"); r.code != 0 {
		t.Fatalf("org create = %+v", r)
	}
	site := docsFolder(t)
	nested := docsFolder(t, "docs")
	missing := filepath.Join(t.TempDir(), "nothing-here")
	tests := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"missing path", []string{"--id", "p1", "--repo", missing}, 1, "no such directory"},
		{"wrong docs root", []string{"--id", "p2", "--repo", site, "--docs-root", "content"}, 1, `docs root "content"`},
		{"docs in a folder, root not given", []string{"--id", "p3", "--repo", nested}, 1, "--docs-root"},
		{"extractive is an assistant model", []string{"--id", "p4", "--repo", site, "--model", "extractive"}, 1, "assistant model"},
		{"unknown model lists builtin", []string{"--id", "p5", "--repo", site, "--model", "gpt-4"}, 1, "must be builtin, openai/NAME or anthropic/NAME"},
		{"bad check value", []string{"--id", "p6", "--repo", site, "--check=maybe"}, 2, "true, false or auto"},
		{"missing path, check off", []string{"--id", "p7", "--repo", missing, "--check=false"}, 0, ""},
		{"remote, not checked by default", []string{"--id", "p8", "--repo", "https://git.invalid/acme/docs.git"}, 0, ""},
		{"remote with --check", []string{"--id", "p9", "--repo", "https://git.invalid/acme/docs.git", "--check"}, 1, "could not clone"},
		{"good folder", []string{"--id", "p10", "--repo", site}, 0, ""},
		{"good nested folder", []string{"--id", "p11", "--repo", nested, "--docs-root", "docs"}, 0, ""},
	}
	for _, tc := range tests {
		args := append([]string{"project", "create", "--org", "acme"}, tc.args...)
		r := run(t, dir, args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: docsmith %s = code %d, stderr %q; want code %d and %q", tc.name, strings.Join(args, " "), r.code, r.stderr, tc.code, tc.want)
		}
	}
}

// TestDomainCreateIndexes checks that a new domain is indexed at once, and
// that one whose docs cannot be read is created with a note saying how to
// index it later.
func TestDomainCreateIndexes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "kettle", "--repo", docsFolder(t)},
		{"project", "create", "--org", "acme", "--id", "remote", "--repo", "https://git.invalid/acme/docs.git"},
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("docsmith %s = %+v", strings.Join(args, " "), r)
		}
	}
	r := run(t, dir, "domain", "create", "--org", "acme", "--domain", "kettle", "--project", "kettle")
	if r.code != 0 || r.stdout != "kettle\n" || !strings.Contains(r.stderr, "indexed domain kettle: 2 pages") {
		t.Fatalf("domain create = %+v", r)
	}
	r = run(t, dir, "domain", "create", "--org", "acme", "--domain", "far", "--project", "remote")
	if r.code != 0 || !strings.Contains(r.stderr, "domain far has no index yet") || !strings.Contains(r.stderr, "run: docsmith index far") {
		t.Fatalf("domain create over an unreachable repository = %+v", r)
	}
	r = run(t, dir, "domain", "create", "--org", "acme", "--domain", "later", "--project", "kettle", "--index=false")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("domain create --index=false = %+v", r)
	}

	setup := filepath.Join(t.TempDir(), "setup.yaml")
	yaml := "orgs:\n  - id: acme\n    domains:\n      - id: applied\n        project: kettle\n"
	if err := os.WriteFile(setup, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, dir, "apply", setup)
	if r.code != 0 || !strings.Contains(r.stdout, "created domain applied") || !strings.Contains(r.stderr, "indexed domain applied: 2 pages") {
		t.Fatalf("apply = %+v", r)
	}
}

// TestDataFlagHelp checks that --data and --data-dir, one option under two
// names, say the same in every help.
func TestDataFlagHelp(t *testing.T) {
	t.Parallel()
	r := run(t, t.TempDir(), "index", "--help")
	var data, dataDir string
	lines := strings.Split(r.stderr, "\n")
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case "-data string":
			data = lines[i+1]
		case "-data-dir string":
			dataDir = lines[i+1]
		}
	}
	for name, help := range map[string]string{"--data": data, "--data-dir": dataDir} {
		if !strings.Contains(help, "DOCSMITH_DATA_DIR") || !strings.Contains(help, `default "./data"`) || !strings.Contains(help, "same flag") {
			t.Errorf("help of %s = %q", name, help)
		}
	}
	r = run(t, t.TempDir(), "serve", "--help")
	if !strings.Contains(r.stderr, "--data-dir, --data") {
		t.Errorf("serve --help does not list --data beside --data-dir:\n%s", r.stderr)
	}
}

// TestAskNamesTheURL checks that a server that does not answer is named
// with the flag and variable that set its address.
func TestAskNamesTheURL(t *testing.T) {
	t.Parallel()
	r := run(t, t.TempDir(), "ask", "--url", "http://127.0.0.1:1", "--key", "svc_dsc_x", "--domain", "d", "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "http://127.0.0.1:1") || !strings.Contains(r.stderr, "--url or DOCSMITH_URL") {
		t.Fatalf("ask with no server = %+v", r)
	}
}

// TestApplyErrors checks that a set-up file's mistakes are named by their
// YAML keys and lines, not by Go types, and printed once.
func TestApplyErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "orgs:\n  - id: acme\n    projects:\n      - id: docs\n        repos: x\n",
			[]string{`line 5: unknown key "repos" in orgs[0].projects[0]`, "the keys there are id, repo, ref"}},
		{"list expected", "orgs:\n  - id: acme\n    projects: nope\n", []string{`line 3: orgs[0].projects is "nope"; it must be a list`}},
		{"bool expected", "orgs:\n  - id: acme\n    domains:\n      - id: x\n        finish_thread_id: maybe\n",
			[]string{`line 5: orgs[0].domains[0].finish_thread_id is "maybe"; it must be true or false`}},
		{"top level", "org:\n  - id: acme\n", []string{`line 1: unknown key "org" in the top level; the keys there are orgs`}},
		{"allow_automerge not a bool", "orgs:\n  - id: acme\n    projects:\n      - id: docs\n        repo: https://git.invalid/acme/docs.git\n        allow_automerge: maybe\n",
			[]string{`line 6: orgs[0].projects[0].allow_automerge is "maybe"; it must be true or false`}},
		{"two webhook secrets", "orgs:\n  - id: acme\n    projects:\n      - {id: docs, repo: \"https://git.invalid/acme/docs.git\", webhook_secret_env: HOOK, webhook_secret_file: /run/hook}\n",
			[]string{`orgs[0] (acme).projects[0] (docs): invalid: webhook_secret_env and webhook_secret_file are both set`}},
		{"missing local repository", "orgs:\n  - id: acme\n    projects:\n      - {id: docs, repo: /nonexistent/docs}\n",
			[]string{`orgs[0].projects[0] (docs): project docs: invalid: repo "/nonexistent/docs": no such directory`}},
	}
	for _, tc := range tests {
		file := filepath.Join(t.TempDir(), "setup.yaml")
		if err := os.WriteFile(file, []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, dir, "apply", file)
		if r.code != 1 {
			t.Errorf("%s: apply = %+v", tc.name, r)
			continue
		}
		for _, want := range tc.want {
			if strings.Count(r.stderr, want) != 1 {
				t.Errorf("%s: stderr %q should hold %q once", tc.name, r.stderr, want)
			}
		}
		if strings.Contains(r.stderr, "tenant.") || strings.Contains(r.stderr, "[]") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s: stderr names Go types or says it twice: %q", tc.name, r.stderr)
		}
	}
}
