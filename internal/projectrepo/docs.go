package projectrepo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workspace"
)

// Docs is what a build reads a project's docs from: the repository's files
// at one commit, in memory (Tree) or checked out in a workspace (Dir), or
// a plain folder (Dir, no Commit). Close removes a checkout.
type Docs struct {
	// Commit is the commit read, "" for a plain folder.
	Commit string
	// Tree holds the files read into memory: the docs root's, with the
	// directories on the way to it.
	Tree *gitcli.TreeFS
	// Dir is the checkout or the plain folder.
	Dir string
	// Links are the commit's symbolic links on the way to or below the
	// docs root, which were left out: docsmith never reads through one.
	Links []string
	// Files maps every regular file of the docs root the build may read
	// (not over docs.MaxSpecBytes), by its path from the docs root, to its
	// blob id; set by ReadFiles only.
	Files map[string]string
	ws    *workspace.Dir
}

// Close removes the checkout, if any.
func (d *Docs) Close() {
	if d != nil && d.ws != nil {
		_ = d.ws.Remove()
	}
}

// WorkDirError is a failure of this server's work directory, not of the
// repository.
type WorkDirError struct{ Err error }

func (e WorkDirError) Error() string { return e.Err.Error() }
func (e WorkDirError) Unwrap() error { return e.Err }

// DocsWorkspaces starts the name of every checkout of docs.
const DocsWorkspaces = "index-"

// Mirror is a project's repository mirror, opened (and locked against
// other readers, see gitcli.Mirror) for one build, with the project's
// credentials.
type Mirror struct {
	repos   *Repos
	project tenant.Project
	root    string // the docs root, cleaned: "" for the repository's root
	m       *gitcli.Mirror
	creds   *gitcli.Credentials
}

// OpenMirror opens the mirror of p's repository. A token that cannot be
// read is an apperr Conflict (see Credentials); anything else is git's or
// the disk's, for CloneError.
func (r *Repos) OpenMirror(ctx context.Context, p tenant.Project) (*Mirror, error) {
	creds, _, err := r.Credentials(p)
	if err != nil {
		return nil, err
	}
	m, err := r.cfg.Git.OpenMirror(ctx, r.cfg.MirrorDir, p.RepoURL)
	if err != nil {
		return nil, err
	}
	return &Mirror{repos: r, project: p, root: DocsRootPath(p.DocsRoot), m: m, creds: creds}, nil
}

// Close releases the mirror; closing it again does nothing.
func (m *Mirror) Close() { _ = m.m.Close() }

// DocsRootPath is a project's docs root as a path in its repository: ""
// for the repository's root.
func DocsRootPath(docsRoot string) string {
	return strings.Trim(path.Clean("/"+strings.TrimSpace(docsRoot)), "/")
}

// keep chooses, among a commit's files, those a build may read: the docs
// root's (and the entries on the way to it, so that a docs root that is a
// link is seen as one), regular and no larger than the largest file the
// docs loader reads. It notes the links and the files too large.
func (m *Mirror) keep(links map[string]bool, large map[string]int64) func(gitcli.TreeFile) bool {
	root := m.root
	return func(f gitcli.TreeFile) bool {
		if root != "" && f.Path != root && !strings.HasPrefix(f.Path, root+"/") && !strings.HasPrefix(root, f.Path+"/") {
			return false
		}
		if !f.Regular() {
			links[f.Path] = true
			return false
		}
		if f.Size > docs.MaxSpecBytes {
			large[f.Path] = f.Size
			return false
		}
		return true
	}
}

func (m *Mirror) warnLarge(ctx context.Context, large map[string]int64) {
	for file, size := range large {
		m.repos.cfg.Log.WarnContext(ctx, "index: file left out", "project", m.project.ID, "file", file, "bytes", size, "limit", docs.MaxSpecBytes)
	}
}

// ReadDocs fetches ref into the mirror and reads the files of its tip that
// a build may read (see keep). They are read into memory, or, over
// MaxDocsInMemory in all, checked out into a new workspace named with
// prefix.
func (m *Mirror) ReadDocs(ctx context.Context, ref, prefix string) (*Docs, error) {
	large := map[string]int64{}
	// A set: keep runs again when a read is retried or falls back to a
	// checkout.
	links := map[string]bool{}
	keep := m.keep(links, large)
	defer m.warnLarge(ctx, large)
	commit, tree, err := m.m.ReadBranch(ctx, ref, m.creds, keep, m.repos.cfg.MaxDocsInMemory)
	if err == nil {
		return &Docs{Commit: commit, Tree: tree, Links: slices.Sorted(maps.Keys(links))}, nil
	}
	if !errors.Is(err, gitcli.ErrTreeTooLarge) {
		return nil, err
	}
	cfg := m.repos.cfg
	// Checkouts of builds killed with an earlier process go first.
	if _, err := workspace.Sweep(cfg.WorkDir, DocsWorkspaces, cfg.Log); err != nil {
		cfg.Log.WarnContext(ctx, "index: sweeping stale workspaces failed", "err", err)
	}
	ws, err := workspace.Create(cfg.WorkDir, prefix)
	if err != nil {
		return nil, WorkDirError{fmt.Errorf("work directory: %w", err)}
	}
	dir := filepath.Join(ws.Path, "repo")
	if commit, err = m.m.CheckoutBranch(ctx, ref, dir, m.creds, keep); err != nil {
		_ = ws.Remove()
		return nil, err
	}
	return &Docs{Commit: commit, Dir: dir, ws: ws, Links: slices.Sorted(maps.Keys(links))}, nil
}

// Fetch brings ref up to date in the mirror and returns its tip's commit,
// reading no file.
func (m *Mirror) Fetch(ctx context.Context, ref string) (string, error) {
	return m.m.Fetch(ctx, ref, m.creds)
}

// Change is a file of the docs root that differs between two commits.
type Change struct {
	// Path is the file's path from the docs root.
	Path string
	// Blob is its blob id in the later commit, "" when it is gone there.
	Blob string
}

// Changes lists the files of the docs root that differ between commits
// from and to, both in the mirror (see gitcli.Mirror.ChangedFiles): a
// rename is a deletion and an addition. A change on the way to the docs
// root (the docs root made a link, say) comes as a change of "".
func (m *Mirror) Changes(ctx context.Context, from, to string) ([]Change, error) {
	fcs, err := m.m.ChangedFiles(ctx, from, to, m.root)
	if err != nil {
		return nil, err
	}
	out := make([]Change, 0, len(fcs))
	for _, fc := range fcs {
		rel := fc.Path
		if m.root != "" {
			var ok bool
			if rel, ok = strings.CutPrefix(fc.Path, m.root+"/"); !ok {
				rel = ""
			}
		}
		blob := fc.Blob
		if blob != "" && fc.Mode != "100644" && fc.Mode != "100755" {
			// A file that became a link (or a submodule) is gone for a
			// build.
			blob = ""
		}
		out = append(out, Change{Path: rel, Blob: blob})
	}
	return out, nil
}

// ReadFiles reads, from commit (already in the mirror), only the files of
// the docs root that want accepts (by their path from the docs root),
// into memory; the returned Docs' Files still lists every file a build
// may read, so that a reader can tell a file it did not read from one the
// commit does not have.
func (m *Mirror) ReadFiles(ctx context.Context, commit string, want func(rel string) bool) (*Docs, error) {
	large := map[string]int64{}
	links := map[string]bool{}
	keep := m.keep(links, large)
	defer m.warnLarge(ctx, large)
	all, err := m.m.Files(ctx, commit, keep)
	if err != nil {
		return nil, err
	}
	d := &Docs{Commit: commit, Files: make(map[string]string, len(all))}
	var read []gitcli.TreeFile
	for _, f := range all {
		rel, ok := f.Path, true
		if m.root != "" {
			rel, ok = strings.CutPrefix(f.Path, m.root+"/")
		}
		if !ok {
			continue
		}
		d.Files[rel] = f.ID()
		if want(rel) {
			read = append(read, f)
		}
	}
	if d.Tree, err = m.m.ReadFiles(ctx, read); err != nil {
		return nil, err
	}
	// The docs root must be a directory of the tree even when no file of
	// it was read.
	if m.root != "" && len(read) == 0 {
		return nil, fmt.Errorf("mirror: no file of the docs root to read")
	}
	d.Links = slices.Sorted(maps.Keys(links))
	return d, nil
}

// LinkOnDocsRoot finds, among a commit's symbolic links, one that is the
// docs root or a directory on the way to it: left out of the files read, it
// would otherwise be reported as a docs root that does not exist.
func LinkOnDocsRoot(links []string, docsRoot string) (string, bool) {
	root := DocsRootPath(docsRoot)
	for _, l := range links {
		if root == l || strings.HasPrefix(root, l+"/") {
			return l, true
		}
	}
	return "", false
}

// PlainFolder reports whether repo is a local directory that is not a git
// repository (neither a work tree nor a bare one): its files are read as
// they are, with no clone and no ref. It returns the folder's absolute
// path.
func PlainFolder(repo string) (string, bool) {
	if strings.Contains(repo, "://") {
		return "", false
	}
	info, err := os.Stat(repo)
	if err != nil || !info.IsDir() {
		return "", false
	}
	for _, marker := range []string{".git", "HEAD"} {
		if _, err := os.Stat(filepath.Join(repo, marker)); err == nil {
			return "", false
		}
	}
	abs, err := filepath.Abs(repo)
	if err != nil {
		return "", false
	}
	return abs, true
}

// LocalRepo reports whether a project's repo is a path on this machine
// rather than a URL (scheme://… or git's user@host:path).
func LocalRepo(repo string) bool {
	if strings.Contains(repo, "://") {
		return false
	}
	if i := strings.IndexByte(repo, ':'); i > 0 && !strings.ContainsRune(repo[:i], '/') {
		return false // host:path, git's scp-like syntax
	}
	return true
}
