package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setupContext opens the test tree of setup (symlinks in and out, .git, a hidden directory, a
// huge file, binary files) as the context repository acme/api, beside a second one.
func setupContext(t *testing.T) (*Context, string) {
	t.Helper()
	_, root := setup(t, testLimits())
	if err := os.WriteFile(filepath.Join(root, ".env"), []byte("TOKEN=hidden\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var roots []*os.Root
	for _, dir := range []string{root, other} {
		r, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, r)
		t.Cleanup(func() { _ = r.Close() })
	}
	c, err := NewContext([]ContextRepo{
		{Name: "acme/api", Root: roots[0], Omitted: map[string]string{"vendor/huge.bin": "5000000 bytes, over the limit of 65536 per file"}},
		{Name: "acme/sdk", Root: roots[1]},
	}, testLimits())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, root
}

func runContext(t *testing.T, c *Context, tc callCase) {
	t.Helper()
	out, err := c.Call(context.Background(), tc.tool, tc.args)
	var te *ToolError
	if err != nil && !errors.As(err, &te) {
		t.Fatalf("%s %s: not a ToolError: %v", tc.tool, tc.args, err)
	}
	if tc.wantErr != "" {
		if err == nil || !strings.Contains(te.Message, tc.wantErr) {
			t.Fatalf("got %q, %v; want an error containing %q", out, err, tc.wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	for _, s := range tc.want {
		if !strings.Contains(out, s) {
			t.Errorf("output does not contain %q:\n%s", s, out)
		}
	}
	for _, s := range tc.notWant {
		if strings.Contains(out, s) {
			t.Errorf("output contains %q:\n%s", s, out)
		}
	}
}

// TestContextToolsConfinement: the context tools read their repository through the docs tools'
// own checks, refuse hidden paths besides, and have no way to write.
func TestContextToolsConfinement(t *testing.T) {
	t.Parallel()
	c, root := setupContext(t)
	parent := filepath.Dir(root)
	before := snapshot(t, parent)

	cases := []callCase{
		{name: "read", tool: "read_context_file", args: `{"repo": "acme/api", "path": "guides/intro.mdx"}`, want: []string{"guides/intro.mdx, lines 1-"}},
		{name: "repo compared without case", tool: "read_context_file", args: `{"repo": "ACME/SDK", "path": "main.go"}`, want: []string{"package main"}},
		{name: "unknown repo", tool: "read_context_file", args: `{"repo": "acme/web", "path": "main.go"}`, wantErr: "there is no context repository \"acme/web\"; the context repositories are acme/api, acme/sdk"},
		{name: "no repo", tool: "list_context_files", args: `{}`, wantErr: `list_context_files needs the parameter "repo"`},
		{name: "dotdot", tool: "read_context_file", args: `{"repo": "acme/api", "path": "../outside.txt"}`, wantErr: `contains ".."; paths are relative to the repository root`},
		{name: "absolute", tool: "read_context_file", args: jsonArgs(t, map[string]any{"repo": "acme/api", "path": filepath.Join(parent, "outside.txt")}), wantErr: "is absolute; give it relative to the repository root"},
		{name: "absolute system", tool: "read_context_file", args: `{"repo": "acme/api", "path": "/etc/passwd"}`, wantErr: "is absolute"},
		{name: "symlink out", tool: "read_context_file", args: `{"repo": "acme/api", "path": "escape.mdx"}`, wantErr: "escape.mdx is a symbolic link; the tools do not follow symlinks, even inside the repository root"},
		{name: "through dir symlink", tool: "read_context_file", args: `{"repo": "acme/api", "path": "outdir/outside.txt"}`, wantErr: "outdir is a symbolic link"},
		{name: "list dir symlink", tool: "list_context_files", args: `{"repo": "acme/api", "dir": "outdir"}`, wantErr: "outdir is a symbolic link"},
		{name: "search dir symlink", tool: "search_context", args: `{"repo": "acme/api", "query": "SECRET", "path": "outdir"}`, wantErr: "outdir is a symbolic link"},
		{name: "git", tool: "read_context_file", args: `{"repo": "acme/api", "path": ".git/config"}`, wantErr: "is inside .git"},
		{name: "git list", tool: "list_context_files", args: `{"repo": "acme/api", "dir": ".git"}`, wantErr: "is inside .git"},
		{name: "hidden dir", tool: "read_context_file", args: `{"repo": "acme/api", "path": ".github/workflows/ci.yml"}`, wantErr: "is a hidden path (.github); the context tools do not read hidden files"},
		{name: "hidden file", tool: "read_context_file", args: `{"repo": "acme/api", "path": ".env"}`, wantErr: "is a hidden path (.env)"},
		{name: "hidden list", tool: "list_context_files", args: `{"repo": "acme/api", "dir": ".github"}`, wantErr: "is a hidden path"},
		{name: "hidden search", tool: "search_context", args: `{"repo": "acme/api", "query": "TOKEN", "path": ".env"}`, wantErr: "is a hidden path"},
		{name: "huge", tool: "read_context_file", args: `{"repo": "acme/api", "path": "big.mdx"}`, wantErr: "over the limit of 65536 bytes per file"},
		{name: "binary", tool: "read_context_file", args: `{"repo": "acme/api", "path": "images/logo.png"}`, wantErr: "is a binary file"},
		{name: "omitted", tool: "read_context_file", args: `{"repo": "acme/api", "path": "vendor/huge.bin"}`, wantErr: "vendor/huge.bin of acme/api was left out of the clone (5000000 bytes, over the limit of 65536 per file)"},
		{name: "missing", tool: "read_context_file", args: `{"repo": "acme/api", "path": "nope.go"}`, wantErr: "nope.go does not exist; use list_context_files or search_context"},
		{
			name: "list skips hidden, links and binaries", tool: "list_context_files", args: `{"repo": "acme/api"}`,
			want:    []string{"guides/intro.mdx", "1 more file here was left out of this clone"},
			notWant: []string{".env", ".github", ".git/", "escape.mdx", "outside.txt", "logo.png"},
		},
		{
			name: "search skips hidden and links", tool: "search_context", args: `{"repo": "acme/api", "query": "TOKEN=hidden"}`,
			want: []string{"No matches"},
		},
		{name: "search bounded", tool: "search_context", args: `{"repo": "acme/api", "query": "line"}`, want: []string{"[stopped at 5 hits"}},
		{name: "read bounded", tool: "read_context_file", args: `{"repo": "acme/api", "path": "long.md"}`, want: []string{"call read_context_file with start_line=21"}},
		{name: "no write tool", tool: "create_file", args: `{"path": "x.go", "content": "x"}`, wantErr: "there is no context tool named \"create_file\""},
		{name: "no write tool either", tool: "str_replace", args: `{"repo": "acme/api", "path": "index.mdx", "old_str": "a", "new_str": "b"}`, wantErr: "they only read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runContext(t, c, tc)
		})
	}
	for _, s := range c.Specs() {
		if !strings.Contains(s.Name, "context") {
			t.Errorf("context tool %s", s.Name)
		}
		if !c.Has(s.Name) {
			t.Errorf("Has(%s) = false", s.Name)
		}
	}
	if len(c.Specs()) != 3 || c.Has("read_file") || c.Has("create_file") {
		t.Fatalf("specs = %v", c.Specs())
	}
	// A reader refuses any change, even through its own functions.
	if err := c.repos[0].ws.apply(step{kind: stepCreate, path: "pwned.go", content: "x", perm: 0o644}); err == nil {
		t.Fatal("a reader applied a change")
	}
	if after := snapshot(t, parent); !mapsEqual(before, after) {
		t.Fatalf("the context tools changed the disk: %s", diffSnapshots(before, after))
	}
}

func TestNewContextRefusesDuplicates(t *testing.T) {
	t.Parallel()
	r, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	if _, err := NewContext([]ContextRepo{{Name: "acme/api", Root: r}, {Name: "Acme/API", Root: r}}, Limits{}); err == nil {
		t.Fatal("a repository given twice was accepted")
	}
	if _, err := NewContext([]ContextRepo{{Name: "acme/api"}}, Limits{}); err == nil {
		t.Fatal("a repository without a root was accepted")
	}
}
