// Package backup copies a SQLite data directory into one archive while the
// server runs, and restores a data directory from such an archive.
//
// The archive is a gzip-compressed tar file. Its first entry is
// manifest.json (the docsmith version that wrote it, the database's schema
// version, the time, and every file with its size and SHA-256); the files
// follow, in the manifest's order. The database is a consistent copy made
// by SQLite (VACUUM INTO, inside one read transaction), so writes go on
// while it is taken; the rest of the data directory is copied as it is,
// less what docsmith rebuilds by itself (see Rebuildable).
package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/docsmith/docsmith/internal/datadir"
)

// Names in a data directory and in an archive.
const (
	// DatabaseName is the SQLite file (the store's FileName).
	DatabaseName = "docsmith.db"
	// ManifestName is the archive's first entry.
	ManifestName = "manifest.json"
	// FormatVersion is the version of the archive's layout.
	FormatVersion = 1
)

// Rebuildable are the top-level entries of a data directory that a backup
// leaves out: docsmith makes them again as it needs them.
var Rebuildable = []string{
	"search-cache", // snapshots of the search indexes, rebuilt from the database's chunks
	"git-mirrors",  // mirrors of the projects' repositories, fetched again
	"index-work",   // scratch space of index builds
	"work",         // the agent's workspaces: a turn cut short runs again
	"git-home",     // git's private HOME, rewritten on every start
}

// neverCopied are entries a backup never takes as files, and a restore
// never writes: the database goes through SQLite (a copy of its file, or
// of its log, taken beside running writes would be torn), and the lock is
// the running process's own.
var neverCopied = []string{
	DatabaseName, DatabaseName + "-wal", DatabaseName + "-shm", DatabaseName + "-journal",
	datadir.LockName,
}

// tempPrefix starts the name of everything a backup or a restore makes
// while it runs (and leaves, should it be killed): backups leave it out.
const tempPrefix = ".docsmith-"

// Manifest describes an archive.
type Manifest struct {
	Format        int       `json:"format"`
	Docsmith      string    `json:"docsmith_version"`
	SchemaVersion int       `json:"schema_version"`
	CreatedAt     time.Time `json:"created_at"`
	// DataDir is where the data directory was: a project whose repository
	// lives inside it (the demo's) names that path.
	DataDir string `json:"data_dir"`
	Files   []File `json:"files"`
}

// File is one file of an archive.
type File struct {
	Path   string `json:"path"` // slash-separated, relative to the data directory
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// TotalSize is the sum of the files' sizes.
func (m Manifest) TotalSize() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Options are what Create needs.
type Options struct {
	DataDir string
	To      string
	// Force replaces an existing file at To.
	Force bool
	// Version is the docsmith version written into the manifest.
	Version string
	Now     func() time.Time
	Log     *slog.Logger
}

// Result is what Create made.
type Result struct {
	Path     string
	Size     int64 // of the archive
	Manifest Manifest
}

// ErrExists is a backup file already there.
var ErrExists = errors.New("the backup file exists")

// Create writes a backup of opts.DataDir to opts.To. The archive is
// written to a temporary file beside To and renamed, so a failed backup
// leaves no file behind; the files are first copied to a staging folder
// beside it too, so that the archive holds what the manifest says.
func Create(ctx context.Context, opts Options) (Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return Result{}, fmt.Errorf("backup: data directory: %w", err)
	}
	to, err := filepath.Abs(opts.To)
	if err != nil {
		return Result{}, fmt.Errorf("backup: target: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, DatabaseName)); err != nil {
		return Result{}, fmt.Errorf("backup: no SQLite database in %s: %w", dir, err)
	}
	if within(to, dir) {
		return Result{}, fmt.Errorf("backup: %s is inside the data directory %s: write the backup elsewhere", to, dir)
	}
	if err := checkTarget(to, opts.Force); err != nil {
		return Result{}, err
	}
	// A restore does not replace the directory while it is copied.
	lock, err := datadir.Share(dir)
	if err != nil {
		return Result{}, fmt.Errorf("backup: %w", err)
	}
	defer func() { _ = lock.Release() }()

	targetDir := filepath.Dir(to)
	staging, err := os.MkdirTemp(targetDir, tempPrefix+"backup-")
	if err != nil {
		return Result{}, fmt.Errorf("backup: make a staging folder beside %s: %w", to, err)
	}
	defer func() { _ = os.RemoveAll(staging) }()

	m := Manifest{Format: FormatVersion, Docsmith: opts.Version, CreatedAt: opts.Now().UTC().Truncate(time.Second), DataDir: dir}
	started := time.Now()
	if m.SchemaVersion, err = copyDatabase(ctx, filepath.Join(dir, DatabaseName), filepath.Join(staging, DatabaseName)); err != nil {
		return Result{}, err
	}
	opts.Log.Debug("backup: database copied", "duration", time.Since(started).Round(time.Millisecond))
	db, err := stageFile(filepath.Join(staging, DatabaseName), "", DatabaseName)
	if err != nil {
		return Result{}, err
	}
	files, err := copyState(ctx, dir, staging, opts.Log)
	if err != nil {
		return Result{}, err
	}
	m.Files = append([]File{db}, files...)

	size, err := writeArchive(to, staging, m, opts.Force)
	if err != nil {
		return Result{}, err
	}
	return Result{Path: to, Size: size, Manifest: m}, nil
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func checkTarget(to string, force bool) error {
	fi, err := os.Lstat(to)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("backup: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("backup: %s exists and is not a regular file", to)
	case !force:
		return fmt.Errorf("backup: %w: %s; choose another name, or replace it with --force", ErrExists, to)
	}
	return nil
}

// copyDatabase writes a consistent copy of the database at src to dst with
// VACUUM INTO, which reads the whole database inside one read transaction:
// the server's writes go on meanwhile (WAL mode), and the copy holds every
// transaction committed before it began and none after. It checks the
// copy and returns its schema version.
func copyDatabase(ctx context.Context, src, dst string) (int, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	// mode=rw: never create a database where there was none.
	db, err := sql.Open("sqlite", "file:"+uriPath(src)+"?mode=rw&"+q.Encode())
	if err != nil {
		return 0, fmt.Errorf("backup: open the database: %w", err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
		return 0, fmt.Errorf("backup: copy the database: %w", err)
	}
	return checkDatabase(ctx, dst)
}

// checkDatabase runs SQLite's integrity check on the database at path and
// returns its schema version.
func checkDatabase(ctx context.Context, path string) (int, error) {
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("open the copy of the database: %w", err)
	}
	defer func() { _ = db.Close() }()
	var result string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check(1)`).Scan(&result); err != nil {
		return 0, fmt.Errorf("check the copy of the database: %w", err)
	}
	if result != "ok" {
		return 0, fmt.Errorf("the copy of the database fails SQLite's integrity check: %s", result)
	}
	var version int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&version); err != nil {
		return 0, fmt.Errorf("read the database's schema version: %w", err)
	}
	return version, nil
}

func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
}

// copyState copies the data directory's files, less the database, what is
// rebuildable and what a backup or restore left, into staging, and returns
// them sorted by path. Symbolic links and other non-regular files are
// passed over (docsmith makes none), as are files that vanish while they
// are copied (git replaces loose objects with packs).
func copyState(ctx context.Context, dir, staging string, log *slog.Logger) ([]File, error) {
	var files []File
	var walk func(rel string) error
	walk = func(rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			if rel != "" && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("backup: read %s: %w", filepath.Join(dir, rel), err)
		}
		// In a git repository the refs are read before the objects, so
		// that every ref copied points to objects that were there before
		// the objects were copied: git writes objects first, refs last,
		// and never changes an object.
		slices.SortStableFunc(entries, func(a, b fs.DirEntry) int {
			return boolInt(a.Name() == "objects") - boolInt(b.Name() == "objects")
		})
		for _, e := range entries {
			name := path(rel, e.Name())
			if rel == "" && (slices.Contains(Rebuildable, e.Name()) || slices.Contains(neverCopied, e.Name()) || strings.HasPrefix(e.Name(), tempPrefix)) {
				continue
			}
			switch {
			case e.IsDir():
				if err := walk(name); err != nil {
					return err
				}
			case e.Type().IsRegular():
				f, err := stageFile(filepath.Join(dir, filepath.FromSlash(name)), staging, name)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return err
				}
				files = append(files, f)
			default:
				log.Warn("backup: not a regular file, left out", "path", name, "type", e.Type().String())
			}
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func path(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// stageFile copies src to staging/name (with staging "", src is in the
// staging folder already) and returns its manifest entry.
func stageFile(src, staging, name string) (File, error) {
	in, err := os.Open(src)
	if err != nil {
		return File{}, err
	}
	defer func() { _ = in.Close() }()
	h := sha256.New()
	var n int64
	if staging == "" {
		n, err = io.Copy(h, in)
	} else {
		dst := filepath.Join(staging, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return File{}, fmt.Errorf("backup: %w", err)
		}
		out, openErr := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if openErr != nil {
			return File{}, fmt.Errorf("backup: %w", openErr)
		}
		n, err = io.Copy(io.MultiWriter(out, h), in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return File{}, fmt.Errorf("backup: copy %s: %w", name, err)
	}
	return File{Path: name, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// writeArchive writes the manifest and the staged files to a temporary
// file beside to, syncs it and moves it to to. Without force, an existing
// file at to is never replaced, even one that appeared meanwhile.
func writeArchive(to, staging string, m Manifest, force bool) (size int64, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(to), tempPrefix+"backup-*.tmp")
	if err != nil {
		return 0, fmt.Errorf("backup: create the archive beside %s: %w", to, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	gz := gzip.NewWriter(tmp)
	tw := tar.NewWriter(gz)
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return 0, fmt.Errorf("backup: manifest: %w", err)
	}
	body = append(body, '\n')
	if err := tw.WriteHeader(header(ManifestName, int64(len(body)), m.CreatedAt)); err != nil {
		return 0, fmt.Errorf("backup: write the archive: %w", err)
	}
	if _, err := tw.Write(body); err != nil {
		return 0, fmt.Errorf("backup: write the archive: %w", err)
	}
	for _, f := range m.Files {
		if err := appendFile(tw, filepath.Join(staging, filepath.FromSlash(f.Path)), f, m.CreatedAt); err != nil {
			return 0, err
		}
	}
	if err := errors.Join(tw.Close(), gz.Close(), tmp.Sync()); err != nil {
		return 0, fmt.Errorf("backup: write the archive: %w", err)
	}
	fi, err := tmp.Stat()
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("backup: write the archive: %w", err)
	}
	if err := place(tmp.Name(), to, force); err != nil {
		return 0, err
	}
	syncDir(filepath.Dir(to))
	return fi.Size(), nil
}

func header(name string, size int64, mtime time.Time) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: mtime, Format: tar.FormatPAX}
}

func appendFile(tw *tar.Writer, src string, f File, mtime time.Time) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer func() { _ = in.Close() }()
	if err := tw.WriteHeader(header(f.Path, f.Size, mtime)); err != nil {
		return fmt.Errorf("backup: write %s to the archive: %w", f.Path, err)
	}
	if _, err := io.CopyN(tw, in, f.Size); err != nil {
		return fmt.Errorf("backup: write %s to the archive: %w", f.Path, err)
	}
	return nil
}

// place moves the finished archive tmp to to. Without force it links it
// there, which fails rather than replace a file; where the file system
// has no hard links it renames after one more look.
func place(tmp, to string, force bool) error {
	if !force {
		err := os.Link(tmp, to)
		if err == nil {
			_ = os.Remove(tmp)
			return nil
		}
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("backup: %w: %s; choose another name, or replace it with --force", ErrExists, to)
		}
		if err := checkTarget(to, false); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, to); err != nil {
		return fmt.Errorf("backup: move the archive to %s: %w", to, err)
	}
	return nil
}

// syncDir makes a rename in dir durable; where directories cannot be
// synced, the rename is as durable as the system makes it.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
