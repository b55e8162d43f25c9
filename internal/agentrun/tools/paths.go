package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

const (
	maxPathLen = 1024
	maxNameLen = 255
)

// vocabulary is how the tools' messages name the root they work in, an example path and the
// read tools: the same checks speak of the docs root and list_files to the docs tools, and of
// the repository root and list_context_files to the context tools.
type vocabulary struct {
	root    string // "the docs root"
	scope   string // what a search without a path covers: "the docs"
	example string // a path to show: "guides/quickstart.mdx"
	list    string // the tool names
	read    string
	search  string
}

var docsVocabulary = vocabulary{
	root:    "the docs root",
	scope:   "the docs",
	example: "guides/quickstart.mdx",
	list:    "list_files",
	read:    "read_file",
	search:  "search",
}

// cleanPath checks a path from the model and returns it in clean slash form relative to the
// docs root. field names the parameter in error messages. With allowRoot, an empty path or "."
// means the docs root itself.
func cleanPath(field, p string, allowRoot bool) (string, error) {
	return docsVocabulary.cleanPath(field, p, allowRoot)
}

// cleanPath is the one path check of every tool, worded for v's root.
func (v vocabulary) cleanPath(field, p string, allowRoot bool) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case strings.ContainsRune(p, 0):
		return "", toolErrorf("%s contains a NUL byte; give a plain path relative to %s, e.g. %q", field, v.root, v.example)
	case strings.ContainsRune(p, '\\'):
		return "", toolErrorf("%s %s contains a backslash; use forward slashes, relative to %s, e.g. %q", field, quoteShort(p), v.root, v.example)
	case strings.IndexFunc(p, unicode.IsControl) >= 0 || !utf8.ValidString(p):
		return "", toolErrorf("%s %s contains control characters or invalid UTF-8; give a plain path relative to %s", field, quoteShort(p), v.root)
	case len(p) > maxPathLen:
		return "", toolErrorf("%s is %d bytes long; paths are at most %d bytes", field, len(p), maxPathLen)
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || filepath.IsAbs(p) || hasDriveLetter(p):
		return "", toolErrorf("%s %s is absolute; give it relative to %s, without a leading \"/\", e.g. %q", field, quoteShort(p), v.root, v.example)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", toolErrorf("%s %s contains \"..\"; paths are relative to %s and cannot leave it, so write the path from %s without \"..\"", field, quoteShort(p), v.root, v.root)
		}
	}
	c := path.Clean(p)
	if c == "." {
		if allowRoot {
			return ".", nil
		}
		return "", toolErrorf("%s is empty; name a file relative to %s, e.g. %q", field, v.root, v.example)
	}
	for _, part := range strings.Split(c, "/") {
		if strings.EqualFold(part, ".git") {
			return "", toolErrorf("%s %s is inside .git; the tools never read or write git's own files", field, quoteShort(p))
		}
		if len(part) > maxNameLen {
			return "", toolErrorf("%s has a file or directory name of %d bytes; names are at most %d bytes", field, len(part), maxNameLen)
		}
	}
	if !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", toolErrorf("%s %s is not a plain relative path inside %s", field, quoteShort(p), v.root)
	}
	return c, nil
}

func hasDriveLetter(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}

// checkWritable refuses writes to hidden paths (".github/workflows/…", ".mintlify/…"): they hold
// CI and tool configuration, not documentation, and a page should never be able to talk the
// agent into changing them.
func checkWritable(field, p string) error {
	if part := hiddenPart(p); part != "" {
		return toolErrorf("%s %s is a hidden path (%s); the tools only change documentation files, not hidden files or directories", field, quoteShort(p), part)
	}
	return nil
}

// IsHidden reports whether the clean slash path p has a component that starts with '.': a path
// the context tools refuse, so that there is no point in checking it out for them.
func IsHidden(p string) bool { return hiddenPart(p) != "" }

// hiddenPart returns the first component of the clean path p that starts with '.', or "".
func hiddenPart(p string) string {
	for _, part := range strings.Split(p, "/") {
		if strings.HasPrefix(part, ".") && part != "." {
			return part
		}
	}
	return ""
}

// inspect returns the Lstat information of p, checking every component on the way so that no
// symbolic link is followed, not even one that stays inside the root. It returns nil, nil when p
// does not exist.
func (w *Workspace) inspect(p string) (fs.FileInfo, error) {
	if p == "." {
		return w.root.Lstat(".")
	}
	parts := strings.Split(p, "/")
	var fi fs.FileInfo
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		var err error
		fi, err = w.root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, w.vocab.fsError(sub, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, toolErrorf("%s is a symbolic link; the tools do not follow symlinks, even inside %s; use the path of the real file instead", sub, w.vocab.root)
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return nil, toolErrorf("%s is a file, not a directory, so %s cannot exist", sub, p)
		}
	}
	return fi, nil
}

// fsError turns an error from the root into a ToolError when the model can act on it, and keeps
// it as a service error otherwise.
func fsError(p string, err error) error { return docsVocabulary.fsError(p, err) }

func (v vocabulary) fsError(p string, err error) error {
	var te *ToolError
	switch {
	case errors.As(err, &te):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return toolErrorf("%s does not exist; use %s or %s to find the right path", p, v.list, v.search)
	case errors.Is(err, fs.ErrPermission):
		return toolErrorf("%s cannot be accessed (permission denied); work on another file", p)
	case strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes"):
		return toolErrorf("%s leads outside %s; give a path inside it", p, v.root)
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP),
		errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EILSEQ):
		cause := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			cause = pe.Err
		}
		return toolErrorf("%s is not a usable path (%v); give a plain path to an existing file", p, cause)
	}
	return fmt.Errorf("tools: %s: %w", p, err)
}

// loadFile reads p, which must be a regular file of at most MaxFileBytes reached without any
// symlink. Content may be binary.
func (w *Workspace) loadFile(ctx context.Context, p string) ([]byte, fs.FileInfo, error) {
	fi, err := w.inspect(p)
	if err != nil {
		return nil, nil, err
	}
	if fi == nil {
		return nil, nil, w.notFound(ctx, p)
	}
	if fi.IsDir() {
		return nil, nil, toolErrorf("%s is a directory, not a file; use %s to see what it holds", p, w.vocab.list)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, toolErrorf("%s is not a regular file (%s); the tools only work on regular files", p, fi.Mode().Type())
	}
	if fi.Size() > w.limits.MaxFileBytes {
		return nil, nil, w.tooLarge(p, fi.Size())
	}
	f, err := w.root.Open(p)
	if err != nil {
		return nil, nil, w.vocab.fsError(p, err)
	}
	defer func() { _ = f.Close() }()
	opened, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("tools: stat %s: %w", p, err)
	}
	if !os.SameFile(fi, opened) {
		return nil, nil, toolErrorf("%s changed while it was being opened; try the call again", p)
	}
	data, err := io.ReadAll(io.LimitReader(f, w.limits.MaxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("tools: read %s: %w", p, err)
	}
	if int64(len(data)) > w.limits.MaxFileBytes {
		return nil, nil, w.tooLarge(p, int64(len(data)))
	}
	return data, fi, nil
}

// loadText is loadFile for files the tools read or edit as text.
func (w *Workspace) loadText(ctx context.Context, p string) (string, fs.FileInfo, error) {
	data, fi, err := w.loadFile(ctx, p)
	if err != nil {
		return "", nil, err
	}
	if why := binaryReason(data); why != "" {
		return "", nil, toolErrorf("%s is a binary file (%s); the tools only read and edit text files", p, why)
	}
	return string(data), fi, nil
}

func (w *Workspace) tooLarge(p string, size int64) error {
	return toolErrorf("%s is %d bytes, over the limit of %d bytes per file (MaxFileBytes); the tools cannot read or edit it", p, size, w.limits.MaxFileBytes)
}

// binaryReason says why data is not text, or "" when it is.
func binaryReason(data []byte) string {
	if i := strings.IndexByte(string(data), 0); i >= 0 {
		return "it contains NUL bytes"
	}
	if !utf8.Valid(data) {
		return "it is not valid UTF-8"
	}
	return ""
}

// notFound builds the error for a missing file, with suggestions found by name.
func (w *Workspace) notFound(ctx context.Context, p string) error {
	var hints []string
	for _, ext := range []string{".mdx", ".md"} {
		if path.Ext(p) == "" {
			if fi, err := w.inspect(p + ext); err == nil && fi != nil && fi.Mode().IsRegular() {
				hints = append(hints, p+ext)
			}
		}
	}
	if len(hints) == 0 {
		want := strings.TrimSuffix(path.Base(p), path.Ext(p))
		_ = w.walk(ctx, ".", func(rel string, _ fs.DirEntry) error {
			base := path.Base(rel)
			if strings.EqualFold(strings.TrimSuffix(base, path.Ext(base)), want) {
				hints = append(hints, rel)
			}
			if len(hints) >= 5 {
				return fs.SkipAll
			}
			return nil
		})
	}
	if len(hints) > 0 {
		return toolErrorf("%s does not exist; did you mean %s? Paths are relative to %s and include the extension", p, strings.Join(hints, " or "), w.vocab.root)
	}
	return toolErrorf("%s does not exist; use %s or %s to find the right path", p, w.vocab.list, w.vocab.search)
}

// walk calls fn for every regular file under dir (which has been checked), in lexical order.
// It never enters .git, hidden directories below dir, or symlinked directories, and skips
// symlinks and other non-regular files, and for a reader hidden files too.
func (w *Workspace) walk(ctx context.Context, dir string, fn func(rel string, d fs.DirEntry) error) error {
	err := fs.WalkDir(w.root.FS(), dir, func(rel string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if rel == dir {
				return err
			}
			return nil // an unreadable subdirectory is left out, not fatal
		}
		name := d.Name()
		if d.IsDir() {
			if rel != dir && (strings.HasPrefix(name, ".") || strings.EqualFold(name, ".git")) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(name, tempPrefix) {
			return nil
		}
		if w.readOnly && strings.HasPrefix(name, ".") {
			return nil // a reader shows no hidden file either (see checkVisible)
		}
		return fn(rel, d)
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return w.vocab.fsError(dir, err)
	}
	return nil
}

// looksText reports whether a file found by walk is a text file: not a known binary type, and
// no NUL byte or invalid UTF-8 in its first bytes.
func (w *Workspace) looksText(rel string) bool {
	switch strings.ToLower(path.Ext(rel)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".avif", ".ico", ".bmp", ".tif", ".tiff", ".pdf", ".zip", ".gz", ".tgz", ".bz2",
		".xz", ".7z", ".tar", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".m4a", ".mov", ".webm", ".wav", ".ogg",
		".exe", ".dll", ".so", ".dylib", ".wasm", ".bin", ".psd", ".sketch", ".fig":
		return false
	}
	f, err := w.root.Open(rel)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 8192)
	n, _ := io.ReadFull(f, buf)
	if strings.IndexByte(string(buf[:n]), 0) >= 0 {
		return false
	}
	if n == len(buf) {
		// A multi-byte character cut at the end of the sample is not a sign of binary data.
		for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
			if utf8.RuneStart(buf[i]) {
				if !utf8.FullRune(buf[i:n]) {
					n = i
				}
				break
			}
		}
	}
	return utf8.Valid(buf[:n])
}

const tempPrefix = ".docsmith-tmp-"

// writeAtomic replaces (or creates) p with data: a temporary file in the same directory,
// synced, then renamed over p. The parent directory must exist.
func (w *Workspace) writeAtomic(p string, data []byte, perm fs.FileMode) error {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("tools: temp name: %w", err)
	}
	tmp := path.Join(path.Dir(p), tempPrefix+hex.EncodeToString(rnd[:]))
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fsError(path.Dir(p), err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = w.root.Rename(tmp, p)
	}
	if werr != nil {
		_ = w.root.Remove(tmp)
		return fmt.Errorf("tools: write %s: %w", p, werr)
	}
	return nil
}
