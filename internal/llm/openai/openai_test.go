package openai_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
	"github.com/docsmith/docsmith/internal/llm/openai"
)

// conversation is an agent's second step: tool calls made, results back.
func conversation() llm.Request {
	temp := 0.0
	return llm.Request{
		System: "You are docsmith.",
		Tools: []llm.Tool{
			{
				Name:        "read_file",
				Description: "Read a file of the docs.",
				Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
			},
			{Name: "finish", Description: "Say you are done."},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Document --watch."},
			{Role: llm.RoleAssistant, Content: "Reading.", ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "read_file", Arguments: `{"path":"cli.mdx"}`},
				{ID: "c2", Name: "read_file", Arguments: `{"path": `},
			}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "line 1\nline 2"},
			{Role: llm.RoleTool, ToolCallID: "c2", Content: "arguments are not valid JSON", IsError: true},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c3", Name: "finish", Arguments: `{}`}}},
			{Role: llm.RoleTool, ToolCallID: "c3", Content: "ok"},
			{Role: llm.RoleUser, Content: "Also mention -w."},
		},
		MaxTokens:   256,
		Temperature: &temp,
	}
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		maxCompletionTokens bool
		wantMax             string
	}{
		{"compatible server", false, `"max_tokens":256`},
		{"openai itself", true, `"max_completion_tokens":256`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewOpenAIServer(t, llmtest.Text("ok"))
			m, err := openai.New(openai.Options{
				Model: "gpt-test", BaseURL: srv.URL, APIKey: "sk-k", MaxCompletionTokens: tt.maxCompletionTokens,
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Chat(t.Context(), conversation(), nil); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("requests = %d, want 1", len(reqs))
			}
			got := reqs[0]
			if h := got.Header.Get("Authorization"); h != "Bearer sk-k" {
				t.Errorf("Authorization = %q", h)
			}
			if !strings.Contains(string(got.Raw), tt.wantMax) {
				t.Errorf("body %s lacks %s", got.Raw, tt.wantMax)
			}
			want := `{
				"model": "gpt-test",
				"stream": true,
				"stream_options": {"include_usage": true},
				"temperature": 0,
				"messages": [
					{"role": "system", "content": "You are docsmith."},
					{"role": "user", "content": "Document --watch."},
					{"role": "assistant", "content": "Reading.", "tool_calls": [
						{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"cli.mdx\"}"}},
						{"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}}
					]},
					{"role": "tool", "tool_call_id": "c1", "content": "line 1\nline 2"},
					{"role": "tool", "tool_call_id": "c2", "content": "error: arguments are not valid JSON"},
					{"role": "assistant", "tool_calls": [
						{"id": "c3", "type": "function", "function": {"name": "finish", "arguments": "{}"}}
					]},
					{"role": "tool", "tool_call_id": "c3", "content": "ok"},
					{"role": "user", "content": "Also mention -w."}
				],
				"tools": [
					{"type": "function", "function": {"name": "read_file", "description": "Read a file of the docs.",
						"parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}}},
					{"type": "function", "function": {"name": "finish", "description": "Say you are done.",
						"parameters": {"type": "object", "properties": {}}}}
				]
			}`
			body := got.Body
			delete(body, "max_tokens")
			delete(body, "max_completion_tokens")
			assertJSON(t, body, want)
		})
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	m, err := openai.New(openai.Options{Model: "m", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"unknown role", llm.Request{Messages: []llm.Message{{Role: "system", Content: "x"}}}, `message 0 has unknown role "system"`},
		{"bad schema", llm.Request{Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, `parameters of tool "t" are not a JSON object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := m.Chat(t.Context(), tt.req, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Chat error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts openai.Options
		want string
	}{
		{openai.Options{}, "no model name"},
		{openai.Options{Model: "m", BaseURL: "localhost:8080"}, "not an http(s) URL"},
		{openai.Options{Model: "m", BaseURL: "http://"}, "not an http(s) URL"},
	}
	for _, tt := range tests {
		if _, err := openai.New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want %q", tt.opts, err, tt.want)
		}
	}
	m, err := openai.New(openai.Options{Model: "gpt-4o"})
	if err != nil || m.Name() != "openai/gpt-4o" {
		t.Errorf("New = %v, %v", m, err)
	}
}

func assertJSON(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var gn any
	if err := json.Unmarshal(g, &gn); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gn, w) {
		wb, _ := json.MarshalIndent(w, "", "  ")
		gb, _ := json.MarshalIndent(gn, "", "  ")
		t.Errorf("request body:\n%s\nwant:\n%s", gb, wb)
	}
}

// rawServer answers every request with the events handler writes, flushing
// each, and counts the connections it accepted.
type rawServer struct {
	URL   string
	conns atomic.Int64
}

func newRawServer(t *testing.T, handler func(w http.ResponseWriter, flush func())) *rawServer {
	t.Helper()
	s := &rawServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		handler(w, func() { _ = rc.Flush() })
	}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

const finishEvents = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"

func ask(t *testing.T, m *openai.Model) (llm.Response, error) {
	t.Helper()
	return m.Chat(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi?"}}}, nil)
}

// TestChatReusesTheConnectionAfterDone: the response ends a moment after
// [DONE]; the call waits for its end, so that the next call finds the
// connection idle instead of opening one.
func TestChatReusesTheConnectionAfterDone(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(w http.ResponseWriter, flush func()) {
		_, _ = io.WriteString(w, `data: {"choices":[{"delta":{"content":"Hi"}}]}`+"\n\n"+finishEvents)
		flush()
		// The end of the response comes later, well within the drain's wait
		// even on a loaded machine.
		time.Sleep(2 * time.Millisecond)
	})
	m, err := openai.New(openai.Options{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if resp, err := ask(t, m); err != nil || resp.Message.Content != "Hi" {
			t.Fatalf("Chat = %+v, %v", resp, err)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Errorf("3 calls in a row opened %d connections, want 1", n)
	}
}

// TestChatDoesNotWaitForAServerThatStaysOpenAfterDone: a server that sends
// [DONE] and keeps the response open does not hold up the answer.
func TestChatDoesNotWaitForAServerThatStaysOpenAfterDone(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := newRawServer(t, func(w http.ResponseWriter, flush func()) {
		_, _ = io.WriteString(w, `data: {"choices":[{"delta":{"content":"Hi"}}]}`+"\n\n"+finishEvents)
		flush()
		<-release
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handler
	m, err := openai.New(openai.Options{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if resp, err := ask(t, m); err != nil || resp.Message.Content != "Hi" {
		t.Fatalf("Chat = %+v, %v", resp, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Chat took %s", d)
	}
}

// TestChatRefusesAnOversizedEvent: a server that sends an endless line
// gets a clear error, not a retry, once the line passes the bound.
func TestChatRefusesAnOversizedEvent(t *testing.T) {
	t.Parallel()
	srv := newRawServer(t, func(w http.ResponseWriter, flush func()) {
		_, _ = io.WriteString(w, `data: {"choices":[{"delta":{"content":"`)
		line := strings.Repeat("x", 64<<10)
		for range 200 { // 12.5 MiB
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
		flush()
	})
	m, err := openai.New(openai.Options{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ask(t, m)
	if err == nil || !strings.Contains(err.Error(), "openai: the server sent an event larger than 8 MiB") {
		t.Fatalf("Chat error = %v", err)
	}
	if errors.Is(err, llm.ErrStreamCut) {
		t.Errorf("error %v is a cut stream, which would be retried", err)
	}
}

// TestChatFlushesOncePerBurst: a stream that is all there at once is
// flushed once per read of it, not once per piece.
func TestChatFlushesOncePerBurst(t *testing.T) {
	t.Parallel()
	body := recordedAnswer(t, 200)
	m, err := openai.New(openai.Options{
		Model: "m", BaseURL: "http://model.test/v1",
		HTTPClient: llmtest.ReplayClient(body),
	})
	if err != nil {
		t.Fatal(err)
	}
	pieces, flushes := 0, 0
	_, err = m.Chat(t.Context(), llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi?"}},
		Flush:    func() { flushes++ },
	}, func(string) { pieces++ })
	if err != nil {
		t.Fatal(err)
	}
	// 16 KiB per read of the body.
	if maxFlushes := len(body)/(16<<10) + 2; pieces != 200 || flushes > maxFlushes {
		t.Errorf("%d pieces, %d flushes for %d bytes; want 200 pieces, at most %d flushes", pieces, flushes, len(body), maxFlushes)
	}
}

// TestChatReadsEveryCallAfresh: the calls of one model read their streams
// with readers that earlier calls finished with, some of them in the
// middle of a stream; each reads its own stream and nothing else.
func TestChatReadsEveryCallAfresh(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewOpenAIServer(t,
		llmtest.Turn{Text: []string{"Hel", "lo"}, StreamError: "server_error", ErrorMessage: "boom"},
		llmtest.Text("a", "b"),
		llmtest.ToolCalls(llmtest.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.mdx"}`, Chunks: 3}),
		llmtest.CutAfter("x"),
		llmtest.Text("line\n", "done"),
	)
	m, err := openai.New(openai.Options{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(t, m); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("call 1: error %v, want the stream's error", err)
	}
	if resp, err := ask(t, m); err != nil || resp.Message.Content != "ab" {
		t.Errorf("call 2: %+v, %v", resp, err)
	}
	resp, err := ask(t, m)
	if want := []llm.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a.mdx"}`}}; err != nil || !reflect.DeepEqual(resp.Message.ToolCalls, want) {
		t.Errorf("call 3: %+v, %v", resp, err)
	}
	if _, err := ask(t, m); !errors.Is(err, llm.ErrStreamCut) {
		t.Errorf("call 4: error %v, want a cut stream", err)
	}
	if resp, err := ask(t, m); err != nil || resp.Message.Content != "line\ndone" {
		t.Errorf("call 5: %+v, %v", resp, err)
	}
}

// TestChatConcurrentCalls: calls of one model at once each get their own
// answer, whole, and the pieces of text given to onText stay as they were
// after the call.
func TestChatConcurrentCalls(t *testing.T) {
	t.Parallel()
	deltas := []string{"Per ", "aspera ", "ad ", "astra"}
	srv := llmtest.NewOpenAIServer(t, llmtest.Forever(llmtest.Text(deltas...)))
	m, err := openai.New(openai.Options{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 10
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var pieces, want []string
			for range calls {
				resp, err := m.Chat(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi?"}}}, func(s string) {
					pieces = append(pieces, s)
				})
				if err != nil || resp.Message.Content != strings.Join(deltas, "") {
					t.Errorf("Chat = %+v, %v", resp, err)
					return
				}
				want = append(want, deltas...)
			}
			if !reflect.DeepEqual(pieces, want) {
				t.Errorf("pieces %q, want %q", pieces, want)
			}
		})
	}
	wg.Wait()
}
