package aisdk

import (
	"encoding/json"
	"net/http"
)

// UIMessageStream writes the AI SDK 5+ UI message stream (the v2 endpoint):
// Server-Sent Events, one "data: <JSON chunk>" per event, "data: [DONE]" at
// the end. It uses only chunk types and keys that every client from ai 5.0.0
// to 7.x accepts (its chunk schema): no finishReason on finish, and the
// top-level finish "threadId" only when the caller asks for it.
type UIMessageStream struct {
	writer
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
	s := &UIMessageStream{}
	s.init(w, uiMessageStreamHeaders())
	return s
}

// The chunks, with keys in the order the SDK writes them; a key marked ? is
// left out when empty, every other one is always there:
//
//	{"type":"start","messageId"?,"messageMetadata"?}
//	{"type":"start-step"}
//	{"type":"source-url","sourceId","url","title"?,"providerMetadata"?}
//	{"type":"data-<name>","id"?,"data"}
//	{"type":"text-start","id"}
//	{"type":"text-delta","id","delta"}
//	{"type":"text-end","id"}
//	{"type":"finish-step"}
//	{"type":"finish","messageMetadata"?,"threadId"?}
//	{"type":"error","errorText"}
//
// messageMetadata is {"threadId"?,"usage"?, the caller's members…}, and
// usage is {"inputTokens","outputTokens","totalTokens"}.

// chunk begins the event of a chunk of type typ (a constant name), whose
// other members the caller appends before endChunk.
func (s *UIMessageStream) chunk(typ string) {
	s.raw(`data: {"type":"`)
	s.raw(typ)
	s.raw(`"`)
}

// endChunk ends the chunk's object and its event.
func (s *UIMessageStream) endChunk() { s.raw("}\n\n") }

// bare appends a chunk with no member but its type.
func (s *UIMessageStream) bare(typ string) {
	s.chunk(typ)
	s.endChunk()
}

// text appends a text-start or text-end chunk.
func (s *UIMessageStream) text(typ, id string) {
	s.chunk(typ)
	s.buf = appendStringMember(s.buf, "id", id)
	s.endChunk()
}

// delta appends a text-delta chunk.
func (s *UIMessageStream) delta(id, delta string) {
	s.chunk("text-delta")
	s.buf = appendStringMember(s.buf, "id", id)
	s.buf = appendStringMember(s.buf, "delta", delta)
	s.endChunk()
}

// metadata appends the messageMetadata member, if there is anything in it.
func (s *UIMessageStream) metadata(threadID string, usage *Usage, extra []Member) {
	if threadID == "" && usage == nil && len(extra) == 0 {
		return
	}
	s.buf = append(appendKey(s.buf, "messageMetadata"), '{')
	if threadID != "" {
		s.buf = appendStringMember(s.buf, "threadId", threadID)
	}
	if usage != nil {
		s.buf = append(appendKey(s.buf, "usage"), '{')
		s.buf = appendIntMember(s.buf, "inputTokens", usage.InputTokens)
		s.buf = appendIntMember(s.buf, "outputTokens", usage.OutputTokens)
		s.buf = appendIntMember(s.buf, "totalTokens", usage.InputTokens+usage.OutputTokens)
		s.buf = append(s.buf, '}')
	}
	s.buf = append(appendFinishMetadata(s.buf, extra), '}')
}

// done appends the end-of-stream marker.
func (s *UIMessageStream) done() { s.raw("data: [DONE]\n\n") }

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
	s.chunk("start")
	if messageID != "" {
		s.buf = appendStringMember(s.buf, "messageId", messageID)
	}
	s.metadata(threadID, nil, nil)
	s.endChunk()
	s.bare("start-step")
	return s.flush()
}

// Sources writes one source-url chunk per source.
func (s *UIMessageStream) Sources(srcs []Source) error { return s.sources(srcs, true) }

// BufferSources is Sources, held for the next call that writes.
func (s *UIMessageStream) BufferSources(srcs []Source) error { return s.sources(srcs, false) }

// sources writes the source parts, now or (flush false) with the next write.
func (s *UIMessageStream) sources(srcs []Source, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkSources(srcs); err != nil {
		return err
	}
	if len(srcs) == 0 {
		return nil
	}
	s.content = true
	for _, src := range srcs {
		s.chunk("source-url")
		s.buf = appendStringMember(s.buf, "sourceId", src.ID)
		s.buf = appendStringMember(s.buf, "url", src.URL)
		if src.Title != "" {
			s.buf = appendStringMember(s.buf, "title", src.Title)
		}
		if len(src.ProviderMetadata) > 0 {
			s.buf = appendJSON(appendKey(s.buf, "providerMetadata"), src.ProviderMetadata)
		}
		s.endChunk()
	}
	if !flush {
		return s.hold()
	}
	return s.flush()
}

// Data writes a data-<name> chunk, {"type":"data-<name>","id"?,"data"}:
// the client adds it to message.parts (a later one with the same name and
// id replaces it) and calls onData. Every client from ai 5.0.0 accepts it.
func (s *UIMessageStream) Data(name, id string, value json.RawMessage) error {
	return s.data(name, id, value, true)
}

// BufferData is Data, held for the next call that writes.
func (s *UIMessageStream) BufferData(name, id string, value json.RawMessage) error {
	return s.data(name, id, value, false)
}

// data writes a data chunk, now or (flush false) with the next write.
func (s *UIMessageStream) data(name, id string, value json.RawMessage, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkData(name, value); err != nil {
		return err
	}
	s.content = true
	s.raw(`data: {"type":"data-`)
	s.raw(name)
	s.raw(`"`)
	if id != "" {
		s.buf = appendStringMember(s.buf, "id", id)
	}
	s.buf = appendJSON(appendKey(s.buf, "data"), value)
	s.endChunk()
	if !flush {
		return s.hold()
	}
	return s.flush()
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
	s.text("text-start", id)
	// Held: an open block shows nothing until its first text, which it
	// goes out with.
	return s.hold()
}

// TextDelta writes text-delta.
func (s *UIMessageStream) TextDelta(id, delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil || delta == "" {
		return err
	}
	s.delta(id, delta)
	return s.flush()
}

// BufferTextDelta holds a text-delta for the next write.
func (s *UIMessageStream) BufferTextDelta(id, delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil || delta == "" {
		return err
	}
	s.delta(id, delta)
	return s.hold()
}

// TextEnd writes text-end.
func (s *UIMessageStream) TextEnd(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil {
		return err
	}
	s.closeText(id)
	s.text("text-end", id)
	return s.flush()
}

// Text writes text-start, a text-delta per non-empty piece and text-end.
func (s *UIMessageStream) Text(id string, pieces ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, true); err != nil {
		return err
	}
	s.content = true
	s.text("text-start", id)
	for _, p := range pieces {
		if p != "" {
			s.delta(id, p)
		}
	}
	s.text("text-end", id)
	return s.flush()
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
// the finish chunk with messageMetadata {threadId, usage, metadata…} and no
// finishReason, then "data: [DONE]".
func (s *UIMessageStream) Finish(threadID string, topLevelThreadID bool, usage *Usage, metadata ...Member) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkFinish(metadata); err != nil {
		return err
	}
	s.closed = true
	for _, id := range s.open {
		s.text("text-end", id)
	}
	s.open = nil
	if s.step {
		s.bare("finish-step")
		s.step = false
	}
	s.chunk("finish")
	s.metadata(threadID, usage, metadata)
	if topLevelThreadID && threadID != "" {
		s.buf = appendStringMember(s.buf, "threadId", threadID)
	}
	s.endChunk()
	s.done()
	return s.flush()
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
	s.chunk("error")
	s.buf = appendStringMember(s.buf, "errorText", errorText(message))
	s.endChunk()
	s.done()
	return s.flush()
}
