package analytics

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

// Feedback sources: a reader rating an answer of the assistant, and an AI
// agent rating a page it read over MCP.
const (
	SourceAssistant = assistant.FeedbackFromAssistant
	SourceMCP       = assistant.FeedbackFromMCP
)

// FeedbackItem is one rating: a reader's of an answer (source assistant),
// or an agent's of a page (source mcp), which has no thread, question or
// answer, and whose AskedAt is when it rated the page.
type FeedbackItem struct {
	Source    string    `json:"source"`
	ThreadID  string    `json:"threadId"`
	Seq       int       `json:"seq"`
	MessageID string    `json:"messageId"`
	Question  string    `json:"question"`
	Answer    string    `json:"answer"`
	Status    string    `json:"status"`
	Rating    string    `json:"rating"`
	Comment   string    `json:"comment,omitempty"`
	AskedAt   time.Time `json:"askedAt"`
	RatedAt   time.Time `json:"ratedAt"`
	// Pages are the pages the answer cited, or the one page rated.
	Pages []string `json:"pages"`
}

// FeedbackFilter selects the feedback of a domain: given in Range (asked
// in it, for an answer), and, where set, with that rating, on an answer
// of that status (which keeps no page feedback), from that source.
type FeedbackFilter struct {
	Range
	Rating string
	Status string
	Source string
}

// CheckFeedbackFilter refuses unknown ratings, statuses and sources.
func CheckFeedbackFilter(f FeedbackFilter) error {
	switch f.Rating {
	case "", RatingUp, RatingDown:
	default:
		return apperr.New(apperr.Invalid, "rating %q must be up or down", f.Rating)
	}
	if err := checkStatus(f.Status); err != nil {
		return err
	}
	switch f.Source {
	case "", SourceAssistant, SourceMCP:
	default:
		return apperr.New(apperr.Invalid, "source %q must be %s (readers rating answers) or %s (agents rating pages over MCP)", f.Source, SourceAssistant, SourceMCP)
	}
	return CheckRange(f.Range)
}

// Feedback returns the ratings f selects, newest first: readers' ratings
// of answers and agents' ratings of pages together.
func (s *Service) Feedback(ctx context.Context, domain string, f FeedbackFilter) ([]FeedbackItem, error) {
	if err := CheckFeedbackFilter(f); err != nil {
		return nil, err
	}
	keep := func(it FeedbackItem) bool {
		return (f.Rating == "" || it.Rating == f.Rating) && (f.Source == "" || it.Source == f.Source) &&
			(f.Status == "" || turnStatus(it.Status) == f.Status)
	}
	out := []FeedbackItem{}
	if f.Source != SourceMCP {
		turns, err := s.domainTurns(ctx, domain, f.Range)
		if err != nil {
			return nil, err
		}
		for i := len(turns) - 1; i >= 0; i-- {
			t := turns[i]
			if t.Rating == "" {
				continue
			}
			item := FeedbackItem{
				Source: SourceAssistant, ThreadID: t.ThreadID, Seq: t.Seq, MessageID: t.MessageID, Question: t.Question, Answer: t.Answer,
				Status: t.Status, Rating: t.Rating, Comment: t.Comment, AskedAt: t.CreatedAt, Pages: []string{},
			}
			if t.FeedbackAt != nil {
				item.RatedAt = *t.FeedbackAt
			}
			for _, src := range t.Sources {
				item.Pages = append(item.Pages, src.Path)
			}
			if keep(item) {
				out = append(out, item)
			}
		}
	}
	if (f.Source == "" || f.Source == SourceMCP) && f.Status == "" {
		pages, err := s.store.DomainPageFeedback(ctx, domain, f.From, f.To, MaxScanTurns)
		if err != nil {
			return nil, fmt.Errorf("read page feedback of %s: %w", domain, err)
		}
		for _, p := range pages {
			item := FeedbackItem{Source: p.Source, Rating: p.Rating, Comment: p.Comment, AskedAt: p.CreatedAt, RatedAt: p.CreatedAt, Pages: []string{p.Path}}
			if keep(item) {
				out = append(out, item)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].AskedAt.After(out[j].AskedAt) })
	}
	return out, nil
}

// turnStatus is the conversation status a turn's status counts as.
func turnStatus(s string) string {
	switch s {
	case assistant.TurnNotCovered:
		return StatusNotCovered
	case assistant.TurnPartial:
		return StatusPartial
	}
	return StatusAnswered
}

// ConversationTurns returns the turns asked in f's range of the
// conversations f's status and feedback keep, as the conversation list
// reads them (summarize), oldest first: the conversations export.
func (s *Service) ConversationTurns(ctx context.Context, domain string, f ConversationFilter) ([]TurnRecord, error) {
	if err := CheckFilter(f); err != nil {
		return nil, err
	}
	turns, err := s.domainTurns(ctx, domain, f.Range)
	if err != nil {
		return nil, err
	}
	if f.Status == "" && f.Feedback == FeedbackAny {
		return turns, nil
	}
	byThread := map[string][]TurnRecord{}
	for _, t := range turns {
		byThread[t.ThreadID] = append(byThread[t.ThreadID], t)
	}
	kept := map[string]bool{}
	for id, ts := range byThread {
		c := summarize(assistant.Thread{ID: id}, ts)
		feedback := c.Feedback
		if feedback == "" {
			feedback = FeedbackNone
		}
		kept[id] = (f.Status == "" || c.Status == f.Status) && (f.Feedback == FeedbackAny || feedback == f.Feedback)
	}
	out := turns[:0]
	for _, t := range turns {
		if kept[t.ThreadID] {
			out = append(out, t)
		}
	}
	return out, nil
}
