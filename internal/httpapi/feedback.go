package httpapi

import (
	"net/http"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

// feedbackBody is a reader's rating of one answer.
type feedbackBody struct {
	ThreadID  *string `json:"threadId"`
	MessageID *string `json:"messageId"`
	Rating    *string `json:"rating"`
	Comment   *string `json:"comment"`
}

type feedbackJSON struct {
	ThreadID  string    `json:"threadId"`
	MessageID string    `json:"messageId"`
	Rating    string    `json:"rating"`
	Comment   string    `json:"comment"`
	CreatedAt time.Time `json:"createdAt"`
}

// parseFeedbackBody reads and checks a feedback body; every refusal names
// the field.
func parseFeedbackBody(raw []byte) (assistant.Feedback, error) {
	var body feedbackBody
	if err := decodeBody(raw, &body); err != nil {
		return assistant.Feedback{}, err
	}
	if body.Rating == nil {
		return assistant.Feedback{}, apperr.New(apperr.Invalid, `field "rating" is required: "up" or "down"`)
	}
	f := assistant.Feedback{ThreadID: deref(body.ThreadID), MessageID: deref(body.MessageID), Rating: *body.Rating, Comment: deref(body.Comment)}
	if err := f.Validate(); err != nil {
		return assistant.Feedback{}, err
	}
	return f, nil
}

// assistantFeedback answers POST /discovery/v1/assistant/{domain}/feedback:
// a reader rates an answer (the message id its stream sent) up or down,
// with an optional comment; a new rating of the same answer replaces the
// old one.
func (s *Server) assistantFeedback(w http.ResponseWriter, r *http.Request) error {
	p, d, err := s.assistantDomain(r)
	if err != nil {
		return err
	}
	raw, err := readJSON(w, r, s.MaxBodyBytes)
	if err != nil {
		return err
	}
	f, err := parseFeedbackBody(raw)
	if err != nil {
		return err
	}
	if err := s.limit(w, r, s.assistantRules(p, s.clientIP(r))...); err != nil {
		return err
	}
	f, err = s.Assistant.Rate(r.Context(), d, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, feedbackJSON{ThreadID: f.ThreadID, MessageID: f.MessageID, Rating: f.Rating, Comment: f.Comment, CreatedAt: f.CreatedAt})
	return nil
}
