// Package openai adapts the OpenAI Chat Completions streaming API to the
// llm.Model interface, over the official github.com/openai/openai-go SDK. It
// works with every server that speaks that API (OpenAI, vLLM, llama.cpp's
// server, Ollama, OpenRouter) at a configurable base URL.
//
// The SDK builds and sends each request; the streamed response is read by
// the adapter's own decoder (sse.go, chunk.go, parse.go), which reads
// every stream as the SDK's would, at a small part of its cost: decoding
// each chunk through the SDK was most of what a streamed answer cost.
//
// A Chat call is exactly one HTTP request: the SDK's retries are off, and
// package llm, which opens these models, retries.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/docsmith/docsmith/internal/llm/internal/core"
)

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1/"

const provider = "openai"

// Options configure a Model.
type Options struct {
	// Model is the model's name as the server knows it, e.g. "gpt-4o-mini".
	Model string
	// BaseURL is where the API lives, up to and including its /v1, e.g.
	// "http://localhost:11434/v1". Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer …". Local servers may need
	// none.
	APIKey string
	// HTTPClient sends the requests; nil means a new core.NewHTTPClient.
	HTTPClient *http.Client
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens,
	// which OpenAI's reasoning models require, instead of max_tokens, which
	// every compatible server understands.
	MaxCompletionTokens bool
}

// Model is one model behind a Chat Completions API.
type Model struct {
	opts    Options
	service openai.ChatCompletionService
	// readers holds the chunkReaders of finished calls for the next ones:
	// a reader's buffers, its read buffer most of all, are most of what
	// reading a stream allocates.
	readers sync.Pool
}

// New returns the model opts describe. It sends nothing.
func New(opts Options) (*Model, error) {
	if opts.Model == "" {
		return nil, errors.New("openai: no model name")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL", opts.BaseURL)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = core.NewHTTPClient()
	}
	m := &Model{opts: opts}
	// NewChatCompletionService, unlike NewClient, reads nothing from the
	// environment: what is configured is what is sent.
	m.service = openai.NewChatCompletionService(
		option.WithBaseURL(opts.BaseURL),
		option.WithAPIKey(opts.APIKey),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithMaxRetries(0),
		option.WithMiddleware(m.errorStatus),
	)
	return m, nil
}

// Name is "openai/" and the model's name.
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

// Chat sends one streamed Chat Completions request.
func (m *Model) Chat(ctx context.Context, req core.Request, onText func(string)) (core.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return core.Response{}, err
	}
	// The SDK sends the request, as NewStreaming would (its auth, headers,
	// base URL and our middleware), and hands over the response unread:
	// the stream is read here, by a chunkReader.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var res *http.Response
	_, err = m.service.New(ctx, params, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&res))
	if err != nil {
		return core.Response{}, m.streamError(err)
	}
	defer func() { _ = res.Body.Close() }()

	body := io.Reader(res.Body)
	if req.Flush != nil {
		body = &flushingReader{r: body, flush: req.Flush}
	}
	chunks := m.chunkReader(body)
	defer m.release(chunks)
	var a answer
	for {
		c, err := chunks.next()
		if errors.Is(err, errDone) {
			chunks.events.drain(cancel)
			break
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return core.Response{}, m.streamError(err)
		}
		a.add(c, onText)
	}
	return a.response()
}

// chunkReader returns a chunkReader of body: one that a finished call
// released, if there is one.
func (m *Model) chunkReader(body io.Reader) *chunkReader {
	if r, ok := m.readers.Get().(*chunkReader); ok {
		r.reset(body)
		return r
	}
	return newChunkReader(newSSEReader(body))
}

// release keeps r for a next call, which may read with it at once: the
// chunks r read are not used after, and the strings the answer took from
// them stay valid.
func (m *Model) release(r *chunkReader) {
	r.reset(nil) // so as to hold on to neither the body nor the caller's Flush
	m.readers.Put(r)
}

// answer puts a streamed answer together, chunk by chunk.
type answer struct {
	text     strings.Builder
	calls    []*core.ToolCall
	byIndex  map[int64]*core.ToolCall
	usage    core.Usage
	stop     string
	finished bool
}

// add takes in one chunk, giving its text to onText.
func (a *answer) add(c *chunk, onText func(string)) {
	if c.hasUsage {
		a.usage = core.Usage{InputTokens: int(c.promptTokens), OutputTokens: int(c.completionTokens)}
	}
	for i := range c.choices {
		choice := &c.choices[i]
		if choice.index != 0 {
			continue // n is never set, but a server may be odd
		}
		for _, piece := range []string{choice.content, choice.refusal} {
			if piece != "" {
				a.text.WriteString(piece)
				if onText != nil {
					onText(piece)
				}
			}
		}
		for _, d := range choice.toolCalls {
			a.addToolCall(d)
		}
		if choice.finishReason != "" {
			a.stop = stopReason(choice.finishReason)
			a.finished = true
		}
	}
}

// addToolCall takes in a piece of a tool call.
func (a *answer) addToolCall(d toolCallDelta) {
	if a.byIndex == nil {
		a.byIndex = map[int64]*core.ToolCall{}
	}
	call := a.byIndex[d.index]
	// A server that numbers every call 0 still gives each its own ID.
	if call == nil || (d.id != "" && call.ID != "" && d.id != call.ID) {
		call = &core.ToolCall{}
		a.byIndex[d.index] = call
		a.calls = append(a.calls, call)
	}
	if call.ID == "" {
		call.ID = d.id
	}
	if call.Name == "" {
		call.Name = d.name
	}
	call.Arguments += d.arguments
}

// response is the finished answer, or the error of a stream that ended
// without a finish reason.
func (a *answer) response() (core.Response, error) {
	if !a.finished {
		return core.Response{}, fmt.Errorf("%s: %w: the server closed the stream without a finish reason", provider, core.ErrStreamCut)
	}
	stop := a.stop
	if len(a.calls) > 0 && stop == core.StopEnd {
		stop = core.StopToolCalls // some servers say "stop" after tool calls
	}
	resp := core.Response{
		Message:    core.Message{Role: core.RoleAssistant, Content: a.text.String()},
		Usage:      a.usage,
		StopReason: stop,
	}
	for _, c := range a.calls {
		if c.Arguments == "" {
			c.Arguments = "{}" // some servers send nothing for a call without arguments
		}
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, *c)
	}
	return resp, nil
}

// streamError says what ended the stream.
func (m *Model) streamError(err error) error {
	var inStream *ssestream.StreamError
	if errors.As(err, &inStream) {
		typ, msg := core.ParseErrorBody(inStream.Event.Data)
		return &core.APIError{
			Provider:   provider,
			StatusCode: core.StatusOfStreamError(typ),
			Type:       typ,
			Message:    core.Redact(msg, m.opts.APIKey),
			InStream:   true,
		}
	}
	if errors.Is(err, errEventTooLarge) {
		// Not a cut stream: the same server would send the same again.
		return fmt.Errorf("%s: %w", provider, err)
	}
	return core.StreamFailure(provider, m.opts.BaseURL, err)
}

func stopReason(finish string) string {
	switch finish {
	case "stop":
		return core.StopEnd
	case "tool_calls", "function_call":
		return core.StopToolCalls
	case "length":
		return core.StopMaxTokens
	}
	return finish
}

// params translates req into the SDK's request.
func (m *Model) params(req core.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         m.opts.Model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case core.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(msg.Content))
		case core.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      c.Name,
							Arguments: c.Arguments,
						},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case core.RoleTool:
			content := msg.Content
			if msg.IsError {
				// The API has no error flag for tool results; say it in words.
				content = "error: " + content
			}
			p.Messages = append(p.Messages, openai.ToolMessage(content, msg.ToolCallID))
		default:
			return p, fmt.Errorf("%s: message %d has unknown role %q", provider, i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema := openai.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(t.Parameters) > 0 {
			schema = openai.FunctionParameters{}
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, fmt.Errorf("%s: parameters of tool %q are not a JSON object: %w", provider, t.Name, err)
			}
		}
		def := openai.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if req.MaxTokens > 0 {
		if m.opts.MaxCompletionTokens {
			p.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	return p, nil
}
