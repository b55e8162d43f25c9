package gitcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Repo is a work tree made by Clone. It is not safe for concurrent use.
// The caller removes it with Remove when done.
type Repo struct {
	// Dir is the absolute path of the work tree.
	Dir string

	git    *Git
	remote remote
	// bases maps a branch to the last commit of it that we know the remote
	// has: where our own unpushed commits start. PushRebasing replays only
	// what lies after it.
	bases map[string]string
}

func (r *Repo) run(ctx context.Context, c *command) ([]byte, error) {
	return r.git.run(ctx, c, invocation{dir: r.Dir})
}

// runRemote runs a command that talks to the repository's remote.
func (r *Repo) runRemote(ctx context.Context, c *command, creds *Credentials) ([]byte, error) {
	return r.git.run(ctx, c, invocation{dir: r.Dir, remote: &r.remote, creds: creds})
}

// HeadSHA is the commit HEAD points at.
func (r *Repo) HeadSHA(ctx context.Context) (string, error) {
	return r.revParse(ctx, "HEAD")
}

func (r *Repo) revParse(ctx context.Context, rev string) (string, error) {
	out, err := r.run(ctx, gitCommand("rev-parse", "--verify", "--quiet").value("revision", rev+"^{commit}"))
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// CreateBranch creates branch name at the current HEAD and switches to it.
func (r *Repo) CreateBranch(ctx context.Context, name string) error {
	if err := ValidateRef(name); err != nil {
		return fmt.Errorf("create branch: %w", err)
	}
	head, err := r.HeadSHA(ctx)
	if err != nil {
		return fmt.Errorf("create branch %q: %w", name, err)
	}
	if _, err := r.run(ctx, gitCommand("switch", "--quiet", "--no-track", "--create").value("branch", name)); err != nil {
		return fmt.Errorf("create branch %q: %w", name, err)
	}
	r.bases[name] = head
	return nil
}

// ChangeKind says what happened to a file.
type ChangeKind string

const (
	Added    ChangeKind = "added"
	Modified ChangeKind = "modified"
	Deleted  ChangeKind = "deleted"
	Renamed  ChangeKind = "renamed"
)

// Change is one changed file of the work tree, relative to HEAD. Paths are
// slash-separated and relative to Dir.
type Change struct {
	Path    string
	OldPath string // for Renamed
	Kind    ChangeKind
}

// Changes lists what differs from HEAD, untracked files included. It stages
// the whole work tree (git add --all) so that renames are recognised; the
// next CommitAll would stage the same.
func (r *Repo) Changes(ctx context.Context) ([]Change, error) {
	if _, err := r.run(ctx, gitCommand("add", "--all")); err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	out, err := r.run(ctx, gitCommand("status", "--porcelain=v1", "-z", "--untracked-files=all", "--renames"))
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	changes, err := parseStatus(out)
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	return changes, nil
}

// Symlinks lists the paths the index records as symbolic links. With
// core.symlinks=false they are plain files in the work tree holding the
// link's target, and writing one would change where the link points.
func (r *Repo) Symlinks(ctx context.Context) ([]string, error) {
	out, err := r.run(ctx, gitCommand("ls-files", "--stage", "-z"))
	if err != nil {
		return nil, fmt.Errorf("list symbolic links: %w", err)
	}
	return parseSymlinks(out)
}

// parseSymlinks reads `git ls-files --stage -z`: "mode sha stage\tpath\0".
func parseSymlinks(out []byte) ([]string, error) {
	var links []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		meta, path, ok := strings.Cut(f, "\t")
		if !ok || path == "" {
			return nil, fmt.Errorf("unexpected git ls-files entry %q", f)
		}
		if strings.HasPrefix(meta, "120000 ") {
			links = append(links, path)
		}
	}
	return links, nil
}

// parseStatus reads `git status --porcelain=v1 -z`: "XY path\0", and for a
// rename "XY new\0old\0".
func parseStatus(out []byte) ([]Change, error) {
	fields := strings.Split(string(out), "\x00")
	var changes []Change
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if f == "" {
			continue
		}
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("unexpected git status entry %q", f)
		}
		x, y, path := f[0], f[1], f[3:]
		if x == 'U' || y == 'U' || x == 'A' && y == 'A' || x == 'D' && y == 'D' {
			return nil, fmt.Errorf("unmerged path %q", path)
		}
		code := x
		if code == ' ' {
			code = y
		}
		c := Change{Path: path}
		switch code {
		case 'A', '?':
			c.Kind = Added
		case 'M', 'T':
			c.Kind = Modified
		case 'D':
			c.Kind = Deleted
		case 'R', 'C':
			if i+1 >= len(fields) || fields[i+1] == "" {
				return nil, fmt.Errorf("git status entry %q lacks its source path", f)
			}
			i++
			c.Kind = Renamed
			if code == 'C' {
				c.Kind = Added
			} else {
				c.OldPath = fields[i]
			}
		default:
			return nil, fmt.Errorf("unexpected git status code %q in %q", f[:2], f)
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// CommitOptions describe a commit. The committer is the Git's configured
// committer.
type CommitOptions struct {
	Message     string
	AuthorName  string
	AuthorEmail string
	// Trailers are "Token: value" lines added at the end of the message,
	// e.g. "Docsmith-Job: 1a2b3c4d".
	Trailers []string
}

func (o CommitOptions) validate() error {
	if strings.TrimSpace(o.Message) == "" {
		return fmt.Errorf("%w: commit message is empty", ErrInvalidArgument)
	}
	if strings.ContainsRune(o.Message, 0) {
		return fmt.Errorf("%w: commit message holds a NUL", ErrInvalidArgument)
	}
	if err := validateIdent("author name", o.AuthorName); err != nil {
		return err
	}
	if err := validateIdent("author email", o.AuthorEmail); err != nil {
		return err
	}
	for _, t := range o.Trailers {
		if err := validateTrailer(t); err != nil {
			return err
		}
	}
	return nil
}

// CommitAll stages every change in the work tree and commits it. With
// nothing to commit it returns HEAD and committed false, without error.
func (r *Repo) CommitAll(ctx context.Context, opts CommitOptions) (sha string, committed bool, err error) {
	if err := opts.validate(); err != nil {
		return "", false, fmt.Errorf("commit: %w", err)
	}
	if _, err := r.run(ctx, gitCommand("add", "--all")); err != nil {
		return "", false, fmt.Errorf("commit: stage changes: %w", err)
	}
	_, err = r.run(ctx, gitCommand("diff", "--cached", "--quiet", "--no-ext-diff"))
	var gerr *Error
	switch {
	case err == nil:
		head, err := r.HeadSHA(ctx)
		if err != nil {
			return "", false, fmt.Errorf("commit: %w", err)
		}
		return head, false, nil
	case !errors.As(err, &gerr) || gerr.ExitCode != 1:
		return "", false, fmt.Errorf("commit: look for staged changes: %w", err)
	}

	// The message goes through stdin: it may start with '-' and may be long.
	c := gitCommand("commit", "--quiet", "--no-verify", "--no-gpg-sign", "--cleanup=whitespace", "--file=-")
	for _, t := range opts.Trailers {
		c.opt("--trailer=" + t) // validated; after '=' it cannot be an option
	}
	inv := invocation{
		dir:   r.Dir,
		stdin: opts.Message,
		env:   []string{"GIT_AUTHOR_NAME=" + opts.AuthorName, "GIT_AUTHOR_EMAIL=" + opts.AuthorEmail},
	}
	if _, err := r.git.run(ctx, c, inv); err != nil {
		return "", false, fmt.Errorf("commit: %w", err)
	}
	head, err := r.HeadSHA(ctx)
	if err != nil {
		return "", false, fmt.Errorf("commit: %w", err)
	}
	return head, true, nil
}

// Push pushes the local branch to the branch of the same name on the remote
// the Repo was cloned from. It never forces: when the remote branch has
// commits we lack, the error wraps ErrPushRejected.
func (r *Repo) Push(ctx context.Context, branch string, creds *Credentials) error {
	if err := ValidateRef(branch); err != nil {
		return fmt.Errorf("push: branch: %w", err)
	}
	if err := creds.validate(); err != nil {
		return fmt.Errorf("push: %w", err)
	}
	ref := "refs/heads/" + branch
	// The URL we validated, not "origin": what git contacts is what the
	// credentials were scoped to.
	c := gitCommand("push", "--porcelain", "--no-verify").paths(r.remote.url, ref+":"+ref)
	out, err := r.runRemote(ctx, c, creds)
	if err != nil {
		// --porcelain reports each ref on stdout: "!\t<src>:<dst>\t[rejected] (fetch first)".
		for line := range strings.SplitSeq(string(out), "\n") {
			fields := strings.Split(line, "\t")
			if len(fields) < 3 || fields[0] != "!" {
				continue
			}
			summary := fields[2]
			if strings.Contains(summary, "(fetch first)") || strings.Contains(summary, "(non-fast-forward)") {
				return fmt.Errorf("push branch %q: %w", branch, ErrPushRejected)
			}
			return fmt.Errorf("push branch %q: %s: %w", branch, Redact(summary, creds.secrets()...), err)
		}
		return fmt.Errorf("push branch %q to %s: %w", branch, Redact(r.remote.url), err)
	}
	pushed, err := r.revParse(ctx, ref)
	if err != nil {
		return fmt.Errorf("push branch %q: %w", branch, err)
	}
	r.bases[branch] = pushed
	return nil
}

// PushRebasing pushes branch and, each time the push is rejected because
// someone else pushed first, fetches the remote branch, rebases our
// unpushed commits onto it and pushes again, up to attempts pushes in all.
// When the rebase conflicts, it is aborted (the work tree is left clean, our
// commits as they were) and the error wraps ErrConflict: a *ConflictError
// that names the files.
func (r *Repo) PushRebasing(ctx context.Context, branch string, creds *Credentials, attempts int) error {
	if attempts < 1 {
		attempts = 1
	}
	for attempt := 1; ; attempt++ {
		err := r.Push(ctx, branch, creds)
		if err == nil || !errors.Is(err, ErrPushRejected) {
			return err
		}
		if attempt >= attempts {
			return fmt.Errorf("still rejected after %d attempts: %w", attempts, err)
		}
		if err := r.rebaseOntoRemote(ctx, branch, creds); err != nil {
			return err
		}
	}
}

// rebaseOntoRemote fetches the remote branch and replays our commits since
// bases[branch] onto it.
func (r *Repo) rebaseOntoRemote(ctx context.Context, branch string, creds *Credentials) error {
	tracking := "refs/remotes/origin/" + branch
	fetch := gitCommand("fetch", "--quiet", "--no-tags", "--no-write-fetch-head").
		paths(r.remote.url, "+refs/heads/"+branch+":"+tracking)
	if _, err := r.runRemote(ctx, fetch, creds); err != nil {
		return fmt.Errorf("fetch branch %q: %w", branch, err)
	}
	upstream, err := r.revParse(ctx, tracking)
	if err != nil {
		return fmt.Errorf("rebase branch %q: %w", branch, err)
	}
	base := r.bases[branch]
	if base == "" {
		out, err := r.run(ctx, gitCommand("merge-base").value("revision", upstream, "refs/heads/"+branch))
		if err != nil {
			return fmt.Errorf("rebase branch %q: find where it forked from the remote: %w", branch, err)
		}
		base = strings.TrimSpace(string(out))
	}

	rebase := gitCommand("rebase", "--quiet", "--no-verify", "--no-autostash", "--onto").
		value("revision", upstream, base, branch)
	if _, err := r.run(ctx, rebase); err != nil {
		return r.abortRebase(ctx, branch, err)
	}
	r.bases[branch] = upstream
	return nil
}

// abortRebase undoes a failed rebase and says why it failed.
func (r *Repo) abortRebase(ctx context.Context, branch string, rebaseErr error) error {
	out, listErr := r.run(ctx, gitCommand("diff", "--name-only", "--diff-filter=U", "-z", "--no-ext-diff"))
	var files []string
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	_, abortErr := r.run(ctx, gitCommand("rebase", "--abort"))
	if len(files) > 0 {
		if abortErr != nil {
			return errors.Join(&ConflictError{Branch: branch, Files: files},
				fmt.Errorf("abort the rebase: %w", abortErr))
		}
		return &ConflictError{Branch: branch, Files: files}
	}
	// Not a conflict; there may be no rebase left to abort, so abortErr is
	// noise unless the listing failed too.
	if listErr != nil {
		return errors.Join(fmt.Errorf("rebase branch %q: %w", branch, rebaseErr),
			fmt.Errorf("list conflicts: %w", listErr))
	}
	return fmt.Errorf("rebase branch %q: %w", branch, rebaseErr)
}

// DiffStat counts the files and lines changed between base and HEAD (what
// has been committed since base; binary files count as files with no lines).
func (r *Repo) DiffStat(ctx context.Context, base string) (files, added, removed int, err error) {
	if err := validateRevision(base); err != nil {
		return 0, 0, 0, fmt.Errorf("diff stat: %w", err)
	}
	c := gitCommand("diff", "--numstat", "-z", "--no-ext-diff", "--no-textconv", "--find-renames").
		value("revision", base, "HEAD").paths()
	out, err := r.run(ctx, c)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("diff stat against %s: %w", base, err)
	}
	files, added, removed, err = parseNumstat(out)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("diff stat against %s: %w", base, err)
	}
	return files, added, removed, nil
}

// parseNumstat reads `git diff --numstat -z`: "added\tremoved\tpath\0", or
// for a rename "added\tremoved\t\0old\0new\0"; binary files show "-".
func parseNumstat(out []byte) (files, added, removed int, err error) {
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		entry := fields[i]
		if entry == "" {
			continue
		}
		parts := strings.SplitN(entry, "\t", 3)
		if len(parts) != 3 {
			return 0, 0, 0, fmt.Errorf("unexpected numstat entry %q", entry)
		}
		if parts[2] == "" {
			if i+2 >= len(fields) || fields[i+1] == "" || fields[i+2] == "" {
				return 0, 0, 0, fmt.Errorf("numstat rename entry %q lacks its paths", entry)
			}
			i += 2
		}
		files++
		if parts[0] == "-" && parts[1] == "-" {
			continue
		}
		a, errA := strconv.Atoi(parts[0])
		d, errD := strconv.Atoi(parts[1])
		if errA != nil || errD != nil || a < 0 || d < 0 {
			return 0, 0, 0, fmt.Errorf("unexpected numstat counts in %q", entry)
		}
		added += a
		removed += d
	}
	return files, added, removed, nil
}

// Remove deletes the work tree.
func (r *Repo) Remove() error {
	if r.Dir == "" || r.Dir == "/" {
		return fmt.Errorf("%w: refusing to remove %q", ErrInvalidArgument, r.Dir)
	}
	if err := os.RemoveAll(r.Dir); err != nil {
		return fmt.Errorf("remove work tree: %w", err)
	}
	return nil
}
