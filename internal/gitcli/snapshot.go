package gitcli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// A snapshot is one commit of a remote fetched without its history and
// without a checkout, for reading: the agent's context repositories. The
// caller looks at the tree first (TreeFiles, ObjectsSize) and writes out
// only the files it accepts (CheckoutFiles), so a repository full of huge
// or numerous files never reaches the disk as a work tree.

// snapshotRef holds the fetched commit of a snapshot.
const snapshotRef = "refs/docsmith/snapshot"

// RemoteBranchSHA returns the commit refs/heads/<branch> points at on the
// remote; found is false when the remote has no such branch.
func (g *Git) RemoteBranchSHA(ctx context.Context, remoteURL, branch string, creds *Credentials) (sha string, found bool, err error) {
	rem, err := g.remotes.parse(remoteURL)
	if err != nil {
		return "", false, fmt.Errorf("ls-remote: %w", err)
	}
	if err := ValidateRef(branch); err != nil {
		return "", false, fmt.Errorf("ls-remote: branch: %w", err)
	}
	if err := creds.validate(); err != nil {
		return "", false, fmt.Errorf("ls-remote: %w", err)
	}
	ref := "refs/heads/" + branch
	c := gitCommand("ls-remote", "--heads").paths(rem.url, ref)
	out, err := g.run(ctx, c, invocation{dir: g.home, remote: &rem, creds: creds})
	if err != nil {
		return "", false, fmt.Errorf("look up branch %q on %s: %w", branch, Redact(rem.url), err)
	}
	// ls-remote matches patterns against the end of ref names, so compare
	// the whole name.
	for line := range strings.SplitSeq(string(out), "\n") {
		if id, name, ok := strings.Cut(line, "\t"); ok && name == ref {
			if !IsCommitID(id) {
				return "", false, fmt.Errorf("look up branch %q on %s: unexpected ls-remote line %q", branch, Redact(rem.url), line)
			}
			return id, true, nil
		}
	}
	return "", false, nil
}

// IsCommitID reports whether s is a full object id: 40 (SHA-1) or 64
// (SHA-256) lowercase hex digits.
func IsCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// DefaultBranch names, for CloneSnapshot, the branch the remote's HEAD
// points at.
const DefaultBranch = "HEAD"

// CloneSnapshot fetches one commit of remoteURL, without history (depth 1)
// and without checking anything out, into a new repository at dir, which
// must not exist or be empty; HEAD is detached at that commit. rev is a
// branch name, DefaultBranch, or a full commit id (which the remote must be
// willing to serve: protocol v2 servers, GitHub, GitLab and Gitea are). If
// the fetch fails, what it wrote in dir is removed.
func (g *Git) CloneSnapshot(ctx context.Context, remoteURL, rev, dir string, creds *Credentials) (*Repo, error) {
	rem, err := g.remotes.parse(remoteURL)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	src, err := snapshotSource(rev)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := creds.validate(); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if dir == "" {
		return nil, fmt.Errorf("snapshot: %w: target directory is empty", ErrInvalidArgument)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: target directory: %w", err)
	}
	existed, err := emptyDirOrMissing(abs)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	fail := func(err error) (*Repo, error) {
		if cleanErr := cleanFailedClone(abs, existed); cleanErr != nil {
			err = errors.Join(err, cleanErr)
		}
		return nil, err
	}
	if _, err := g.run(ctx, gitCommand("init", "--quiet", "--template=").paths(abs), invocation{dir: g.home}); err != nil {
		return fail(fmt.Errorf("snapshot: init: %w", err))
	}
	r := &Repo{Dir: abs, git: g, remote: rem, bases: make(map[string]string)}
	if err := r.fetchOne(ctx, src, snapshotRef, creds); err != nil {
		return fail(fmt.Errorf("fetch %s of %s: %w", rev, Redact(rem.url), err))
	}
	if _, err := r.run(ctx, gitCommand("update-ref", "--no-deref", "HEAD").value("revision", snapshotRef)); err != nil {
		return fail(fmt.Errorf("snapshot: point HEAD at the fetched commit: %w", err))
	}
	return r, nil
}

// snapshotSource is the remote side of the refspec that fetches rev.
func snapshotSource(rev string) (string, error) {
	switch {
	case rev == DefaultBranch:
		return "HEAD", nil
	case IsCommitID(rev):
		return rev, nil
	}
	if err := ValidateRef(rev); err != nil {
		return "", err
	}
	return "refs/heads/" + rev, nil
}

// fetchOne fetches src (a ref of the remote or a commit id) at depth 1 into
// the local ref dst.
func (r *Repo) fetchOne(ctx context.Context, src, dst string, creds *Credentials) error {
	c := gitCommand("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--depth=1").
		paths(r.remote.url, "+"+src+":"+dst)
	_, err := r.runRemote(ctx, c, creds)
	return err
}

// FetchCommit fetches commit id (without its history) from the remote the
// Repo came from, so that it can be compared with what the Repo holds.
func (r *Repo) FetchCommit(ctx context.Context, id string, creds *Credentials) error {
	if !IsCommitID(id) {
		return invalid("commit id", id, "is not a full hexadecimal object id")
	}
	if err := creds.validate(); err != nil {
		return fmt.Errorf("fetch commit: %w", err)
	}
	if err := r.fetchOne(ctx, id, "refs/docsmith/commits/"+id, creds); err != nil {
		return fmt.Errorf("fetch commit %s of %s: %w", id, Redact(r.remote.url), err)
	}
	return nil
}

// TreeFile is one entry of a commit's tree, as TreeFiles lists it.
type TreeFile struct {
	// Path is slash-separated and relative to the repository's root.
	Path string
	// Mode is git's: "100644" and "100755" for regular files, "120000" for
	// a symbolic link, "160000" for a submodule.
	Mode string
	// Size is the blob's size in bytes; -1 for a submodule.
	Size int64

	oid string // the blob's (or submodule commit's) object id
}

// Regular reports whether the entry is a regular file (not a symbolic
// link or a submodule).
func (f TreeFile) Regular() bool { return f.Mode == "100644" || f.Mode == "100755" }

// TreeFiles lists every file of rev's tree, recursively, in git's order
// (by path), without reading any of them.
func (r *Repo) TreeFiles(ctx context.Context, rev string) ([]TreeFile, error) {
	if err := validateRevision(rev); err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	out, err := r.run(ctx, gitCommand("ls-tree", "-r", "-l", "-z", "--full-tree").value("revision", rev))
	if err != nil {
		return nil, fmt.Errorf("list the files of %s: %w", rev, err)
	}
	files, err := parseLsTree(out)
	if err != nil {
		return nil, fmt.Errorf("list the files of %s: %w", rev, err)
	}
	return files, nil
}

// parseLsTree reads `git ls-tree -r -l -z`: "mode type id size\tpath\0",
// the size padded with spaces, "-" for a submodule.
func parseLsTree(out []byte) ([]TreeFile, error) {
	var files []TreeFile
	for entry := range strings.SplitSeq(string(out), "\x00") {
		if entry == "" {
			continue
		}
		meta, path, ok := strings.Cut(entry, "\t")
		fields := strings.Fields(meta)
		if !ok || path == "" || len(fields) != 4 {
			return nil, fmt.Errorf("unexpected git ls-tree entry %q", entry)
		}
		f := TreeFile{Path: path, Mode: fields[0], Size: -1, oid: fields[2]}
		if fields[3] != "-" {
			n, err := strconv.ParseInt(fields[3], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("unexpected size in git ls-tree entry %q", entry)
			}
			f.Size = n
		}
		files = append(files, f)
	}
	return files, nil
}

// CheckoutFiles writes the given files of rev into the work tree (and the
// index). Paths are taken literally, as TreeFiles gives them: no pattern
// in them is expanded.
func (r *Repo) CheckoutFiles(ctx context.Context, rev string, paths []string) error {
	if err := validateRevision(rev); err != nil {
		return fmt.Errorf("check out files: %w", err)
	}
	if len(paths) == 0 {
		return nil
	}
	var list strings.Builder
	for _, p := range paths {
		if p == "" || strings.ContainsRune(p, 0) {
			return invalid("path", p, "is empty or holds a NUL")
		}
		list.WriteString(p)
		list.WriteByte(0)
	}
	// The paths come through stdin, NUL-separated: no length limit on argv,
	// and none of them can be read as an option.
	c := gitCommand("checkout", "--quiet", "--pathspec-from-file=-", "--pathspec-file-nul").value("revision", rev).paths()
	inv := invocation{dir: r.Dir, stdin: list.String(), env: []string{"GIT_LITERAL_PATHSPECS=1"}}
	if _, err := r.git.run(ctx, c, inv); err != nil {
		return fmt.Errorf("check out %d files of %s: %w", len(paths), rev, err)
	}
	return nil
}

// ObjectsSize is how many bytes the repository's objects take on disk,
// packed and loose.
func (r *Repo) ObjectsSize(ctx context.Context) (int64, error) {
	out, err := r.run(ctx, gitCommand("count-objects", "-v"))
	if err != nil {
		return 0, fmt.Errorf("measure the repository: %w", err)
	}
	var kib int64
	for line := range strings.SplitSeq(string(out), "\n") {
		key, value, ok := strings.Cut(line, ": ")
		if !ok || key != "size" && key != "size-pack" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("measure the repository: unexpected line %q", line)
		}
		kib += n
	}
	return kib << 10, nil
}

// Diff returns the unified diff from commit from to commit to, both in the
// repository, with at most maxBytes of it kept, and the whole diff's
// length. Binary files are named, not shown; no diff driver or text
// conversion configured by the repository runs.
func (r *Repo) Diff(ctx context.Context, from, to string, maxBytes int) (diff string, total int64, err error) {
	if err := validateRevision(from); err != nil {
		return "", 0, fmt.Errorf("diff: %w", err)
	}
	if err := validateRevision(to); err != nil {
		return "", 0, fmt.Errorf("diff: %w", err)
	}
	c := gitCommand("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames").
		value("revision", from, to).paths()
	out := &capWriter{max: maxBytes}
	if _, err := r.git.run(ctx, c, invocation{dir: r.Dir, stdout: out}); err != nil {
		return "", 0, fmt.Errorf("diff %s..%s: %w", from, to, err)
	}
	return string(out.buf), out.total, nil
}

// capWriter keeps the first max bytes written to it and counts the rest.
type capWriter struct {
	max   int
	buf   []byte
	total int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.max - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
