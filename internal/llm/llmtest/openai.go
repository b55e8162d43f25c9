package llmtest

import (
	"encoding/json"
	"net/http"
	"testing"
)

// NewOpenAIServer starts a server that answers POST /v1/chat/completions
// with the turns, in order, as the OpenAI API streams them: "data: " lines of
// chat.completion.chunk JSON, then "data: [DONE]". The server stops when the
// test ends; a request beyond the script fails the test.
func NewOpenAIServer(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	return newServer(t, openaiProtocol{}, "/v1", turns)
}

// OpenAIHandler answers every POST /v1/chat/completions with turn, byte for
// byte as NewOpenAIServer does, without a test around it: for a benchmark
// binary that serves it on an address of its own. It keeps no record of
// the requests, and reports a failure of its own (a Cut it cannot make) to
// errorf.
func OpenAIHandler(turn Turn, errorf func(format string, args ...any)) http.Handler {
	s := &Server{proto: openaiProtocol{}, turns: []Turn{Forever(turn)}, done: make(chan struct{}), errorf: errorf}
	return http.HandlerFunc(s.serve)
}

type openaiProtocol struct{}

func (openaiProtocol) name() string { return "openai" }
func (openaiProtocol) path() string { return "/v1/chat/completions" }

func (openaiProtocol) errorBody(status int, message string) []byte {
	typ, code := "invalid_request_error", any(nil)
	switch status {
	case http.StatusUnauthorized:
		code = "invalid_api_key"
	case http.StatusNotFound:
		code = "model_not_found"
	case http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	default:
		if status >= 500 {
			typ = "server_error"
		}
	}
	return []byte(marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": code,
	}}))
}

type oaChunk struct {
	ID                string     `json:"id"`
	Object            string     `json:"object"`
	Created           int64      `json:"created"`
	Model             string     `json:"model"`
	SystemFingerprint string     `json:"system_fingerprint"`
	Choices           []oaChoice `json:"choices"`
	Usage             any        `json:"usage,omitempty"`
}

type oaChoice struct {
	Index        int     `json:"index"`
	Delta        oaDelta `json:"delta"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

type oaDelta struct {
	Role      string       `json:"role,omitempty"`
	Content   *string      `json:"content,omitempty"`
	Refusal   any          `json:"refusal,omitempty"`
	ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
}

type oaToolCall struct {
	Index    int        `json:"index"`
	ID       string     `json:"id,omitempty"`
	Type     string     `json:"type,omitempty"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (openaiProtocol) plan(t Turn, req Request) plan {
	model, _ := req.Body["model"].(string)
	var includeUsage bool
	if so, ok := req.Body["stream_options"].(map[string]any); ok {
		includeUsage, _ = so["include_usage"].(bool)
	}
	frame := func(choices []oaChoice, usage any) string {
		c := oaChunk{
			ID: "chatcmpl-llmtest", Object: "chat.completion.chunk", Created: 1700000000,
			Model: model, SystemFingerprint: "fp_llmtest", Choices: choices,
		}
		if includeUsage {
			c.Usage = json.RawMessage("null")
		}
		if usage != nil {
			c.Usage = usage
		}
		return "data: " + marshal(c) + "\n\n"
	}
	delta := func(d oaDelta) string {
		return frame([]oaChoice{{Delta: d}}, nil)
	}
	text := func(s string) string { return delta(oaDelta{Content: &s}) }

	empty := ""
	var p plan
	p.head = append(p.head, delta(oaDelta{Role: "assistant", Content: &empty, Refusal: json.RawMessage("null")}))
	if t.Endless {
		for _, s := range t.Text {
			p.loop = append(p.loop, text(s))
		}
		return p
	}
	for _, s := range t.Text {
		p.head = append(p.head, text(s))
	}

	// Each call: a chunk with its id and name, then its argument pieces.
	var perCall [][]string
	for i, c := range t.ToolCalls {
		frames := []string{delta(oaDelta{ToolCalls: []oaToolCall{{
			Index: i, ID: callID(c, "call_", i), Type: "function",
			Function: oaFunction{Name: c.Name},
		}}})}
		for _, piece := range split(c.Arguments, c.Chunks) {
			frames = append(frames, delta(oaDelta{ToolCalls: []oaToolCall{{
				Index: i, Function: oaFunction{Arguments: piece},
			}}}))
		}
		perCall = append(perCall, frames)
	}
	if t.InterleaveToolCalls {
		for round := 0; ; round++ {
			sent := false
			for _, frames := range perCall {
				if round < len(frames) {
					p.head = append(p.head, frames[round])
					sent = true
				}
			}
			if !sent {
				break
			}
		}
	} else {
		for _, frames := range perCall {
			p.head = append(p.head, frames...)
		}
	}

	if t.StreamError != "" {
		p.tail = []string{"data: " + marshal(map[string]any{"error": map[string]any{
			"message": t.errorMessage(), "type": t.StreamError, "param": nil, "code": nil,
		}}) + "\n\n"}
		return p
	}
	finish := t.StopReason
	if finish == "" {
		finish = "stop"
		if len(t.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	p.tail = append(p.tail, frame([]oaChoice{{FinishReason: &finish}}, nil))
	if includeUsage {
		p.tail = append(p.tail, frame([]oaChoice{}, oaUsage{
			PromptTokens:     t.Usage.InputTokens,
			CompletionTokens: t.Usage.OutputTokens,
			TotalTokens:      t.Usage.InputTokens + t.Usage.OutputTokens,
		}))
	}
	p.tail = append(p.tail, "data: [DONE]\n\n")
	return p
}
