package aisdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Message is one element of a useChat request's "messages", in either
// protocol's shape:
//
//   - AI SDK 4: {role, content, parts?, id?, createdAt?, annotations?, …};
//     id is absent unless the app sets sendExtraMessageFields.
//   - AI SDK 5+: {id, role, parts, metadata?}; no content.
//
// Decoding is lenient the way the clients need: unknown fields, unknown part
// types and parts that are not objects are ignored, and every field is
// optional. What is read must have the right JSON type, though (id, role and
// content strings, parts an array, a text part's text a string); anything
// else is an error. Whether a message is acceptable (a known role, non-empty
// text) is for the caller to decide. Only the body's "messages" is decoded
// here; the rest of the body (fp, threadId, …) is the product's contract, not
// the SDK's.
type Message struct {
	ID   string // "" when the client sent none
	Role string // "user", "assistant", "system" as sent; not checked
	// Text is the message's text parts joined, or, when it has no text part,
	// its content (AI SDK 4 messages sent without parts).
	Text string
	// ThreadID is the thread this message says it belongs to: AI SDK 5+
	// metadata.threadId, or the last annotations[].threadId of AI SDK 4.
	// Set on assistant messages that came from our own streams.
	ThreadID string
}

// wireMessage is the union of both shapes, with the fields we only mine
// opportunistically left raw so that a surprising shape there is ignored.
type wireMessage struct {
	ID          *string           `json:"id"`
	Role        *string           `json:"role"`
	Content     *string           `json:"content"`
	Parts       []json.RawMessage `json:"parts"`
	Metadata    json.RawMessage   `json:"metadata"`
	Annotations json.RawMessage   `json:"annotations"`
}

type wirePart struct {
	Type string          `json:"type"`
	Text json.RawMessage `json:"text"`
}

// threadHolder is the shape of v2 metadata and of a v1 annotation that carry
// a threadId.
type threadHolder struct {
	ThreadID string `json:"threadId"`
}

// UnmarshalJSON decodes either protocol's message shape; see [Message].
func (m *Message) UnmarshalJSON(b []byte) error {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("message field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("message: %w", err)
	}
	msg := Message{}
	if w.ID != nil {
		msg.ID = *w.ID
	}
	if w.Role != nil {
		msg.Role = *w.Role
	}
	var text strings.Builder
	hasText := false
	for i, raw := range w.Parts {
		var p wirePart
		if json.Unmarshal(raw, &p) != nil || p.Type != "text" {
			continue // not an object, or a part we do not read
		}
		var s string
		if err := json.Unmarshal(p.Text, &s); err != nil {
			return fmt.Errorf("message parts[%d]: a text part's text must be a string", i)
		}
		text.WriteString(s)
		hasText = true
	}
	switch {
	case hasText:
		msg.Text = text.String()
	case w.Content != nil:
		msg.Text = *w.Content
	}
	msg.ThreadID = threadFromMetadata(w.Metadata)
	if msg.ThreadID == "" {
		msg.ThreadID = threadFromAnnotations(w.Annotations)
	}
	*m = msg
	return nil
}

func threadFromMetadata(raw json.RawMessage) string {
	var h threadHolder
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil {
		return ""
	}
	return h.ThreadID
}

func threadFromAnnotations(raw json.RawMessage) string {
	var items []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &items) != nil {
		return ""
	}
	for i := len(items) - 1; i >= 0; i-- {
		if id := threadFromMetadata(items[i]); id != "" {
			return id
		}
	}
	return ""
}

// ThreadIDFromHistory returns the threadId carried by the latest assistant
// message that has one, or "". Clients send it back there (v2 metadata, v1
// annotations) even when the app does not put threadId in the body; a
// body-level threadId, when present, should win.
func ThreadIDFromHistory(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" && msgs[i].ThreadID != "" {
			return msgs[i].ThreadID
		}
	}
	return ""
}
