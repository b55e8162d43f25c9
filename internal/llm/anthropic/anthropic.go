// Package anthropic adapts the Anthropic Messages streaming API to the
// llm.Model interface, over the official github.com/anthropics/anthropic-sdk-go
// SDK, at a configurable base URL.
//
// A Chat call is exactly one HTTP request: the SDK's retries are off, and
// package llm, which opens these models, retries.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/docsmith/docsmith/internal/llm/internal/core"
)

// DefaultBaseURL is Anthropic's own API.
const DefaultBaseURL = "https://api.anthropic.com/"

// DefaultMaxTokens bounds an answer when the Request does not: the Messages
// API requires a bound.
const DefaultMaxTokens = 8192

const provider = "anthropic"

// Options configure a Model.
type Options struct {
	// Model is the model's name, e.g. "claude-sonnet-4-5".
	Model string
	// BaseURL is where the API lives, without the /v1. Empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as the X-Api-Key header.
	APIKey string
	// HTTPClient sends the requests; nil means a new core.NewHTTPClient.
	HTTPClient *http.Client
}

// Model is one model behind the Messages API.
type Model struct {
	opts    Options
	service anthropic.MessageService
}

// New returns the model opts describe. It sends nothing.
func New(opts Options) (*Model, error) {
	if opts.Model == "" {
		return nil, errors.New("anthropic: no model name")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic: base URL %q is not an http(s) URL", opts.BaseURL)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = core.NewHTTPClient()
	}
	m := &Model{opts: opts}
	// NewMessageService, unlike NewClient, reads nothing from the environment
	// or from profile files: what is configured is what is sent.
	m.service = anthropic.NewMessageService(
		option.WithBaseURL(opts.BaseURL),
		option.WithAPIKey(opts.APIKey),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithMaxRetries(0),
		option.WithoutOpenTelemetry(),
		option.WithMiddleware(m.errorStatus),
	)
	return m, nil
}

// Name is "anthropic/" and the model's name.
func (m *Model) Name() string { return provider + "/" + m.opts.Model }

// errorStatus turns every error status into a *core.APIError before the SDK
// sees it, so that errors read the same for every provider and never carry
// the key.
func (m *Model) errorStatus(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= http.StatusBadRequest {
		return nil, core.NewAPIError(provider, res, m.opts.APIKey)
	}
	return res, nil
}

// block is a content block of the answer as it streams in.
type block struct {
	kind string // "text", "tool_use", or another type that is skipped
	call core.ToolCall
}

// Chat sends one streamed Messages request.
func (m *Model) Chat(ctx context.Context, req core.Request, onText func(string)) (core.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return core.Response{}, err
	}
	stream := m.service.NewStreaming(ctx, params)
	defer func() { _ = stream.Close() }()

	var (
		text     strings.Builder
		blocks   []*block
		byIndex  = map[int64]*block{}
		usage    core.Usage
		stop     string
		finished bool
	)
	emit := func(s string) {
		if s != "" {
			text.WriteString(s)
			if onText != nil {
				onText(s)
			}
			// The SDK's decoder does not tell whether more has arrived,
			// so every piece is flushed on its own.
			if req.Flush != nil {
				req.Flush()
			}
		}
	}
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			usage.InputTokens = int(ev.Message.Usage.InputTokens)
			usage.OutputTokens = int(ev.Message.Usage.OutputTokens)
		case "content_block_start":
			b := &block{kind: ev.ContentBlock.Type}
			if b.kind == "tool_use" {
				b.call = core.ToolCall{ID: ev.ContentBlock.ID, Name: ev.ContentBlock.Name}
			}
			byIndex[ev.Index] = b
			blocks = append(blocks, b)
			if b.kind == "text" {
				emit(ev.ContentBlock.Text)
			}
		case "content_block_delta":
			b := byIndex[ev.Index]
			if b == nil {
				return core.Response{}, fmt.Errorf("%s: the server sent a delta for block %d, which it never started", provider, ev.Index)
			}
			switch ev.Delta.Type {
			case "text_delta":
				emit(ev.Delta.Text)
			case "input_json_delta":
				b.call.Arguments += ev.Delta.PartialJSON
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				stop = stopReason(string(ev.Delta.StopReason))
			}
			if ev.Usage.InputTokens > 0 {
				usage.InputTokens = int(ev.Usage.InputTokens)
			}
			if ev.Usage.OutputTokens > 0 {
				usage.OutputTokens = int(ev.Usage.OutputTokens)
			}
		case "message_stop":
			finished = true
		}
	}
	if err := stream.Err(); err != nil {
		return core.Response{}, m.streamError(err)
	}
	if !finished {
		return core.Response{}, fmt.Errorf("%s: %w: the server closed the stream before message_stop", provider, core.ErrStreamCut)
	}
	resp := core.Response{
		Message:    core.Message{Role: core.RoleAssistant, Content: text.String()},
		Usage:      usage,
		StopReason: stop,
	}
	for _, b := range blocks {
		if b.kind != "tool_use" {
			continue
		}
		if b.call.Arguments == "" {
			b.call.Arguments = "{}" // a call without input streams no delta
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, b.call)
	}
	return resp, nil
}

// streamError says what ended the stream.
func (m *Model) streamError(err error) error {
	var inStream *anthropic.Error
	if errors.As(err, &inStream) {
		typ, msg := core.ParseErrorBody([]byte(inStream.RawJSON()))
		return &core.APIError{
			Provider:   provider,
			StatusCode: core.StatusOfStreamError(typ),
			Type:       typ,
			Message:    core.Redact(msg, m.opts.APIKey),
			InStream:   true,
		}
	}
	return core.StreamFailure(provider, m.opts.BaseURL, err)
}

func stopReason(reason string) string {
	switch reason {
	case "end_turn", "stop_sequence":
		return core.StopEnd
	case "tool_use":
		return core.StopToolCalls
	case "max_tokens":
		return core.StopMaxTokens
	}
	return reason
}

// params translates req into the SDK's request. Tool results become user
// messages of tool_result blocks, and consecutive messages of one role are
// merged, because the API wants the roles to alternate and all the results
// of parallel calls in the one user message that follows them.
func (m *Model) params(req core.Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{
		Model:     m.opts.Model,
		MaxTokens: DefaultMaxTokens,
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	add := func(role anthropic.MessageParamRole, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
			p.Messages[n-1].Content = append(p.Messages[n-1].Content, blocks...)
			return
		}
		p.Messages = append(p.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case core.RoleUser:
			if msg.Content != "" {
				add(anthropic.MessageParamRoleUser, anthropic.NewTextBlock(msg.Content))
			}
		case core.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Content))
			}
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, toolInput(c.Arguments), c.Name))
			}
			add(anthropic.MessageParamRoleAssistant, blocks...)
		case core.RoleTool:
			result := anthropic.ToolResultBlockParam{ToolUseID: msg.ToolCallID}
			if msg.Content != "" {
				result.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: msg.Content}}}
			}
			if msg.IsError {
				result.IsError = anthropic.Bool(true)
			}
			add(anthropic.MessageParamRoleUser, anthropic.ContentBlockParamUnion{OfToolResult: &result})
		default:
			return p, fmt.Errorf("%s: message %d has unknown role %q", provider, i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Parameters)
		if err != nil {
			return p, fmt.Errorf("%s: parameters of tool %q are not a JSON object: %w", provider, t.Name, err)
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	return p, nil
}

// toolInput is the input of a past tool_use block. The API takes an object,
// so arguments that are not one (the model wrote malformed JSON, which the
// caller answered with an error result) go back as an empty object.
func toolInput(arguments string) any {
	raw := bytes.TrimSpace([]byte(arguments))
	if len(raw) > 0 && raw[0] == '{' && json.Valid(raw) {
		return json.RawMessage(raw)
	}
	return map[string]any{}
}

// inputSchema splits a JSON Schema object into the SDK's fields.
func inputSchema(parameters json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(bytes.TrimSpace(parameters)) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(parameters, &fields); err != nil {
		return s, err
	}
	for k, v := range fields {
		switch k {
		case "type":
			// always "object"
		case "properties":
			s.Properties = v
		case "required":
			if err := json.Unmarshal(v, &s.Required); err != nil {
				return s, fmt.Errorf("required: %w", err)
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	return s, nil
}
