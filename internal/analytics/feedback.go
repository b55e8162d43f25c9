package analytics

import (
	"context"
	"time"
)

// FeedbackItem is one rating a reader gave an answer.
type FeedbackItem struct {
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
	Pages     []string  `json:"pages"`
}

// Feedback returns the ratings on answers to questions asked in r, newest
// question first.
func (s *Service) Feedback(ctx context.Context, domain string, r Range) ([]FeedbackItem, error) {
	if err := CheckRange(r); err != nil {
		return nil, err
	}
	turns, err := s.domainTurns(ctx, domain, r)
	if err != nil {
		return nil, err
	}
	out := []FeedbackItem{}
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		if t.Rating == "" {
			continue
		}
		item := FeedbackItem{
			ThreadID: t.ThreadID, Seq: t.Seq, MessageID: t.MessageID, Question: t.Question, Answer: t.Answer,
			Status: t.Status, Rating: t.Rating, Comment: t.Comment, AskedAt: t.CreatedAt, Pages: []string{},
		}
		if t.FeedbackAt != nil {
			item.RatedAt = *t.FeedbackAt
		}
		for _, src := range t.Sources {
			item.Pages = append(item.Pages, src.Path)
		}
		out = append(out, item)
	}
	return out, nil
}

// Turns returns every question asked in r (up to MaxScanTurns, the newest),
// oldest first: the conversations export.
func (s *Service) Turns(ctx context.Context, domain string, r Range) ([]TurnRecord, error) {
	if err := CheckRange(r); err != nil {
		return nil, err
	}
	return s.domainTurns(ctx, domain, r)
}
