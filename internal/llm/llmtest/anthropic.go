package llmtest

import (
	"net/http"
	"testing"
)

// NewAnthropicServer starts a server that answers POST /v1/messages with the
// turns, in order, as the Anthropic Messages API streams them: message_start,
// ping, content_block_start / content_block_delta / content_block_stop for
// each text or tool_use block, message_delta, message_stop. The server stops
// when the test ends; a request beyond the script fails the test.
func NewAnthropicServer(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	return newServer(t, anthropicProtocol{}, "", turns)
}

type anthropicProtocol struct{}

func (anthropicProtocol) name() string { return "anthropic" }
func (anthropicProtocol) path() string { return "/v1/messages" }

func (anthropicProtocol) errorBody(status int, message string) []byte {
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	return []byte(marshal(map[string]any{
		"type":       "error",
		"error":      map[string]any{"type": typ, "message": message},
		"request_id": "req_llmtest",
	}))
}

// anthropicEvent frames one event, its "type" first as the API sends it.
func anthropicEvent(typ string, data map[string]any) string {
	body := `{"type":` + marshal(typ)
	if rest := marshal(data); rest != "{}" {
		body += "," + rest[1:]
	} else {
		body += "}"
	}
	return "event: " + typ + "\ndata: " + body + "\n\n"
}

func (anthropicProtocol) plan(t Turn, req Request) plan {
	model, _ := req.Body["model"].(string)
	startOutput := 0
	if t.Usage.OutputTokens > 0 {
		startOutput = 1
	}
	var p plan
	p.head = append(p.head,
		anthropicEvent("message_start", map[string]any{"message": map[string]any{
			"id": "msg_llmtest", "type": "message", "role": "assistant", "content": []any{},
			"model": model, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": t.Usage.InputTokens, "output_tokens": startOutput,
				"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
			},
		}}),
		"event: ping\ndata: {\"type\": \"ping\"}\n\n",
	)
	index := 0
	textDelta := func(s string) string {
		return anthropicEvent("content_block_delta", map[string]any{
			"index": index, "delta": map[string]any{"type": "text_delta", "text": s},
		})
	}
	if len(t.Text) > 0 {
		p.head = append(p.head, anthropicEvent("content_block_start", map[string]any{
			"index": index, "content_block": map[string]any{"type": "text", "text": ""},
		}))
		if t.Endless {
			for _, s := range t.Text {
				p.loop = append(p.loop, textDelta(s))
			}
			return p
		}
		for _, s := range t.Text {
			p.head = append(p.head, textDelta(s))
		}
		p.head = append(p.head, anthropicEvent("content_block_stop", map[string]any{"index": index}))
		index++
	}
	for i, c := range t.ToolCalls {
		p.head = append(p.head, anthropicEvent("content_block_start", map[string]any{
			"index": index, "content_block": map[string]any{
				"type": "tool_use", "id": callID(c, "toolu_", i), "name": c.Name, "input": map[string]any{},
			},
		}))
		// The API opens every tool input with an empty delta.
		for _, piece := range append([]string{""}, split(c.Arguments, c.Chunks)...) {
			p.head = append(p.head, anthropicEvent("content_block_delta", map[string]any{
				"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece},
			}))
		}
		p.head = append(p.head, anthropicEvent("content_block_stop", map[string]any{"index": index}))
		index++
	}
	if t.StreamError != "" {
		p.tail = []string{"event: error\ndata: " + marshal(map[string]any{
			"type": "error", "error": map[string]any{"type": t.StreamError, "message": t.errorMessage()},
		}) + "\n\n"}
		return p
	}
	stop := t.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(t.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	p.tail = append(p.tail,
		anthropicEvent("message_delta", map[string]any{
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": t.Usage.OutputTokens},
		}),
		anthropicEvent("message_stop", map[string]any{}),
	)
	return p
}
