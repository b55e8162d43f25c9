// Package core holds the provider-neutral types of package llm. They live here,
// not in llm, so that llm (which opens the adapters) and the adapters (which
// speak these types) can share them without an import cycle; llm re-exports
// every name, and code outside internal/llm uses those names.
package core

import (
	"context"
	"encoding/json"
	"errors"
)

// Role says who wrote a message.
type Role string

// The roles of a conversation. The system prompt is not a message: it is
// Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one call of a tool the model asked for.
type ToolCall struct {
	ID   string
	Name string
	// Arguments is the raw JSON text exactly as the model produced it. It may
	// be malformed: the caller validates it.
	Arguments string
}

// Message is one turn of the conversation.
type Message struct {
	Role    Role
	Content string
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall
	// ToolCallID is the call a tool message answers.
	ToolCallID string
	// IsError marks a tool result that is an error.
	IsError bool
}

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object. Empty means no parameters.
	Parameters json.RawMessage
}

// Request is one call of the model.
type Request struct {
	System   string
	Messages []Message
	Tools    []Tool
	// MaxTokens bounds the answer; 0 leaves it to the provider (Anthropic,
	// which requires one, then gets a default).
	MaxTokens int
	// Temperature is left to the provider when nil.
	Temperature *float64
	// Flush, when set, is called on the goroutine that called Chat before
	// Chat waits on the network for more of the answer, and so after the
	// last piece of text of every burst: a caller that writes the pieces
	// onText gets without flushing them (so that a burst read from the
	// network at once reaches its reader in one write) flushes them then.
	// It may come when no text came since the last call.
	Flush func()
}

// Usage is what a call cost, in tokens.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Response is the model's complete answer to one Request.
type Response struct {
	// Message has the role assistant: its text and its tool calls, several
	// when the model called tools in parallel.
	Message Message
	Usage   Usage
	// StopReason is StopEnd, StopToolCalls or StopMaxTokens, or the
	// provider's own word for anything else (for example "content_filter").
	StopReason string
}

// Model is a chat model.
type Model interface {
	// Name is the model's full name, e.g. "openai/gpt-4o-mini".
	Name() string
	// Chat sends req and streams the answer: onText, which may be nil, gets
	// each piece of text as it arrives, in order, from the goroutine that
	// called Chat. Chat returns once the answer is complete.
	Chat(ctx context.Context, req Request, onText func(delta string)) (Response, error)
}

// Why the model stopped, the same words for every provider.
const (
	StopEnd       = "end"
	StopToolCalls = "tool_calls"
	StopMaxTokens = "max_tokens"
)

// ErrStreamCut means the answer's stream ended before the model finished:
// the connection dropped or the server stopped sending.
var ErrStreamCut = errors.New("the stream was cut before the model finished")
