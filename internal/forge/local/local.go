// Package local is the forge of a plain git remote (kind local): the agent
// pushes its branch and that is all. There are no pull requests to find,
// open, edit or comment on, so FindOpen finds none and the rest return
// forgeapi.ErrNoPullRequests, which callers treat as "pushed, no PR link".
package local

import (
	"context"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
)

// Forge is the local forge. Its zero value is ready to use.
type Forge struct{}

// New returns the local forge.
func New() *Forge { return &Forge{} }

// FindOpen returns nil: a plain remote has no pull requests.
func (*Forge) FindOpen(context.Context, string, string) (*forgeapi.PullRequest, error) {
	return nil, nil
}

// Open returns forgeapi.ErrNoPullRequests.
func (*Forge) Open(context.Context, forgeapi.NewPullRequest) (forgeapi.PullRequest, error) {
	return forgeapi.PullRequest{}, forgeapi.ErrNoPullRequests
}

// UpdateBody returns forgeapi.ErrNoPullRequests.
func (*Forge) UpdateBody(context.Context, int, string) error {
	return forgeapi.ErrNoPullRequests
}

// Comment returns forgeapi.ErrNoPullRequests.
func (*Forge) Comment(context.Context, int, string) error {
	return forgeapi.ErrNoPullRequests
}

// SetStatus returns forgeapi.ErrNoPullRequests: a plain remote shows no
// statuses.
func (*Forge) SetStatus(context.Context, string, forgeapi.CommitStatus) error {
	return forgeapi.ErrNoPullRequests
}

// UpsertComment returns forgeapi.ErrNoPullRequests.
func (*Forge) UpsertComment(context.Context, int, string, string) error {
	return forgeapi.ErrNoPullRequests
}
