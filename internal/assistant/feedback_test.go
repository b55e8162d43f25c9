package assistant_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

// rateOnFinish is a stream whose client rates the answer the moment the
// finish part arrives, as a fast widget may.
type rateOnFinish struct {
	assistant.Sink
	t         *testing.T
	e         *env
	messageID string
	threadID  string
	err       error
}

func (r *rateOnFinish) Start(messageID, threadID string) error {
	r.messageID, r.threadID = messageID, threadID
	return r.Sink.Start(messageID, threadID)
}

func (r *rateOnFinish) Finish(f assistant.Finish) error {
	_, r.err = r.e.svc.Rate(r.t.Context(), r.e.domain, assistant.Feedback{ThreadID: r.threadID, MessageID: r.messageID, Rating: assistant.RatingUp})
	return r.Sink.Finish(f)
}

func TestRateTheMomentTheAnswerEnds(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	req := ask("How do I exclude files from a sync?")
	must(t, req.Validate())
	a, err := e.svc.Begin(t.Context(), e.domain, req)
	must(t, err)
	st := &rateOnFinish{Sink: uiSink(httptest.NewRecorder()), t: t, e: e}
	must(t, a.Stream(t.Context(), st))
	if st.err != nil {
		t.Fatalf("rating at finish: %v (the turn must be stored before the finish part goes out)", st.err)
	}
	turns := e.turns(a.Thread.ID)
	if len(turns) != 1 || turns[0].MessageID != st.messageID || turns[0].Rating != assistant.RatingUp || turns[0].Status != assistant.TurnAnswered {
		t.Fatalf("turns = %+v", turns)
	}
}

func TestRateRefusesOtherDomainsAndBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	a, r := e.answer(t.Context(), e.domain, ask("How do I exclude files from a sync?"))
	turns := e.turns(a.Thread.ID)
	message := turns[0].MessageID
	if !strings.Contains(r.raw, `"messageId":"`+message+`"`) {
		t.Fatalf("the stream did not announce the stored message id %s:\n%s", message, r.raw)
	}
	for _, d := range []struct {
		name string
		f    func() error
	}{
		{"sibling domain", func() error {
			_, err := e.svc.Rate(t.Context(), e.sibling, assistant.Feedback{ThreadID: a.Thread.ID, MessageID: message, Rating: assistant.RatingUp})
			return err
		}},
		{"other organization", func() error {
			_, err := e.svc.Rate(t.Context(), e.foreign, assistant.Feedback{ThreadID: a.Thread.ID, MessageID: message, Rating: assistant.RatingUp})
			return err
		}},
		{"unknown message", func() error {
			_, err := e.svc.Rate(t.Context(), e.domain, assistant.Feedback{ThreadID: a.Thread.ID, MessageID: "msg_x", Rating: assistant.RatingUp})
			return err
		}},
	} {
		if err := d.f(); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("%s: %v, want not found", d.name, err)
		}
	}
	if got := e.turns(a.Thread.ID)[0]; got.Rating != "" {
		t.Errorf("a refused rating was stored: %q", got.Rating)
	}
	for _, f := range []assistant.Feedback{
		{MessageID: "m", Rating: "up"},
		{ThreadID: "t", Rating: "up"},
		{ThreadID: "t", MessageID: "m", Rating: "Up"},
		{ThreadID: "t", MessageID: "m", Rating: "down", Comment: strings.Repeat("x", assistant.MaxFeedbackComment+1)},
	} {
		if err := f.Validate(); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Validate(%+v) = %v", f, err)
		}
	}
}
