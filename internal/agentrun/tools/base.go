package tools

import (
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"
)

// BaseFS returns fsys, the docs root this workspace edits, as it was when the workspace was
// opened: every file the tools wrote, created, deleted or moved shows its original content, or
// is absent when it did not exist. Validation runs on it to tell the problems a turn made from
// the ones the branch already had.
func (w *Workspace) BaseFS(fsys fs.FS) fs.FS {
	w.mu.Lock()
	files := maps.Clone(w.ledger.files)
	w.mu.Unlock()
	return &baseFS{fsys: fsys, files: files}
}

type baseFS struct {
	fsys  fs.FS
	files map[string]fileState
}

var (
	_ fs.ReadLinkFS = (*baseFS)(nil)
	_ fs.ReadDirFS  = (*baseFS)(nil)
)

func (b *baseFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if st, ok := b.files[name]; ok {
		if !st.origExists {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return &memFile{info: memInfo{name: path.Base(name), size: int64(len(st.orig))}, r: strings.NewReader(st.orig)}, nil
	}
	f, err := b.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.IsDir() {
		return f, err
	}
	entries, err := b.ReadDir(name)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &memDir{File: f, entries: entries}, nil
}

// ReadDir lists a directory as it was: files the turn created are left out and files it
// deleted or moved away are back.
func (b *baseFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(b.fsys, name)
	if err != nil {
		return nil, err
	}
	join := func(base string) string {
		if name == "." {
			return base
		}
		return name + "/" + base
	}
	out := entries[:0:0]
	seen := map[string]bool{}
	for _, e := range entries {
		if st, ok := b.files[join(e.Name())]; ok && !st.origExists {
			continue
		}
		seen[e.Name()] = true
		out = append(out, e)
	}
	for p, st := range b.files {
		dir := path.Dir(p)
		if dir != name || !st.origExists || seen[path.Base(p)] {
			continue
		}
		out = append(out, fs.FileInfoToDirEntry(memInfo{name: path.Base(p), size: int64(len(st.orig))}))
	}
	slices.SortFunc(out, func(x, y fs.DirEntry) int { return strings.Compare(x.Name(), y.Name()) })
	return out, nil
}

func (b *baseFS) Lstat(name string) (fs.FileInfo, error) {
	if st, ok := b.files[name]; ok {
		if !st.origExists {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
		}
		return memInfo{name: path.Base(name), size: int64(len(st.orig))}, nil
	}
	return fs.Lstat(b.fsys, name)
}

func (b *baseFS) ReadLink(name string) (string, error) {
	if _, ok := b.files[name]; ok {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return fs.ReadLink(b.fsys, name)
}

// memInfo describes a file held in memory: a regular file the tools wrote.
type memInfo struct {
	name string
	size int64
}

func (m memInfo) Name() string       { return m.name }
func (m memInfo) Size() int64        { return m.size }
func (m memInfo) Mode() fs.FileMode  { return 0o644 }
func (m memInfo) ModTime() time.Time { return time.Time{} }
func (m memInfo) IsDir() bool        { return false }
func (m memInfo) Sys() any           { return nil }

type memFile struct {
	info memInfo
	r    *strings.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }

// memDir is a directory of the underlying file system with the entries of the base.
type memDir struct {
	fs.File
	entries []fs.DirEntry
	off     int
}

func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
