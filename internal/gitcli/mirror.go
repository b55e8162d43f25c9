package gitcli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docsmith/docsmith/internal/workspace"
)

// A Mirror keeps a remote's branches in a bare repository between reads, so
// that reading a branch again fetches only what changed instead of cloning
// it whole: the index builds of the domains of a project read its
// repository this way. A mirror is only ever fetched into and read; no
// work tree, remote or credential is ever configured in it. It is shallow
// (each branch is fetched at depth 1): a build reads a branch's tip and
// nothing of its history.
//
// A mirror is locked (flock on a file beside it) by whoever opened it until
// Close, so concurrent builds, in this process or in others sharing the
// data directory, take turns. A mirror that git cannot read (a process
// killed while creating it, files damaged on disk) is removed and made
// again from the remote.

// mirrorLockPoll is how often OpenMirror tries again for a mirror another
// build holds.
const mirrorLockPoll = 20 * time.Millisecond

// Mirror is one remote's mirror, locked by its opener until Close.
type Mirror struct {
	// Dir is the bare repository.
	Dir    string
	git    *Git
	remote remote
	lock   *os.File
}

// OpenMirror opens the mirror of remoteURL below parent (made if missing),
// waiting until ctx ends for another holder to close it. The mirror's
// directory is named by a hash of the remote, so that no remote URL becomes
// a path.
func (g *Git) OpenMirror(ctx context.Context, parent, remoteURL string) (*Mirror, error) {
	rem, err := g.remotes.parse(remoteURL)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	if parent == "" {
		return nil, fmt.Errorf("mirror: %w: the mirrors' directory is empty", ErrInvalidArgument)
	}
	parent, err = filepath.Abs(parent)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("mirror: %w", local("make the mirrors' directory", parent, err))
	}
	sum := sha256.Sum256([]byte(rem.url))
	name := hex.EncodeToString(sum[:12])
	lockPath := filepath.Join(parent, name+".lock")
	for {
		lock, err := g.lockMirror(lockPath)
		if err == nil {
			return &Mirror{Dir: filepath.Join(parent, name+".git"), git: g, remote: rem, lock: lock}, nil
		}
		if !errors.Is(err, errMirrorLocked) {
			return nil, fmt.Errorf("mirror: %w", local("lock the mirror", lockPath, err))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("mirror: waiting for another build to release it: %w", ctx.Err())
		case <-time.After(mirrorLockPoll):
		}
	}
}

// errMirrorLocked is a mirror another holder has.
var errMirrorLocked = errors.New("the mirror is in use")

// lockMirror takes the lock file at path, first in this process (so that
// it holds on every system), then with flock against other processes.
func (g *Git) lockMirror(path string) (*os.File, error) {
	g.mirrorsMu.Lock()
	defer g.mirrorsMu.Unlock()
	if g.mirrorsHeld[path] {
		return nil, errMirrorLocked
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	// Without flock, a mirror is locked within this process only;
	// processes sharing a data directory are not kept apart.
	if err := workspace.TryLock(f); err != nil && !errors.Is(err, workspace.ErrNoLocks) {
		_ = f.Close()
		if errors.Is(err, workspace.ErrLocked) {
			return nil, errMirrorLocked
		}
		return nil, err
	}
	if g.mirrorsHeld == nil {
		g.mirrorsHeld = map[string]bool{}
	}
	g.mirrorsHeld[path] = true
	return f, nil
}

// Close releases the mirror.
func (m *Mirror) Close() error {
	if m.lock == nil {
		return nil
	}
	g := m.git
	g.mirrorsMu.Lock()
	defer g.mirrorsMu.Unlock()
	delete(g.mirrorsHeld, m.lock.Name())
	err := m.lock.Close() // closing the file drops its flock
	m.lock = nil
	return err
}

// run runs a command in the mirror.
func (m *Mirror) run(ctx context.Context, c *command, inv invocation) ([]byte, error) {
	inv.dir = m.Dir
	inv.env = append(inv.env, "GIT_DIR="+m.Dir)
	return m.git.run(ctx, c, inv)
}

// CheckoutBranch brings branch up to date from the remote and writes the
// files of its tip that keep accepts (keep nil: every file) into dir, which
// must not exist or be empty. It returns the tip's commit id. Symbolic
// links and submodules are left out: docsmith never reads through a link.
func (m *Mirror) CheckoutBranch(ctx context.Context, branch, dir string, creds *Credentials, keep func(TreeFile) bool) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("mirror: target directory: %w", err)
	}
	existed, err := emptyDirOrMissing(abs)
	if err != nil {
		return "", fmt.Errorf("mirror: %w", err)
	}
	commit, err := m.atTip(ctx, branch, creds, func(commit string) error {
		err := m.checkout(ctx, commit, abs, keep)
		if err != nil {
			if cleanErr := cleanFailedClone(abs, existed); cleanErr != nil {
				err = errors.Join(err, cleanErr)
			}
		}
		return err
	})
	return commit, err
}

// ErrTreeTooLarge is a ReadBranch whose files would take more memory than
// it was allowed; nothing was read.
var ErrTreeTooLarge = errors.New("the files are larger in all than may be read into memory")

// ReadBranch is CheckoutBranch into memory: the files of the tip that keep
// accepts, read into a TreeFS, as long as they take at most maxBytes in all
// (else ErrTreeTooLarge, before any is read).
func (m *Mirror) ReadBranch(ctx context.Context, branch string, creds *Credentials, keep func(TreeFile) bool, maxBytes int64) (string, *TreeFS, error) {
	var tree *TreeFS
	commit, err := m.atTip(ctx, branch, creds, func(commit string) error {
		files, err := m.keptFiles(ctx, commit, keep)
		if err != nil {
			return err
		}
		var total int64
		for _, f := range files {
			total += f.Size
		}
		if total > maxBytes {
			return fmt.Errorf("mirror: %d files of %d bytes in all, over %d: %w", len(files), total, maxBytes, ErrTreeTooLarge)
		}
		data, err := m.readBlobs(ctx, files, total)
		if err != nil {
			return err
		}
		tree = newTreeFS(data)
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	return commit, tree, nil
}

// atTip fetches branch and calls read with its tip's commit. When the
// mirror cannot be read (the fetch fails and git cannot read the mirror, or
// read fails: it reads the mirror alone), the mirror is made again from the
// remote, once. When the fetch fails on a sound mirror, the error is the
// remote's, and the mirror is kept.
func (m *Mirror) atTip(ctx context.Context, branch string, creds *Credentials, read func(commit string) error) (string, error) {
	if m.lock == nil {
		return "", fmt.Errorf("mirror: %w: closed", ErrInvalidArgument)
	}
	if err := ValidateFetchRef(branch); err != nil {
		return "", fmt.Errorf("mirror: branch: %w", err)
	}
	if err := creds.validate(); err != nil {
		return "", fmt.Errorf("mirror: %w", err)
	}
	commit, err := m.fetch(ctx, branch, creds)
	if err != nil {
		if ctx.Err() != nil || m.sound(ctx) {
			return "", err
		}
		m.git.log.WarnContext(ctx, "git mirror unreadable, made again", "mirror", m.Dir, "err", err)
		if commit, err = m.remake(ctx, branch, creds); err != nil {
			return "", err
		}
	}
	err = read(commit)
	if err != nil && ctx.Err() == nil && !diskFull(err) && !errors.Is(err, ErrTreeTooLarge) {
		m.git.log.WarnContext(ctx, "git mirror unreadable, made again", "mirror", m.Dir, "err", err)
		if commit, err = m.remake(ctx, branch, creds); err == nil {
			err = read(commit)
		}
	}
	if err != nil {
		return "", err
	}
	return commit, nil
}

// fetch brings refs/heads/branch of the mirror (or the full ref branch
// names, see ValidateFetchRef) to the remote's tip, making the mirror
// first if there is none, and returns the tip's commit id.
func (m *Mirror) fetch(ctx context.Context, branch string, creds *Credentials) (string, error) {
	if _, err := os.Stat(filepath.Join(m.Dir, "HEAD")); errors.Is(err, os.ErrNotExist) {
		if err := m.create(ctx); err != nil {
			return "", err
		}
	}
	ref := fetchedRef(branch)
	c := gitCommand("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-gc", "--depth=1").
		paths(m.remote.url, "+"+ref+":"+ref)
	if _, err := m.run(ctx, c, invocation{remote: &m.remote, creds: creds}); err != nil {
		if m.cannotWrite(err) {
			err = local("fetch into the mirror", m.Dir, err)
		}
		return "", fmt.Errorf("fetch branch %q of %s: %w", branch, Redact(m.remote.url), err)
	}
	out, err := m.run(ctx, gitCommand("rev-parse", "--verify", "--quiet").value("revision", ref+"^{commit}"), invocation{})
	if err != nil {
		return "", fmt.Errorf("mirror: resolve %s: %w", ref, err)
	}
	id := strings.TrimSpace(string(out))
	if !IsCommitID(id) {
		return "", fmt.Errorf("mirror: resolve %s: unexpected output %q", ref, id)
	}
	return id, nil
}

// cannotWrite reports whether a git command in the mirror failed because
// the mirror itself could not be written (its lock files name its path;
// objects are written through a temporary file), not because of the remote.
func (m *Mirror) cannotWrite(err error) bool {
	var gerr *Error
	if !errors.As(err, &gerr) {
		return false
	}
	said := gerr.Stderr
	return strings.Contains(said, m.Dir) && (strings.Contains(said, "Permission denied") || strings.Contains(said, "Read-only file system") || strings.Contains(said, "Not a directory")) ||
		strings.Contains(said, "insufficient permission for adding an object") ||
		strings.Contains(said, "unable to create temporary file")
}

// create makes the mirror's empty bare repository: in a directory of its
// own first, renamed into place once whole, so that a mirror is either
// missing or made.
func (m *Mirror) create(ctx context.Context) error {
	// What a process killed while making this mirror left (its lock is
	// ours now, so no one else is making it).
	parent, staging := filepath.Dir(m.Dir), filepath.Base(m.Dir)+".new-"
	if entries, err := os.ReadDir(parent); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), staging) {
				_ = os.RemoveAll(filepath.Join(parent, e.Name()))
			}
		}
	}
	tmp, err := os.MkdirTemp(parent, staging)
	if err != nil {
		return fmt.Errorf("mirror: %w", local("make the mirror", parent, err))
	}
	if _, err := m.git.run(ctx, gitCommand("init", "--quiet", "--bare", "--template=").paths(tmp), invocation{dir: m.git.home}); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("mirror: init: %w", local("make the mirror", tmp, err))
	}
	if err := os.Rename(tmp, m.Dir); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("mirror: %w", local("make the mirror", m.Dir, err))
	}
	return nil
}

// remake removes the mirror and fetches branch into a new one.
func (m *Mirror) remake(ctx context.Context, branch string, creds *Credentials) (string, error) {
	if err := os.RemoveAll(m.Dir); err != nil {
		return "", fmt.Errorf("mirror: %w", local("remove the unreadable mirror", m.Dir, err))
	}
	return m.fetch(ctx, branch, creds)
}

// sound reports whether git can read the mirror: its refs and every object
// they reach.
func (m *Mirror) sound(ctx context.Context) bool {
	_, err := m.run(ctx, gitCommand("fsck", "--connectivity-only", "--no-dangling", "--no-progress"), invocation{})
	return err == nil
}

// keptFiles lists the files of commit that keep accepts: regular files
// only, submodules and symbolic links left out (keep sees the links, so that
// its caller can say which it skipped).
func (m *Mirror) keptFiles(ctx context.Context, commit string, keep func(TreeFile) bool) ([]TreeFile, error) {
	out, err := m.run(ctx, gitCommand("ls-tree", "-r", "-l", "-z", "--full-tree").value("revision", commit), invocation{})
	if err != nil {
		return nil, fmt.Errorf("mirror: list the files of %s: %w", commit, err)
	}
	files, err := parseLsTree(out)
	if err != nil {
		return nil, fmt.Errorf("mirror: list the files of %s: %w", commit, err)
	}
	kept := files[:0]
	var links []string
	for _, f := range files {
		if f.Mode == "160000" || f.Size < 0 || (keep != nil && !keep(f)) {
			continue
		}
		if !f.Regular() {
			// A link's blob is its target's path: read or checked out, it
			// would pass for a page holding that path.
			links = append(links, f.Path)
			continue
		}
		if strings.ContainsRune(f.Path, 0) {
			return nil, invalid("path", f.Path, "holds a NUL")
		}
		kept = append(kept, f)
	}
	if len(links) > 0 {
		m.git.log.WarnContext(ctx, "git mirror: symbolic links left out of the files read", "mirror", m.Dir, "commit", commit, "links", links)
	}
	return kept, nil
}

// readBlobs reads the files' contents (total bytes in all) with one git
// cat-file.
func (m *Mirror) readBlobs(ctx context.Context, files []TreeFile, total int64) (map[string][]byte, error) {
	var ids strings.Builder
	for _, f := range files {
		if !IsCommitID(f.oid) {
			return nil, fmt.Errorf("mirror: unexpected object id %q for %s", f.oid, f.Path)
		}
		ids.WriteString(f.oid)
		ids.WriteByte('\n')
	}
	var out bytes.Buffer
	out.Grow(int(total) + len(files)*64)
	if _, err := m.run(ctx, gitCommand("cat-file", "--batch"), invocation{stdin: ids.String(), stdout: &out}); err != nil {
		return nil, fmt.Errorf("mirror: read %d files: %w", len(files), err)
	}
	// Each object is "<id> blob <size>\n<content>\n", in the order asked.
	data := make(map[string][]byte, len(files))
	rest := out.Bytes()
	for _, f := range files {
		header, body, ok := bytes.Cut(rest, []byte{'\n'})
		want := f.oid + " blob " + strconv.FormatInt(f.Size, 10)
		if !ok || string(header) != want || int64(len(body)) < f.Size+1 || body[f.Size] != '\n' {
			return nil, fmt.Errorf("mirror: unexpected git cat-file output for %s (%.100q)", f.Path, header)
		}
		data[f.Path] = body[:f.Size:f.Size]
		rest = body[f.Size+1:]
	}
	return data, nil
}

// checkout writes the files of commit that keep accepts into dir, through
// an index file of its own beside dir (the mirror has none).
func (m *Mirror) checkout(ctx context.Context, commit, dir string, keep func(TreeFile) bool) error {
	files, err := m.keptFiles(ctx, commit, keep)
	if err != nil {
		return err
	}
	var list strings.Builder
	n := 0
	for _, f := range files {
		list.WriteString(f.Path)
		list.WriteByte(0)
		n++
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mirror: %w", local("make the checkout directory", dir, err))
	}
	index := dir + ".index"
	defer func() { _ = os.Remove(index) }()
	env := []string{"GIT_INDEX_FILE=" + index, "GIT_WORK_TREE=" + dir}
	if _, err := m.run(ctx, gitCommand("read-tree").value("revision", commit), invocation{env: env}); err != nil {
		return fmt.Errorf("mirror: read the tree of %s: %w", commit, err)
	}
	if n == 0 {
		return nil
	}
	// The paths come through stdin, NUL-separated: no length limit on
	// argv, and none of them can be read as an option.
	if _, err := m.run(ctx, gitCommand("checkout-index", "--quiet", "-z", "--stdin"), invocation{env: env, stdin: list.String()}); err != nil {
		return fmt.Errorf("mirror: check out %d files of %s: %w", n, commit, err)
	}
	return nil
}

// diskFull reports whether err is the disk being full, which making the
// mirror again would not cure.
func diskFull(err error) bool {
	var gerr *Error
	return errors.Is(err, syscall.ENOSPC) || errors.As(err, &gerr) && strings.Contains(gerr.Stderr, "No space left on device")
}
