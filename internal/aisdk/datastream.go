package aisdk

import "net/http"

// DataStream writes the AI SDK 4 data stream (the v1 endpoint): one
// "<code>:<JSON>" part per line (AI SDK 4 data stream protocol). Text blocks have no
// boundaries in this protocol: TextStart and TextEnd only keep the call order
// the same as for [UIMessageStream], and consecutive blocks join into one
// text part on the client.
type DataStream struct {
	*writer
	step bool // f: written and not yet closed by e:
}

var _ Stream = (*DataStream)(nil)

// dataStreamHeaders are what the SDK's createDataStreamResponse sets (the
// client checks neither), plus the two every docsmith stream carries so that
// no proxy caches or buffers it.
func dataStreamHeaders() [][2]string {
	return [][2]string{
		{"Content-Type", "text/plain; charset=utf-8"},
		{"X-Vercel-Ai-Data-Stream", "v1"},
		{"Cache-Control", "no-store"},
		{"X-Accel-Buffering", "no"},
	}
}

// NewDataStream returns a v1 stream on w. Nothing is written until the first
// call; set your own headers on w before it.
func NewDataStream(w http.ResponseWriter) *DataStream {
	return &DataStream{writer: newWriter(w, dataStreamHeaders())}
}

// The part codes used (AI SDK 4, ui-utils 1.2). Any other code is fatal to the
// client.
const (
	codeText        = "0"
	codeError       = "3"
	codeAnnotations = "8"
	codeFinish      = "d"
	codeFinishStep  = "e"
	codeStartStep   = "f"
	codeSource      = "h"
)

// finishReason is the only one we send: an answer always ends normally, and
// failures go out as 3: parts instead.
const finishReason = "stop"

type (
	dsStartStep struct {
		MessageID string `json:"messageId"`
	}
	dsAnnotation struct {
		ThreadID string `json:"threadId"`
	}
	dsSource struct {
		SourceType string `json:"sourceType"`
		ID         string `json:"id"`
		URL        string `json:"url"`
		Title      string `json:"title,omitempty"`
	}
	dsUsage struct {
		PromptTokens     int `json:"promptTokens"`
		CompletionTokens int `json:"completionTokens"`
	}
	dsFinishStep struct {
		FinishReason string   `json:"finishReason"`
		Usage        *dsUsage `json:"usage,omitempty"`
		IsContinued  bool     `json:"isContinued"`
	}
	dsFinish struct {
		FinishReason string   `json:"finishReason"`
		Usage        *dsUsage `json:"usage,omitempty"`
		ThreadID     string   `json:"threadId,omitempty"`
	}
)

// part is one line: its code and its JSON value.
type part struct {
	code  string
	value any
}

// send writes each part as one line, all in one write and one flush.
func (s *DataStream) send(parts ...part) error {
	for _, p := range parts {
		s.raw(p.code)
		s.raw(":")
		if err := s.encode(p.value); err != nil { // ends the line with "\n"
			s.buf.Reset()
			return err
		}
	}
	return s.flush()
}

// Start writes f:{messageId} (when messageID is set) and the threadId as a
// message annotation, 8:[{threadId}], the one place AI SDK 4 surfaces it
// (message.annotations, sent back with the history).
func (s *DataStream) Start(messageID, threadID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkStart(); err != nil {
		return err
	}
	s.began = true
	var parts []part
	if messageID != "" {
		parts = append(parts, part{codeStartStep, dsStartStep{MessageID: messageID}})
		s.step = true
	}
	if threadID != "" {
		parts = append(parts, part{codeAnnotations, []dsAnnotation{{ThreadID: threadID}}})
	}
	return s.send(parts...)
}

// Sources writes one h:{sourceType:"url", id, url, title} part per source.
func (s *DataStream) Sources(srcs []Source) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	if len(srcs) == 0 {
		return nil
	}
	s.content = true
	parts := make([]part, len(srcs))
	for i, src := range srcs {
		parts[i] = part{codeSource, dsSource{SourceType: "url", ID: src.ID, URL: src.URL, Title: src.Title}}
	}
	return s.send(parts...)
}

// TextStart writes nothing; it opens block id for TextDelta.
func (s *DataStream) TextStart(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, true); err != nil {
		return err
	}
	s.content = true
	s.open = append(s.open, id)
	return nil
}

// TextDelta writes a 0:"delta" text part.
func (s *DataStream) TextDelta(id, delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil || delta == "" {
		return err
	}
	return s.send(part{codeText, delta})
}

// TextEnd writes nothing; it closes block id.
func (s *DataStream) TextEnd(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil {
		return err
	}
	s.closeText(id)
	return nil
}

// Text writes a 0:"piece" text part per non-empty piece.
func (s *DataStream) Text(id string, pieces ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, true); err != nil {
		return err
	}
	s.content = true
	parts := make([]part, 0, len(pieces))
	for _, p := range pieces {
		if p != "" {
			parts = append(parts, part{codeText, p})
		}
	}
	return s.send(parts...)
}

// Heartbeat writes an empty line, which the client drops.
func (s *DataStream) Heartbeat() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.raw("\n")
	return s.flush()
}

// Finish writes e:{finishReason, usage, isContinued} closing the step Start
// opened, then d:{finishReason, usage, threadId}. The client drops the
// threadId key of d: (it reads the annotation written by Start); it is there
// for raw readers of "the finish event". topLevelThreadID has no meaning in
// this protocol and is ignored.
func (s *DataStream) Finish(threadID string, _ bool, usage *Usage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.closed = true
	s.open = nil
	var u *dsUsage
	if usage != nil {
		u = &dsUsage{PromptTokens: usage.InputTokens, CompletionTokens: usage.OutputTokens}
	}
	var parts []part
	if s.step {
		parts = append(parts, part{codeFinishStep, dsFinishStep{FinishReason: finishReason, Usage: u}})
		s.step = false
	}
	parts = append(parts, part{codeFinish, dsFinish{FinishReason: finishReason, Usage: u, ThreadID: threadID}})
	return s.send(parts...)
}

// Error writes a 3:"message" part, which the client throws as its error
// (keeping the text so far); nothing may follow it.
func (s *DataStream) Error(message string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.closed = true
	return s.send(part{codeError, errorText(message)})
}
