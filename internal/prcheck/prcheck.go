// Package prcheck checks the docs of pull requests with the readers'
// questions. A pull request's new head (announced by a forge webhook, or
// pushed by docsmith's own agent) becomes one row of a durable queue, once
// per head whatever the deliveries; workers in every serving process claim
// rows under a lease, run the answer checks of each domain that reads the
// pull request's base branch on the pull request's ref (checkrun), store
// the runs, and report them on the pull request: one commit status,
// docsmith/answers, and one comment kept up to date in place.
package prcheck

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/forge"
	"github.com/docsmith/docsmith/internal/forge/forgeapi"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/tenant"
)

// StatusContext names the commit status a check sets.
const StatusContext = "docsmith/answers"

// State is where a queued check is.
type State string

const (
	StateQueued  State = "queued"
	StateRunning State = "running"
	StateDone    State = "done"
	StateFailed  State = "failed"
)

// Where a check was asked for.
const (
	SourceWebhook = "webhook"
	SourceAgent   = "agent"
)

// Request is a pull request head to check.
type Request struct {
	Number  int
	HeadSHA string
	// HeadRef is the head's branch as the forge names it (in the fork,
	// for a pull request from one); shown, never fetched.
	HeadRef string
	// BaseRef is the branch the pull request merges into: the domains
	// that read it are checked.
	BaseRef string
	// PullRef is what the checks read, always from the project's own
	// repository: refs/pull/N/head, refs/merge-requests/N/head, or the
	// agent's own branch.
	PullRef string
	// Fork is true for a pull request whose head is in another
	// repository; it is checked, and given nothing else.
	Fork bool
	// Link is the pull request's web page.
	Link   string
	Source string
}

// Check is one queued pull request head.
type Check struct {
	Request
	ID        string
	ProjectID string
	State     State
	// Attempts counts the claims; Worker and LeaseUntil say who holds a
	// running check, and Attempts fences that holder's writes.
	Attempts   int
	Worker     string
	LeaseUntil time.Time
	RunAfter   time.Time
	// Runs are the runs stored for this head, one per domain, kept so that
	// a check retried for the forge's sake does not ask again.
	Runs []RunRef
	// Error says why a failed check failed, or what the last attempt met.
	Error     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RunRef names a stored run.
type RunRef struct {
	Domain string `json:"domain"`
	ID     string `json:"id"`
}

// Store keeps the queue.
type Store interface {
	// EnqueuePRCheck stores c, queued, unless the project already has a
	// check of the same pull request and head commit; either way it
	// returns the stored check and whether it is new.
	EnqueuePRCheck(ctx context.Context, c Check) (Check, bool, error)
	// ClaimPRCheck leases the oldest check that is due (queued with its
	// RunAfter past, or running with its lease expired) to worker until
	// leaseUntil, counting an attempt; false when none is due.
	ClaimPRCheck(ctx context.Context, worker string, now, leaseUntil time.Time) (Check, bool, error)
	// RenewPRCheck extends a claimed check's lease and records its runs
	// (nil leaves them). A claim that lost its lease is an
	// agentjob-style Conflict: ErrLeaseLost.
	RenewPRCheck(ctx context.Context, c Check, leaseUntil time.Time, runs []RunRef) error
	// FinishPRCheck ends a claim: done, failed (errText says why), or
	// queued again to run after runAfter (errText says what it met).
	// Fenced as RenewPRCheck.
	FinishPRCheck(ctx context.Context, c Check, state State, errText string, runAfter time.Time) error
	// PRChecks returns the project's checks of pull request number, newest
	// first.
	PRChecks(ctx context.Context, projectID string, number int) ([]Check, error)
}

// ErrLeaseLost is returned for a write of a claim another worker has
// taken over.
var ErrLeaseLost = errors.New("the pull request check was taken over by another worker")

// Tenants finds projects and their domains.
type Tenants interface {
	GetProject(ctx context.Context, id string) (tenant.Project, error)
	ListDomains(ctx context.Context, orgID string) ([]tenant.Domain, error)
}

// Runner runs a domain's checks (checkrun.Runner).
type Runner interface {
	Run(ctx context.Context, req checkrun.Request) (answercheck.Report, error)
}

// ForgeOf returns the forge of a project, with its credentials.
type ForgeOf func(p tenant.Project) (forge.Forge, error)

// Enqueued is what asking for a check did.
type Enqueued struct {
	Check Check
	// New is false when this head was queued before: nothing changed.
	New bool
	// Domains are the domains whose checks run.
	Domains []string
	// Ignored says why nothing was queued (no domain reads the base
	// branch), or "".
	Ignored string
}

// Queue takes pull request heads to check.
type Queue struct {
	store   Store
	tenants Tenants
	forgeOf ForgeOf
	log     *slog.Logger
	now     func() time.Time
}

// NewQueue returns a Queue. forgeOf may be nil: no pending status is set.
func NewQueue(store Store, tenants Tenants, forgeOf ForgeOf, log *slog.Logger, now func() time.Time) *Queue {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Queue{store: store, tenants: tenants, forgeOf: forgeOf, log: log, now: now}
}

// PullRef is the ref of pull request number in the base repository, where
// the forge keeps its head: refs/merge-requests/N/head on GitLab,
// refs/pull/N/head on GitHub and Gitea (and Forgejo).
func PullRef(forgeKind string, number int) string {
	if forgeKind == forge.KindGitLab {
		return "refs/merge-requests/" + strconv.Itoa(number) + "/head"
	}
	return "refs/pull/" + strconv.Itoa(number) + "/head"
}

// pendingTimeout bounds the pending status set when a head is queued: it
// is sent while a webhook waits for its answer.
const pendingTimeout = 5 * time.Second

// Enqueue queues the head of a pull request of project p, once: the same
// head queued again (a redelivered webhook, a second turn's hook) changes
// nothing. A new head gets a pending commit status at once, as far as the
// forge answers within a few seconds; the worker sets the final one.
func (q *Queue) Enqueue(ctx context.Context, p tenant.Project, req Request) (Enqueued, error) {
	if err := validate(req); err != nil {
		return Enqueued{}, err
	}
	domains, err := domainsReading(ctx, q.tenants, p, req.BaseRef)
	if err != nil {
		return Enqueued{}, err
	}
	if len(domains) == 0 {
		return Enqueued{Ignored: fmt.Sprintf("no domain of project %s reads branch %s", p.ID, req.BaseRef)}, nil
	}
	now := q.now()
	c, created, err := q.store.EnqueuePRCheck(ctx, Check{
		Request: req, ID: uuid.Must(uuid.NewV7()).String(), ProjectID: p.ID, State: StateQueued,
		RunAfter: now, CreatedAt: now, UpdatedAt: now,
	})
	if err != nil {
		return Enqueued{}, fmt.Errorf("queue the check of pull request #%d: %w", req.Number, err)
	}
	out := Enqueued{Check: c, New: created}
	for _, d := range domains {
		out.Domains = append(out.Domains, d.ID)
	}
	if created {
		q.log.Info("pull request check queued", "project", p.ID, "pr", req.Number, "head", req.HeadSHA, "source", req.Source, "fork", req.Fork)
		q.setPending(ctx, p, req)
	}
	return out, nil
}

func (q *Queue) setPending(ctx context.Context, p tenant.Project, req Request) {
	if q.forgeOf == nil || p.ForgeKind == tenant.ForgeLocal {
		return
	}
	f, err := q.forgeOf(p)
	if err != nil {
		q.log.Warn("pull request check: no forge for the pending status", "project", p.ID, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pendingTimeout)
	defer cancel()
	st := forge.CommitStatus{State: forgeapi.StatusPending, Context: StatusContext, Description: "Asking the readers' questions of these docs"}
	if err := f.SetStatus(ctx, req.HeadSHA, st); err != nil {
		// The worker sets the final status; a missing pending one is only
		// a missing hint.
		q.log.Warn("pull request check: pending status not set", "project", p.ID, "pr", req.Number, "err", err)
	}
}

// validate checks a request before it is stored: every field is named by
// a forge or by the agent, and goes into refs and links.
func validate(req Request) error {
	switch {
	case req.Number <= 0:
		return fmt.Errorf("pull request number %d is not positive", req.Number)
	case !isCommitID(req.HeadSHA):
		return fmt.Errorf("head %q is not a commit id", req.HeadSHA)
	case req.BaseRef == "" || strings.HasPrefix(req.BaseRef, "-"):
		return fmt.Errorf("base branch %q is not a branch", req.BaseRef)
	case req.PullRef == "" || strings.HasPrefix(req.PullRef, "-") || strings.ContainsAny(req.PullRef, " \t\n:~^?*[\\"):
		return fmt.Errorf("pull ref %q is not a ref", req.PullRef)
	}
	return nil
}

func isCommitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// domainsReading are the domains of project p that read branch: a pull
// request into it changes their docs.
func domainsReading(ctx context.Context, tenants Tenants, p tenant.Project, branch string) ([]tenant.Domain, error) {
	all, err := tenants.ListDomains(ctx, p.OrgID)
	if err != nil {
		return nil, fmt.Errorf("list the domains of %s: %w", p.OrgID, err)
	}
	var out []tenant.Domain
	for _, d := range all {
		if d.ProjectID == p.ID && freshness.RefOf(d, p) == branch {
			out = append(out, d)
		}
	}
	return out, nil
}
