package assistant

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Ratings a reader gives an answer.
const (
	RatingUp   = "up"
	RatingDown = "down"
)

// MaxFeedbackComment is the longest feedback comment, in characters.
const MaxFeedbackComment = 2000

// Feedback is a reader's rating of one answer. MessageID is the id of the
// assistant message the stream announced in its start part (v2 "start"
// messageId, v1 "f:" messageId), which is the turn's MessageID.
type Feedback struct {
	ThreadID  string
	MessageID string
	Rating    string
	Comment   string
	// CreatedAt is when the rating was given; Rate sets it.
	CreatedAt time.Time
}

// Validate checks a rating as it came from the wire, returning an apperr
// Invalid error that names the field, and trims the comment.
func (f *Feedback) Validate() error {
	f.ThreadID = strings.TrimSpace(f.ThreadID)
	f.MessageID = strings.TrimSpace(f.MessageID)
	f.Comment = strings.TrimSpace(f.Comment)
	switch {
	case f.ThreadID == "":
		return apperr.New(apperr.Invalid, `field "threadId" is required: the thread id the answer's stream sent (messageMetadata.threadId or the x-thread-id header)`)
	case f.MessageID == "":
		return apperr.New(apperr.Invalid, `field "messageId" is required: the id of the answer being rated, as the stream's start part sent it`)
	case f.Rating != RatingUp && f.Rating != RatingDown:
		return apperr.New(apperr.Invalid, `field "rating" must be "up" or "down", not %q`, f.Rating)
	case strings.ContainsRune(f.Comment, 0):
		return apperr.New(apperr.Invalid, `field "comment" holds a NUL character; send plain text`)
	}
	if n := utf8.RuneCountInString(f.Comment); n > MaxFeedbackComment {
		return apperr.New(apperr.Invalid, `field "comment" is %d characters long; the limit is %d`, n, MaxFeedbackComment)
	}
	return nil
}

// Rate stores a reader's feedback on an answer of the domain, replacing an
// earlier rating of the same answer. A thread of another domain and an
// answer the thread does not have are the same apperr NotFound error, so
// that a key learns nothing about threads that are not its domain's. f must
// have passed Validate.
func (s *Service) Rate(ctx context.Context, d tenant.Domain, f Feedback) (Feedback, error) {
	if len(f.ThreadID) > maxThreadIDLen || len(f.MessageID) > maxThreadIDLen {
		// Not ids of ours; not echoed either.
		return Feedback{}, apperr.New(apperr.NotFound, "answer not found in the assistant of %s; send the threadId and messageId the answer's stream sent", d.ID)
	}
	notFound := apperr.New(apperr.NotFound, "answer %q of thread %q not found in the assistant of %s; send the threadId and messageId the answer's stream sent", f.MessageID, f.ThreadID, d.ID)
	th, err := s.threads.GetThread(ctx, f.ThreadID)
	switch {
	case apperr.Is(err, apperr.NotFound):
		return Feedback{}, notFound
	case err != nil:
		return Feedback{}, fmt.Errorf("look up thread: %w", err)
	case th.Domain != d.ID || th.OrgID != d.OrgID:
		return Feedback{}, notFound
	}
	f.CreatedAt = s.now()
	err = s.threads.RateTurn(ctx, f)
	switch {
	case apperr.Is(err, apperr.NotFound):
		return Feedback{}, notFound
	case err != nil:
		return Feedback{}, fmt.Errorf("rate answer %s of thread %s: %w", f.MessageID, f.ThreadID, err)
	}
	s.log.InfoContext(ctx, "assistant feedback", "domain", d.ID, "thread", f.ThreadID, "message", f.MessageID,
		"rating", f.Rating, "comment", f.Comment != "")
	return f, nil
}
