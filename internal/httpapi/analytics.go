package httpapi

import (
	"net/http"
	"strconv"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/tenant"
)

// adminDomain authenticates an admin key and loads the path's domain of its
// organization; another organization's domain is 404.
func (s *Server) adminDomain(r *http.Request) (tenant.Domain, error) {
	p, err := s.authenticate(r, apikey.Admin)
	if err != nil {
		return tenant.Domain{}, err
	}
	return s.Tenants.DomainFor(r.Context(), p, r.PathValue("domain"))
}

type analyticsQuery struct {
	rng    analytics.Range
	limit  int
	cursor *analytics.Cursor
}

func parseAnalyticsQuery(r *http.Request) (analyticsQuery, error) {
	v := r.URL.Query()
	var q analyticsQuery
	var err error
	if q.rng, err = analytics.ParseRange(v.Get("from"), v.Get("to")); err != nil {
		return q, err
	}
	q.limit = analytics.DefaultPageSize
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > analytics.MaxPageSize {
			return q, apperr.New(apperr.Invalid, "limit must be a whole number from 1 to %d", analytics.MaxPageSize)
		}
		q.limit = n
	}
	q.cursor, err = analytics.DecodeCursor(v.Get("cursor"))
	return q, err
}

// offsetPage cuts a computed list (gaps, feedback) into pages; its cursor
// holds the offset of the next.
func offsetPage[T any](items []T, q analyticsQuery) ([]T, *string) {
	start := 0
	if q.cursor != nil {
		start = min(q.cursor.Offset, len(items))
	}
	end := min(start+q.limit, len(items))
	var next *string
	if end < len(items) {
		c := analytics.Cursor{Offset: end}.Encode()
		next = &c
	}
	return items[start:end], next
}

type conversationListJSON struct {
	Conversations []analytics.Conversation `json:"conversations"`
	NextCursor    *string                  `json:"nextCursor"`
}

func (s *Server) analyticsConversations(w http.ResponseWriter, r *http.Request) error {
	d, err := s.adminDomain(r)
	if err != nil {
		return err
	}
	q, err := parseAnalyticsQuery(r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	page, err := s.Analytics.Conversations(r.Context(), d.ID, analytics.ConversationFilter{
		Range: q.rng, Status: v.Get("status"), Feedback: v.Get("feedback"), Limit: q.limit, After: q.cursor,
	})
	if err != nil {
		return err
	}
	out := conversationListJSON{Conversations: page.Conversations}
	if page.Next != nil {
		c := page.Next.Encode()
		out.NextCursor = &c
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type transcriptJSON struct {
	analytics.Conversation
	Messages []transcriptTurnJSON `json:"messages"`
}

type transcriptTurnJSON struct {
	Seq       int                    `json:"seq"`
	MessageID string                 `json:"messageId"`
	Question  string                 `json:"question"`
	Answer    string                 `json:"answer"`
	Status    string                 `json:"status"`
	Note      string                 `json:"note,omitempty"`
	Missing   []string               `json:"missing,omitempty"`
	Sources   []assistant.TurnSource `json:"sources"`
	Rating    *string                `json:"rating"`
	Comment   *string                `json:"comment"`
	CreatedAt string                 `json:"createdAt"`
}

func (s *Server) analyticsTranscript(w http.ResponseWriter, r *http.Request) error {
	d, err := s.adminDomain(r)
	if err != nil {
		return err
	}
	tr, err := s.Analytics.Transcript(r.Context(), d.ID, r.PathValue("threadId"))
	if err != nil {
		return err
	}
	out := transcriptJSON{Conversation: tr.Conversation, Messages: []transcriptTurnJSON{}}
	for _, t := range tr.TurnList {
		src := t.Sources
		if src == nil {
			src = []assistant.TurnSource{}
		}
		out.Messages = append(out.Messages, transcriptTurnJSON{
			Seq: t.Seq, MessageID: t.MessageID, Question: t.Question, Answer: t.Answer, Status: t.Status, Note: t.Note, Missing: t.Missing, Sources: src,
			Rating: stringOrNull(t.Rating), Comment: stringOrNull(t.Comment), CreatedAt: formatTime(t.CreatedAt),
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) analyticsInsights(w http.ResponseWriter, r *http.Request) error {
	d, err := s.adminDomain(r)
	if err != nil {
		return err
	}
	q, err := parseAnalyticsQuery(r)
	if err != nil {
		return err
	}
	in, err := s.Analytics.Insights(r.Context(), d.ID, q.rng)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, in)
	return nil
}

type gapJSON struct {
	analytics.Gap
	Prompt string       `json:"prompt"`
	Jobs   []gapJobJSON `json:"jobs"`
}

type gapJobJSON struct {
	JobID     string  `json:"jobId"`
	ProjectID string  `json:"projectId"`
	Status    string  `json:"status"`
	PRLink    *string `json:"prLink"`
	CreatedAt string  `json:"createdAt"`
}

type gapListJSON struct {
	Gaps       []gapJSON `json:"gaps"`
	NextCursor *string   `json:"nextCursor"`
}

func (s *Server) analyticsGaps(w http.ResponseWriter, r *http.Request) error {
	d, err := s.adminDomain(r)
	if err != nil {
		return err
	}
	q, err := parseAnalyticsQuery(r)
	if err != nil {
		return err
	}
	gaps, err := s.Analytics.Gaps(r.Context(), d.ID, q.rng)
	if err != nil {
		return err
	}
	page, next := offsetPage(gaps, q)
	out := gapListJSON{Gaps: []gapJSON{}, NextCursor: next}
	for _, g := range page {
		gj := gapJSON{Gap: g, Prompt: analytics.DraftPrompt(g), Jobs: []gapJobJSON{}}
		for _, l := range g.Jobs {
			j := gapJobJSON{JobID: l.JobID, ProjectID: l.ProjectID, CreatedAt: formatTime(l.CreatedAt)}
			if job, err := s.Jobs.Get(r.Context(), l.ProjectID, l.JobID); err == nil {
				j.Status, j.PRLink = string(job.Status), stringOrNull(job.PRLink)
			} else if !apperr.Is(err, apperr.NotFound) {
				return err
			}
			gj.Jobs = append(gj.Jobs, j)
		}
		out.Gaps = append(out.Gaps, gj)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type feedbackListJSON struct {
	Feedback   []analytics.FeedbackItem `json:"feedback"`
	NextCursor *string                  `json:"nextCursor"`
}

func (s *Server) analyticsFeedback(w http.ResponseWriter, r *http.Request) error {
	d, err := s.adminDomain(r)
	if err != nil {
		return err
	}
	q, err := parseAnalyticsQuery(r)
	if err != nil {
		return err
	}
	v := r.URL.Query()
	items, err := s.Analytics.Feedback(r.Context(), d.ID, analytics.FeedbackFilter{
		Range: q.rng, Rating: v.Get("rating"), Status: v.Get("status"), Source: v.Get("source"),
	})
	if err != nil {
		return err
	}
	page, next := offsetPage(items, q)
	writeJSON(w, http.StatusOK, feedbackListJSON{Feedback: page, NextCursor: next})
	return nil
}
