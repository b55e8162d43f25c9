// Package answerstream writes an assistant answer's events in the AI SDK
// wire formats: it adapts an aisdk.Stream (the UI message stream of the v2
// endpoint, or the data stream of v1) to an assistant.Sink. The assistant
// knows nothing of the wire; the encoders know nothing of answers.
//
// Where each event goes, in the places the SDK's clients keep them:
//
//   - the status: a data part named answer-status (v2
//     {"type":"data-answer-status","id":"answer-status","data":{…}}, which
//     a later one replaces; v1 an 8:[{"answerStatus":{…}}] annotation), and
//     again as answerStatus in the finish metadata (v2 messageMetadata);
//   - a sentence's grounding: a data part named grounding with the id g_N
//     (v1 8:[{"grounding":{…}}]);
//   - a source's quote and page path: its providerMetadata,
//     {"docsmith":{"quote","path"}}.
package answerstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/docsmith/docsmith/internal/aisdk"
	"github.com/docsmith/docsmith/internal/assistant"
)

// Sink is an assistant.Sink over an AI SDK stream.
type Sink struct {
	st aisdk.Stream

	mu         sync.Mutex
	groundings int // grounding parts written, for their ids
}

// The data part names and ids, and the provider metadata key, that the
// widget and other clients read.
const (
	statusPart    = "answer-status"
	statusPartID  = "answer-status"
	statusMetaKey = "answerStatus"
	groundingPart = "grounding"
	provider      = "docsmith"
)

// wireStatus is an answer status on the wire.
type wireStatus struct {
	Status  string   `json:"status"`
	Note    string   `json:"note,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// wireGrounding is a sentence's grounding on the wire.
type wireGrounding struct {
	TextID    string   `json:"textId"`
	Start     int      `json:"start"`
	End       int      `json:"end"`
	Sources   []string `json:"sources"`
	Supported bool     `json:"supported"`
	Missing   []string `json:"missing,omitempty"`
}

// wireSourceMeta is a source's provider metadata under the provider key.
type wireSourceMeta struct {
	Quote string `json:"quote,omitempty"`
	Path  string `json:"path,omitempty"`
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

// Status holds the status's data part for the next event that is sent.
func (s *Sink) Status(st assistant.AnswerStatus) error {
	b, err := statusJSON(st)
	if err != nil {
		return err
	}
	return wrap(s.st.BufferData(statusPart, statusPartID, b))
}

func (s *Sink) Text(id string, pieces ...string) error { return wrap(s.st.Text(id, pieces...)) }

func (s *Sink) TextStart(id string) error { return wrap(s.st.TextStart(id)) }

func (s *Sink) BufferTextDelta(id, delta string) error {
	return wrap(s.st.BufferTextDelta(id, delta))
}

func (s *Sink) Flush() error { return wrap(s.st.Flush()) }

func (s *Sink) TextEnd(id string) error { return wrap(s.st.TextEnd(id)) }

// Grounding holds the sentence's grounding part for the next event that is
// sent, which is the text after it (or its Flush): the verdict travels with
// the text, not ahead of it.
func (s *Sink) Grounding(g assistant.Grounding) error {
	sources := g.Sources
	if sources == nil {
		sources = []string{}
	}
	b, err := json.Marshal(wireGrounding{TextID: g.TextID, Start: g.Start, End: g.End, Sources: sources, Supported: g.Supported, Missing: g.Missing})
	if err != nil {
		return fmt.Errorf("answerstream: grounding: %w", err)
	}
	s.mu.Lock()
	id := "g_" + strconv.Itoa(s.groundings)
	s.groundings++
	s.mu.Unlock()
	return wrap(s.st.BufferData(groundingPart, id, b))
}

// Finish ends the message; a decided status goes in its metadata too.
func (s *Sink) Finish(f assistant.Finish) error {
	var usage *aisdk.Usage
	if f.Usage != nil {
		usage = &aisdk.Usage{InputTokens: f.Usage.InputTokens, OutputTokens: f.Usage.OutputTokens}
	}
	var meta []aisdk.Member
	if f.Status.Status != "" {
		b, err := statusJSON(f.Status)
		if err != nil {
			return err
		}
		meta = append(meta, aisdk.Member{Key: statusMetaKey, Value: b})
	}
	return wrap(s.st.Finish(f.ThreadID, f.TopLevelThreadID, usage, meta...))
}

func statusJSON(st assistant.AnswerStatus) (json.RawMessage, error) {
	b, err := json.Marshal(wireStatus(st))
	if err != nil {
		return nil, fmt.Errorf("answerstream: answer status: %w", err)
	}
	return b, nil
}

func (s *Sink) Error(message string) error { return wrap(s.st.Error(message)) }

// wireSources are the citations on the wire, each with its quote and page
// path as provider metadata when it has either.
func wireSources(srcs []assistant.Source) []aisdk.Source {
	out := make([]aisdk.Source, len(srcs))
	for i, src := range srcs {
		out[i] = aisdk.Source{ID: src.ID, URL: src.URL, Title: src.Title}
		if src.Quote == "" && src.Path == "" {
			continue
		}
		// A map of strings always marshals.
		b, _ := json.Marshal(map[string]wireSourceMeta{provider: {Quote: src.Quote, Path: src.Path}})
		out[i].ProviderMetadata = b
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
