package anthropic_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/llm/anthropic"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
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
			{Name: "finish"},
		},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Document --watch."},
			{Role: llm.RoleAssistant, Content: "Reading.", ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "read_file", Arguments: `{"path":"cli.mdx"}`},
				{ID: "c2", Name: "read_file", Arguments: `{"path": `},
			}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "line 1\nline 2"},
			{Role: llm.RoleTool, ToolCallID: "c2", Content: "arguments are not valid JSON", IsError: true},
			{Role: llm.RoleUser, Content: "Also mention -w."},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c3", Name: "finish", Arguments: `{}`}}},
			{Role: llm.RoleTool, ToolCallID: "c3"},
		},
		MaxTokens:   256,
		Temperature: &temp,
	}
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewAnthropicServer(t, llmtest.Text("ok"))
	m, err := anthropic.New(anthropic.Options{Model: "claude-test", BaseURL: srv.URL, APIKey: "sk-ant-k"})
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
	if h := got.Header.Get("X-Api-Key"); h != "sk-ant-k" {
		t.Errorf("X-Api-Key = %q", h)
	}
	if h := got.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
	if h := got.Header.Get("Anthropic-Version"); h == "" {
		t.Error("no anthropic-version header")
	}
	want := `{
		"model": "claude-test",
		"stream": true,
		"max_tokens": 256,
		"temperature": 0,
		"system": [{"type": "text", "text": "You are docsmith."}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Document --watch."}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "Reading."},
				{"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "cli.mdx"}},
				{"type": "tool_use", "id": "c2", "name": "read_file", "input": {}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "line 1\nline 2"}]},
				{"type": "tool_result", "tool_use_id": "c2", "is_error": true, "content": [{"type": "text", "text": "arguments are not valid JSON"}]},
				{"type": "text", "text": "Also mention -w."}
			]},
			{"role": "assistant", "content": [{"type": "tool_use", "id": "c3", "name": "finish", "input": {}}]},
			{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c3"}]}
		],
		"tools": [
			{"name": "read_file", "description": "Read a file of the docs.",
				"input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}},
			{"name": "finish", "input_schema": {"type": "object", "properties": {}}}
		]
	}`
	assertJSON(t, got.Body, want)
}

func TestDefaultMaxTokens(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewAnthropicServer(t, llmtest.Text("ok"))
	m, err := anthropic.New(anthropic.Options{Model: "claude-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, nil); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if got := srv.Requests()[0].Body["max_tokens"]; got != float64(anthropic.DefaultMaxTokens) {
		t.Errorf("max_tokens = %v, want %d", got, anthropic.DefaultMaxTokens)
	}
	if _, ok := srv.Requests()[0].Body["temperature"]; ok {
		t.Error("temperature sent though unset")
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	m, err := anthropic.New(anthropic.Options{Model: "m", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  llm.Request
		want string
	}{
		{"unknown role", llm.Request{Messages: []llm.Message{{Role: "system", Content: "x"}}}, `message 0 has unknown role "system"`},
		{"bad schema", llm.Request{Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`"x"`)}}}, `parameters of tool "t" are not a JSON object`},
		{"bad required", llm.Request{Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`{"required":"x"}`)}}}, `parameters of tool "t"`},
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
		opts anthropic.Options
		want string
	}{
		{anthropic.Options{}, "no model name"},
		{anthropic.Options{Model: "m", BaseURL: "api.anthropic.com"}, "not an http(s) URL"},
	}
	for _, tt := range tests {
		if _, err := anthropic.New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) error = %v, want %q", tt.opts, err, tt.want)
		}
	}
	m, err := anthropic.New(anthropic.Options{Model: "claude-x"})
	if err != nil || m.Name() != "anthropic/claude-x" {
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
