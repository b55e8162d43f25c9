// Package trafficcheck keeps a domain's answer checks that come from its
// readers rather than from the docs repository: questions readers rated up
// (a good answer cites a page the rated answer cited) and the questions of
// open content gaps (a good answer says the docs cover it, once a fix
// lands). It harvests them from recent traffic, lets the team pin, edit or
// drop each, and gives a run the ones to ask (checkrun.TrafficChecks).
package trafficcheck

import (
	"context"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/answercheck"
)

// Check is one check kept from traffic.
type Check struct {
	ID     string
	Domain string
	// HarvestKey is the question as first harvested, normalized: a domain
	// holds each once, edited or dropped, so that it is never harvested
	// twice.
	HarvestKey string
	Name       string
	Question   string
	Cite       []string
	Contains   []string
	NotCovered bool
	Answered   bool
	// Origin is answercheck.OriginUpvote or answercheck.OriginGap.
	Origin string
	// Pinned checks stay however much newer traffic comes; Edited ones
	// too. Dropped checks are never asked nor harvested again.
	Pinned  bool
	Dropped bool
	Edited  bool
	// ThreadID and Seq are the turn the question was found on; GapKey the
	// gap it was a question of, for a gap's check.
	ThreadID string
	Seq      int
	GapKey   string
	// AskedAt is when the reader asked the question.
	AskedAt   time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// AnswerCheck is the check as a run asks it.
func (c Check) AnswerCheck() answercheck.Check {
	return answercheck.Check{
		Name: c.Name, Question: c.Question, Cite: c.Cite, Contains: c.Contains,
		NotCovered: c.NotCovered, Answered: c.Answered, Origin: c.Origin, ID: c.ID,
	}
}

// Store keeps a domain's traffic checks.
type Store interface {
	// HarvestTrafficChecks adds, in one transaction, the checks whose
	// HarvestKey the domain does not hold yet (the others are left as
	// they are), then deletes, of each origin, the checks neither pinned,
	// edited nor dropped beyond the keep newest by AskedAt (then ID). It
	// returns how many it added.
	HarvestTrafficChecks(ctx context.Context, domain string, found []Check, keep int) (int, error)
	// TrafficChecks returns the domain's checks, at most limit: those not
	// dropped first, pinned before others, then the newest asked first
	// (then ID).
	TrafficChecks(ctx context.Context, domain string, limit int) ([]Check, error)
	// GetTrafficCheck returns one check of the domain, or an apperr
	// NotFound.
	GetTrafficCheck(ctx context.Context, domain, id string) (Check, error)
	// UpdateTrafficCheck writes what a team may change of a check (name,
	// question, cite, contains, not covered, answered, pinned, dropped,
	// edited, updated at), or returns an apperr NotFound.
	UpdateTrafficCheck(ctx context.Context, c Check) error
}

// TurnReader reads a domain's recent turns (analytics.Store).
type TurnReader interface {
	DomainTurns(ctx context.Context, domain string, from, to time.Time, limit int) ([]analytics.TurnRecord, error)
}

// GapGrouper groups flagged turns into content gaps as the gaps page does
// (analytics.Service).
type GapGrouper interface {
	GapsOf(turns []analytics.TurnRecord) []analytics.Gap
}
