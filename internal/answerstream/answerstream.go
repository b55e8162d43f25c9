// Package answerstream writes an assistant answer's events in the AI SDK
// wire formats: it adapts an aisdk.Stream (the UI message stream of the v2
// endpoint, or the data stream of v1) to an assistant.Sink. The assistant
// knows nothing of the wire; the encoders know nothing of answers.
package answerstream

import (
	"errors"
	"fmt"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/assistant"
)

// Sink is an assistant.Sink over an AI SDK stream.
type Sink struct {
	st aisdk.Stream
}

var _ assistant.Sink = (*Sink)(nil)

// New returns a Sink that writes on st.
func New(st aisdk.Stream) *Sink { return &Sink{st: st} }

// Started reports whether the stream has written its status and headers.
func (s *Sink) Started() bool { return s.st.Started() }

func (s *Sink) Start(messageID, threadID string) error {
	return wrap(s.st.Start(messageID, threadID))
}

func (s *Sink) Heartbeat() error { return wrap(s.st.Heartbeat()) }

func (s *Sink) Sources(srcs []assistant.Source) error {
	return wrap(s.st.Sources(wireSources(srcs)))
}

func (s *Sink) BufferSources(srcs []assistant.Source) error {
	return wrap(s.st.BufferSources(wireSources(srcs)))
}

// Status is not on the wire yet: the finish event carries nothing of it.
func (s *Sink) Status(assistant.AnswerStatus) error { return nil }

func (s *Sink) Text(id string, pieces ...string) error { return wrap(s.st.Text(id, pieces...)) }

func (s *Sink) TextStart(id string) error { return wrap(s.st.TextStart(id)) }

func (s *Sink) BufferTextDelta(id, delta string) error {
	return wrap(s.st.BufferTextDelta(id, delta))
}

func (s *Sink) Flush() error { return wrap(s.st.Flush()) }

func (s *Sink) TextEnd(id string) error { return wrap(s.st.TextEnd(id)) }

// Grounding is not on the wire yet.
func (s *Sink) Grounding(assistant.Grounding) error { return nil }

func (s *Sink) Finish(f assistant.Finish) error {
	var usage *aisdk.Usage
	if f.Usage != nil {
		usage = &aisdk.Usage{InputTokens: f.Usage.InputTokens, OutputTokens: f.Usage.OutputTokens}
	}
	return wrap(s.st.Finish(f.ThreadID, f.TopLevelThreadID, usage))
}

func (s *Sink) Error(message string) error { return wrap(s.st.Error(message)) }

func wireSources(srcs []assistant.Source) []aisdk.Source {
	out := make([]aisdk.Source, len(srcs))
	for i, src := range srcs {
		out[i] = aisdk.Source{ID: src.ID, URL: src.URL, Title: src.Title}
	}
	return out
}

// wrap marks the error of a write after the end as assistant.ErrClosed.
func wrap(err error) error {
	if errors.Is(err, aisdk.ErrClosed) {
		return fmt.Errorf("%w: %w", assistant.ErrClosed, err)
	}
	return err
}
