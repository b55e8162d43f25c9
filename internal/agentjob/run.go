package agentjob

import (
	"context"
	"errors"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// RunRequest asks for a workflow run: a new job, or a follow-up on the
// workflow's active run.
type RunRequest struct {
	Trigger  string // TriggerSchedule, TriggerPush or TriggerManual
	Workflow string
	Prompt   string
	Spec     RunSpec
	Push     *PushRange
	// Key names what triggered the run (a schedule slot, a webhook
	// delivery, a manual request's Idempotency-Key): a second request with
	// the same key starts nothing and returns the first one's job. "" for
	// a manual run without a key.
	Key string
	// FollowUp queues the run as a follow-up message on the workflow's
	// active run, when it has one, instead of starting a second job.
	FollowUp bool
	// DailyCap is how many runs of the workflow may have started in the
	// last 24 hours, counting only those that did not fail; 0 means no
	// cap. It is checked before a follow-up too, though a follow-up adds
	// no run to the count.
	DailyCap int
}

// DailyWindow is the window a workflow's DailyCap counts runs in.
const DailyWindow = 24 * time.Hour

// RunStart says what a RunRequest did.
type RunStart string

const (
	RunCreated  RunStart = "created"  // a new job
	RunQueued   RunStart = "queued"   // a follow-up on the active run
	RunReplayed RunStart = "replayed" // the key was used before; nothing new
)

// StartRun starts a workflow run for project, once per key, within the
// request's daily cap. The caller decides whether the workflow may run at
// all (the automerge permission).
func (s *Service) StartRun(ctx context.Context, p tenant.Project, req RunRequest) (Job, RunStart, error) {
	if err := ValidatePrompt(req.Prompt); err != nil {
		return Job{}, "", err
	}
	switch req.Trigger {
	case TriggerSchedule, TriggerPush, TriggerManual:
	default:
		return Job{}, "", apperr.New(apperr.Invalid, "a workflow run's trigger must be schedule, push or manual, not %q", req.Trigger)
	}
	if req.Workflow == "" {
		return Job{}, "", apperr.New(apperr.Invalid, "a workflow run needs its workflow's id")
	}
	now := s.now()
	idem := s.runIdempotency(p.ID, req.Key, now)
	if job, found, err := s.replay(ctx, p.ID, idem); err != nil || found {
		if found {
			return job, RunReplayed, err
		}
		return Job{}, "", err
	}
	var stats RunStats
	if req.DailyCap > 0 || req.FollowUp {
		var err error
		if stats, err = s.store.WorkflowRuns(ctx, p.ID, req.Workflow, now.Add(-DailyWindow)); err != nil {
			return Job{}, "", err
		}
	}
	if req.DailyCap > 0 && stats.NotFailed >= req.DailyCap {
		return Job{}, "", apperr.New(apperr.RateLimited, "workflow %s has started %d runs in the last 24 hours, its daily cap (runs that failed do not count); it runs again once the oldest of them is a day old", req.Workflow, stats.NotFailed)
	}
	if req.FollowUp && stats.ActiveJobID != "" {
		job, queued, err := s.followUpRun(ctx, p.ID, stats.ActiveJobID, req, idem)
		if err != nil || queued != "" {
			return job, queued, err
		}
	}
	id := newJobID()
	draft := Job{
		ID:         id,
		ProjectID:  p.ID,
		Repository: p.RepoURL,
		Branch:     BranchName(id, req.Prompt),
		BaseRef:    p.BaseRef,
		Model:      p.Model,
		CreatedAt:  now,
		Trigger:    req.Trigger,
		Workflow:   req.Workflow,
		Run:        &req.Spec,
	}
	if req.Spec.Automerge {
		// An automerged run commits straight onto the base branch.
		draft.Branch = p.BaseRef
	}
	job, replayed, err := s.createFrom(ctx, draft, Input{Kind: InCreate, At: now, Prompt: req.Prompt, Push: req.Push}, idem)
	if err != nil {
		return Job{}, "", err
	}
	if replayed {
		return job, RunReplayed, nil
	}
	return job, RunCreated, nil
}

// followUpRun queues req on the workflow's active run, jobID. It returns
// "" (and no error) when the run settled before the follow-up could be
// queued.
func (s *Service) followUpRun(ctx context.Context, projectID, jobID string, req RunRequest, idem *Idempotency) (Job, RunStart, error) {
	for attempt := 0; ; attempt++ {
		job, err := s.store.GetJob(ctx, projectID, jobID)
		if err != nil {
			return Job{}, "", err
		}
		if job.Status != Active {
			return Job{}, "", nil
		}
		patch, events, err := Reduce(job, Input{Kind: InFollowUp, At: s.now(), Prompt: req.Prompt, Push: req.Push})
		if err != nil {
			return Job{}, "", err
		}
		updated, replayed, err := s.store.Apply(ctx, projectID, job.ID, patch, idem, events)
		if err == nil {
			if replayed {
				return updated, RunReplayed, nil
			}
			s.hub.JobChanged(job.ID)
			s.hub.TurnQueued()
			return updated, RunQueued, nil
		}
		if !errors.Is(err, ErrStale) || attempt >= 5 {
			return Job{}, "", err
		}
	}
}

// runIdempotency keys workflow runs of a project by what triggered them.
// The trigger's key is its own: the hash is of the key, so the same key
// always replays.
func (s *Service) runIdempotency(projectID, key string, now time.Time) *Idempotency {
	return s.idempotency("run:"+projectID, key, key, now)
}

// ReplayRun returns the job an earlier run request with the same key made
// or was queued on, so that a retried request can be answered before it is
// counted against a rate limit. It starts nothing.
func (s *Service) ReplayRun(ctx context.Context, projectID, key string) (Job, bool, error) {
	return s.replay(ctx, projectID, s.runIdempotency(projectID, key, s.now()))
}
