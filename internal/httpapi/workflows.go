package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// Workflows is what the workflow endpoints and the forge webhook need of
// workflowrun.Service.
type Workflows interface {
	// List returns the project's workflows as last synced.
	List(ctx context.Context, p tenant.Project) (workflowrun.Listing, error)
	// Sync reads the project's workflows at its base ref now.
	Sync(ctx context.Context, p tenant.Project) (workflowrun.Listing, error)
	// ReplayManual returns, as it is now, the job that an earlier RunManual
	// of the workflow with the same Idempotency-Key started or was queued
	// on, and starts nothing; false when key is "" or unused. It lets a
	// retry through before the rate limit, which must not count it.
	ReplayManual(ctx context.Context, p tenant.Project, workflowID, key string) (agentjob.Job, bool, error)
	// RunManual runs a workflow by hand; errors are apperr errors.
	RunManual(ctx context.Context, p tenant.Project, workflowID, key string) (agentjob.Job, agentjob.RunStart, error)
	// Webhook verifies and handles a forge webhook; a delivery that fails
	// verification wraps workflowrun.ErrBadSignature.
	Webhook(ctx context.Context, p tenant.Project, h http.Header, body io.Reader) (workflowrun.WebhookResult, error)
}

// workflows returns the workflow service, or why this server has none.
func (s *Server) workflows() (Workflows, error) {
	if s.Workflows == nil {
		return nil, apperr.New(apperr.Unavailable, "workflows are not available on this server")
	}
	return s.Workflows, nil
}

// workflowListJSON is a project's workflows: how they were last read from
// its base ref, each workflow with its schedule state, and the files left
// out with what is wrong in them.
type workflowListJSON struct {
	BaseSHA   *string               `json:"baseSha"`
	SyncedAt  *string               `json:"syncedAt"`
	Workflows []workflowJSON        `json:"workflows"`
	Problems  []workflowProblemJSON `json:"problems"`
}

type workflowJSON struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Path        string              `json:"path"`
	Overrides   *string             `json:"overrides"`
	Trigger     workflowTriggerJSON `json:"trigger"`
	Context     []string            `json:"context"`
	Automerge   bool                `json:"automerge"`
	Instruction string              `json:"instruction"`
	FirstSeen   string              `json:"firstSeen"`
	LastRunSlot *string             `json:"lastRunSlot"`
	NextRun     *string             `json:"nextRun"`
	Refused     *string             `json:"refused"`
}

// workflowTriggerJSON holds exactly one of its fields: a workflow runs on
// a cron schedule or on pushes, never both.
type workflowTriggerJSON struct {
	Cron string            `json:"cron,omitempty"`
	Push []pushTriggerJSON `json:"push,omitempty"`
}

type pushTriggerJSON struct {
	Repo string `json:"repo"`
	// Branch is null for the repository's default branch.
	Branch *string `json:"branch"`
}

type workflowProblemJSON struct {
	File    string  `json:"file"`
	Line    *int    `json:"line"` // null: the problem is the whole file
	Key     *string `json:"key"`
	Message string  `json:"message"`
}

func timeOrNull(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func renderWorkflows(l workflowrun.Listing) workflowListJSON {
	out := workflowListJSON{
		BaseSHA:   stringOrNull(l.BaseSHA),
		SyncedAt:  timeOrNull(l.SyncedAt),
		Workflows: make([]workflowJSON, len(l.Workflows)),
		Problems:  make([]workflowProblemJSON, len(l.Problems)),
	}
	for i, e := range l.Workflows {
		wf := workflowJSON{
			ID:          e.ID,
			Name:        e.Name,
			Path:        e.Path,
			Overrides:   stringOrNull(e.Overrides),
			Trigger:     workflowTriggerJSON{Cron: e.Cron},
			Context:     e.Context,
			Automerge:   e.Automerge,
			Instruction: e.Instruction,
			FirstSeen:   formatTime(e.FirstSeen),
			LastRunSlot: timeOrNull(e.LastSlot),
			NextRun:     formatTimePtr(e.NextRun),
			Refused:     stringOrNull(e.Refused),
		}
		if wf.Context == nil {
			wf.Context = []string{}
		}
		for _, p := range e.Push {
			wf.Trigger.Push = append(wf.Trigger.Push, pushTriggerJSON{Repo: p.Repo, Branch: stringOrNull(p.Branch)})
		}
		out.Workflows[i] = wf
	}
	for i, p := range l.Problems {
		pj := workflowProblemJSON{File: p.File, Key: stringOrNull(p.Key), Message: p.Msg}
		if p.Line > 0 {
			line := p.Line
			pj.Line = &line
		}
		out.Problems[i] = pj
	}
	return out
}

func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	return s.answerWorkflows(w, r, Workflows.List)
}

func (s *Server) syncWorkflows(w http.ResponseWriter, r *http.Request) error {
	return s.answerWorkflows(w, r, Workflows.Sync)
}

// answerWorkflows answers with the path's project's workflows as read
// reads them (as last synced, or synced now).
func (s *Server) answerWorkflows(w http.ResponseWriter, r *http.Request, read func(Workflows, context.Context, tenant.Project) (workflowrun.Listing, error)) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	wf, err := s.workflows()
	if err != nil {
		return err
	}
	l, err := read(wf, r.Context(), project)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderWorkflows(l))
	return nil
}

// runWorkflow runs the path's workflow by hand. It is counted against the
// project's agent limit exactly as a job create is: a retry with the same
// Idempotency-Key is answered before the limit, and an unknown workflow is
// refused before it.
func (s *Server) runWorkflow(w http.ResponseWriter, r *http.Request) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	wf, err := s.workflows()
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if job, replayed, err := wf.ReplayManual(r.Context(), project, name, key); err != nil || replayed {
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, renderJob(job))
		return nil
	}
	if err := knownWorkflow(r.Context(), wf, project, name); err != nil {
		return err
	}
	if err := s.limitOnce(w, r, retryToken("run", project.ID+"/"+name, key), s.agentRule(project)); err != nil {
		return err
	}
	job, start, err := wf.RunManual(r.Context(), project, name, key)
	if err != nil {
		return err
	}
	status := http.StatusOK // queued on the workflow's active run, or a replay
	if start == agentjob.RunCreated {
		status = http.StatusCreated
	}
	writeJSON(w, status, renderJob(job))
	return nil
}

// knownWorkflow is a NotFound error unless the project has the workflow.
func knownWorkflow(ctx context.Context, wf Workflows, p tenant.Project, id string) error {
	l, err := wf.List(ctx, p)
	if err != nil {
		return err
	}
	for _, e := range l.Workflows {
		if e.ID == id {
			return nil
		}
	}
	return apperr.New(apperr.NotFound, "workflow %q not found in project %q; GET /v2/agent/%s/workflows lists its workflows, and POST /v2/agent/%s/workflows/sync reads them from the repository again", id, p.ID, p.ID, p.ID)
}

// webhookJSON is what a webhook delivery did.
type webhookJSON struct {
	Forge    string            `json:"forge"`
	Delivery string            `json:"delivery"`
	Replayed bool              `json:"replayed"`
	Ignored  *string           `json:"ignored"`
	Synced   bool              `json:"synced"`
	Runs     []workflowRunJSON `json:"runs"`
	// Reindexed are the domains whose index the push rebuilds, in the
	// background.
	Reindexed []string `json:"reindexed"`
	// PullRequest is the pull request head a pull request event queued
	// for its answer checks; null for other deliveries.
	PullRequest *webhookPullRequestJSON `json:"pullRequest"`
}

type webhookPullRequestJSON struct {
	Number  int      `json:"number"`
	Head    string   `json:"head"`
	Fork    bool     `json:"fork"`
	Queued  bool     `json:"queued"`
	Domains []string `json:"domains"`
}

type workflowRunJSON struct {
	Workflow string  `json:"workflow"`
	JobID    *string `json:"jobId"`
	Start    *string `json:"start"`
	Refused  *string `json:"refused"`
}

func renderWebhook(res workflowrun.WebhookResult) webhookJSON {
	out := webhookJSON{
		Forge:     res.Forge,
		Delivery:  res.Delivery,
		Replayed:  res.Replayed,
		Ignored:   stringOrNull(res.Ignored),
		Synced:    res.Synced,
		Runs:      make([]workflowRunJSON, len(res.Runs)),
		Reindexed: res.Reindexed,
	}
	if out.Reindexed == nil {
		out.Reindexed = []string{}
	}
	if pr := res.PullRequest; pr != nil {
		out.PullRequest = &webhookPullRequestJSON{Number: pr.Number, Head: pr.Head, Fork: pr.Fork, Queued: pr.Queued, Domains: pr.Domains}
		if out.PullRequest.Domains == nil {
			out.PullRequest.Domains = []string{}
		}
	}
	for i, run := range res.Runs {
		out.Runs[i] = workflowRunJSON{
			Workflow: run.Workflow,
			JobID:    stringOrNull(run.JobID),
			Start:    stringOrNull(string(run.Start)),
			Refused:  stringOrNull(run.Refused),
		}
	}
	return out
}

// webhookReadTimeout bounds how long a webhook's body may take to arrive:
// a forge sends its few megabytes at once, and a sender that trickles
// holds one of the few webhook slots for no more than this.
const webhookReadTimeout = 10 * time.Second

// errWebhookRefused is the one answer to every webhook refused before it
// was verified, whatever the reason (no such project, no secret set, a
// wrong or missing signature, headers no forge sends): its sender may not
// be the forge, so it learns neither which project ids exist nor how the
// project is set up. The log says why, under the request id.
var errWebhookRefused = apperr.New(apperr.Unauthorized, "webhook refused: it is not signed with the webhook secret of a project with this id; the server log says why under this response's X-Request-Id")

// webhook takes a forge's push webhook for the path's project. It has no
// bearer key: Webhook authenticates the delivery by its signature (or
// GitLab's token) against the project's webhook secret, reading the body
// once as it does. Until then the sender is anonymous: a few deliveries
// are handled at once, a body too large is refused by its announced
// length before anything else, and every refusal looks the same.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request) error {
	wf, err := s.workflows()
	if err != nil {
		return err
	}
	if r.ContentLength > workflow.MaxWebhookBytes {
		return apperr.New(apperr.TooLarge, "the webhook body is larger than the limit of %d bytes", workflow.MaxWebhookBytes)
	}
	select {
	case s.webhookSlots <- struct{}{}:
		defer func() { <-s.webhookSlots }()
	default:
		w.Header().Set("Retry-After", "5")
		return apperr.New(apperr.Unavailable, "this server is handling as many webhooks as it takes at once; retry in a few seconds")
	}
	// Not supported only under a test recorder; the server's own read
	// timeout still holds then.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(webhookReadTimeout))
	id := r.PathValue("projectId")
	project, err := s.Tenants.Store().GetProject(r.Context(), id)
	if apperr.Is(err, apperr.NotFound) {
		return s.refuseWebhook(r, id, err)
	}
	if err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, workflow.MaxWebhookBytes)
	res, err := wf.Webhook(r.Context(), project, r.Header, body)
	if err != nil {
		return s.webhookError(r, project, err)
	}
	writeJSON(w, http.StatusOK, renderWebhook(res))
	return nil
}

// refuseWebhook logs why a delivery was refused before it was verified,
// and returns the one answer its sender gets.
func (s *Server) refuseWebhook(r *http.Request, projectID string, why error) error {
	// What the sender sent is named, never the values: a signature or
	// token is as good as the secret for a replay.
	s.Log.WarnContext(r.Context(), "webhook refused", "request_id", requestID(r.Context()),
		"project", projectID, "forge_headers", forgeHeaders(r.Header), "remote", s.clientIP(r).String(), "reason", why.Error())
	return errWebhookRefused
}

// webhookError turns the service's error into the answer: a delivery
// refused before it was verified gets the one refusal, and each error of
// a verified delivery its status, even one the service left uncoded.
func (s *Server) webhookError(r *http.Request, p tenant.Project, err error) error {
	if errors.Is(err, workflowrun.ErrBadSignature) || errors.Is(err, workflow.ErrUnverified) || errors.Is(err, workflow.ErrSignature) {
		return s.refuseWebhook(r, p.ID, err)
	}
	if apperr.CodeOf(err) != apperr.Internal {
		return err
	}
	switch {
	case errors.Is(err, workflow.ErrTooLarge):
		return apperr.Wrap(err, apperr.TooLarge, "%s", err.Error())
	case errors.Is(err, workflow.ErrPayload), errors.Is(err, workflow.ErrPullRequestPayload):
		return apperr.Wrap(err, apperr.Invalid, "%s", err.Error())
	}
	return err
}

// webhookHeaders are the forge headers a refused delivery's log names
// when present.
var webhookHeaders = []string{
	"X-GitHub-Event", "X-GitHub-Delivery", "X-Hub-Signature-256", "X-Hub-Signature",
	"X-Gitlab-Event", "X-Gitlab-Event-UUID", "X-Gitlab-Token",
	"X-Gitea-Event", "X-Gitea-Delivery", "X-Gitea-Signature",
	"X-Forgejo-Event", "X-Forgejo-Delivery", "X-Forgejo-Signature",
}

// forgeHeaders names the forge headers present in h, without their values.
func forgeHeaders(h http.Header) string {
	var present []string
	for _, name := range webhookHeaders {
		if _, ok := h[http.CanonicalHeaderKey(name)]; ok {
			present = append(present, name)
		}
	}
	return strings.Join(present, ",")
}
