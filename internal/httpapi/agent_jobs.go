package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/tenant"
)

// jobJSON is the job object: the seed's fields with its names and types,
// then the additive fields.
type jobJSON struct {
	ID         string     `json:"id"`
	Status     string     `json:"status"`
	Source     sourceJSON `json:"source"`
	Model      string     `json:"model"`
	PRLink     *string    `json:"prLink"`
	CreatedAt  string     `json:"createdAt"`
	ArchivedAt *string    `json:"archivedAt"`

	ProjectID    string        `json:"projectId"`
	BaseRef      string        `json:"baseRef"`
	UpdatedAt    string        `json:"updatedAt"`
	CompletedAt  *string       `json:"completedAt"`
	Summary      *string       `json:"summary"`
	Error        *string       `json:"error"`
	FilesChanged []string      `json:"filesChanged"`
	PRNumber     *int          `json:"prNumber"`
	Usage        usageJSON     `json:"usage"`
	Messages     []messageJSON `json:"messages"`
	// Trigger is what started the job: api, or how a workflow run started
	// (schedule, push, manual); Workflow is the run's workflow, null for
	// jobs of the job API.
	Trigger  string  `json:"trigger"`
	Workflow *string `json:"workflow"`
}

type usageJSON struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

type sourceJSON struct {
	Repository string `json:"repository"`
	Ref        string `json:"ref"`
}

type messageJSON struct {
	Seq        int     `json:"seq"`
	Prompt     string  `json:"prompt"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts"`
	Summary    *string `json:"summary"`
	Error      *string `json:"error"`
	CreatedAt  string  `json:"createdAt"`
	StartedAt  *string `json:"startedAt"`
	FinishedAt *string `json:"finishedAt"`
}

const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func formatTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := formatTime(*t)
	return &s
}

func stringOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func renderJob(j agentjob.Job) jobJSON {
	out := jobJSON{
		ID:           j.ID,
		Status:       string(j.Status),
		Source:       sourceJSON{Repository: j.Repository, Ref: j.Branch},
		Model:        j.Model,
		PRLink:       stringOrNull(j.PRLink),
		CreatedAt:    formatTime(j.CreatedAt),
		ArchivedAt:   formatTimePtr(j.ArchivedAt),
		ProjectID:    j.ProjectID,
		BaseRef:      j.BaseRef,
		UpdatedAt:    formatTime(j.UpdatedAt),
		CompletedAt:  formatTimePtr(j.CompletedAt),
		Summary:      stringOrNull(j.Summary),
		Error:        stringOrNull(j.Error),
		FilesChanged: j.FilesChanged,
		Usage:        usageJSON{InputTokens: j.Usage.InputTokens, OutputTokens: j.Usage.OutputTokens},
		Messages:     make([]messageJSON, len(j.Messages)),
		Trigger:      j.Trigger,
		Workflow:     stringOrNull(j.Workflow),
	}
	if out.Trigger == "" {
		out.Trigger = agentjob.TriggerAPI // a job stored before triggers were recorded
	}
	if out.FilesChanged == nil {
		out.FilesChanged = []string{}
	}
	if j.PRNumber != 0 {
		n := j.PRNumber
		out.PRNumber = &n
	}
	for i, m := range j.Messages {
		out.Messages[i] = messageJSON{
			Seq:        m.Seq,
			Prompt:     m.Prompt,
			Status:     string(m.State),
			Attempts:   m.Attempts,
			Summary:    stringOrNull(m.Summary),
			Error:      stringOrNull(m.Error),
			CreatedAt:  formatTime(m.CreatedAt),
			StartedAt:  formatTimePtr(m.StartedAt),
			FinishedAt: formatTimePtr(m.FinishedAt),
		}
	}
	return out
}

func idempotencyKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	return key, agentjob.ValidateIdempotencyKey(key)
}

// retryToken names a request for the rate limits by its Idempotency-Key, so
// retries that arrive before the first attempt is stored (and so miss the
// replay) are counted once; without a key every request counts.
func retryToken(action, scope, key string) string {
	if key == "" {
		return ""
	}
	return action + " " + scope + " " + key
}

// agentRule is the per-project limit on creates and messages.
func (s *Server) agentRule(p tenant.Project) ratelimit.Rule {
	return ratelimit.Rule{Name: "agent requests per project", Key: "agent:project:" + p.ID, Limit: s.Limits.AgentPerProjectHour, Window: time.Hour}
}

func (s *Server) createJob(w http.ResponseWriter, r *http.Request) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	prompt, err := decodePrompt(w, r, s.MaxBodyBytes)
	if err != nil {
		return err
	}
	if err := agentjob.ValidatePrompt(prompt); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	// A retry of an earlier create is answered without being counted; the
	// limit is checked in the transaction that writes the job when the
	// job store keeps the limits.
	job, _, d, err := s.Jobs.CreateLimited(r.Context(), project, prompt, key, s.Limiter, retryToken("create", project.ID, key), s.agentRule(project))
	if err != nil {
		return err
	}
	if err := limited(w, d); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, renderJob(job))
	return nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	job, err := s.Jobs.Get(r.Context(), project.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderJob(job))
	return nil
}

func (s *Server) messageJob(w http.ResponseWriter, r *http.Request) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	jobID := r.PathValue("id")
	// An unknown job is 404 before the body is even read.
	if _, err := s.Jobs.Get(r.Context(), project.ID, jobID); err != nil {
		return err
	}
	prompt, err := decodePrompt(w, r, s.MaxBodyBytes)
	if err != nil {
		return err
	}
	if err := agentjob.ValidatePrompt(prompt); err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	job, _, d, err := s.Jobs.MessageLimited(r.Context(), project.ID, jobID, prompt, key, s.Limiter, retryToken("message", project.ID+"/"+jobID, key), s.agentRule(project))
	if err != nil {
		return err
	}
	if err := limited(w, d); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderJob(job))
	return nil
}

type jobListJSON struct {
	Jobs       []jobJSON `json:"jobs"`
	NextCursor *string   `json:"nextCursor"`
}

const (
	defaultPageSize = 20
	maxPageSize     = 100
)

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	q, err := parseListQuery(r)
	if err != nil {
		return err
	}
	// One more than asked for tells whether another page exists.
	q.Limit++
	jobs, err := s.Jobs.List(r.Context(), project.ID, q)
	if err != nil {
		return err
	}
	out := jobListJSON{Jobs: []jobJSON{}}
	if len(jobs) == q.Limit {
		jobs = jobs[:q.Limit-1]
		last := jobs[len(jobs)-1]
		c := encodeCursor(agentjob.Cursor{CreatedAt: last.CreatedAt, ID: last.ID})
		out.NextCursor = &c
	}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, renderJob(j))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func parseListQuery(r *http.Request) (agentjob.ListQuery, error) {
	v := r.URL.Query()
	q := agentjob.ListQuery{Limit: defaultPageSize}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			return q, apperr.New(apperr.Invalid, "limit must be a whole number from 1 to %d", maxPageSize)
		}
		q.Limit = n
	}
	if s := v.Get("status"); s != "" {
		status, err := agentjob.ParseStatus(s)
		if err != nil {
			return q, err
		}
		q.Status = status
	}
	if s := v.Get("cursor"); s != "" {
		c, err := decodeCursor(s)
		if err != nil {
			return q, err
		}
		q.After = &c
	}
	return q, nil
}

func encodeCursor(c agentjob.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + ":" + c.ID))
}

func decodeCursor(s string) (agentjob.Cursor, error) {
	bad := apperr.New(apperr.Invalid, "cursor is not valid; pass the nextCursor of the previous page as it was")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return agentjob.Cursor{}, bad
	}
	at, id, ok := strings.Cut(string(raw), ":")
	us, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return agentjob.Cursor{}, bad
	}
	return agentjob.Cursor{CreatedAt: time.UnixMicro(us).UTC(), ID: id}, nil
}

func (s *Server) archiveJob(w http.ResponseWriter, r *http.Request) error {
	return s.changeJob(w, r, s.Jobs.Archive)
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) error {
	return s.changeJob(w, r, s.Jobs.Cancel)
}

// changeJob applies a state change (archive, cancel) to the path's job.
func (s *Server) changeJob(w http.ResponseWriter, r *http.Request, change func(ctx context.Context, projectID, jobID string) (agentjob.Job, error)) error {
	project, err := s.adminProject(r)
	if err != nil {
		return err
	}
	job, err := change(r.Context(), project.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderJob(job))
	return nil
}
