package docs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

const secretText = "SECRET-HOST-TEXT"

// hostileSite writes a site whose navigation names pages reached through
// symbolic links: to an absolute host path, out of the site through "..",
// and to a file inside the site. It returns the site directory.
func hostileSite(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	site := filepath.Join(base, "repo", "docs")
	for _, d := range []string{outside, site} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Read as a page, the outside file would also fail validation.
	write(filepath.Join(outside, "secret.mdx"), "---\ntitle: "+secretText+"\n---\n\n"+secretText+"\n\n<Warning>\n")
	write(filepath.Join(site, "docs.json"), `{"name":"Hostile","navigation":{"groups":[{"group":"Start","pages":["index","abs","up","nested/secret","inside"]}]}}`)
	write(filepath.Join(site, "index.mdx"), "---\ntitle: Home\n---\n\nSee [the guide](/inside).\n")
	write(filepath.Join(site, "real.mdx"), "---\ntitle: Real\n---\n\nReal page.\n")
	links := map[string]string{
		"abs.mdx":    filepath.Join(outside, "secret.mdx"),
		"up.mdx":     "../../outside/secret.mdx",
		"nested":     outside,
		"inside.mdx": "real.mdx",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(site, name)); err != nil {
			t.Fatal(err)
		}
	}
	return site
}

func TestReadersRefuseSymlinks(t *testing.T) {
	t.Parallel()
	site := hostileSite(t)
	root, err := os.OpenRoot(site)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Close() })
	for name, fsys := range map[string]fs.FS{"DirFS": os.DirFS(site), "Root.FS": root.FS()} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := Load(fsys)
			if err != nil {
				t.Fatal(err)
			}
			for p, page := range s.Pages {
				if strings.Contains(page.Title, secretText) || strings.Contains(string(page.Body), secretText) {
					t.Errorf("page %s was read through a symbolic link", p)
				}
				if p == "inside" {
					t.Errorf("the in-site link inside.mdx was followed")
				}
			}
			if s.Pages["index"] == nil {
				t.Fatal("the plain page was not loaded")
			}
			var refused int
			for _, p := range s.Problems {
				if strings.Contains(p.Message, "symbolic link") {
					refused++
				}
			}
			if refused < 4 {
				t.Errorf("%d problems name a symbolic link, want 4:\n%s", refused, problemList(s.Problems))
			}
			for _, np := range s.Indexable() {
				if np.Path != "index" {
					t.Errorf("%s is indexable", np.Path)
				}
			}

			problems := Validate(fsys, []string{"nested/secret.mdx", "abs.mdx"})
			for _, p := range problems {
				if strings.Contains(p.Message, "Warning") || strings.Contains(p.Message, secretText) {
					t.Errorf("validation read the outside file: %s", p)
				}
			}
			if !strings.Contains(problemList(problems), "symbolic link") {
				t.Errorf("validation does not say the changed file is a symbolic link:\n%s", problemList(problems))
			}
			if _, err := ReadFile(fsys, "nested/secret.mdx", MaxFileBytes); !errors.Is(err, ErrSymlink) {
				t.Errorf("ReadFile through a linked directory = %v, want ErrSymlink", err)
			}
		})
	}
}

func TestOpenCheckoutRefusesHostileDocsRoots(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(repo, "real", "docs"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"abs":    outside,
		"up":     "../..",
		"inside": "real/docs",
		"real/l": "docs",
	} {
		if err := os.Symlink(target, filepath.Join(repo, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		docsRoot, want string
	}{
		{"abs", "symbolic link"},
		{"abs/sub", "symbolic link"},
		{"up", "symbolic link"},
		{"inside", "symbolic link"},
		{"real/l", "symbolic link"},
		{"file", "not a directory"},
		{"missing", "does not exist"},
		{"../outside", "inside the repository"},
		{outside, "inside the repository"},
		{".git", "inside the repository"},
	}
	for _, tc := range tests {
		c, err := OpenCheckout(repo, tc.docsRoot)
		if err == nil {
			_ = c.Close()
			t.Errorf("OpenCheckout(%q) succeeded", tc.docsRoot)
			continue
		}
		msg := strings.ReplaceAll(err.Error(), tc.docsRoot, "")
		if !strings.Contains(err.Error(), tc.want) || strings.Contains(msg, base) {
			t.Errorf("OpenCheckout(%q) = %v, want it to say %q without server paths", tc.docsRoot, err, tc.want)
		}
	}
	for _, ok := range []string{"", ".", "real/docs", "real/docs/"} {
		c, err := OpenCheckout(repo, ok)
		if err != nil {
			t.Errorf("OpenCheckout(%q) = %v", ok, err)
			continue
		}
		_ = c.Close()
	}
}

// TestOpenTreeRefusesHostileDocsRoots: in a repository read into memory, a
// link is a plain file holding its target, so a docs root through one is
// "not a directory", as in a checkout; the rest is refused as OpenCheckout
// refuses it.
func TestOpenTreeRefusesHostileDocsRoots(t *testing.T) {
	t.Parallel()
	tree := fstest.MapFS{
		"real/docs/docs.json": {Data: []byte("{}")},
		"abs":                 {Data: []byte("/etc")},
		"up":                  {Data: []byte("../..")},
		"file":                {Data: []byte("x")},
	}
	tests := []struct {
		docsRoot, want string
	}{
		{"abs", "not a directory"},
		{"abs/sub", "does not exist"},
		{"up", "not a directory"},
		{"file", "not a directory"},
		{"missing", "does not exist"},
		{"../outside", "inside the repository"},
		{"/etc", "inside the repository"},
		{".git", "inside the repository"},
	}
	for _, tc := range tests {
		if _, err := OpenTree(tree, tc.docsRoot); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenTree(%q) = %v, want it to say %q", tc.docsRoot, err, tc.want)
		}
	}
	for _, ok := range []string{"", ".", "real/docs", "real/docs/"} {
		if _, err := OpenTree(tree, ok); err != nil {
			t.Errorf("OpenTree(%q) = %v", ok, err)
		}
	}
	root, err := OpenTree(tree, "real/docs")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := fs.ReadFile(root, "docs.json"); err != nil || string(data) != "{}" {
		t.Fatalf("docs.json in the docs root: %q, %v", data, err)
	}
}

// endlessFS holds one file that claims to be small and never ends.
type endlessFS struct{ read *int64 }

func (e endlessFS) Open(name string) (fs.File, error) {
	switch name {
	case ".":
		return &endless{name: ".", dir: true}, nil
	case "big.mdx":
		return &endless{name: name, read: e.read}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

type endless struct {
	name string
	dir  bool
	read *int64
}

func (f *endless) Stat() (fs.FileInfo, error) { return f, nil }
func (f *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	*f.read += int64(len(p))
	return len(p), nil
}
func (f *endless) Close() error       { return nil }
func (f *endless) Name() string       { return f.name }
func (f *endless) Size() int64        { return 10 }
func (f *endless) ModTime() time.Time { return time.Time{} }
func (f *endless) IsDir() bool        { return f.dir }
func (f *endless) Sys() any           { return nil }
func (f *endless) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

func TestReadFileCapsSize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := strings.Repeat("# Heading\n\nSome words of a huge page.\n\n", MaxFileBytes/30)
	if err := os.WriteFile(filepath.Join(dir, "docs.json"), []byte(`{"navigation":{"groups":[{"group":"G","pages":["big","small"]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.mdx"), []byte("---\ntitle: Big\n---\n"+big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.mdx"), []byte("---\ntitle: Small\n---\nHi.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	var tooLarge *FileTooLargeError
	if p := s.Pages["big"]; p == nil || !errors.As(p.Err, &tooLarge) || p.Body != nil {
		t.Fatalf("big page = %+v, want it left unread with a FileTooLargeError", p)
	}
	if got := problemList(s.Problems); !strings.Contains(got, "big.mdx is ") || !strings.Contains(got, "over the limit of 1048576 bytes") {
		t.Errorf("problems do not name the file and the limit:\n%s", got)
	}
	if ix := s.Indexable(); len(ix) != 1 || ix[0].Path != "small" {
		t.Errorf("indexable = %+v, want only small", ix)
	}
	if got := problemList(Validate(os.DirFS(dir), []string{"big.mdx"})); !strings.Contains(got, "over the limit") {
		t.Errorf("Validate of the big page:\n%s", got)
	}

	// A file that lies about its size is read no further than the cap.
	var read int64
	_, err = ReadFile(endlessFS{read: &read}, "big.mdx", 4096)
	if !errors.As(err, &tooLarge) || tooLarge.File != "big.mdx" || tooLarge.Limit != 4096 {
		t.Fatalf("ReadFile of an endless file = %v", err)
	}
	if read > 4096+64<<10 {
		t.Errorf("read %d bytes of an endless file with a cap of 4096", read)
	}
}

var _ io.Reader = (*endless)(nil)
