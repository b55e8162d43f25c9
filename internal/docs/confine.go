package docs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Size caps on what the reader takes from a repository. A page, snippet,
// config or $ref file over MaxFileBytes, or an OpenAPI spec over
// MaxSpecBytes, is not read: it is reported as a problem that names the file
// and the limit, and is left out of the site (and so out of the index).
const (
	MaxFileBytes = 1 << 20
	MaxSpecBytes = 16 << 20
)

// ErrSymlink is the cause of every refusal to read through a symbolic link.
var ErrSymlink = errors.New("it is a symbolic link, and docsmith does not follow symbolic links in a repository")

// FileTooLargeError is a file over the size cap the reader applies to it.
type FileTooLargeError struct {
	File  string
	Size  int64
	Limit int64
}

func (e *FileTooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the limit of %d bytes per file; it is not read", e.File, e.Size, e.Limit)
}

// ReadFile reads name from fsys as the docs reader does everywhere: no
// component of the path may be a symbolic link (when fsys can tell, as
// os.DirFS and os.Root.FS can), the file must be a regular file, and it must
// be at most limit bytes. Nothing past limit+1 bytes is ever read, whatever
// the file claims.
func ReadFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	fi, err := StatNoLinks(fsys, name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type())}
	}
	if fi.Size() > limit {
		return nil, &FileTooLargeError{File: name, Size: fi.Size(), Limit: limit}
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, &FileTooLargeError{File: name, Size: int64(len(data)), Limit: limit}
	}
	return data, nil
}

// StatNoLinks describes name without following a symbolic link in any
// component of its path: a link is refused with ErrSymlink. On a file system
// that cannot tell links apart it is fs.Stat.
func StatNoLinks(fsys fs.FS, name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if _, ok := fsys.(fs.ReadLinkFS); !ok {
		return fs.Stat(fsys, name)
	}
	if name == "." {
		return fs.Lstat(fsys, name)
	}
	parts := strings.Split(name, "/")
	var fi fs.FileInfo
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		var err error
		fi, err = fs.Lstat(fsys, sub)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &fs.PathError{Op: "read", Path: sub, Err: ErrSymlink}
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
		}
	}
	return fi, nil
}

// Checkout is a repository directory opened for its docs: one os.Root on the
// repository and one on the docs root inside it, so no path, link or ".."
// leads a reader or a writer out of the checkout.
type Checkout struct {
	// Repo is the repository's root directory.
	Repo *os.Root
	// Docs is the docs root, opened from Repo.
	Docs *os.Root
}

// OpenCheckout opens dir and the docs root docsRoot (a slash path relative
// to dir; "" or "." for dir itself). A docs root that is absolute, leaves
// dir, passes through a symbolic link or is not a directory is refused with
// an error that says which.
func OpenCheckout(dir, docsRoot string) (*Checkout, error) {
	rel, err := docsRootPath(docsRoot)
	if err != nil {
		return nil, err
	}
	repo, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the repository: %w", err)
	}
	if err := checkDocsRoot(repo.FS(), rel, docsRoot); err != nil {
		_ = repo.Close()
		return nil, err
	}
	sub, err := repo.OpenRoot(filepath.FromSlash(rel))
	if err != nil {
		_ = repo.Close()
		return nil, fmt.Errorf("open the docs root %q: %w", docsRoot, err)
	}
	return &Checkout{Repo: repo, Docs: sub}, nil
}

// OpenTree is OpenCheckout for a repository's files read into memory (in
// which a symbolic link is a plain file holding its target): the docs root
// of tree, refused as OpenCheckout refuses it.
func OpenTree(tree fs.FS, docsRoot string) (fs.FS, error) {
	rel, err := docsRootPath(docsRoot)
	if err != nil {
		return nil, err
	}
	if err := checkDocsRoot(tree, rel, docsRoot); err != nil {
		return nil, err
	}
	sub, err := fs.Sub(tree, rel)
	if err != nil {
		return nil, fmt.Errorf("open the docs root %q: %w", docsRoot, err)
	}
	return sub, nil
}

// docsRootPath cleans a docs root into a path inside the repository.
func docsRootPath(docsRoot string) (string, error) {
	rel := path.Clean(strings.TrimSpace(docsRoot))
	if rel == "" {
		rel = "."
	}
	if path.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) || slicesContainsGit(rel) {
		return "", fmt.Errorf("the docs root %q must be a path inside the repository, like \"docs\"", docsRoot)
	}
	return rel, nil
}

// checkDocsRoot checks that rel is a directory of repo reached through no
// symbolic link.
func checkDocsRoot(repo fs.FS, rel, docsRoot string) error {
	fi, err := StatNoLinks(repo, rel)
	if err != nil {
		var pe *fs.PathError
		switch {
		case errors.Is(err, ErrSymlink) && errors.As(err, &pe):
			return fmt.Errorf("the docs root %q cannot be read: %s is a symbolic link, and docsmith does not follow symbolic links in a repository", docsRoot, pe.Path)
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("the docs root %q does not exist in the repository: %w", docsRoot, fs.ErrNotExist)
		}
		return fmt.Errorf("the docs root %q: %w", docsRoot, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the docs root %q is not a directory in the repository (a symbolic link in the repository is checked out as a plain file)", docsRoot)
	}
	return nil
}

// FS is the docs root as a file system for Load and Validate.
func (c *Checkout) FS() fs.FS { return c.Docs.FS() }

// Close closes both roots.
func (c *Checkout) Close() error {
	return errors.Join(c.Docs.Close(), c.Repo.Close())
}

func slicesContainsGit(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.EqualFold(part, ".git") {
			return true
		}
	}
	return false
}
