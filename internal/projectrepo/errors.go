package projectrepo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
)

// CloneError says why the repository of a project could not be cloned: a
// repository or ref refused before git ran, or a branch the repository
// does not have, is the project's configuration (409); git failing to
// reach or fetch it is the repository's side (502, with what git reported,
// which holds no credentials); a full disk here is ours (507), and so is
// any other failure of our own files (503, the path in the log only).
func CloneError(err error, project, ref string) error {
	if errors.Is(err, gitcli.ErrInvalidArgument) {
		return apperr.Wrap(err, apperr.Conflict,
			"could not clone branch %q of the repository of project %s; check its repo, ref and token: %v", ref, project, err)
	}
	var ge *gitcli.Error
	said := ""
	if errors.As(err, &ge) {
		said = ge.Stderr
	}
	if errors.Is(err, syscall.ENOSPC) || strings.Contains(said, "No space left on device") {
		return apperr.Wrap(err, apperr.StorageFull, "the server's disk is full: the repository of project %s could not be cloned", project)
	}
	var le *gitcli.LocalError
	if errors.As(err, &le) {
		// This server's own files failed: nothing the project can fix.
		return apperr.Wrap(err, apperr.Unavailable,
			"the server could not write its mirror of the repository of project %s; an operator must check the data directory (the server log names the path)", project)
	}
	if strings.Contains(said, "Remote branch") && strings.Contains(said, "not found") || strings.Contains(said, "couldn't find remote ref") {
		// The repository answered: the domain's ref is the operator's to fix.
		return apperr.Wrap(err, apperr.Conflict, "could not clone branch %q of the repository of project %s: the repository has no such branch", ref, project)
	}
	if said == "" {
		said = "git did not finish (the server log has the cause)"
	}
	return apperr.Wrap(err, apperr.BadGateway,
		"the repository of project %s could not be reached at branch %q; check that it is up and the project's repo, ref and token are right; git said: %s",
		project, ref, clipLine(said, 400))
}

// clipLine joins s's lines and cuts it to at most n bytes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// RepoError is a failure to read a project's repository for the workflow
// service. Its message names the repository (without credentials) and the
// ref, never the token. Transient says whether trying again later may
// help: the remote could not be reached, timed out, or answered with a
// server error.
type RepoError struct {
	Repo      string // the repository, redacted
	Ref       string
	Transient bool
	Err       error
	msg       string
}

func (e *RepoError) Error() string { return e.msg }
func (e *RepoError) Unwrap() error { return e.Err }

// ErrBranchNotFound is what a RepoError wraps when the remote has no such
// branch.
var ErrBranchNotFound = errors.New("the branch does not exist on the remote")

// repoError describes err, a failure to read ref of p's repository, with
// creds' secret removed wherever it might appear.
func repoError(p tenant.Project, ref string, err error, creds *gitcli.Credentials) *RepoError {
	secret := ""
	if creds != nil {
		secret = creds.Password
	}
	repo := gitcli.Redact(p.RepoURL)
	msg := err.Error()
	if ae := (*apperr.Error)(nil); errors.As(err, &ae) {
		msg = apperr.MessageOf(err)
	}
	return &RepoError{
		Repo:      repo,
		Ref:       ref,
		Transient: Transient(err),
		Err:       err,
		msg:       fmt.Sprintf("reading %s of %s (project %s): %s", ref, repo, p.ID, gitcli.Redact(msg, secret)),
	}
}

// Transient reports whether a git failure may pass if tried again later:
// the remote could not be reached, timed out, or answered with a server
// error or a rate limit.
func Transient(err error) bool {
	var gerr *gitcli.Error
	if !errors.As(err, &gerr) {
		return false
	}
	if errors.Is(gerr.Err, context.DeadlineExceeded) {
		return true
	}
	msg := strings.ToLower(gerr.Stderr)
	for _, s := range []string{
		"could not resolve host", "connection refused", "connection reset", "connection timed out",
		"failed to connect to", "couldn't connect to server", // curl's words for a refused connection
		"operation timed out", "network is unreachable", "no route to host", "the remote end hung up",
		"early eof", "returned error: 429", "returned error: 500", "returned error: 502", "returned error: 503",
		"returned error: 504", "tls connection", "gnutls", "ssl_",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
