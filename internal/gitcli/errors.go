package gitcli

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrInvalidArgument marks a value refused before git ran: a ref that
	// breaks the ref-name rules or starts with '-', a remote of an unsupported
	// kind or with credentials in it, and the like.
	ErrInvalidArgument = errors.New("invalid argument")

	// ErrPushRejected marks a push the remote refused because its branch has
	// commits we do not have (non-fast-forward, fetch first). Fetching and
	// rebasing may fix it; PushRebasing does that.
	ErrPushRejected = errors.New("push rejected: the remote branch has commits that are not in ours")

	// ErrConflict marks a rebase that stopped on conflicting changes. The
	// rebase has been aborted; see ConflictError for the files.
	ErrConflict = errors.New("conflict")
)

// Error is a git command that failed. Args and Stderr are redacted: they
// never hold credentials.
type Error struct {
	Op       string   // the git subcommand, e.g. "clone"
	Args     []string // the arguments after "git", redacted
	ExitCode int      // -1 when git did not start or was killed
	Stderr   string   // git's diagnostics, trimmed and redacted
	Err      error    // the cause: *exec.ExitError, context.DeadlineExceeded…
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("git ")
	b.WriteString(e.Op)
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// ConflictError says which files stopped a rebase. errors.Is(err,
// ErrConflict) holds for it.
type ConflictError struct {
	Branch string
	Files  []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("rebasing branch %q onto the remote branch conflicted in %s; the rebase was aborted",
		e.Branch, strings.Join(e.Files, ", "))
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// LocalError is a failure of this server's own files (a directory that is
// read-only, missing or not a directory, a full disk), not of a remote.
// Path is the local path; it is for the operator's log, not for clients.
type LocalError struct {
	Op   string // what was being done, e.g. "lock the mirror"
	Path string
	Err  error
}

func (e *LocalError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err)
}

func (e *LocalError) Unwrap() error { return e.Err }

// local wraps a failure of a local file operation on path.
func local(op, path string, err error) error {
	return &LocalError{Op: op, Path: path, Err: err}
}

// invalid builds an ErrInvalidArgument error. what names the value; the
// value itself is quoted only after redaction.
func invalid(what, value, why string) error {
	return fmt.Errorf("%w: %s %q %s", ErrInvalidArgument, what, Redact(value), why)
}
