package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestFSError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		err     error
		wantErr string // ToolError message part; "" for a service error
	}{
		{"not exist", &fs.PathError{Op: "lstat", Path: "a", Err: fs.ErrNotExist}, "a does not exist; use list_files or search"},
		{"permission", &fs.PathError{Op: "open", Path: "a", Err: fs.ErrPermission}, "a cannot be accessed (permission denied)"},
		{"name too long", &fs.PathError{Op: "lstat", Path: "a", Err: syscall.ENAMETOOLONG}, "a is not a usable path (file name too long)"},
		{"escape", errors.New("openat a: path escapes from parent"), "a leads outside the docs root"},
		{"tool error kept", toolErrorf("already a tool error"), "already a tool error"},
		{"disk failure", &fs.PathError{Op: "read", Path: "a", Err: syscall.EIO}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := fsError("a", tc.err)
			var te *ToolError
			if tc.wantErr == "" {
				if errors.As(err, &te) || !errors.Is(err, tc.err) {
					t.Fatalf("fsError = %v, want a wrapped service error", err)
				}
				return
			}
			if !errors.As(err, &te) || !strings.Contains(te.Error(), tc.wantErr) {
				t.Fatalf("fsError = %v, want ToolError containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestShorten(t *testing.T) {
	t.Parallel()
	if got := shorten("short"); got != "short" {
		t.Fatalf("shorten(short) = %q", got)
	}
	long := strings.Repeat("é", maxShownLine) // 2 bytes each: the cut falls on a rune boundary or inside one
	got := shorten("x" + long)
	if !strings.HasSuffix(got, fmt.Sprintf("… [line cut, %d more bytes]", len(long)+1-(maxShownLine-1))) || !strings.HasPrefix(got, "xéé") {
		t.Fatalf("shorten = …%q", got[len(got)-60:])
	}
}

// TestConcurrentCalls runs reads and edits from several goroutines; -race checks the locking.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	w, _ := setup(t, testLimits())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("page%d.mdx", i)
			calls := [][2]string{
				{"create_file", `{"path": "` + name + `", "content": "a\n"}`},
				{"insert", `{"path": "` + name + `", "insert_line": 1, "text": "b"}`},
				{"read_file", `{"path": "` + name + `"}`},
				{"search", `{"query": "b", "path": "` + name + `"}`},
				{"list_files", `{}`},
			}
			for _, c := range calls {
				if _, err := w.Call(context.Background(), c[0], c[1]); err != nil {
					t.Errorf("%s: %v", c[0], err)
				}
				_ = w.Changed()
				_ = w.LinesChanged()
			}
		})
	}
	wg.Wait()
	if got := len(w.Changed()); got != 8 {
		t.Fatalf("%d changes, want 8", got)
	}
	if got := w.LinesChanged(); got != 16 {
		t.Fatalf("LinesChanged() = %d, want 16", got)
	}
}

func TestCleanPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want, wantErr string
		allowRoot         bool
	}{
		{in: "guides/intro.mdx", want: "guides/intro.mdx"},
		{in: " ./guides//intro.mdx ", want: "guides/intro.mdx"},
		{in: "guides/./intro.mdx", want: "guides/intro.mdx"},
		{in: "", allowRoot: true, want: "."},
		{in: "./", allowRoot: true, want: "."},
		{in: "", wantErr: "path is empty"},
		{in: ".", wantErr: "path is empty"},
		{in: "..", wantErr: `contains ".."`},
		{in: "a/..", wantErr: `contains ".."`},
		{in: "/abs", wantErr: "is absolute"},
		{in: "a\\b", wantErr: "backslash"},
		{in: "a\x00b", wantErr: "NUL"},
		{in: "a\nb", wantErr: "control characters"},
		{in: "bad\xffutf8", wantErr: "invalid UTF-8"},
		{in: ".git", wantErr: "inside .git"},
		{in: "x/.Git/y", wantErr: "inside .git"},
		{in: ".gitignore", want: ".gitignore"},
		{in: ".github/x.yml", want: ".github/x.yml"},
		{in: strings.Repeat("a/", 600), wantErr: "paths are at most"},
		{in: "guides/" + strings.Repeat("x", 256) + ".mdx", wantErr: "names are at most 255 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := cleanPath("path", tc.in, tc.allowRoot)
			if tc.wantErr != "" {
				var te *ToolError
				if !errors.As(err, &te) || !strings.Contains(te.Message, tc.wantErr) {
					t.Fatalf("cleanPath(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("cleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"*.mdx", "a/b/c.mdx", true},
		{"*.mdx", "a/b/c.md", false},
		{"guides/*.mdx", "guides/a.mdx", true},
		{"guides/*.mdx", "guides/x/a.mdx", false},
		{"guides/**/*.mdx", "guides/a.mdx", true},
		{"guides/**/*.mdx", "guides/x/y/a.mdx", true},
		{"**/intro.mdx", "intro.mdx", true},
		{"**/intro.mdx", "a/b/intro.mdx", true},
		{"./guides/**", "guides/a/b", true},
		{"/guides/*", "guides/a", true},
		{"**", "anything/at/all", true},
		{"guides/[ab].md", "guides/b.md", true},
		{"guides/?.md", "guides/ab.md", false},
	}
	for _, tc := range cases {
		t.Run(tc.pattern+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			g, err := compileGlob("glob", tc.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.match(tc.path); got != tc.want {
				t.Fatalf("match = %v, want %v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "[", "a/../b", "a\\b", "**/**/**/**/**/x", strings.Repeat("a", 300)} {
		if _, err := compileGlob("glob", bad); err == nil {
			t.Errorf("compileGlob(%q) succeeded", bad)
		}
	}
}

func TestDiffLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, a, b string
		want       int
	}{
		{"same", "a\nb\n", "a\nb\n", 0},
		{"added", "a\nb\n", "a\nx\nb\n", 1},
		{"removed", "a\nb\nc\n", "a\nc\n", 1},
		{"changed", "a\nb\nc\n", "a\nB\nc\n", 2},
		{"two places", "1\n2\n3\n4\n5\n6\n7\n", "1\nX\n3\n4\n5\nY\n7\n", 4},
		{"from empty", "", "a\nb\n", 2},
		{"to empty", "a\nb\n", "", 2},
		{"swap", "a\nb\n", "b\na\n", 2},
		{"binary", "a\x00", "b\x00", 0},
		{"final newline only", "a", "a\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := diffLines(tc.a, tc.b); got != tc.want {
				t.Fatalf("diffLines = %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("large rewrite is bounded", func(t *testing.T) {
		t.Parallel()
		var a, b strings.Builder
		for i := range 5000 {
			a.WriteString("a" + itoa(i) + "\n")
			b.WriteString("b" + itoa(i) + "\n")
		}
		if got := diffLines(a.String(), b.String()); got != 10000 {
			t.Fatalf("diffLines = %d, want 10000", got)
		}
	})
}

func TestStripLineNumbers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"  12| text", "text", true},
		{"  12| a\n  13|   b\n", "a\n  b\n", true},
		{"  12|", "", true},
		{"     7\tcat -n style", "cat -n style", true},
		{"  12| a\nplain", "", false},
		{"plain", "", false},
		{"12 | not ours", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, ok := stripLineNumbers(tc.in)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Fatalf("stripLineNumbers(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRewriteJSONStrings(t *testing.T) {
	t.Parallel()
	repl := map[string]string{"guides/old": "guides/new", "/guides/old": "/guides/new"}
	cases := []struct {
		name, in, want string
		n              int
	}{
		{"value", `{"a": "guides/old"}`, `{"a": "guides/new"}`, 1},
		{"key kept", `{"guides/old": "guides/old"}`, `{"guides/old": "guides/new"}`, 1},
		{"nested arrays", "[\n  [\"guides/old\", {\"pages\": [\"x\", \"/guides/old\"]}],\n  1, true, null\n]",
			"[\n  [\"guides/new\", {\"pages\": [\"x\", \"/guides/new\"]}],\n  1, true, null\n]", 2},
		{"escaped form", `{"a": "guides\/old"}`, `{"a": "guides/new"}`, 1},
		{"no match", `{"a": "guides/older", "b": 1.50}`, `{"a": "guides/older", "b": 1.50}`, 0},
		{"keys after objects", `{"x": {"y": 1}, "guides/old": "guides/old"}`, `{"x": {"y": 1}, "guides/old": "guides/new"}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, n, err := rewriteJSONStrings([]byte(tc.in), repl)
			if err != nil || string(got) != tc.want || n != tc.n {
				t.Fatalf("got %s, %d, %v; want %s, %d", got, n, err, tc.want, tc.n)
			}
		})
	}
	if _, _, err := rewriteJSONStrings([]byte(`{"a": `), repl); err == nil {
		t.Fatal("invalid JSON accepted")
	}
}

func TestPageLinks(t *testing.T) {
	t.Parallel()
	r := newRefRewriter("guides/old.mdx", "guides/new.mdx")
	cases := []struct {
		in, want string
		n        int
	}{
		{"[a](/guides/old)", "[a](/guides/new)", 1},
		{"[a](/guides/old#x) [b](/guides/old.mdx)", "[a](/guides/new#x) [b](/guides/new.mdx)", 2},
		{`<Card href="/guides/old">`, `<Card href="/guides/new">`, 1},
		{`<Card href='/guides/old?x=1'>`, `<Card href='/guides/new?x=1'>`, 1},
		{`<Card href={"/guides/old"}>`, `<Card href={"/guides/new"}>`, 1},
		{"[ref]: /guides/old\n", "[ref]: /guides/new\n", 1},
		{"[a](/guides/old \"title\")", "[a](/guides/new \"title\")", 1},
		{"[a](/guides/older) /guides/old plain text", "[a](/guides/older) /guides/old plain text", 0},
		{"[a](https://x.com/guides/old)", "[a](https://x.com/guides/old)", 0},
		{"[a](/guides/old)", "[a](/guides/new)", 1},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, n := r.page(tc.in)
			if got != tc.want || n != tc.n {
				t.Fatalf("page(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
			}
		})
	}
}

// FuzzArgs feeds arbitrary argument strings to read_file, str_replace and insert: no call may
// panic, and every error must be a ToolError.
func FuzzArgs(f *testing.F) {
	w, _ := setup(f, testLimits())
	seeds := []struct {
		tool uint8
		args string
	}{
		{0, `{"path": "guides/intro.mdx", "start_line": 2, "end_line": 5}`},
		{0, `{"path": "../outside.txt"}`},
		{0, `{"path": "long.md", "start_line": "3", "end_line": -1}`},
		{0, `"{\"path\": \"index.mdx\"}"`},
		{1, `{"path": "guides/intro.mdx", "old_str": "Repeat me.", "new_str": "x", "replace_all": true}`},
		{1, `{"path": "guides/intro.mdx", "old_str": "   7| Repeat me.", "new_str": "x"}`},
		{1, `{"path": "crlf.md", "old_str": "one\ntwo", "new_str": "1\n2"}`},
		{1, `{"path": "docs.json", "old_str": "{", "new_str": "["}`},
		{2, `{"path": "noeol.md", "insert_line": 2, "text": "x"}`},
		{1, `{`}, {0, `[]`}, {1, `null`}, {0, ``}, {2, `{"insert_line": 1e99}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	tools := []string{"read_file", "str_replace", "insert"}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		name := tools[int(which)%len(tools)]
		_, err := w.Call(context.Background(), name, args)
		var te *ToolError
		if err != nil && !errors.As(err, &te) {
			t.Fatalf("%s %q: not a ToolError: %v", name, args, err)
		}
		_ = Target(name, args)
	})
}
