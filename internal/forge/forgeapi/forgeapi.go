// Package forgeapi is the contract the forge adapters share: the pull request
// types, the configuration, the error every adapter returns and the parsing
// of repository URLs. It exists so that package forge can choose an adapter
// while the adapters (github, gitlab, gitea, local) return the same types
// without importing forge; callers use the aliases in package forge.
package forgeapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// PullRequest is an open pull request (a merge request on GitLab).
type PullRequest struct {
	Number int    // the number people see: #12 on GitHub and Gitea, !12 on GitLab
	URL    string // the human web URL of the pull request
	Body   string
	Head   string // the branch with the changes
	Base   string // the branch the changes go into
}

// NewPullRequest is what Open needs to open a pull request.
type NewPullRequest struct {
	Title, Body, Head, Base string
}

// Validate says which field is missing before any request is sent.
func (p NewPullRequest) Validate() error {
	switch {
	case strings.TrimSpace(p.Title) == "":
		return errors.New("pull request title is empty")
	case strings.TrimSpace(p.Head) == "":
		return errors.New("pull request head branch is empty")
	case strings.TrimSpace(p.Base) == "":
		return errors.New("pull request base branch is empty")
	case p.Head == p.Base:
		return fmt.Errorf("pull request head and base are both %q", p.Head)
	}
	return nil
}

// Config says which forge to talk to and how.
type Config struct {
	Kind string // github, gitlab, gitea or local
	// APIBaseURL is the root of the forge's REST API: https://ghe.example/api/v3,
	// https://gitlab.example/api/v4, https://gitea.example (or .../api/v1).
	// Optional for github (api.github.com), required for gitlab and gitea.
	APIBaseURL string
	// RepoURL is the clone URL, https://host/owner/repo(.git) or
	// git@host:owner/repo.git, or a local path for the local forge.
	RepoURL string
	Token   string
	// TokenSource names where Token came from (an environment variable or a
	// file), so that errors can say "check the token in ACME_GITHUB_TOKEN".
	// It is never the token itself.
	TokenSource string
	// HTTPClient sends the requests; nil means a new client with no timeout.
	// Timeouts come from each call's context.
	HTTPClient *http.Client
	Log        *slog.Logger // nil discards
}

// MaxReply bounds the body of any reply read from a forge. Listing fifty
// pull requests with long bodies stays far below it; a broken or hostile
// server that streams without end fails instead of filling memory.
const MaxReply = 32 << 20

// Client returns a copy of the configured HTTP client (or a new one) whose
// replies are cut at MaxReply bytes. The caller's client is left unchanged.
func (c Config) Client() *http.Client {
	var hc http.Client
	if c.HTTPClient != nil {
		hc = *c.HTTPClient
	}
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc.Transport = limitTransport{rt: rt, max: MaxReply}
	return &hc
}

type limitTransport struct {
	rt  http.RoundTripper
	max int64
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		resp.Body = &limitedBody{rc: resp.Body, max: t.max, left: t.max}
	}
	return resp, err
}

// limitedBody fails a read past its limit, rather than ending quietly as
// io.LimitReader does, so that a cut reply is never taken for a whole one.
type limitedBody struct {
	rc        io.ReadCloser
	max, left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.rc.Read(one[:]); n == 0 && err != nil {
			return 0, err // the reply ended right at the limit
		}
		return 0, fmt.Errorf("the reply is longer than %d bytes", b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// Logger returns the configured logger or one that discards.
func (c Config) Logger() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

// ErrNoPullRequests is returned by the local forge, which only pushes: a
// plain git remote has no pull requests.
var ErrNoPullRequests = errors.New("this forge has no pull requests (kind local): the branch is pushed and nothing more")

// Pick chooses among the open pull requests whose head is the branch: the one
// into base when there is one, else the first (forges list newest first).
// A pull request whose base was changed by hand is still the branch's pull
// request, and a retried turn must find it rather than open a second one.
func Pick(prs []PullRequest, base string) *PullRequest {
	if len(prs) == 0 {
		return nil
	}
	for i := range prs {
		if prs[i].Base == base {
			return &prs[i]
		}
	}
	return &prs[0]
}

// Commit status states, as every forge names them.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusError   = "error"
)

// CommitStatus is one named status of a commit, shown beside a pull request
// (a commit status on GitHub and Gitea, a pipeline-less commit status on
// GitLab).
type CommitStatus struct {
	// State is StatusPending, StatusSuccess, StatusFailure or StatusError.
	State string
	// Context names the status ("docsmith/answers"); setting it again
	// replaces the earlier one of that name.
	Context string
	// Description is one line; forges cut it (GitHub at 140 characters).
	Description string
	// TargetURL is where its details are, or "".
	TargetURL string
}

// ErrNotImplemented is returned by an adapter that cannot do a call yet.
var ErrNotImplemented = errors.New("forge: not implemented for this forge yet")
