package gitcli

import (
	"context"
	"fmt"
	"strings"
)

// Reading a mirror piece by piece, for builds that read only what changed
// since the commit they read before: the branch's tip (Fetch), the files
// that differ between two commits (ChangedFiles), a commit's file list
// (Files) and the contents of some of its files (ReadFiles).

// Fetch brings branch up to date from the remote, as ReadBranch does, and
// returns its tip's commit id without reading any file.
func (m *Mirror) Fetch(ctx context.Context, branch string, creds *Credentials) (string, error) {
	return m.atTip(ctx, branch, creds, func(string) error { return nil })
}

// Files lists the regular files of commit that keep accepts (keep nil:
// every one), as ReadBranch chooses them; keep also sees the symbolic
// links, which are never returned.
func (m *Mirror) Files(ctx context.Context, commit string, keep func(TreeFile) bool) ([]TreeFile, error) {
	if !IsCommitID(commit) {
		return nil, fmt.Errorf("mirror: list files: %w", invalid("commit", commit, "is not a commit id"))
	}
	return m.keptFiles(ctx, commit, keep)
}

// ReadFiles reads files, as Files listed them, into a TreeFS.
func (m *Mirror) ReadFiles(ctx context.Context, files []TreeFile) (*TreeFS, error) {
	var total int64
	for _, f := range files {
		total += f.Size
	}
	data, err := m.readBlobs(ctx, files, total)
	if err != nil {
		return nil, err
	}
	return newTreeFS(data), nil
}

// FileChange is a file that differs between two commits. A rename is a
// deletion and an addition.
type FileChange struct {
	// Path is slash-separated and relative to the repository's root.
	Path string
	// Blob is the file's object id in the later commit, "" when the file
	// is gone there.
	Blob string
	// Mode is the file's mode in the later commit ("" when it is gone):
	// a change to or from a symbolic link is a change too.
	Mode string
}

// Deleted reports whether the file is gone in the later commit.
func (c FileChange) Deleted() bool { return c.Blob == "" }

// ChangedFiles lists the files that differ between commits from and to
// below dir ("" or "." for the whole tree), renames as a deletion and an
// addition. Both commits must be in the mirror; one that is not (the
// mirror was made again since) is an error, after which a caller reads the
// branch whole.
func (m *Mirror) ChangedFiles(ctx context.Context, from, to, dir string) ([]FileChange, error) {
	if !IsCommitID(from) || !IsCommitID(to) {
		return nil, fmt.Errorf("mirror: changed files: %w", invalid("commit", from+" "+to, "is not a commit id"))
	}
	c := gitCommand("diff-tree", "-r", "--raw", "-z", "--no-renames", "--no-ext-diff", "--no-textconv").value("commit", from, to)
	if dir = strings.Trim(dir, "/"); dir != "" && dir != "." {
		c = c.paths(dir + "/")
	}
	out, err := m.run(ctx, c, invocation{env: []string{"GIT_LITERAL_PATHSPECS=1"}})
	if err != nil {
		return nil, fmt.Errorf("mirror: files changed between %.12s and %.12s: %w", from, to, err)
	}
	changes, err := parseRawDiff(out)
	if err != nil {
		return nil, fmt.Errorf("mirror: files changed between %.12s and %.12s: %w", from, to, err)
	}
	return changes, nil
}

// parseRawDiff reads `git diff-tree -r --raw -z --no-renames`: for each
// file ":oldmode newmode oldid newid status\0path\0".
func parseRawDiff(out []byte) ([]FileChange, error) {
	var changes []FileChange
	fields := strings.Split(string(out), "\x00")
	for i := 0; i < len(fields); i++ {
		meta := fields[i]
		if meta == "" {
			continue
		}
		parts := strings.Fields(strings.TrimPrefix(meta, ":"))
		if !strings.HasPrefix(meta, ":") || len(parts) != 5 || i+1 >= len(fields) || fields[i+1] == "" {
			return nil, fmt.Errorf("unexpected git diff-tree entry %q", meta)
		}
		i++
		c := FileChange{Path: fields[i]}
		if !strings.HasPrefix(parts[4], "D") {
			if !IsCommitID(parts[3]) {
				return nil, fmt.Errorf("unexpected object id in git diff-tree entry %q", meta)
			}
			c.Blob, c.Mode = parts[3], parts[1]
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// ID is the object id of the file's blob.
func (f TreeFile) ID() string { return f.oid }
