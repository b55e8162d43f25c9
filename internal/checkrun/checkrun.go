// Package checkrun runs a domain's answer checks: it reads the checks (the
// docs repository's .docsmith/checks.yaml at the ref checked, and the
// checks kept from the domain's traffic), builds a temporary index of the
// ref's docs (the served index is not touched), answers every check with
// the domain's assistant on it and on the served index, and reports each
// check's result and how it moved (see answercheck).
package checkrun

import (
	"context"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Triggers of a run: what asked for it.
const (
	TriggerCLI         = "cli"
	TriggerAPI         = "api"
	TriggerPullRequest = "pull_request"
	TriggerSchedule    = "schedule"
)

// Request is one run to make.
type Request struct {
	Domain tenant.Domain
	// Ref is the branch, or the full ref (refs/pull/7/head), whose docs
	// the candidate index is built from; "" runs the checks on the served
	// index alone (a schedule's run).
	Ref     string
	Trigger string
}

// Run is a stored run.
type Run struct {
	ID      string
	Domain  string
	Trigger string
	// PR is the pull request checked (number and link), for a
	// pull_request run.
	PRNumber  int
	PRLink    string
	Report    answercheck.Report
	CreatedAt time.Time
}

// Store keeps runs.
type Store interface {
	// SaveRun stores a run and returns it with its ID and CreatedAt set.
	SaveRun(ctx context.Context, r Run) (Run, error)
	// GetRun returns one run of the domain, or an apperr NotFound.
	GetRun(ctx context.Context, domain, id string) (Run, error)
	// ListRuns returns the domain's newest runs first, at most limit; a
	// trigger other than "" keeps that trigger's runs alone.
	ListRuns(ctx context.Context, domain, trigger string, limit int) ([]Run, error)
}

// TrafficChecks gives the checks kept from a domain's traffic that a run
// asks (pinned or not, never those the team dropped).
type TrafficChecks interface {
	ActiveChecks(ctx context.Context, domain string) ([]answercheck.Check, error)
}
