package analytics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

// Conversation is one thread as the list shows it.
type Conversation struct {
	ThreadID      string    `json:"threadId"`
	FirstQuestion string    `json:"firstQuestion"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
	Turns         int       `json:"turns"`
	// Status is not_covered when any turn was, else partial when any turn
	// was, else answered.
	Status string `json:"status"`
	// Feedback is down when any turn was rated down, else up when any was
	// rated up, else "".
	Feedback string `json:"feedback,omitempty"`
	// Pages are the paths of the pages cited, in order of first citation.
	Pages []string `json:"pages"`
}

// ConversationPage is a page of conversations and the cursor of the next.
type ConversationPage struct {
	Conversations []Conversation
	Next          *Cursor
}

// ConversationFilter selects conversations of a domain.
type ConversationFilter struct {
	Range
	Status   string
	Feedback string
	Limit    int
	After    *Cursor
}

// CheckFilter refuses unknown status and feedback values.
func CheckFilter(f ConversationFilter) error {
	if err := checkStatus(f.Status); err != nil {
		return err
	}
	switch f.Feedback {
	case FeedbackAny, FeedbackNone, RatingUp, RatingDown:
	default:
		return apperr.New(apperr.Invalid, "feedback %q must be up, down or none", f.Feedback)
	}
	return CheckRange(f.Range)
}

// Conversations returns a page of the domain's conversations, newest first.
func (s *Service) Conversations(ctx context.Context, domain string, f ConversationFilter) (ConversationPage, error) {
	if err := CheckFilter(f); err != nil {
		return ConversationPage{}, err
	}
	limit := pageSize(f.Limit)
	threads, err := s.store.ListThreads(ctx, ThreadQuery{
		Domain: domain, From: f.From, To: f.To, Status: f.Status, Feedback: f.Feedback, Limit: limit + 1, After: f.After,
	})
	if err != nil {
		return ConversationPage{}, fmt.Errorf("list conversations of %s: %w", domain, err)
	}
	var page ConversationPage
	if len(threads) > limit {
		threads = threads[:limit]
		last := threads[limit-1]
		page.Next = &Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	ids := make([]string, len(threads))
	for i, t := range threads {
		ids[i] = t.ID
	}
	turns, err := s.store.ThreadTurns(ctx, ids)
	if err != nil {
		return ConversationPage{}, fmt.Errorf("read turns of conversations: %w", err)
	}
	byThread := make(map[string][]TurnRecord, len(threads))
	for _, t := range turns {
		byThread[t.ThreadID] = append(byThread[t.ThreadID], t)
	}
	page.Conversations = make([]Conversation, 0, len(threads))
	for _, t := range threads {
		page.Conversations = append(page.Conversations, summarize(t, byThread[t.ID]))
	}
	return page, nil
}

func summarize(t assistant.Thread, turns []TurnRecord) Conversation {
	c := Conversation{ThreadID: t.ID, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, Turns: len(turns), Status: StatusAnswered, Pages: []string{}}
	for i, turn := range turns {
		if i == 0 {
			c.FirstQuestion = turn.Question
		}
		if s := turnStatus(turn.Status); s == StatusNotCovered || s == StatusPartial && c.Status == StatusAnswered {
			c.Status = s
		}
		switch {
		case turn.Rating == RatingDown:
			c.Feedback = RatingDown
		case turn.Rating == RatingUp && c.Feedback == "":
			c.Feedback = RatingUp
		}
		for _, src := range turn.Sources {
			if src.Path != "" && !slices.Contains(c.Pages, src.Path) {
				c.Pages = append(c.Pages, src.Path)
			}
		}
	}
	return c
}

// Transcript is a conversation with all its turns.
type Transcript struct {
	Conversation
	TurnList []TurnRecord
}

// Transcript returns a thread of the domain with its turns; a thread of
// another domain is NotFound.
func (s *Service) Transcript(ctx context.Context, domain, threadID string) (Transcript, error) {
	t, err := s.store.GetThread(ctx, threadID)
	if err == nil && t.Domain != domain {
		err = apperr.New(apperr.NotFound, "conversation not found")
	}
	if apperr.Is(err, apperr.NotFound) {
		return Transcript{}, apperr.New(apperr.NotFound, "conversation %q not found in domain %q", threadID, domain)
	}
	if err != nil {
		return Transcript{}, fmt.Errorf("read conversation %s: %w", threadID, err)
	}
	turns, err := s.store.ThreadTurns(ctx, []string{threadID})
	if err != nil {
		return Transcript{}, fmt.Errorf("read turns of conversation %s: %w", threadID, err)
	}
	return Transcript{Conversation: summarize(t, turns), TurnList: turns}, nil
}
