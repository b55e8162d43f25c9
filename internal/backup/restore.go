package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/datadir"
)

// Limits bound what a restore reads from an archive, which may have been
// made by anyone.
type Limits struct {
	MaxFiles      int
	MaxTotalBytes int64 // of the files, as the manifest declares them
	MaxManifest   int64
}

// DefaultLimits are the limits of docsmith restore.
var DefaultLimits = Limits{MaxFiles: 1_000_000, MaxTotalBytes: 64 << 30, MaxManifest: 64 << 20}

// ErrBadArchive is an archive that is not a docsmith backup, is damaged or
// was changed since it was written.
var ErrBadArchive = errors.New("not a valid docsmith backup")

// ErrNotEmpty is a data directory that holds something already.
var ErrNotEmpty = errors.New("the data directory is not empty")

// RestoreOptions are what Restore needs.
type RestoreOptions struct {
	From    string
	DataDir string
	// Force restores into a data directory that holds something: what it
	// holds is moved aside into a folder inside it, never deleted. A
	// directory a running docsmith holds is refused all the same.
	Force  bool
	Limits Limits
	Now    func() time.Time
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	DataDir  string
	Manifest Manifest
	// Aside is where what the data directory held before is now, or "".
	Aside string
}

// Restore makes opts.DataDir a copy of the data directory backed up in
// opts.From. It checks every file of the archive against the manifest
// before it writes anything, writes them into a staging folder, and only
// then moves them into place: into a directory that does not exist yet by
// renaming the staging folder (beside it) to it; into an existing one (a
// mounted volume, which cannot be renamed) by moving the files in, the
// database last.
func Restore(ctx context.Context, opts RestoreOptions) (RestoreResult, error) {
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	dir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return RestoreResult{}, fmt.Errorf("restore: data directory: %w", err)
	}
	res := RestoreResult{DataDir: dir}
	exists := true
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		exists = false
	case err != nil:
		return res, fmt.Errorf("restore: %w", err)
	case !fi.IsDir():
		return res, fmt.Errorf("restore: %s is not a directory", dir)
	}
	var held []string
	if exists {
		// Held until the files are in place: a server that starts
		// meanwhile is refused (datadir.Share).
		lock, err := datadir.Exclusive(dir)
		if err != nil {
			return res, fmt.Errorf("restore refused: %w", err)
		}
		defer func() { _ = lock.Release() }()
		if held, err = heldEntries(dir); err != nil {
			return res, err
		}
		if len(held) > 0 && !opts.Force {
			return res, fmt.Errorf("restore refused: %w: %s holds %s; restore into a new directory, or with --force move what it holds aside", ErrNotEmpty, dir, describe(held))
		}
	}

	m, err := Verify(ctx, opts.From, opts.Limits)
	if err != nil {
		return res, err
	}
	res.Manifest = m

	var staging string
	if exists {
		staging, err = os.MkdirTemp(dir, tempPrefix+"restore-")
	} else {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return res, fmt.Errorf("restore: %w", err)
		}
		staging, err = os.MkdirTemp(filepath.Dir(dir), tempPrefix+"restore-")
	}
	if err != nil {
		return res, fmt.Errorf("restore: make a staging folder: %w", err)
	}
	defer func() { _ = os.RemoveAll(staging) }()
	if err := extract(ctx, opts.From, staging, m, opts.Limits); err != nil {
		return res, err
	}

	if !exists {
		if err := os.Rename(staging, dir); err != nil {
			return res, fmt.Errorf("restore: move the restored data directory into place: %w", err)
		}
		syncDir(filepath.Dir(dir))
		return res, nil
	}
	if len(held) > 0 {
		res.Aside = filepath.Join(dir, tempPrefix+"before-restore-"+opts.Now().UTC().Format("20060102T150405Z"))
		if err := os.Mkdir(res.Aside, 0o700); err != nil {
			return res, fmt.Errorf("restore: make a folder for what %s held: %w", dir, err)
		}
		for _, name := range held {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(res.Aside, name)); err != nil {
				return res, fmt.Errorf("restore: move %s aside: %w", name, err)
			}
		}
	}
	if err := moveIn(staging, dir); err != nil {
		return res, err
	}
	syncDir(dir)
	return res, nil
}

// heldEntries lists what dir holds besides its lock file and what earlier
// restores moved aside.
func heldEntries(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() == datadir.LockName || strings.HasPrefix(e.Name(), tempPrefix+"before-restore-") {
			continue
		}
		names = append(names, e.Name())
	}
	return names, nil
}

func describe(names []string) string {
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// moveIn moves staging's top-level entries into dir, the database last: a
// restore cut short leaves no database beside the marker its creation
// wrote, and docsmith refuses to start on that rather than start empty.
func moveIn(staging, dir string) error {
	entries, err := os.ReadDir(staging)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int {
		return boolInt(a.Name() == DatabaseName) - boolInt(b.Name() == DatabaseName)
	})
	for _, e := range entries {
		if err := os.Rename(filepath.Join(staging, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("restore: move %s into place: %w", e.Name(), err)
		}
	}
	return nil
}

// Verify reads the whole archive at path and checks it against its
// manifest: every file there, in order, with its size and checksum, and
// nothing else. It writes nothing.
func Verify(ctx context.Context, path string, limits Limits) (Manifest, error) {
	var m Manifest
	err := readArchive(ctx, path, limits, func(got Manifest) error { m = got; return nil },
		func(_ File, r io.Reader) error { _, err := io.Copy(io.Discard, r); return err })
	return m, err
}

// extract writes the archive's files into dir, through os.Root so that no
// name leads out of it, checking each against the manifest verified.
func extract(ctx context.Context, path, dir string, verified Manifest, limits Limits) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer func() { _ = root.Close() }()
	return readArchive(ctx, path, limits,
		func(m Manifest) error {
			if !slices.Equal(m.Files, verified.Files) {
				return fmt.Errorf("%w: %s changed while it was restored", ErrBadArchive, path)
			}
			return nil
		},
		func(f File, r io.Reader) error {
			name := filepath.FromSlash(f.Path)
			if d := filepath.Dir(name); d != "." {
				if err := root.MkdirAll(d, 0o700); err != nil {
					return fmt.Errorf("restore: %w", err)
				}
			}
			out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return fmt.Errorf("restore: %w", err)
			}
			_, err = io.Copy(out, r)
			return errors.Join(err, out.Sync(), out.Close())
		})
}

// readArchive reads the archive at path: the manifest, which it checks
// and hands to manifest, then each file, which it hands to file as a
// reader of exactly the declared size and checks once file has read it.
func readArchive(ctx context.Context, path string, limits Limits, manifest func(Manifest) error, file func(File, io.Reader) error) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrBadArchive, path, fmt.Sprintf(format, args...))
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return bad("not gzip: %v", err)
	}
	tr := tar.NewReader(gz)
	hdr, err := tr.Next()
	if err != nil {
		return bad("no manifest: %v", err)
	}
	if hdr.Name != ManifestName || !regular(hdr) || hdr.Size > limits.MaxManifest {
		return bad("the first entry must be %s, a file of at most %d bytes", ManifestName, limits.MaxManifest)
	}
	var m Manifest
	dec := json.NewDecoder(io.LimitReader(tr, hdr.Size))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return bad("manifest: %v", err)
	}
	if err := checkManifest(m, limits); err != nil {
		return bad("manifest: %v", err)
	}
	if err := manifest(m); err != nil {
		return err
	}
	for _, want := range m.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err != nil {
			return bad("%s: %v", want.Path, err)
		}
		if hdr.Name != want.Path || !regular(hdr) || hdr.Size != want.Size {
			return bad("entry %q (%d bytes, type %q) where the manifest has %s (%d bytes, a file)", hdr.Name, hdr.Size, hdr.Typeflag, want.Path, want.Size)
		}
		h := sha256.New()
		src := &archiveReader{r: io.TeeReader(io.LimitReader(tr, want.Size), h)}
		err = file(want, src)
		if src.err != nil {
			return bad("%s: %v", want.Path, src.err)
		}
		if err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want.SHA256 {
			return bad("%s does not match its checksum in the manifest", want.Path)
		}
	}
	if hdr, err := tr.Next(); err != io.EOF { //nolint:errorlint // tar returns io.EOF itself at the end
		if err == nil {
			return bad("entry %q is not in the manifest", hdr.Name)
		}
		return bad("%v", err)
	}
	return nil
}

// archiveReader keeps the error of reading the archive apart from those of
// writing what it reads.
type archiveReader struct {
	r   io.Reader
	err error
}

func (a *archiveReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if err != nil && err != io.EOF { //nolint:errorlint // io.Reader's end is io.EOF itself
		a.err = err
	}
	return n, err
}

func regular(hdr *tar.Header) bool {
	return hdr.Typeflag == tar.TypeReg
}

// checkManifest checks what a manifest says before anything it names is
// read: the format, the limits, and names that stay inside the data
// directory and are neither the lock nor the database's log.
func checkManifest(m Manifest, limits Limits) error {
	if m.Format != FormatVersion {
		return fmt.Errorf("format %d; this docsmith reads format %d", m.Format, FormatVersion)
	}
	if len(m.Files) > limits.MaxFiles {
		return fmt.Errorf("%d files, more than %d", len(m.Files), limits.MaxFiles)
	}
	seen := make(map[string]bool, len(m.Files))
	var total int64
	for _, f := range m.Files {
		if err := checkName(f.Path); err != nil {
			return err
		}
		if f.Size < 0 || f.Size > limits.MaxTotalBytes-total {
			return fmt.Errorf("the files are larger than %d bytes", limits.MaxTotalBytes)
		}
		total += f.Size
		if len(f.SHA256) != 64 {
			return fmt.Errorf("%s: checksum %q is not a SHA-256", f.Path, f.SHA256)
		}
		if seen[f.Path] {
			return fmt.Errorf("%s is listed twice", f.Path)
		}
		seen[f.Path] = true
	}
	// A file must not also be a folder of another one.
	for p := range seen {
		for d := filepath.Dir(filepath.FromSlash(p)); d != "."; d = filepath.Dir(d) {
			if seen[filepath.ToSlash(d)] {
				return fmt.Errorf("%s is both a file and the folder of %s", filepath.ToSlash(d), p)
			}
		}
	}
	if !seen[DatabaseName] {
		return fmt.Errorf("no %s", DatabaseName)
	}
	return nil
}

// checkName refuses a name that is absolute, climbs out, names the
// database's log or lock, or holds a character some system reads as a
// separator or a drive.
func checkName(name string) error {
	if !fs.ValidPath(name) || name == "." || strings.ContainsAny(name, "\\:\x00") {
		return fmt.Errorf("file name %q is not a relative path inside the data directory", name)
	}
	top, _, _ := strings.Cut(name, "/")
	if top != DatabaseName && slices.Contains(neverCopied, top) || strings.HasPrefix(top, tempPrefix) {
		return fmt.Errorf("file name %q is one a backup never holds", name)
	}
	return nil
}
