package gitcli

import (
	"bytes"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// TreeFS is files of a commit read into memory, as a read-only fs.FS:
// regular files and directories only. The commit's symbolic links are left
// out (see Mirror.ReadBranch), so no path of a TreeFS leads anywhere else
// or holds a link's target as if it were a file.
type TreeFS struct {
	files map[string][]byte
	dirs  map[string][]fs.DirEntry // sorted by name
}

var (
	_ fs.ReadDirFS  = (*TreeFS)(nil)
	_ fs.ReadFileFS = (*TreeFS)(nil)
	_ fs.StatFS     = (*TreeFS)(nil)
)

// newTreeFS makes a TreeFS of files (slash paths, as git lists them).
func newTreeFS(files map[string][]byte) *TreeFS {
	t := &TreeFS{files: files, dirs: map[string][]fs.DirEntry{".": nil}}
	seen := map[string]bool{}
	for name, data := range files {
		child := fs.FileInfoToDirEntry(memInfo{name: path.Base(name), size: int64(len(data))})
		for dir := path.Dir(name); ; dir = path.Dir(dir) {
			t.dirs[dir] = append(t.dirs[dir], child)
			if dir == "." || seen[dir] {
				break
			}
			seen[dir] = true
			child = fs.FileInfoToDirEntry(memInfo{name: path.Base(dir), dir: true})
		}
	}
	for _, entries := range t.dirs {
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	return t
}

// Open opens a file or a directory.
func (t *TreeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := t.files[name]; ok {
		return &memFile{info: memInfo{name: path.Base(name), size: int64(len(data))}, r: bytes.NewReader(data)}, nil
	}
	if entries, ok := t.dirs[name]; ok {
		return &memDir{info: memInfo{name: path.Base(name), dir: true}, entries: entries}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Stat describes a file or a directory.
func (t *TreeFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := t.files[name]; ok {
		return memInfo{name: path.Base(name), size: int64(len(data))}, nil
	}
	if _, ok := t.dirs[name]; ok {
		return memInfo{name: path.Base(name), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadFile returns a copy of a file's contents.
func (t *TreeFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	data, ok := t.files[name]
	if !ok {
		if _, isDir := t.dirs[name]; isDir {
			return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
		}
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(data), nil
}

// ReadDir lists a directory, sorted by name.
func (t *TreeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	entries, ok := t.dirs[name]
	if !ok {
		if _, isFile := t.files[name]; isFile {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
		}
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(entries), nil
}

// memInfo describes a file or directory of a TreeFS.
type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

type memFile struct {
	info memInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }

// ReadAt and Seek let a reader treat it as the regular file it is.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }
func (f *memFile) Seek(off int64, whence int) (int64, error) {
	return f.r.Seek(off, whence)
}

type memDir struct {
	info    memInfo
	entries []fs.DirEntry
	at      int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: fs.ErrInvalid}
}
func (d *memDir) Close() error { return nil }

// ReadDir is fs.ReadDirFile's: n > 0 returns at most n entries, and io.EOF
// at the end.
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.at:]
	if n <= 0 {
		d.at = len(d.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.at += n
	return slices.Clone(rest[:n]), nil
}

// Len is the number of files the TreeFS holds.
func (t *TreeFS) Len() int { return len(t.files) }
