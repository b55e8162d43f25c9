package aisdk

import (
	"encoding/json"
	"net/http"
)

// DataStream writes the AI SDK 4 data stream (the v1 endpoint): one
// "<code>:<JSON>" part per line (AI SDK 4 data stream protocol). Text blocks have no
// boundaries in this protocol: TextStart and TextEnd only keep the call order
// the same as for [UIMessageStream], and consecutive blocks join into one
// text part on the client.
type DataStream struct {
	writer
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
	s := &DataStream{}
	s.init(w, dataStreamHeaders())
	return s
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

// The parts' values, with keys in the order the SDK writes them; a key
// marked ? is left out when empty, every other one is always there:
//
//	f:{"messageId"}
//	8:[{"threadId"}]
//	h:{"sourceType":"url","id","url","title"?,"providerMetadata"?}
//	8:[{"<dataName>":data}]
//	0:"text"
//	e:{"finishReason","usage"?,"isContinued":false}
//	d:{"finishReason","usage"?,"threadId"?, the caller's members…}
//	3:"error text"
//
// usage is {"promptTokens","completionTokens"}.

// part begins a line: its code and the colon.
func (s *DataStream) part(code string) {
	s.raw(code)
	s.raw(":")
}

// stringPart appends a line whose value is a string.
func (s *DataStream) stringPart(code, value string) {
	s.part(code)
	s.buf = append(appendString(s.buf, value), '\n')
}

// finishPart begins the value of e: or d:, {"finishReason", "usage"?, …},
// which the caller ends.
func (s *DataStream) finishPart(code string, usage *Usage) {
	s.part(code)
	s.raw("{")
	s.buf = appendStringMember(s.buf, "finishReason", finishReason)
	if usage != nil {
		s.buf = append(appendKey(s.buf, "usage"), '{')
		s.buf = appendIntMember(s.buf, "promptTokens", usage.InputTokens)
		s.buf = appendIntMember(s.buf, "completionTokens", usage.OutputTokens)
		s.buf = append(s.buf, '}')
	}
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
	if messageID != "" {
		s.part(codeStartStep)
		s.raw("{")
		s.buf = appendStringMember(s.buf, "messageId", messageID)
		s.raw("}\n")
		s.step = true
	}
	if threadID != "" {
		s.part(codeAnnotations)
		s.raw("[{")
		s.buf = appendStringMember(s.buf, "threadId", threadID)
		s.raw("}]\n")
	}
	return s.flush()
}

// Sources writes one h:{sourceType:"url", id, url, title} part per source.
func (s *DataStream) Sources(srcs []Source) error { return s.sources(srcs, true) }

// BufferSources is Sources, held for the next call that writes.
func (s *DataStream) BufferSources(srcs []Source) error { return s.sources(srcs, false) }

// sources writes the source parts, now or (flush false) with the next write.
func (s *DataStream) sources(srcs []Source, flush bool) error {
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
		s.part(codeSource)
		s.raw(`{"sourceType":"url"`)
		s.buf = appendStringMember(s.buf, "id", src.ID)
		s.buf = appendStringMember(s.buf, "url", src.URL)
		if src.Title != "" {
			s.buf = appendStringMember(s.buf, "title", src.Title)
		}
		if len(src.ProviderMetadata) > 0 {
			s.buf = appendJSON(appendKey(s.buf, "providerMetadata"), src.ProviderMetadata)
		}
		s.raw("}\n")
	}
	if !flush {
		return s.hold()
	}
	return s.flush()
}

// Data writes the value as a message annotation, 8:[{"<dataName>":value}],
// where dataName is name in camel case ("answer-status" gives
// "answerStatus"): the client appends it to message.annotations, which it
// keeps with the message and sends back with the history. The id has no
// place in this protocol and is not sent.
func (s *DataStream) Data(name, _ string, value json.RawMessage) error {
	return s.data(name, value, true)
}

// BufferData is Data, held for the next call that writes.
func (s *DataStream) BufferData(name, _ string, value json.RawMessage) error {
	return s.data(name, value, false)
}

// data writes an annotation, now or (flush false) with the next write.
func (s *DataStream) data(name string, value json.RawMessage, flush bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkData(name, value); err != nil {
		return err
	}
	s.content = true
	s.part(codeAnnotations)
	s.raw("[{")
	s.buf = appendJSON(appendKey(s.buf, camelName(name)), value)
	s.raw("}]\n")
	if !flush {
		return s.hold()
	}
	return s.flush()
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
	s.stringPart(codeText, delta)
	return s.flush()
}

// BufferTextDelta holds a 0:"delta" text part for the next write.
func (s *DataStream) BufferTextDelta(id, delta string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkText(id, false); err != nil || delta == "" {
		return err
	}
	s.stringPart(codeText, delta)
	return s.hold()
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
	for _, p := range pieces {
		if p != "" {
			s.stringPart(codeText, p)
		}
	}
	return s.flush()
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
// opened, then d:{finishReason, usage, threadId, metadata…}. The client drops the
// threadId key of d: (it reads the annotation written by Start); it is there
// for raw readers of "the finish event", as are the metadata members (send
// what a client needs as Data too). topLevelThreadID has no meaning in
// this protocol and is ignored.
func (s *DataStream) Finish(threadID string, _ bool, usage *Usage, metadata ...Member) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkFinish(metadata); err != nil {
		return err
	}
	s.closed = true
	s.open = nil
	if s.step {
		s.finishPart(codeFinishStep, usage)
		s.raw(`,"isContinued":false}` + "\n")
		s.step = false
	}
	s.finishPart(codeFinish, usage)
	if threadID != "" {
		s.buf = appendStringMember(s.buf, "threadId", threadID)
	}
	s.buf = appendFinishMetadata(s.buf, metadata)
	s.raw("}\n")
	return s.flush()
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
	s.stringPart(codeError, errorText(message))
	return s.flush()
}
