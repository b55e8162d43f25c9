package gitcli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// How a branch came to hold a job's work (Landing.By).
const (
	// LandedByAncestry: one of the commits is an ancestor of the branch's
	// commit (a merge, a fast-forward, a push to the branch itself).
	LandedByAncestry = "ancestry"
	// LandedByTrailer: a commit of the branch's recent history carries
	// the job's trailer (a rebase merge, or a squash merge that kept the
	// commits' messages).
	LandedByTrailer = "trailer"
)

// Landing says whether, and how, a branch's commit holds some work.
type Landing struct {
	Landed bool
	// Commit is the commit found: the ancestor, or the one carrying the
	// trailer.
	Commit string
	By     string
}

// Landed reports whether the commit at of branch holds the given commits'
// work: one of them is an ancestor of at, or one of the last depth commits
// up to at carries the trailer "key: value". It first fetches the last
// depth commits of branch into the mirror (the mirror is shallow: a build
// reads only tips). A commit rewritten on the way in (a squash merge whose
// message lost the trailer, a cherry-pick) is not recognized, nor one
// further than depth commits from at.
func (m *Mirror) Landed(ctx context.Context, branch, at string, depth int, creds *Credentials, commits []string, key, value string) (Landing, error) {
	if m.lock == nil {
		return Landing{}, fmt.Errorf("landed: %w: the mirror is closed", ErrInvalidArgument)
	}
	if err := ValidateRef(branch); err != nil {
		return Landing{}, fmt.Errorf("landed: branch: %w", err)
	}
	if !IsCommitID(at) {
		return Landing{}, fmt.Errorf("landed: %w: %q is not a commit id", ErrInvalidArgument, at)
	}
	for _, c := range commits {
		if !IsCommitID(c) {
			return Landing{}, fmt.Errorf("landed: %w: %q is not a commit id", ErrInvalidArgument, c)
		}
	}
	if key != "" {
		if err := validateTrailer(key + ": " + value); err != nil {
			return Landing{}, fmt.Errorf("landed: %w", err)
		}
	}
	if err := creds.validate(); err != nil {
		return Landing{}, fmt.Errorf("landed: %w", err)
	}
	depth = max(depth, 2)
	ref := "refs/heads/" + branch
	fetch := gitCommand("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-gc", "--depth="+strconv.Itoa(depth)).
		paths(m.remote.url, "+"+ref+":"+ref)
	if _, err := m.run(ctx, fetch, invocation{remote: &m.remote, creds: creds}); err != nil {
		return Landing{}, fmt.Errorf("fetch the history of branch %q of %s: %w", branch, Redact(m.remote.url), err)
	}
	for _, c := range commits {
		_, err := m.run(ctx, gitCommand("merge-base", "--is-ancestor").value("revision", c, at), invocation{})
		if err == nil {
			return Landing{Landed: true, Commit: c, By: LandedByAncestry}, nil
		}
		// 1: not an ancestor; 128: a commit the mirror does not hold,
		// which the fetched history therefore does not reach.
		var gerr *Error
		if !errors.As(err, &gerr) || (gerr.ExitCode != 1 && gerr.ExitCode != 128) {
			return Landing{}, fmt.Errorf("landed: is %s an ancestor of %s: %w", c, at, err)
		}
	}
	if key == "" {
		return Landing{}, nil
	}
	format := "--format=%H%x00%(trailers:key=" + key + ",valueonly)%x00"
	out, err := m.run(ctx, gitCommand("log", "--max-count="+strconv.Itoa(depth), format).value("revision", at).paths(), invocation{})
	if err != nil {
		return Landing{}, fmt.Errorf("landed: read the history of %s: %w", at, err)
	}
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		for v := range strings.SplitSeq(fields[i+1], "\n") {
			if strings.TrimSpace(v) == value {
				return Landing{Landed: true, Commit: strings.TrimSpace(fields[i]), By: LandedByTrailer}, nil
			}
		}
	}
	return Landing{}, nil
}
