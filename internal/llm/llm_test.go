package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

const testKey = "sk-test-SECRET-0123456789"

// provider is what a test needs to know to run against either API.
type provider struct {
	name      string
	newServer func(testing.TB, ...llmtest.Turn) *llmtest.Server
	config    func(baseURL string) llm.Config
	// keySent is the API key as the request carried it.
	keySent func(http.Header) string
}

func providers() []provider {
	return []provider{
		{
			name:      "openai",
			newServer: llmtest.NewOpenAIServer,
			config: func(u string) llm.Config {
				return llm.Config{OpenAIBaseURL: u, OpenAIAPIKey: testKey}
			},
			keySent: func(h http.Header) string { return strings.TrimPrefix(h.Get("Authorization"), "Bearer ") },
		},
		{
			name:      "anthropic",
			newServer: llmtest.NewAnthropicServer,
			config: func(u string) llm.Config {
				return llm.Config{AnthropicBaseURL: u, AnthropicAPIKey: testKey}
			},
			keySent: func(h http.Header) string { return h.Get("X-Api-Key") },
		},
	}
}

// open opens the provider's model on srv with fast retries; tweak adjusts
// the config.
func (p provider) open(t *testing.T, baseURL string, tweak func(*llm.Config)) llm.Model {
	t.Helper()
	cfg := p.config(baseURL)
	cfg.CallTimeout = 10 * time.Second
	cfg.MaxRetries = 3
	cfg.RetryBase = time.Millisecond
	cfg.MaxRetryWait = 200 * time.Millisecond
	if tweak != nil {
		tweak(&cfg)
	}
	m, err := llm.Open(p.name+"/test-model", cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return m
}

// chat calls m with a one-line question and collects the streamed deltas.
func chat(t *testing.T, m llm.Model) (llm.Response, []string, error) {
	t.Helper()
	var deltas []string
	resp, err := m.Chat(t.Context(), llm.Request{
		System:   "You are terse.",
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi?"}},
	}, func(d string) { deltas = append(deltas, d) })
	return resp, deltas, err
}

func TestChatStreamsText(t *testing.T) {
	t.Parallel()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := p.newServer(t, llmtest.Text("Hel", "lo, ", "wor", "ld.").WithUsage(12, 4))
			m := p.open(t, srv.URL, nil)
			if got, want := m.Name(), p.name+"/test-model"; got != want {
				t.Errorf("Name() = %q, want %q", got, want)
			}
			resp, deltas, err := chat(t, m)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if want := []string{"Hel", "lo, ", "wor", "ld."}; !slices.Equal(deltas, want) {
				t.Errorf("deltas = %q, want %q", deltas, want)
			}
			want := llm.Response{
				Message:    llm.Message{Role: llm.RoleAssistant, Content: "Hello, world."},
				Usage:      llm.Usage{InputTokens: 12, OutputTokens: 4},
				StopReason: llm.StopEnd,
			}
			if !equalResponse(resp, want) {
				t.Errorf("response = %+v, want %+v", resp, want)
			}
		})
	}
}

func TestChatNilOnText(t *testing.T) {
	t.Parallel()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := p.newServer(t, llmtest.Text("a", "b"))
			resp, err := p.open(t, srv.URL, nil).Chat(t.Context(), llm.Request{
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}},
			}, nil)
			if err != nil || resp.Message.Content != "ab" {
				t.Fatalf("Chat = %q, %v; want \"ab\", nil", resp.Message.Content, err)
			}
		})
	}
}

func TestChatToolCalls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		turn      llmtest.Turn
		wantText  string
		wantCalls []llm.ToolCall
		wantStop  string
	}{
		{
			name: "arguments split across chunks",
			turn: llmtest.ToolCalls(llmtest.ToolCall{
				ID: "c1", Name: "read_file", Arguments: `{"path":"guides/setup.mdx","view_range":[1,40]}`, Chunks: 7,
			}),
			wantCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"guides/setup.mdx","view_range":[1,40]}`}},
			wantStop:  llm.StopToolCalls,
		},
		{
			name: "arguments with multi-byte characters split",
			turn: llmtest.ToolCalls(llmtest.ToolCall{
				ID: "c1", Name: "replace", Arguments: `{"old":"naïve — café","new":"日本語"}`, Chunks: 9,
			}),
			wantCalls: []llm.ToolCall{{ID: "c1", Name: "replace", Arguments: `{"old":"naïve — café","new":"日本語"}`}},
			wantStop:  llm.StopToolCalls,
		},
		{
			name: "parallel calls",
			turn: llmtest.ToolCalls(
				llmtest.ToolCall{ID: "a", Name: "read_file", Arguments: `{"path":"a.mdx"}`, Chunks: 3},
				llmtest.ToolCall{ID: "b", Name: "read_file", Arguments: `{"path":"b.mdx"}`, Chunks: 2},
				llmtest.ToolCall{ID: "c", Name: "search", Arguments: `{"query":"watch flag"}`, Chunks: 4},
			),
			wantCalls: []llm.ToolCall{
				{ID: "a", Name: "read_file", Arguments: `{"path":"a.mdx"}`},
				{ID: "b", Name: "read_file", Arguments: `{"path":"b.mdx"}`},
				{ID: "c", Name: "search", Arguments: `{"query":"watch flag"}`},
			},
			wantStop: llm.StopToolCalls,
		},
		{
			name: "parallel calls with interleaved chunks",
			turn: llmtest.Turn{InterleaveToolCalls: true, ToolCalls: []llmtest.ToolCall{
				{ID: "a", Name: "read_file", Arguments: `{"path":"a.mdx"}`, Chunks: 3},
				{ID: "b", Name: "list_files", Arguments: `{"dir":"guides"}`, Chunks: 5},
			}},
			wantCalls: []llm.ToolCall{
				{ID: "a", Name: "read_file", Arguments: `{"path":"a.mdx"}`},
				{ID: "b", Name: "list_files", Arguments: `{"dir":"guides"}`},
			},
			wantStop: llm.StopToolCalls,
		},
		{
			name: "text then a call",
			turn: llmtest.Turn{
				Text:      []string{"Let me ", "look."},
				ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_files", Arguments: `{}`}},
			},
			wantText:  "Let me look.",
			wantCalls: []llm.ToolCall{{ID: "c1", Name: "list_files", Arguments: `{}`}},
			wantStop:  llm.StopToolCalls,
		},
		{
			name:      "malformed arguments pass through as they are",
			turn:      llmtest.ToolCalls(llmtest.ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path": "a.mdx", `, Chunks: 3}),
			wantCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path": "a.mdx", `}},
			wantStop:  llm.StopToolCalls,
		},
		{
			name:      "no arguments at all",
			turn:      llmtest.ToolCalls(llmtest.ToolCall{ID: "c1", Name: "finish"}),
			wantCalls: []llm.ToolCall{{ID: "c1", Name: "finish", Arguments: `{}`}},
			wantStop:  llm.StopToolCalls,
		},
		{
			name:      "default call IDs",
			turn:      llmtest.ToolCalls(llmtest.ToolCall{Name: "finish", Arguments: `{"summary":"ok"}`}),
			wantCalls: []llm.ToolCall{{Name: "finish", Arguments: `{"summary":"ok"}`}},
			wantStop:  llm.StopToolCalls,
		},
		{
			name:     "cut by the token limit",
			turn:     llmtest.Turn{Text: []string{"Once upon"}, StopReason: "length"},
			wantText: "Once upon",
			wantStop: llm.StopMaxTokens,
		},
	}
	for _, p := range providers() {
		for _, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				turn := tt.turn
				if turn.StopReason == "length" && p.name == "anthropic" {
					turn.StopReason = "max_tokens"
				}
				srv := p.newServer(t, turn)
				resp, _, err := chat(t, p.open(t, srv.URL, nil))
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if resp.Message.Content != tt.wantText {
					t.Errorf("text = %q, want %q", resp.Message.Content, tt.wantText)
				}
				calls := resp.Message.ToolCalls
				if len(calls) != len(tt.wantCalls) {
					t.Fatalf("tool calls = %+v, want %+v", calls, tt.wantCalls)
				}
				for i, want := range tt.wantCalls {
					got := calls[i]
					if want.ID == "" {
						if got.ID == "" {
							t.Errorf("call %d has no ID", i)
						}
						want.ID = got.ID
					}
					if got != want {
						t.Errorf("call %d = %+v, want %+v", i, got, want)
					}
				}
				if resp.StopReason != tt.wantStop {
					t.Errorf("stop reason = %q, want %q", resp.StopReason, tt.wantStop)
				}
			})
		}
	}
}

func TestChatRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		turns    []llmtest.Turn
		tweak    func(*llm.Config)
		requests int
		// minWait and maxWait bound the call's duration.
		minWait, maxWait time.Duration
	}{
		{
			name:     "429 then success",
			turns:    []llmtest.Turn{llmtest.RateLimited(""), llmtest.Text("ok")},
			requests: 2,
			maxWait:  2 * time.Second,
		},
		{
			name: "429 with retry-after-ms is honoured",
			turns: []llmtest.Turn{
				{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After-Ms": {"300"}}},
				llmtest.Text("ok"),
			},
			tweak:    func(c *llm.Config) { c.MaxRetryWait = 5 * time.Second },
			requests: 2,
			minWait:  300 * time.Millisecond,
			maxWait:  3 * time.Second,
		},
		{
			name:     "429 with Retry-After in seconds is honoured",
			turns:    []llmtest.Turn{llmtest.RateLimited("1"), llmtest.Text("ok")},
			tweak:    func(c *llm.Config) { c.MaxRetryWait = 5 * time.Second },
			requests: 2,
			minWait:  time.Second,
			maxWait:  4 * time.Second,
		},
		{
			name:     "a long Retry-After is capped",
			turns:    []llmtest.Turn{llmtest.RateLimited("3600"), llmtest.Text("ok")},
			tweak:    func(c *llm.Config) { c.MaxRetryWait = 100 * time.Millisecond },
			requests: 2,
			minWait:  100 * time.Millisecond,
			maxWait:  2 * time.Second,
		},
		{
			name:     "500 then success",
			turns:    []llmtest.Turn{llmtest.ServerError(), llmtest.ServerError(), llmtest.Text("ok")},
			requests: 3,
			maxWait:  2 * time.Second,
		},
		{
			name:     "503 then success",
			turns:    []llmtest.Turn{llmtest.Fail(http.StatusServiceUnavailable, ""), llmtest.Text("ok")},
			requests: 2,
			maxWait:  2 * time.Second,
		},
		{
			name:     "stream cut before any text",
			turns:    []llmtest.Turn{llmtest.CutAfter(), llmtest.Text("ok")},
			requests: 2,
			maxWait:  2 * time.Second,
		},
		{
			name:     "stream cut after a tool call began, before any text",
			turns:    []llmtest.Turn{{Cut: true, ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "x", Arguments: `{"a":`}}}, llmtest.Text("ok")},
			requests: 2,
			maxWait:  2 * time.Second,
		},
		{
			name:     "error event in the stream, then success",
			turns:    []llmtest.Turn{{StreamError: "overloaded_error"}, llmtest.Text("ok")},
			requests: 2,
			maxWait:  2 * time.Second,
		},
		{
			name:     "slow first byte within the timeout",
			turns:    []llmtest.Turn{{Text: []string{"ok"}, Delay: 50 * time.Millisecond}},
			requests: 1,
			minWait:  50 * time.Millisecond,
			maxWait:  2 * time.Second,
		},
	}
	for _, p := range providers() {
		for _, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := p.newServer(t, tt.turns...)
				m := p.open(t, srv.URL, tt.tweak)
				start := time.Now()
				resp, deltas, err := chat(t, m)
				elapsed := time.Since(start)
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if resp.Message.Content != "ok" || !slices.Equal(deltas, []string{"ok"}) {
					t.Errorf("answer %q streamed as %q, want \"ok\" once", resp.Message.Content, deltas)
				}
				if got := len(srv.Requests()); got != tt.requests {
					t.Errorf("requests = %d, want %d", got, tt.requests)
				}
				if elapsed < tt.minWait || elapsed > tt.maxWait {
					t.Errorf("took %v, want between %v and %v", elapsed, tt.minWait, tt.maxWait)
				}
			})
		}
	}
}

func TestChatErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		turns    []llmtest.Turn
		tweak    func(*llm.Config)
		requests int
		status   int      // of the *llm.APIError; 0: none expected
		is       []error  // errors.Is must hold
		contains []string // in the message
	}{
		{
			name:     "401 is not retried",
			turns:    []llmtest.Turn{llmtest.Fail(http.StatusUnauthorized, "Incorrect API key provided: "+testKey)},
			requests: 1,
			status:   401,
			contains: []string{": 401 unauthorized: check the API key", "[redacted]"},
		},
		{
			name:     "400 is not retried",
			turns:    []llmtest.Turn{llmtest.Fail(http.StatusBadRequest, "tools.0.name: String should match pattern")},
			requests: 1,
			status:   400,
			contains: []string{"400 bad request", "tools.0.name"},
		},
		{
			name:     "404 names what to check",
			turns:    []llmtest.Turn{llmtest.Fail(http.StatusNotFound, "model not found")},
			requests: 1,
			status:   404,
			contains: []string{"404 not found: check the model name and the base URL"},
		},
		{
			name:     "500 for ever gives up",
			turns:    []llmtest.Turn{llmtest.Forever(llmtest.ServerError())},
			requests: 4,
			status:   500,
			contains: []string{"500 internal server error", "gave up after 4 attempts"},
		},
		{
			name:     "no retries when MaxRetries is negative",
			turns:    []llmtest.Turn{llmtest.RateLimited("")},
			tweak:    func(c *llm.Config) { c.MaxRetries = -1 },
			requests: 1,
			status:   429,
			contains: []string{"429 too many requests", "(not retried: retries are off)"},
		},
		{
			name:     "stream cut after text is not retried",
			turns:    []llmtest.Turn{llmtest.CutAfter("Hello, ", "wor"), llmtest.Text("never requested")},
			requests: 1,
			is:       []error{llm.ErrStreamCut},
			contains: []string{"the stream was cut before the model finished", "not retried"},
		},
		{
			name:     "stream cut for ever before text gives up",
			turns:    []llmtest.Turn{llmtest.Forever(llmtest.CutAfter())},
			requests: 4,
			is:       []error{llm.ErrStreamCut},
			contains: []string{"cut", "gave up after 4 attempts"},
		},
		{
			name:     "endless stream hits the call timeout",
			turns:    []llmtest.Turn{llmtest.Endless("tick ")},
			tweak:    func(c *llm.Config) { c.CallTimeout = 300 * time.Millisecond },
			requests: 1,
			is:       []error{llm.ErrCallTimeout, context.DeadlineExceeded},
			contains: []string{"no complete answer within 300ms", "call timeout"},
		},
		{
			name:     "stalled stream hits the call timeout",
			turns:    []llmtest.Turn{llmtest.Stall()},
			tweak:    func(c *llm.Config) { c.CallTimeout = 200 * time.Millisecond },
			requests: 1,
			is:       []error{llm.ErrCallTimeout, context.DeadlineExceeded},
			contains: []string{"no complete answer within 200ms"},
		},
		{
			name:     "no first byte hits the call timeout",
			turns:    []llmtest.Turn{{Delay: time.Minute}},
			tweak:    func(c *llm.Config) { c.CallTimeout = 200 * time.Millisecond },
			requests: 1,
			is:       []error{llm.ErrCallTimeout, context.DeadlineExceeded},
			contains: []string{"call timeout"},
		},
		{
			name:     "a wait that would outlast the call timeout is not taken",
			turns:    []llmtest.Turn{llmtest.Forever(llmtest.RateLimited("3600"))},
			tweak:    func(c *llm.Config) { c.CallTimeout = 5 * time.Second; c.MaxRetryWait = time.Hour },
			requests: 1,
			status:   429,
			contains: []string{"429 too many requests", "(not retried: the wait of 1h0m0s would outlast the call's deadline)"},
		},
		{
			name: "the call timeout covers the retries",
			turns: []llmtest.Turn{
				{Status: http.StatusServiceUnavailable, Delay: 150 * time.Millisecond},
				llmtest.Forever(llmtest.Turn{Text: []string{"late"}, Delay: time.Minute}),
			},
			tweak:    func(c *llm.Config) { c.CallTimeout = 300 * time.Millisecond; c.RetryBase = 100 * time.Millisecond },
			requests: 2,
			is:       []error{llm.ErrCallTimeout, context.DeadlineExceeded},
			contains: []string{"no complete answer within 300ms (the call timeout)"},
		},
		{
			name:     "error event in the stream before text is retried until it gives up",
			turns:    []llmtest.Turn{llmtest.Forever(llmtest.Turn{StreamError: "overloaded_error"})},
			requests: 4,
			status:   529,
			contains: []string{"error in the stream (overloaded_error)", "gave up after 4 attempts"},
		},
		{
			name:     "error event in the stream after text is not retried",
			turns:    []llmtest.Turn{{Text: []string{"Hel"}, StreamError: "overloaded_error"}, llmtest.Text("never requested")},
			requests: 1,
			status:   529,
			contains: []string{"error in the stream (overloaded_error)", "not retried, because part of the answer had already been streamed"},
		},
		{
			name:     "invalid request error event is not retried",
			turns:    []llmtest.Turn{{StreamError: "invalid_request_error", ErrorMessage: "prompt is too long"}},
			requests: 1,
			status:   400,
			contains: []string{"error in the stream (invalid_request_error)", "prompt is too long"},
		},
	}
	for _, p := range providers() {
		for _, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := p.newServer(t, tt.turns...)
				m := p.open(t, srv.URL, tt.tweak)
				start := time.Now()
				resp, deltas, err := chat(t, m)
				if err == nil {
					t.Fatalf("Chat = %+v, want an error", resp)
				}
				if elapsed := time.Since(start); elapsed > 5*time.Second {
					t.Errorf("took %v", elapsed)
				}
				msg := err.Error()
				t.Logf("error: %s", msg)
				if strings.Contains(msg, testKey) {
					t.Errorf("error shows the API key: %s", msg)
				}
				if !strings.HasPrefix(msg, p.name) {
					t.Errorf("error %q does not start with the provider", msg)
				}
				for _, s := range tt.contains {
					if !strings.Contains(msg, s) {
						t.Errorf("error %q does not contain %q", msg, s)
					}
				}
				for _, target := range tt.is {
					if !errors.Is(err, target) {
						t.Errorf("error %q is not %v", msg, target)
					}
				}
				var apiErr *llm.APIError
				switch {
				case tt.status == 0 && errors.As(err, &apiErr):
					t.Errorf("error %q is an APIError", msg)
				case tt.status != 0 && !errors.As(err, &apiErr):
					t.Errorf("error %q is not an APIError", msg)
				case tt.status != 0 && apiErr.StatusCode != tt.status:
					t.Errorf("status = %d, want %d", apiErr.StatusCode, tt.status)
				}
				if got := len(srv.Requests()); got != tt.requests {
					t.Errorf("requests = %d, want %d", got, tt.requests)
				}
				// No text is ever streamed twice.
				text := strings.Join(deltas, "")
				if tt.name == "stream cut after text is not retried" && text != "Hello, wor" {
					t.Errorf("streamed %q, want %q", text, "Hello, wor")
				}
			})
		}
	}
}

func TestChatCallerCancels(t *testing.T) {
	t.Parallel()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := p.newServer(t, llmtest.Stall("partial"))
			m := p.open(t, srv.URL, nil)
			ctx, cancel := context.WithCancel(t.Context())
			_, err := m.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}},
				func(string) { cancel() })
			if !errors.Is(err, context.Canceled) || errors.Is(err, llm.ErrCallTimeout) {
				t.Fatalf("Chat error = %v, want context.Canceled", err)
			}
		})
	}
}

func TestChatUnreachableServer(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			m := p.open(t, closed.URL, func(c *llm.Config) { c.MaxRetries = 2 })
			_, _, err := chat(t, m)
			if err == nil {
				t.Fatal("Chat succeeded against a closed server")
			}
			t.Logf("error: %s", err)
			for _, s := range []string{"cannot reach the server", "check the base URL", "gave up after 3 attempts"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestAPIKeySentAsAuthHeader(t *testing.T) {
	t.Parallel()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := p.newServer(t, llmtest.Text("ok"))
			if _, _, err := chat(t, p.open(t, srv.URL, nil)); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("requests = %d, want 1", len(reqs))
			}
			if got := p.keySent(reqs[0].Header); got != testKey {
				t.Errorf("key sent = %q, want %q", got, testKey)
			}
		})
	}
}

func TestRetriesAreLogged(t *testing.T) {
	t.Parallel()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			var logs strings.Builder
			srv := p.newServer(t, llmtest.Fail(http.StatusServiceUnavailable, "bad gateway "+testKey), llmtest.Text("ok"))
			m := p.open(t, srv.URL, func(c *llm.Config) { c.Log = newTextLogger(&logs) })
			if _, _, err := chat(t, m); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			out := logs.String()
			if !strings.Contains(out, "model call failed; retrying") || !strings.Contains(out, "503") {
				t.Errorf("log = %q, want a retry line naming the status", out)
			}
			if strings.Contains(out, testKey) {
				t.Errorf("log shows the API key: %q", out)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		wantName string
		wantErr  string
	}{
		{name: "openai/gpt-4o-mini", wantName: "openai/gpt-4o-mini"},
		{name: "anthropic/claude-sonnet-4-5", wantName: "anthropic/claude-sonnet-4-5"},
		{name: "openai/meta-llama/Llama-3.1-8B-Instruct", wantName: "openai/meta-llama/Llama-3.1-8B-Instruct"},
		{name: "builtin", wantErr: "not of the form openai/MODEL or anthropic/MODEL"},
		{name: "extractive", wantErr: "not of the form"},
		{name: "", wantErr: "not of the form"},
		{name: "openai/", wantErr: "not of the form"},
		{name: "gemini/pro", wantErr: `unknown provider "gemini"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := llm.Open(tt.name, llm.Config{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Open(%q) error = %v, want one containing %q", tt.name, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tt.name, err)
			}
			if m.Name() != tt.wantName {
				t.Errorf("Name() = %q, want %q", m.Name(), tt.wantName)
			}
		})
	}
}

func TestOpenRejectsBadBaseURL(t *testing.T) {
	t.Parallel()
	for _, cfg := range []llm.Config{{OpenAIBaseURL: "localhost:8000"}, {AnthropicBaseURL: "ftp://x"}} {
		name := "openai/m"
		if cfg.AnthropicBaseURL != "" {
			name = "anthropic/m"
		}
		if _, err := llm.Open(name, cfg); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
			t.Errorf("Open(%q, %+v) error = %v", name, cfg, err)
		}
	}
}

func equalResponse(a, b llm.Response) bool {
	return a.Message.Role == b.Message.Role && a.Message.Content == b.Message.Content &&
		slices.Equal(a.Message.ToolCalls, b.Message.ToolCalls) && a.Usage == b.Usage && a.StopReason == b.StopReason
}

// TestModelThatNeverFinishes is the script an agent-loop test uses for a
// model that never calls its finish tool: the same text for every request.
func TestModelThatNeverFinishes(t *testing.T) {
	t.Parallel()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := p.newServer(t, llmtest.Forever(llmtest.Text("Still ", "working.")))
			m := p.open(t, srv.URL, nil)
			for i := range 5 {
				resp, _, err := chat(t, m)
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if resp.Message.Content != "Still working." || len(resp.Message.ToolCalls) != 0 {
					t.Fatalf("call %d = %+v", i, resp.Message)
				}
			}
			if n := len(srv.Requests()); n != 5 {
				t.Errorf("requests = %d, want 5", n)
			}
		})
	}
}

// TestConcurrentAnswersReuseConnections streams rounds of answers at once
// with the default client: after the first round, every call finds an idle
// connection of the one before, as a busy assistant's calls must (a new
// connection per answer costs both servers more than the answer's bytes).
func TestConcurrentAnswersReuseConnections(t *testing.T) {
	t.Parallel()
	const streams, rounds = 8, 3
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := p.newServer(t, llmtest.Forever(llmtest.Text("Hel", "lo.")))
			m := p.open(t, srv.URL, nil)
			var (
				mu       sync.Mutex
				newConns int
			)
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
				if !info.Reused {
					mu.Lock()
					newConns++
					mu.Unlock()
				}
			}}
			ctx := httptrace.WithClientTrace(t.Context(), trace)
			for round := range rounds {
				var wg sync.WaitGroup
				for range streams {
					wg.Go(func() {
						_, err := m.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi?"}}}, nil)
						if err != nil {
							t.Errorf("Chat: %v", err)
						}
					})
				}
				wg.Wait()
				mu.Lock()
				if round > 0 && newConns > streams {
					t.Errorf("round %d: %d connections opened in all, want at most %d (one per stream, in the first round)", round, newConns, streams)
				}
				mu.Unlock()
			}
		})
	}
}

// TestChatFlushesBeforeWaiting: pieces that arrive apart are each followed
// by a Flush before the next piece, and before the call ends: a caller
// that buffers the pieces until Flush shows each one as it comes.
func TestChatFlushesBeforeWaiting(t *testing.T) {
	t.Parallel()
	for _, p := range providers() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			turn := llmtest.Text("Hel", "lo, ", "world.")
			turn.ChunkDelay = 20 * time.Millisecond
			srv := p.newServer(t, turn)
			m := p.open(t, srv.URL, nil)
			var calls []string
			_, err := m.Chat(t.Context(), llm.Request{
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi?"}},
				Flush:    func() { calls = append(calls, "flush") },
			}, func(d string) { calls = append(calls, d) })
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			var pieces []string
			for i, c := range calls {
				if c == "flush" {
					continue
				}
				pieces = append(pieces, c)
				if i+1 == len(calls) || calls[i+1] != "flush" {
					t.Errorf("piece %q not flushed before the next one: %q", c, calls)
				}
			}
			if want := []string{"Hel", "lo, ", "world."}; !slices.Equal(pieces, want) {
				t.Errorf("pieces = %q, want %q", pieces, want)
			}
		})
	}
}
