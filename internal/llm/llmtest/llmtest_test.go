package llmtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStreamFraming compares what the servers send, byte for byte, with
// golden transcripts. UPDATE_GOLDEN=1 rewrites them.
func TestStreamFraming(t *testing.T) {
	t.Parallel()
	turn := Turn{
		Text:      []string{"Hi ", "there"},
		ToolCalls: []ToolCall{{Name: "read_file", Arguments: `{"path":"a.mdx"}`, Chunks: 2}, {ID: "x", Name: "finish"}},
		Usage:     Usage{InputTokens: 3, OutputTokens: 4},
	}
	tests := []struct {
		golden string
		server func(testing.TB, ...Turn) *Server
		path   string
		body   string
	}{
		{"openai_text_tools.sse", NewOpenAIServer, "/chat/completions",
			`{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true}}`},
		{"openai_no_usage.sse", NewOpenAIServer, "/chat/completions", `{"model":"gpt-test","stream":true}`},
		{"anthropic_text_tools.sse", NewAnthropicServer, "/v1/messages", `{"model":"claude-test","stream":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			t.Parallel()
			srv := tt.server(t, turn)
			res, err := http.Post(srv.URL+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = res.Body.Close() }()
			got, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Errorf("Content-Type = %q", ct)
			}
			path := filepath.Join("testdata", tt.golden)
			if os.Getenv("UPDATE_GOLDEN") == "1" {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("stream differs from %s:\n got: %s\nwant: %s", path, got, want)
			}
		})
	}
}

func TestErrorBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server func(testing.TB, ...Turn) *Server
		path   string
		turn   Turn
		status int
		body   string
		header [2]string
	}{
		{"openai 429", NewOpenAIServer, "/chat/completions", RateLimited("7"), 429,
			`{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again later.","param":null,"type":"requests"}}`,
			[2]string{"Retry-After", "7"}},
		{"openai 401", NewOpenAIServer, "/chat/completions", Fail(401, "nope"), 401,
			`{"error":{"code":"invalid_api_key","message":"nope","param":null,"type":"invalid_request_error"}}`,
			[2]string{}},
		{"anthropic 529", NewAnthropicServer, "/v1/messages", Fail(529, ""), 529,
			`{"error":{"message":"Overloaded","type":"overloaded_error"},"request_id":"req_llmtest","type":"error"}`,
			[2]string{}},
		{"anthropic 500", NewAnthropicServer, "/v1/messages", ServerError(), 500,
			`{"error":{"message":"The server had an error while processing your request.","type":"api_error"},"request_id":"req_llmtest","type":"error"}`,
			[2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := tt.server(t, tt.turn)
			res, err := http.Post(srv.URL+tt.path, "application/json", strings.NewReader(`{"model":"m"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = res.Body.Close() }()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tt.status || string(body) != tt.body {
				t.Errorf("got %d %s, want %d %s", res.StatusCode, body, tt.status, tt.body)
			}
			if tt.header[0] != "" && res.Header.Get(tt.header[0]) != tt.header[1] {
				t.Errorf("%s = %q, want %q", tt.header[0], res.Header.Get(tt.header[0]), tt.header[1])
			}
		})
	}
}

func TestRequestsAreRecorded(t *testing.T) {
	t.Parallel()
	srv := NewOpenAIServer(t, Forever(Text("again")))
	for range 3 {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/chat/completions", strings.NewReader(`{"model":"m","n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer k")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("recorded %d requests, want 3", len(reqs))
	}
	r := reqs[2]
	if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("recorded %s %s %v", r.Method, r.Path, r.Header)
	}
	if r.Body["model"] != "m" {
		t.Errorf("body = %v", r.Body)
	}
	var v struct{ N int }
	if err := r.Decode(&v); err != nil || v.N != 1 {
		t.Errorf("Decode = %+v, %v", v, err)
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"abcde", 2, []string{"abc", "de"}},
		{"ab", 5, []string{"a", "b"}},
		{"héllo", 5, []string{"h", "é", "l", "l", "o"}},
		{"日本語", 2, []string{"日本", "語"}},
		{"abc", 0, []string{"abc"}},
		{"", 3, []string{""}},
	}
	for _, tt := range tests {
		if got := split(tt.s, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("split(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestWrongPathKeepsTheScript(t *testing.T) {
	t.Parallel()
	srv := NewAnthropicServer(t, Text("ok"))
	res, err := http.Post(srv.URL+"/v1/complete", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("status = %d, want 404", res.StatusCode)
	}
	res, err = http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if !strings.Contains(string(body), `"text":"ok"`) {
		t.Errorf("the scripted turn was not kept for the right path: %s", body)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("recorded %d requests, want 2", n)
	}
}

// TestOpenAIHandler: the handler a benchmark binary serves answers every
// request with the same turn, framed as the golden transcript of the test
// server.
func TestOpenAIHandler(t *testing.T) {
	t.Parallel()
	turn := Turn{
		Text:      []string{"Hi ", "there"},
		ToolCalls: []ToolCall{{Name: "read_file", Arguments: `{"path":"a.mdx"}`, Chunks: 2}, {ID: "x", Name: "finish"}},
		Usage:     Usage{InputTokens: 3, OutputTokens: 4},
	}
	h := OpenAIHandler(turn, t.Errorf)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	want, err := os.ReadFile(filepath.Join("testdata", "openai_text_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true}}`))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil || string(got) != string(want) {
			t.Fatalf("stream = %s, %v, want %s", got, err, want)
		}
	}
}
