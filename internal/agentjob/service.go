package agentjob

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// MaxPromptBytes is the largest prompt accepted (SPEC §3).
const MaxPromptBytes = 32 << 10

// IdempotencyWindow is how long an Idempotency-Key is remembered.
const IdempotencyWindow = 24 * time.Hour

// Service is the job API's logic: it validates, consults the state machine,
// and has the store apply the result atomically.
type Service struct {
	store Store
	hub   *Hub
	now   func() time.Time
}

// NewService returns a Service.
func NewService(store Store, hub *Hub, now func() time.Time) *Service {
	return &Service{store: store, hub: hub, now: now}
}

// ValidatePrompt checks a prompt of a create or message request.
func ValidatePrompt(prompt string) error {
	if strings.TrimFunc(prompt, unicode.IsSpace) == "" {
		return apperr.New(apperr.Invalid, "prompt must contain at least one non-space character")
	}
	if len(prompt) > MaxPromptBytes {
		return apperr.New(apperr.Invalid, "prompt is %d bytes; the limit is %d bytes (32 KiB)", len(prompt), MaxPromptBytes)
	}
	if !utf8.ValidString(prompt) {
		return apperr.New(apperr.Invalid, "prompt must be valid UTF-8")
	}
	return nil
}

// Create starts a job for project with its first instruction. The second
// result is true when idempotencyKey replays an earlier request.
func (s *Service) Create(ctx context.Context, p tenant.Project, prompt, idempotencyKey string) (Job, bool, error) {
	return s.create(ctx, p, prompt, idempotencyKey, nil)
}

// create is Create, with the store making check in the transaction that
// writes the job when check is not nil.
func (s *Service) create(ctx context.Context, p tenant.Project, prompt, idempotencyKey string, check *checked) (Job, bool, error) {
	if err := ValidatePrompt(prompt); err != nil {
		return Job{}, false, err
	}
	now := s.now()
	id := newJobID()
	draft := Job{
		ID:         id,
		ProjectID:  p.ID,
		Repository: p.RepoURL,
		Branch:     BranchName(id, prompt),
		BaseRef:    p.BaseRef,
		Model:      p.Model,
		CreatedAt:  now,
		Trigger:    TriggerAPI,
	}
	idem := s.idempotency(createScope(p.ID), idempotencyKey, prompt, now)
	return s.createWith(ctx, draft, Input{Kind: InCreate, At: now, Prompt: prompt}, idem, check)
}

// createFrom has the reducer decide a new job from draft and the store
// write it with its first turn.
func (s *Service) createFrom(ctx context.Context, draft Job, in Input, idem *Idempotency) (Job, bool, error) {
	return s.createWith(ctx, draft, in, idem, nil)
}

// createWith is createFrom, with the store making check in the transaction
// that writes the job when check is not nil.
func (s *Service) createWith(ctx context.Context, draft Job, in Input, idem *Idempotency, check *checked) (Job, bool, error) {
	patch, events, err := Reduce(draft, in)
	if err != nil {
		return Job{}, false, err
	}
	job := patch.Job
	for _, tc := range patch.Turns {
		job.Messages = append(job.Messages, tc.Message)
	}
	var replayed bool
	if check != nil {
		job, replayed, err = check.store.CreateJobChecked(ctx, job, idem, events, check.check)
	} else {
		job, replayed, err = s.store.CreateJob(ctx, job, idem, events)
	}
	if err != nil {
		return Job{}, false, err
	}
	if !replayed {
		s.hub.TurnQueued()
	}
	return job, replayed, nil
}

// Get returns a job of the project.
func (s *Service) Get(ctx context.Context, projectID, id string) (Job, error) {
	return s.store.GetJob(ctx, projectID, id)
}

// List returns a page of a project's jobs, newest first.
func (s *Service) List(ctx context.Context, projectID string, q ListQuery) ([]Job, error) {
	return s.store.ListJobs(ctx, projectID, q)
}

// Message adds a follow-up instruction. It runs after any turn already
// queued or running for the job, in the order received.
func (s *Service) Message(ctx context.Context, projectID, jobID, prompt, idempotencyKey string) (Job, bool, error) {
	return s.message(ctx, projectID, jobID, prompt, idempotencyKey, nil)
}

// message is Message, with the store making check in the transaction that
// writes the message when check is not nil.
func (s *Service) message(ctx context.Context, projectID, jobID, prompt, idempotencyKey string, check *checked) (Job, bool, error) {
	if err := ValidatePrompt(prompt); err != nil {
		return Job{}, false, err
	}
	idem := s.idempotency(messageScope(projectID, jobID), idempotencyKey, prompt, s.now())
	// A retry is answered with the job even when the job has moved on to
	// refuse follow-ups since; the store looks again in its transaction.
	if job, found, err := s.replay(ctx, projectID, idem); err != nil || found {
		return job, found, err
	}
	// The job may change between reading it and applying the change; the
	// store refuses a stale version, and we decide again.
	for attempt := 0; ; attempt++ {
		job, err := s.store.GetJob(ctx, projectID, jobID)
		if err != nil {
			return Job{}, false, err
		}
		patch, events, err := Reduce(job, Input{Kind: InFollowUp, At: s.now(), Prompt: prompt})
		if err != nil {
			return Job{}, false, err
		}
		var updated Job
		var replayed bool
		if check != nil {
			updated, replayed, err = check.store.ApplyChecked(ctx, projectID, jobID, patch, idem, events, check.check)
		} else {
			updated, replayed, err = s.store.Apply(ctx, projectID, jobID, patch, idem, events)
		}
		if err == nil {
			if !replayed {
				s.hub.JobChanged(jobID)
				s.hub.TurnQueued()
			}
			return updated, replayed, nil
		}
		if !errors.Is(err, ErrStale) || attempt >= 5 {
			return Job{}, false, err
		}
	}
}

// Archive archives a job. A running turn is stopped; the pull request is
// left as it is. Archiving an archived job returns it unchanged.
func (s *Service) Archive(ctx context.Context, projectID, jobID string) (Job, error) {
	return s.change(ctx, projectID, jobID, InArchive, "")
}

// Cancel stops an active job's running turn and drops its queued ones; the
// job fails with an error that says it was canceled.
func (s *Service) Cancel(ctx context.Context, projectID, jobID string) (Job, error) {
	return s.change(ctx, projectID, jobID, InCancel, "canceled by request")
}

func (s *Service) change(ctx context.Context, projectID, jobID string, kind InputKind, reason string) (Job, error) {
	for attempt := 0; ; attempt++ {
		job, err := s.store.GetJob(ctx, projectID, jobID)
		if err != nil {
			return Job{}, err
		}
		patch, events, err := Reduce(job, Input{Kind: kind, At: s.now(), Reason: reason})
		if err != nil {
			return Job{}, err
		}
		if patch.Noop {
			return job, nil
		}
		updated, _, err := s.store.Apply(ctx, projectID, jobID, patch, nil, events)
		if err == nil {
			if job.Status == Active {
				s.hub.RequestCancel(jobID)
			}
			s.hub.JobChanged(jobID)
			return updated, nil
		}
		if !errors.Is(err, ErrStale) || attempt >= 5 {
			return Job{}, err
		}
	}
}

// Events returns a job's events after afterID.
func (s *Service) Events(ctx context.Context, jobID string, afterID int64, limit int) ([]JobEvent, error) {
	return s.store.ListEvents(ctx, jobID, afterID, limit)
}

// Subscribe returns a channel that receives a value when the job may have
// new events, and a function to stop.
func (s *Service) Subscribe(jobID string) (<-chan struct{}, func()) {
	return s.hub.Subscribe(jobID)
}

// ReplayCreate returns the job an earlier create with the same
// Idempotency-Key made, so a retry can be answered before it is counted
// against a rate limit.
func (s *Service) ReplayCreate(ctx context.Context, projectID, prompt, idempotencyKey string) (Job, bool, error) {
	return s.replay(ctx, projectID, s.idempotency(createScope(projectID), idempotencyKey, prompt, s.now()))
}

// ReplayMessage is ReplayCreate for a follow-up message.
func (s *Service) ReplayMessage(ctx context.Context, projectID, jobID, prompt, idempotencyKey string) (Job, bool, error) {
	return s.replay(ctx, projectID, s.idempotency(messageScope(projectID, jobID), idempotencyKey, prompt, s.now()))
}

// replay returns the job of an earlier request with the same key, in its
// current state, even if the job has moved on since.
func (s *Service) replay(ctx context.Context, projectID string, idem *Idempotency) (Job, bool, error) {
	if idem == nil {
		return Job{}, false, nil
	}
	jobID, found, err := s.store.FindIdempotent(ctx, *idem)
	if err != nil || !found {
		return Job{}, false, err
	}
	job, err := s.store.GetJob(ctx, projectID, jobID)
	return job, err == nil, err
}

func createScope(projectID string) string { return "create:" + projectID }

func messageScope(projectID, jobID string) string { return "message:" + projectID + "/" + jobID }

func (s *Service) idempotency(scope, key, prompt string, now time.Time) *Idempotency {
	if key == "" {
		return nil
	}
	sum := sha256.Sum256([]byte(prompt))
	return &Idempotency{Scope: scope, Key: key, RequestHash: sum[:], NotBefore: now.Add(-IdempotencyWindow)}
}

// ValidateIdempotencyKey checks the header's value.
func ValidateIdempotencyKey(key string) error {
	if len(key) > 255 {
		return apperr.New(apperr.Invalid, "Idempotency-Key header is %d characters; the limit is 255", len(key))
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e {
			return apperr.New(apperr.Invalid, "Idempotency-Key header must be printable ASCII without spaces")
		}
	}
	return nil
}

// newJobID returns a job id: a version 7 UUID, which starts with the time,
// so that the jobs created together are written together at the end of the
// store's indexes rather than each at a random place.
func newJobID() string { return uuid.Must(uuid.NewV7()).String() }

// ShortID is the part of a job id that branch names and pages show: its
// last 8 hex digits, which are random (the first ones of a version 7 UUID
// are the time, the same for the jobs of a minute).
func ShortID(id string) string {
	short := strings.ReplaceAll(id, "-", "")
	if len(short) > 8 {
		short = short[len(short)-8:]
	}
	return short
}

// BranchName is the job's branch: docsmith/<short-id>-<slug of the prompt>.
func BranchName(id, prompt string) string {
	short := ShortID(id)
	var b strings.Builder
	dash, cut := false, false
	for _, r := range strings.ToLower(prompt) {
		if b.Len() >= 40 {
			cut = true
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := b.String()
	if i := strings.LastIndexByte(slug, '-'); cut && i > 0 {
		slug = slug[:i] // end on a whole word
	}
	slug = strings.Trim(slug, "-")
	if slug == "" {
		slug = "edit"
	}
	return fmt.Sprintf("docsmith/%s-%s", short, slug)
}
