// Package forge is how docsmith finds, opens and updates the pull request of
// an agent job's branch, whatever hosts the repository: New picks the adapter
// for a project's forge kind (github, gitlab, gitea, local) and every adapter
// answers the same Forge interface.
//
// Opening is idempotent by branch: when the forge answers that a pull request
// for the head already exists, Open returns that one, so a retried turn never
// opens a second. Errors are *Error values whose message says which request
// failed, with which status, and what to check; they never hold the token.
package forge

import (
	"context"
	"fmt"
	"strings"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
	"github.com/docsmith/docsmith/internal/forge/gitea"
	"github.com/docsmith/docsmith/internal/forge/github"
	"github.com/docsmith/docsmith/internal/forge/gitlab"
	"github.com/docsmith/docsmith/internal/forge/local"
)

// The types live in forgeapi so that the adapters can return them without
// importing this package; these aliases are the names callers use.
type (
	// PullRequest is an open pull request (a merge request on GitLab).
	PullRequest = forgeapi.PullRequest
	// NewPullRequest is what Open needs.
	NewPullRequest = forgeapi.NewPullRequest
	// Config says which forge to talk to and how.
	Config = forgeapi.Config
	// Error is a failed call to a forge; see forgeapi.Error.
	Error = forgeapi.Error
	// CommitStatus is a named status of a commit.
	CommitStatus = forgeapi.CommitStatus
)

// Forge kinds.
const (
	KindGitHub = "github"
	KindGitLab = "gitlab"
	KindGitea  = "gitea"
	KindLocal  = "local"
)

// ErrNoPullRequests is returned by the local forge, which only pushes.
var ErrNoPullRequests = forgeapi.ErrNoPullRequests

// Forge finds, opens and updates the pull requests of one repository.
type Forge interface {
	// FindOpen returns the open PR whose head is branch head, preferring one
	// into base, or nil.
	FindOpen(ctx context.Context, head, base string) (*PullRequest, error)
	// Open opens a PR, or returns the open one the forge says already
	// exists for pr.Head.
	Open(ctx context.Context, pr NewPullRequest) (PullRequest, error)
	// UpdateBody replaces the body of PR number.
	UpdateBody(ctx context.Context, number int, body string) error
	// Comment adds a comment to PR number.
	Comment(ctx context.Context, number int, body string) error
	// SetStatus sets the status named st.Context of commit sha.
	SetStatus(ctx context.Context, sha string, st CommitStatus) error
	// UpsertComment edits the comment of PR number that holds marker (a
	// hidden HTML comment in body), or adds body as a new comment when none
	// does, so that a comment is kept up to date rather than repeated.
	UpsertComment(ctx context.Context, number int, marker, body string) error
}

// New returns the forge of cfg.Kind. It checks the configuration but sends
// no request.
func New(cfg Config) (Forge, error) {
	kind := strings.ToLower(strings.TrimSpace(cfg.Kind))
	switch kind {
	case KindGitHub:
		return ok(github.New(cfg))
	case KindGitLab:
		return ok(gitlab.New(cfg))
	case KindGitea:
		return ok(gitea.New(cfg))
	case KindLocal:
		return local.New(), nil
	case "":
		return nil, fmt.Errorf("forge: no kind: set it to %s, %s, %s or %s", KindGitHub, KindGitLab, KindGitea, KindLocal)
	}
	return nil, fmt.Errorf("forge: unknown kind %q: use %s, %s, %s or %s", cfg.Kind, KindGitHub, KindGitLab, KindGitea, KindLocal)
}

// ok keeps a nil adapter pointer from becoming a non-nil Forge.
func ok[F Forge](f F, err error) (Forge, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// OwnerRepo returns the owner and the repository name of a clone URL
// (https://host/owner/repo(.git), ssh://…, git@host:owner/repo.git). On
// GitLab the owner is the namespace: group/sub/project gives ("group/sub",
// "project"), and owner + "/" + repo is the project path.
func OwnerRepo(repoURL string) (owner, repo string, err error) {
	owner, repo, err = forgeapi.OwnerRepo(repoURL)
	if err != nil {
		return "", "", fmt.Errorf("forge: %w", err)
	}
	return owner, repo, nil
}
