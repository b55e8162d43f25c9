package assistant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Thread is one conversation with a domain's assistant. Its id is the
// threadId the clients send back to continue it.
type Thread struct {
	ID     string
	Domain string
	OrgID  string
	// FP is the fingerprint ("anonymous" or a user id) of the request that
	// started the thread; each turn keeps its own.
	FP        string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Turn statuses.
const (
	// TurnAnswered: an answer from the passages (model or extractive).
	TurnAnswered = "answered"
	// TurnNotCovered: nothing relevant was found; the answer said so.
	TurnNotCovered = "not_covered"
	// TurnPartial: the docs cover part of the question; the answer said
	// which part they do not.
	TurnPartial = "partial"
	// TurnNotIndexed: the domain has no index yet; the answer said so.
	TurnNotIndexed = "not_indexed"
	// TurnFailed: retrieval or the model failed; the client got an error.
	TurnFailed = "failed"
	// TurnCanceled: the client went away before the answer ended.
	TurnCanceled = "canceled"
)

// Turn is one question of a thread with its answer.
type Turn struct {
	ThreadID string
	// Seq numbers the turns of a thread from 1; AddTurn assigns it.
	Seq       int
	MessageID string
	FP        string
	Question  string
	// Answer is the text the client received (markers to passages of other
	// turns already removed).
	Answer string
	// Sources are the citations sent before the answer.
	Sources []TurnSource
	Model   string
	Status  string
	// StatusNote says, for the reader, what the docs do not cover of the
	// question; Missing are the names they never mention. Both are empty
	// for an answer the docs cover.
	StatusNote string
	Missing    []string
	// Error is what went wrong, for the log and the operator; the client
	// saw a generic message.
	Error        string
	InputTokens  int
	OutputTokens int
	// Timings of the turn, from the request's arrival.
	RetrievalTime time.Duration
	FirstTextTime time.Duration
	TotalTime     time.Duration
	CreatedAt     time.Time
	// Rating is the reader's RatingUp or RatingDown of the answer, with an
	// optional Comment, given at RatedAt; empty until rated.
	Rating  string
	Comment string
	RatedAt time.Time
	// NewThread is the thread this turn starts when that thread is not
	// stored yet: the store creates it in the turn's transaction, so that an
	// answer writes once, after its last byte, and nothing before its first.
	// It is nil for a turn of a stored thread.
	NewThread *Thread
}

// TurnSource is a citation as it was sent.
type TurnSource struct {
	ID    string  `json:"id"`
	URL   string  `json:"url"`
	Title string  `json:"title"`
	Path  string  `json:"path"`
	Score float64 `json:"score"`
}

// ThreadStore keeps threads and their turns. GetThread returns an apperr
// NotFound error for an unknown id.
type ThreadStore interface {
	GetThread(ctx context.Context, id string) (Thread, error)
	// AddTurn appends a turn to its thread, assigning Seq, and touches the
	// thread's UpdatedAt. It returns the Seq assigned. A turn with a
	// NewThread creates that thread first, unless it is already stored (a
	// write retried after a lost commit); its id must be the turn's
	// ThreadID.
	AddTurn(ctx context.Context, t Turn) (int, error)
	// AddTurns adds several turns in one transaction, in order, as AddTurn
	// would one by one: all of them or, with an error, none. It returns the
	// Seq assigned to each.
	AddTurns(ctx context.Context, turns []Turn) ([]int, error)
	// RecentTurns returns the last limit turns of a thread, oldest first.
	RecentTurns(ctx context.Context, threadID string, limit int) ([]Turn, error)
	// RateTurn stores a reader's feedback on the turn of f.ThreadID whose
	// MessageID is f.MessageID, replacing an earlier one; a thread with no
	// such turn is an apperr NotFound error.
	RateTurn(ctx context.Context, f Feedback) error
}

// CheckNewThread refuses a turn whose NewThread is not its own thread, as
// stores do before they write it.
func CheckNewThread(t Turn) error {
	if t.NewThread != nil && t.NewThread.ID != t.ThreadID {
		return apperr.New(apperr.Invalid, "turn %s of thread %s starts another thread, %s", t.MessageID, t.ThreadID, t.NewThread.ID)
	}
	return nil
}

// maxThreadIDLen bounds what is looked up: a longer id is not one of ours.
const maxThreadIDLen = 64

// newID returns prefix and 128 random bits in hex.
func newID(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b)
}

// newThreadID returns "thr_" and 32 hex digits: the time in milliseconds
// (48 bits), then 80 random bits. Threads started together then sort
// together, so that storing a burst of new threads and their first turns
// writes a few index pages at the end of each index rather than one page
// at a random place per thread; 80 random bits still cannot be guessed.
func newThreadID(now time.Time) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (8 * (5 - i)))
	}
	_, _ = rand.Read(b[6:]) // crypto/rand.Read never fails
	return "thr_" + hex.EncodeToString(b[:])
}

// resolveThread continues the thread id names when it belongs to the
// domain, and otherwise starts a new one, which is stored with its first
// turn (Turn.NewThread). A missing, unknown or foreign id all look the same
// to the caller: a new thread, never a hint that the id exists elsewhere.
func (s *Service) resolveThread(ctx context.Context, d tenant.Domain, id, fp string) (Thread, bool, error) {
	if id != "" && len(id) <= maxThreadIDLen {
		t, err := s.threads.GetThread(ctx, id)
		switch {
		case err == nil && t.Domain == d.ID && t.OrgID == d.OrgID:
			return t, true, nil
		case err != nil && !apperr.Is(err, apperr.NotFound):
			return Thread{}, false, fmt.Errorf("look up thread: %w", err)
		}
	}
	now := s.now()
	return Thread{ID: newThreadID(now), Domain: d.ID, OrgID: d.OrgID, FP: fp, CreatedAt: now, UpdatedAt: now}, false, nil
}
