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

// Where feedback came from: a reader rating an answer of the assistant,
// or an AI agent rating a page it read over MCP.
const (
	FeedbackFromAssistant = "assistant"
	FeedbackFromMCP       = "mcp"
)

// PageFeedback is a rating of one docs page rather than of an answer: an
// agent that used the page says whether it helped.
type PageFeedback struct {
	Domain string
	OrgID  string
	// Path is the page's path as the index has it (search.PagePath).
	Path    string
	Rating  string // RatingUp or RatingDown
	Comment string
	// Source says who gave it (FeedbackFromMCP).
	Source string
	// CreatedAt is when it was given; RatePage sets it.
	CreatedAt time.Time
}

// PageFeedbackStore keeps page feedback.
type PageFeedbackStore interface {
	AddPageFeedback(ctx context.Context, f PageFeedback) error
}

// RatePage stores feedback on a page of d that a reader in groups may see:
// a page the index does not have, or one the reader may not see, is an
// apperr NotFound error, as reading it is. The comment is trimmed and
// bounded like an answer's (MaxFeedbackComment).
func (s *Service) RatePage(ctx context.Context, d tenant.Domain, f PageFeedback, groups []string) (PageFeedback, error) {
	if s.pageFeedback == nil {
		return PageFeedback{}, apperr.New(apperr.Unavailable, "page feedback is not kept on this server")
	}
	f.Comment = strings.TrimSpace(f.Comment)
	switch {
	case f.Rating != RatingUp && f.Rating != RatingDown:
		return PageFeedback{}, apperr.New(apperr.Invalid, "a page's rating must be %q or %q, not %q", RatingUp, RatingDown, f.Rating)
	case strings.ContainsRune(f.Comment, 0):
		return PageFeedback{}, apperr.New(apperr.Invalid, `"comment" holds a NUL character; send plain text`)
	case f.Source == "":
		return PageFeedback{}, fmt.Errorf("page feedback of %s has no source", d.ID)
	}
	if n := utf8.RuneCountInString(f.Comment); n > MaxFeedbackComment {
		return PageFeedback{}, apperr.New(apperr.Invalid, `"comment" is %d characters long; the limit is %d`, n, MaxFeedbackComment)
	}
	page, err := s.Page(ctx, d, f.Path, groups)
	if err != nil {
		return PageFeedback{}, err
	}
	f.Domain, f.OrgID, f.Path, f.CreatedAt = d.ID, d.OrgID, page.Path, s.now()
	if err := s.pageFeedback.AddPageFeedback(ctx, f); err != nil {
		return PageFeedback{}, fmt.Errorf("store feedback on page %s of %s: %w", f.Path, d.ID, err)
	}
	s.log.InfoContext(ctx, "page feedback", "domain", d.ID, "page", f.Path, "source", f.Source, "rating", f.Rating, "comment", f.Comment != "")
	return f, nil
}
