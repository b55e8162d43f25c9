// Package llm is docsmith's one door to chat models: a small provider-neutral
// interface (messages, tools, streamed text, tool calls) that the agent's
// tool-calling loop and the assistant's streamed answers both use.
//
// Open returns a Model for "openai/MODEL" (any server that speaks the OpenAI
// Chat Completions API) or "anthropic/MODEL" (the Anthropic Messages API). The
// adapters live in llm/openai and llm/anthropic; retries, the per-call timeout
// and error wording live here, in one place, for both. llm/llmtest has
// scripted local servers that speak both wire protocols, for tests.
package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/llm/anthropic"
	"github.com/docsmith/docsmith/internal/llm/internal/core"
	"github.com/docsmith/docsmith/internal/llm/openai"
)

// Role says who wrote a message: RoleUser, RoleAssistant or RoleTool.
type Role = core.Role

// The roles of a conversation. The system prompt is Request.System.
const (
	RoleUser      = core.RoleUser
	RoleAssistant = core.RoleAssistant
	RoleTool      = core.RoleTool
)

// ToolCall is one call of a tool the model asked for: ID, Name, and
// Arguments, the raw JSON text exactly as the model produced it. Arguments may
// be malformed; the caller validates them.
type ToolCall = core.ToolCall

// Message is one turn of the conversation: Role, Content, the ToolCalls of
// an assistant message, and the ToolCallID (and IsError) of a tool result.
type Message = core.Message

// Tool is a function the model may call: Name, Description, and Parameters,
// a JSON Schema object.
type Tool = core.Tool

// Request is one call of the model: System prompt, Messages, Tools,
// MaxTokens (0: the provider's default), Temperature (nil: the provider's
// default), and Flush, called before the call waits for more of a streamed
// answer, for a caller that buffers the text it streams on.
type Request = core.Request

// Usage is what a call cost: InputTokens and OutputTokens.
type Usage = core.Usage

// Response is the model's complete answer: an assistant Message with its
// text and tool calls (several when it called tools in parallel), Usage and
// StopReason.
type Response = core.Response

// Model is a chat model:
//
//	Name() string
//	Chat(ctx context.Context, req Request, onText func(delta string)) (Response, error)
//
// Chat streams: onText, which may be nil, gets each piece of text as it
// arrives, in order, on the calling goroutine; Request.Flush, if set, is
// called there too, whenever Chat is about to wait for more.
type Model = core.Model

// Why the model stopped, the same words for every provider. Anything else is
// the provider's own word (for example "content_filter").
const (
	StopEnd       = core.StopEnd
	StopToolCalls = core.StopToolCalls
	StopMaxTokens = core.StopMaxTokens
)

// APIError is an error the provider reported, an HTTP error status or an
// error event inside a stream; errors.As finds it in what Chat returns.
type APIError = core.APIError

// ErrStreamCut is in the error Chat returns when the answer's stream ended
// before the model finished and could not be retried.
var ErrStreamCut = core.ErrStreamCut

// ErrCallTimeout is in the error Chat returns when Config.CallTimeout ran
// out; so is context.DeadlineExceeded.
var ErrCallTimeout = errors.New("call timeout")

// Defaults for the zero values of Config.
const (
	DefaultCallTimeout  = 10 * time.Minute
	DefaultMaxRetries   = 3
	DefaultRetryBase    = 500 * time.Millisecond
	DefaultMaxRetryWait = 30 * time.Second
)

// Config is what Open needs: where the providers are, their keys, and how
// hard to try.
type Config struct {
	// OpenAIBaseURL is the base URL of an OpenAI-compatible API, up to and
	// including its /v1 (e.g. "http://localhost:11434/v1" for Ollama).
	// Empty means OpenAI's own.
	OpenAIBaseURL string
	OpenAIAPIKey  string
	// AnthropicBaseURL is the base URL of the Messages API, without /v1.
	// Empty means Anthropic's own.
	AnthropicBaseURL string
	AnthropicAPIKey  string
	// CallTimeout bounds one Chat call, retries and waits included.
	// 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// MaxRetries is how many times a failed attempt is retried. 0 means
	// DefaultMaxRetries; a negative number means no retry.
	MaxRetries int
	// RetryBase is the first backoff; each retry doubles it, with jitter.
	// 0 means DefaultRetryBase.
	RetryBase time.Duration
	// MaxRetryWait caps one wait between attempts, a Retry-After the
	// provider asked for included. 0 means DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// HTTPClient sends the requests; nil means a new NewHTTPClient. It
	// should have no Timeout, which would cut long answers: CallTimeout
	// bounds calls. Share one between the models of a process, so that
	// they share its idle connections.
	HTTPClient *http.Client
	// Log gets a line for every retry; nil means no logging.
	Log *slog.Logger
}

// Open returns the model name denotes: "openai/MODEL" or "anthropic/MODEL".
// The MODEL part is passed to the server as it is and may itself contain
// slashes (e.g. "openai/meta-llama/Llama-3.1-8B-Instruct" on vLLM). Open
// sends nothing; a wrong key or URL shows in the first Chat. The Model is
// safe for concurrent use.
func Open(name string, cfg Config) (Model, error) {
	providerName, model, ok := strings.Cut(name, "/")
	if !ok || model == "" {
		return nil, fmt.Errorf("llm: model %q is not of the form openai/MODEL or anthropic/MODEL", name)
	}
	cfg = withDefaults(cfg)
	var (
		inner   Model
		secrets []string
		err     error
	)
	switch providerName {
	case "openai":
		inner, err = openai.New(openai.Options{
			Model:               model,
			BaseURL:             cfg.OpenAIBaseURL,
			APIKey:              cfg.OpenAIAPIKey,
			HTTPClient:          cfg.HTTPClient,
			MaxCompletionTokens: isOpenAIItself(cfg.OpenAIBaseURL),
		})
		secrets = []string{cfg.OpenAIAPIKey}
	case "anthropic":
		inner, err = anthropic.New(anthropic.Options{
			Model:      model,
			BaseURL:    cfg.AnthropicBaseURL,
			APIKey:     cfg.AnthropicAPIKey,
			HTTPClient: cfg.HTTPClient,
		})
		secrets = []string{cfg.AnthropicAPIKey}
	default:
		return nil, fmt.Errorf("llm: unknown provider %q in model %q: use openai/MODEL or anthropic/MODEL", providerName, name)
	}
	if err != nil {
		return nil, fmt.Errorf("llm: open %s: %w", name, err)
	}
	return &retrying{inner: inner, cfg: cfg, secrets: secrets}, nil
}

func withDefaults(cfg Config) Config {
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryBase <= 0 {
		cfg.RetryBase = DefaultRetryBase
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewHTTPClient()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// NewHTTPClient returns a client for model servers: the default transport's
// settings (the proxy from the environment, its timeouts), with room for
// 256 idle connections per server instead of the default 2, so that many
// answers streaming at once reuse their connections.
func NewHTTPClient() *http.Client { return core.NewHTTPClient() }

// isOpenAIItself reports whether baseURL is OpenAI's own API, whose newer
// models take max_completion_tokens where compatible servers take max_tokens.
func isOpenAIItself(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}
