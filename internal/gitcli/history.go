package gitcli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// FindTrailer looks through the last depth commits of branch, as the remote
// has it, for one whose message carries the trailer "key: value", and
// returns it (the newest if several do). The clone is shallow, so it first
// fetches depth commits of the branch. With depth 1 it reads only the
// clone's HEAD and fetches nothing unless HEAD is the commit (then one
// parent, for CommitInfo). A repeated turn uses this to find its own
// commit, pushed by an earlier attempt that died before recording it.
func (r *Repo) FindTrailer(ctx context.Context, branch, key, value string, depth int, creds *Credentials) (string, bool, error) {
	if err := ValidateRef(branch); err != nil {
		return "", false, fmt.Errorf("find trailer: branch: %w", err)
	}
	if err := validateTrailer(key + ": " + value); err != nil {
		return "", false, fmt.Errorf("find trailer: %w", err)
	}
	if depth <= 1 {
		sha, found, err := r.findIn(ctx, "HEAD", key, value, 1)
		if err != nil || !found {
			return "", false, err
		}
		if err := r.fetchDepth(ctx, branch, 2, creds); err != nil {
			return "", false, err
		}
		return sha, true, nil
	}
	if err := r.fetchDepth(ctx, branch, depth, creds); err != nil {
		return "", false, err
	}
	return r.findIn(ctx, "refs/remotes/origin/"+branch, key, value, depth)
}

// fetchDepth fetches the last depth commits of the remote's branch into its
// tracking ref.
func (r *Repo) fetchDepth(ctx context.Context, branch string, depth int, creds *Credentials) error {
	tracking := "refs/remotes/origin/" + branch
	fetch := gitCommand("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--depth="+strconv.Itoa(depth)).
		paths(r.remote.url, "+refs/heads/"+branch+":"+tracking)
	if _, err := r.runRemote(ctx, fetch, creds); err != nil {
		return fmt.Errorf("fetch the history of branch %q: %w", branch, err)
	}
	return nil
}

// findIn looks through the last depth commits of rev for the trailer.
func (r *Repo) findIn(ctx context.Context, rev, key, value string, depth int) (string, bool, error) {
	// %x00 separates the fields; the trailer values come one per line.
	format := "--format=%H%x00%(trailers:key=" + key + ",valueonly)%x00"
	out, err := r.run(ctx, gitCommand("log", "--max-count="+strconv.Itoa(depth), format).value("revision", rev).paths())
	if err != nil {
		return "", false, fmt.Errorf("read the history of %s: %w", rev, err)
	}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		sha := strings.TrimSpace(fields[i])
		for v := range strings.SplitSeq(fields[i+1], "\n") {
			if strings.TrimSpace(v) == value {
				return sha, true, nil
			}
		}
	}
	return "", false, nil
}

// CommitInfo returns a commit's message body without its trailers, and the
// files it changed relative to its first parent (both sides of a rename).
// The parent must be in the clone: FindTrailer fetched enough history.
func (r *Repo) CommitInfo(ctx context.Context, sha string) (body string, files []string, err error) {
	if err := validateRevision(sha); err != nil {
		return "", nil, fmt.Errorf("commit info: %w", err)
	}
	out, err := r.run(ctx, gitCommand("log", "-1", "--format=%B").value("revision", sha).paths())
	if err != nil {
		return "", nil, fmt.Errorf("read commit %s: %w", sha, err)
	}
	body = messageBody(string(out))
	out, err = r.run(ctx, gitCommand("diff-tree", "-r", "-z", "--name-only", "--no-commit-id", "--root").value("revision", sha).paths())
	if err != nil {
		return "", nil, fmt.Errorf("list the files of commit %s: %w", sha, err)
	}
	for f := range strings.SplitSeq(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return body, files, nil
}

// messageBody drops a message's subject and its final paragraph of
// trailers ("Token: value" lines).
func messageBody(msg string) string {
	paras := strings.Split(strings.TrimSpace(msg), "\n\n")
	if len(paras) <= 1 {
		return ""
	}
	paras = paras[1:]
	last := paras[len(paras)-1]
	trailers := true
	for line := range strings.SplitSeq(last, "\n") {
		if validateTrailer(strings.TrimSpace(line)) != nil {
			trailers = false
			break
		}
	}
	if trailers {
		paras = paras[:len(paras)-1]
	}
	return strings.TrimSpace(strings.Join(paras, "\n\n"))
}
