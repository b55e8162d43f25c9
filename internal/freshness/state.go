// Package freshness keeps each domain's search index at the head of the
// branch it reads: it rebuilds an index when that branch moves (a push
// webhook from the docs repository, a poll of the remote, a push of our own
// to the base branch), one build per domain at a time, keeps serving the
// last good index when a build fails, and records what each build read and
// how it went, for the status endpoint, the CLI, the dashboard and
// /metrics.
package freshness

import (
	"context"
	"time"

	"github.com/docsmith/docsmith/internal/tenant"
)

// State is what is known of one domain's index: the commit it was built
// from, the head of its branch last seen, and the last failure.
type State struct {
	Domain string
	// Commit is the commit the served index was built from ("" before the
	// first build, or for docs read from a plain folder); IndexedAt when.
	Commit    string
	IndexedAt time.Time
	// Head is the commit the domain's branch pointed at when last looked
	// at (by a poll, a push webhook or a build); HeadSeenAt is when that
	// commit was first seen there, and HeadCheckedAt when it was last.
	Head          string
	HeadSeenAt    time.Time
	HeadCheckedAt time.Time
	// Pages and Passages are what the served index holds.
	Pages    int
	Passages int
	// Duration is how long the last build took, successful or not.
	Duration time.Duration
	// LastError says why the latest attempt to bring the index up to date
	// failed; it is cleared by a build that succeeds. LastErrorAt is when.
	LastError   string
	LastErrorAt time.Time
	// Failures counts the attempts that failed since the last success.
	Failures int
}

// Lag is how far the index is behind its branch at now: zero when it was
// built from the head last seen (or no head was seen), else the time since
// that head was first seen.
func (s State) Lag(now time.Time) time.Duration {
	if s.Head == "" || s.Head == s.Commit || s.HeadSeenAt.IsZero() {
		return 0
	}
	return max(now.Sub(s.HeadSeenAt), 0)
}

// Built is a successful build, as the store records it.
type Built struct {
	Commit   string
	Pages    int
	Passages int
	// Started is when the build began reading its branch: the commit it
	// read was the head then. At is when it finished.
	Started  time.Time
	At       time.Time
	Duration time.Duration
}

// Store keeps the domains' index states. A state a domain never had reads
// as the zero State with its Domain set.
type Store interface {
	IndexState(ctx context.Context, domain string) (State, error)
	// IndexStates returns every recorded state, by domain.
	IndexStates(ctx context.Context) ([]State, error)
	// SeeHead records that the domain's branch pointed at head at time at.
	// A head already recorded keeps the time it was first seen; a report
	// older than the last one recorded changes nothing, so that a slow
	// poll cannot undo what a later build saw.
	SeeHead(ctx context.Context, domain, head string, at time.Time) error
	// RecordBuilt records a successful build: its commit, counts and
	// duration, clears the last error and the failures, and sees its
	// commit as the head at b.Started (as SeeHead does).
	RecordBuilt(ctx context.Context, domain string, b Built) error
	// RecordFailure records a failed attempt: why, when, how long it took,
	// and one more failure. The served index and its commit stay.
	RecordFailure(ctx context.Context, domain, why string, at time.Time, took time.Duration) error
}

// Build is what one build of a domain's index read and wrote.
type Build struct {
	// Commit is the commit the docs were read at ("" for a plain folder).
	Commit   string
	Pages    int
	Passages int
}

// Indexer brings a domain's index up to date with the head of its branch.
// A failed build leaves the served index as it was.
type Indexer interface {
	Index(ctx context.Context, d tenant.Domain) (Build, error)
}

// Heads reads where a branch of a project's repository points now.
type Heads interface {
	// Head is the commit ref points at on the project's remote; "" with no
	// error for a project whose docs are not in a git repository, which
	// nothing polls.
	Head(ctx context.Context, p tenant.Project, ref string) (string, error)
}

// Tenants finds domains and their projects.
type Tenants interface {
	// ListDomains lists an organization's domains; "" lists every domain.
	ListDomains(ctx context.Context, orgID string) ([]tenant.Domain, error)
	GetProject(ctx context.Context, id string) (tenant.Project, error)
}

// RefOf is the branch a domain answers from: its own ref, or its project's
// base ref.
func RefOf(d tenant.Domain, p tenant.Project) string {
	if d.Ref != "" {
		return d.Ref
	}
	return p.BaseRef
}
