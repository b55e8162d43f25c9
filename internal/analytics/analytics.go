// Package analytics reads what a domain's readers asked its assistant: the
// conversations with their transcripts, the insights (questions per day,
// share not covered, feedback, top pages and questions) and the content
// gaps, grouped so that one need asked in different words shows once.
package analytics

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

// Ratings a reader gives an answer.
const (
	RatingUp   = "up"
	RatingDown = "down"
)

// Conversation statuses: a conversation is not covered when any of its
// turns was answered "not covered", else partial when any was partial.
const (
	StatusAnswered   = "answered"
	StatusPartial    = "partial"
	StatusNotCovered = "not_covered"
)

// checkStatus refuses a status filter other than the three.
func checkStatus(s string) error {
	switch s {
	case "", StatusAnswered, StatusPartial, StatusNotCovered:
		return nil
	}
	return apperr.New(apperr.Invalid, "status %q must be answered, partial or not_covered", s)
}

// Feedback filters of the conversation list besides the two ratings.
const (
	FeedbackAny  = ""
	FeedbackNone = "none"
)

// TurnRecord is one question of a thread with its answer and feedback.
type TurnRecord struct {
	ThreadID  string
	Seq       int
	MessageID string
	Question  string
	Answer    string
	Status    string
	// Note says what the docs did not cover of a partial or not covered
	// answer; Missing are the names it was about.
	Note       string
	Missing    []string
	Sources    []assistant.TurnSource
	CreatedAt  time.Time
	Rating     string // "", up or down
	Comment    string
	FeedbackAt *time.Time
}

// TopScore is the best retrieval score among the turn's sources, 0 without
// any.
func (t TurnRecord) TopScore() float64 {
	best := 0.0
	for _, s := range t.Sources {
		best = max(best, s.Score)
	}
	return best
}

// TopPage is the path of the turn's best source, "" without any.
func (t TurnRecord) TopPage() string {
	best, path := -1.0, ""
	for _, s := range t.Sources {
		if s.Score > best {
			best, path = s.Score, s.Path
		}
	}
	return path
}

// ThreadQuery selects a page of a domain's threads, newest first.
type ThreadQuery struct {
	Domain string
	// From and To bound the thread's start: From <= created_at < To; zero
	// values leave that side open.
	From, To time.Time
	// Status keeps threads with a turn answered "not covered"
	// (not_covered), else with a partial one (partial), or with neither
	// (answered); "" keeps all.
	Status string
	// Feedback keeps threads with a turn rated up or down, or with no
	// rating at all (none); "" keeps all.
	Feedback string
	Limit    int
	After    *Cursor
}

// Cursor is the position after the last item of a page.
type Cursor struct {
	CreatedAt time.Time `json:"t"`
	ID        string    `json:"id"`
	Offset    int       `json:"o,omitempty"`
}

// Encode returns the cursor as an opaque string for a URL.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(c) // a struct of plain fields always encodes
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor from Encode; "" is no cursor.
func DecodeCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil //nolint:nilnil // no cursor is not an error
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c Cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Offset < 0 {
		return nil, apperr.New(apperr.Invalid, "cursor %q is not one this server returned; start again without it", s)
	}
	return &c, nil
}

// GapJob links a job started from a content gap to the gap.
type GapJob struct {
	Domain    string
	GapKey    string
	ProjectID string
	JobID     string
	CreatedAt time.Time
}

// Store is what analytics reads from a docsmith store.
type Store interface {
	// GetThread returns a thread, or apperr NotFound.
	GetThread(ctx context.Context, id string) (assistant.Thread, error)
	// ListThreads returns a page of a domain's threads, newest first.
	ListThreads(ctx context.Context, q ThreadQuery) ([]assistant.Thread, error)
	// ThreadTurns returns the turns of the threads, each thread's in order.
	ThreadTurns(ctx context.Context, threadIDs []string) ([]TurnRecord, error)
	// DomainTurns returns the domain's turns asked in [from, to) (zero
	// values open): the newest limit of them, returned oldest first.
	DomainTurns(ctx context.Context, domain string, from, to time.Time, limit int) ([]TurnRecord, error)
	// LinkGapJob records a job started from a gap.
	LinkGapJob(ctx context.Context, g GapJob) error
	// GapJobs returns the jobs started from the domain's gaps, oldest first.
	GapJobs(ctx context.Context, domain string) ([]GapJob, error)
	LifecycleStore
	// DomainPageFeedback returns the domain's feedback on pages given in
	// [from, to) (zero values open): the newest limit of it, newest first.
	DomainPageFeedback(ctx context.Context, domain string, from, to time.Time, limit int) ([]assistant.PageFeedback, error)
}

// Limits of a page and of what one computation reads.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
	// MaxScanTurns bounds the turns insights and gaps read at once; a
	// longer range is cut to its newest part (and says so). Gaps then
	// groups at most MaxGapQuestions of the flagged ones, the newest.
	MaxScanTurns = 200_000
)

// Service answers analytics questions about a domain.
type Service struct {
	store Store
	// LowScore is the best retrieval score under which an answered turn
	// counts as a gap.
	lowScore float64
}

// DefaultLowScore: an answer whose best passage scored under this was
// found on thin evidence (retrieval keeps passages from 0.1).
const DefaultLowScore = 0.25

// NewService returns a Service over store.
func NewService(store Store) *Service {
	return &Service{store: store, lowScore: DefaultLowScore}
}

func pageSize(n int) int {
	switch {
	case n <= 0:
		return DefaultPageSize
	case n > MaxPageSize:
		return MaxPageSize
	}
	return n
}

// Range is a time range [From, To); zero values leave that side open.
type Range struct {
	From, To time.Time
}

// CheckRange refuses a range that ends before it starts.
func CheckRange(r Range) error {
	if !r.From.IsZero() && !r.To.IsZero() && !r.To.After(r.From) {
		return apperr.New(apperr.Invalid, "to (%s) must be after from (%s)", r.To.Format(time.RFC3339), r.From.Format(time.RFC3339))
	}
	return nil
}

func (s *Service) domainTurns(ctx context.Context, domain string, r Range) ([]TurnRecord, error) {
	turns, err := s.store.DomainTurns(ctx, domain, r.From, r.To, MaxScanTurns)
	if err != nil {
		return nil, fmt.Errorf("read turns of %s: %w", domain, err)
	}
	return turns, nil
}

// ParseRange reads the from and to of a request: RFC 3339 times or
// YYYY-MM-DD dates (UTC). A date as to includes that whole day.
func ParseRange(from, to string) (Range, error) {
	var r Range
	var err error
	if r.From, err = parseBound("from", from, false); err != nil {
		return Range{}, err
	}
	if r.To, err = parseBound("to", to, true); err != nil {
		return Range{}, err
	}
	return r, CheckRange(r)
}

func parseBound(name, s string, endOfDay bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, apperr.New(apperr.Invalid, "%s %q must be a date (2026-03-01) or an RFC 3339 time (2026-03-01T12:00:00Z)", name, s)
	}
	if endOfDay {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}
