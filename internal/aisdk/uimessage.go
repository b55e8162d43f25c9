package aisdk

import "net/http"

// UIMessageStream writes the AI SDK 5+ UI message stream (the v2 endpoint):
// Server-Sent Events, one "data: <JSON chunk>" per event, "data: [DONE]" at
// the end. It uses only chunk types and keys that every client from ai 5.0.0
// to 7.x accepts (its chunk schema): no finishReason on finish, and the
// top-level finish "threadId" only when the caller asks for it.
type UIMessageStream struct {
	*writer
	step bool // start-step written and not yet closed
}

var _ Stream = (*UIMessageStream)(nil)

// uiMessageStreamHeaders are the SDK's UI_MESSAGE_STREAM_HEADERS, except that
// Cache-Control also says no-store (our streams are never cached anywhere).
func uiMessageStreamHeaders() [][2]string {
	return [][2]string{
		{"Content-Type", "text/event-stream"},
		{"Cache-Control", "no-cache, no-store"},
		{"Connection", "keep-alive"},
		{"X-Vercel-Ai-Ui-Message-Stream", "v1"},
		{"X-Accel-Buffering", "no"},
	}
}

// NewUIMessageStream returns a v2 stream on w. Nothing is written until the
// first call; set your own headers on w before it.
func NewUIMessageStream(w http.ResponseWriter) *UIMessageStream {
	return &UIMessageStream{writer: newWriter(w, uiMessageStreamHeaders())}
}

// The chunks, one struct each so that a required key is never dropped by
// omitempty, with keys in the order the SDK writes them.
type (
	uiChunk struct {
		Type string `json:"type"`
	}
	uiMetadata struct {
		ThreadID string   `json:"threadId,omitempty"`
		Usage    *uiUsage `json:"usage,omitempty"`
	}
	uiUsage struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
		TotalTokens  int `json:"totalTokens"`
	}
	uiStart struct {
		Type            string      `json:"type"`
		MessageID       string      `json:"messageId,omitempty"`
		MessageMetadata *uiMetadata `json:"messageMetadata,omitempty"`
	}
	uiSourceURL struct {
		Type     string `json:"type"`
		SourceID string `json:"sourceId"`
		URL      string `json:"url"`
		Title    string `json:"title,omitempty"`
	}
	uiText struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	}
	uiTextDelta struct {
		Type  string `json:"type"`
		ID    string `json:"id"`
		Delta string `json:"delta"`
	}
	uiFinish struct {
		Type            string      `json:"type"`
		MessageMetadata *uiMetadata `json:"messageMetadata,omitempty"`
		ThreadID        string      `json:"threadId,omitempty"`
	}
	uiError struct {
		Type      string `json:"type"`
		ErrorText string `json:"errorText"`
	}
)

// send writes each chunk as one SSE event, all in one write and one flush,
// so the client sees them at once.
func (s *UIMessageStream) send(chunks ...any) error {
	if err := s.events(chunks...); err != nil {
		return err
	}
	return s.flush()
}

// events buffers each chunk as one SSE event.
func (s *UIMessageStream) events(chunks ...any) error {
	for _, c := range chunks {
		s.raw("data: ")
		if err := s.encode(c); err != nil {
			s.buf.Reset()
			return err
		}
		s.raw("\n")
	}
	return nil
}

// sendDone writes the chunks and the end-of-stream marker, "data: [DONE]".
func (s *UIMessageStream) sendDone(chunks ...any) error {
	if err := s.events(chunks...); err != nil {
		return err
	}
	s.raw("data: [DONE]\n\n")
	return s.flush()
}

func metadata(threadID string, usage *Usage) *uiMetadata {
	if threadID == "" && usage == nil {
		return nil
	}
	m := &uiMetadata{ThreadID: threadID}
	if usage != nil {
		m.Usage = &uiUsage{
			InputTokens:  usage.InputTokens,
			OutputTokens: usage.OutputTokens,
			TotalTokens:  usage.InputTokens + usage.OutputTokens,
		}
	}
	return m
}

// Start writes the start chunk (messageId, messageMetadata {threadId}) and a
// start-step, as the SDK's own server does.
func (s *UIMessageStream) Start(messageID, threadID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkStart(); err != nil {
		return err
	}
	s.began = true
	s.step = true
	return s.send(
		uiStart{Type: "start", MessageID: messageID, MessageMetadata: metadata(threadID, nil)},
		uiChunk{Type: "start-step"},
	)
}

// Sources writes one source-url chunk per source.
func (s *UIMessageStream) Sources(srcs []Source) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	if len(srcs) == 0 {
		return nil
	}
	s.content = true
	chunks := make([]any, len(srcs))
	for i, src := range srcs {
		chunks[i] = uiSourceURL{Type: "source-url", SourceID: src.ID, URL: src.URL, Title: src.Title}
	}
	return s.send(chunks...)
}

// TextStart writes text-start.
func (s *UIMessageStream) TextStart(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, true); err != nil {
		return err
	}
	s.content = true
	s.open = append(s.open, id)
	return s.send(uiText{Type: "text-start", ID: id})
}

// TextDelta writes text-delta.
func (s *UIMessageStream) TextDelta(id, delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil || delta == "" {
		return err
	}
	return s.send(uiTextDelta{Type: "text-delta", ID: id, Delta: delta})
}

// TextEnd writes text-end.
func (s *UIMessageStream) TextEnd(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil {
		return err
	}
	s.closeText(id)
	return s.send(uiText{Type: "text-end", ID: id})
}

// Text writes text-start, a text-delta per non-empty piece and text-end.
func (s *UIMessageStream) Text(id string, pieces ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, true); err != nil {
		return err
	}
	s.content = true
	chunks := make([]any, 0, len(pieces)+2)
	chunks = append(chunks, uiText{Type: "text-start", ID: id})
	for _, p := range pieces {
		if p != "" {
			chunks = append(chunks, uiTextDelta{Type: "text-delta", ID: id, Delta: p})
		}
	}
	chunks = append(chunks, uiText{Type: "text-end", ID: id})
	return s.send(chunks...)
}

// Heartbeat writes an SSE comment, ": ping", which eventsource-parser skips.
func (s *UIMessageStream) Heartbeat() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.raw(": ping\n\n")
	return s.flush()
}

// Finish writes text-end for each open block, finish-step (after a Start),
// the finish chunk with messageMetadata {threadId, usage} and no
// finishReason, then "data: [DONE]".
func (s *UIMessageStream) Finish(threadID string, topLevelThreadID bool, usage *Usage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.closed = true
	var chunks []any
	for _, id := range s.open {
		chunks = append(chunks, uiText{Type: "text-end", ID: id})
	}
	s.open = nil
	if s.step {
		chunks = append(chunks, uiChunk{Type: "finish-step"})
		s.step = false
	}
	fin := uiFinish{Type: "finish", MessageMetadata: metadata(threadID, usage)}
	if topLevelThreadID {
		fin.ThreadID = threadID
	}
	chunks = append(chunks, fin)
	return s.sendDone(chunks...)
}

// Error writes an error chunk, which every client treats as fatal (status
// "error", error.message = message, the text so far kept), then
// "data: [DONE]" as the SDK's SSE transform does when a stream ends.
func (s *UIMessageStream) Error(message string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	s.closed = true
	return s.sendDone(uiError{Type: "error", ErrorText: errorText(message)})
}
