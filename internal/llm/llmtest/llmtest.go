// Package llmtest runs scripted chat-model servers on the local machine for
// tests. NewOpenAIServer speaks the OpenAI Chat Completions streaming API and
// NewAnthropicServer the Anthropic Messages streaming API, byte for byte as
// the real services frame them, so that tests go through the official SDK
// clients and docsmith's own adapters, not through a fake Model.
//
// Each Turn of the script answers one HTTP request: streamed text, tool calls
// (their arguments split across chunks, several in parallel), usage, or a
// failure: an HTTP error status (429 with Retry-After, 500, 401…), a stream
// cut in the middle, a stream that never ends, a server that stalls.
//
// A test of another package opens a model on the server through package llm:
//
//	srv := llmtest.NewOpenAIServer(t,
//		llmtest.ToolCalls(llmtest.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.mdx"}`, Chunks: 3}),
//		llmtest.Text("Done."),
//	)
//	model, err := llm.Open("openai/test-model", llm.Config{OpenAIBaseURL: srv.URL, OpenAIAPIKey: "k"})
//	…
//	reqs := srv.Requests() // what the model was sent, parsed
//
// A model that never calls the agent's finish tool is
// llmtest.Forever(llmtest.Text("Still working.")): it answers every request
// with that text.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Turn is the scripted answer to one request.
type Turn struct {
	// Text is streamed piece by piece, in order.
	Text []string
	// ToolCalls follow the text; several are parallel calls.
	ToolCalls []ToolCall
	// InterleaveToolCalls sends the argument chunks of parallel calls in
	// turns (OpenAI only, where chunks carry an index), instead of one call
	// after the other.
	InterleaveToolCalls bool
	// Usage is reported at the end of the stream (OpenAI: only when the
	// request asked for it with stream_options.include_usage).
	Usage Usage
	// StopReason overrides the provider's finish reason (OpenAI: "stop" or
	// "tool_calls"; Anthropic: "end_turn" or "tool_use"), e.g. "length".
	StopReason string

	// StreamError, when set, ends the stream after the Text (and ToolCalls)
	// with an error event of this type, e.g. "overloaded_error" or
	// "server_error", carrying ErrorMessage.
	StreamError string

	// Status, when not 0, answers with this HTTP status and the provider's
	// JSON error body instead of a stream.
	Status int
	// ErrorMessage is the message of that error body or event; empty means
	// a stock one.
	ErrorMessage string
	// Header is added to the response, e.g. "Retry-After" or
	// "Retry-After-Ms".
	Header http.Header
	// Delay waits before the response's first byte.
	Delay time.Duration
	// ChunkDelay waits before each event of the stream.
	ChunkDelay time.Duration

	// Cut sends the start of the stream and the Text (and ToolCalls), then
	// closes the connection without finishing the stream. With no Text it
	// cuts before any text.
	Cut bool
	// Stall sends what Cut would, then sends nothing more, keeping the
	// connection open until the client goes away: a stuck server.
	Stall bool
	// Endless sends the Text over and over, never finishing, until the
	// client goes away.
	Endless bool

	// Repeat makes this turn answer this request and every later one.
	Repeat bool
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	// ID defaults to call_N (OpenAI) or toolu_N (Anthropic).
	ID   string
	Name string
	// Arguments is sent exactly as given, valid JSON or not.
	Arguments string
	// Chunks splits Arguments into this many pieces (at least 1).
	Chunks int
}

// Usage is the token count a turn reports.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Text answers with text streamed in these pieces.
func Text(chunks ...string) Turn { return Turn{Text: chunks} }

// ToolCalls answers with these tool calls, in parallel when several.
func ToolCalls(calls ...ToolCall) Turn { return Turn{ToolCalls: calls} }

// Fail answers with an HTTP error status and the provider's error body.
func Fail(status int, message string) Turn { return Turn{Status: status, ErrorMessage: message} }

// RateLimited answers 429 with the given Retry-After header (empty: none).
func RateLimited(retryAfter string) Turn {
	t := Turn{Status: http.StatusTooManyRequests}
	if retryAfter != "" {
		t.Header = http.Header{"Retry-After": {retryAfter}}
	}
	return t
}

// ServerError answers 500.
func ServerError() Turn { return Turn{Status: http.StatusInternalServerError} }

// CutAfter streams these pieces of text, then drops the connection.
func CutAfter(chunks ...string) Turn { return Turn{Text: chunks, Cut: true} }

// Stall streams these pieces of text, then goes silent without finishing.
func Stall(chunks ...string) Turn { return Turn{Text: chunks, Stall: true} }

// Endless streams these pieces of text over and over and never finishes.
func Endless(chunks ...string) Turn { return Turn{Text: chunks, Endless: true} }

// Forever makes t the answer to every request from now on.
func Forever(t Turn) Turn {
	t.Repeat = true
	return t
}

// WithUsage returns t reporting this usage.
func (t Turn) WithUsage(input, output int) Turn {
	t.Usage = Usage{InputTokens: input, OutputTokens: output}
	return t
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the parsed JSON body (nil if it was not JSON).
	Body map[string]any
	// Raw is the body as sent.
	Raw []byte
}

// Decode unmarshals the body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Raw, v) }

// Server is a scripted model server.
type Server struct {
	// URL is the base URL to configure: for OpenAI it ends in /v1
	// (llm.Config.OpenAIBaseURL); for Anthropic it is the server's root
	// (llm.Config.AnthropicBaseURL).
	URL string

	proto protocol
	done  chan struct{}
	// errorf reports the server's own failures (the test's Errorf);
	// record keeps the requests for Requests.
	errorf func(format string, args ...any)
	record bool

	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []Request
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// protocol is what differs between the two APIs.
type protocol interface {
	name() string
	path() string
	// errorBody is the JSON body of an error status.
	errorBody(status int, message string) []byte
	// plan lays out the events of a streamed turn.
	plan(t Turn, req Request) plan
}

// plan is a streamed turn as SSE frames.
type plan struct {
	head []string // the start and the body: text, tool calls
	tail []string // what finishes the stream
	loop []string // what an Endless turn repeats after head
}

func newServer(t testing.TB, proto protocol, prefix string, turns []Turn) *Server {
	t.Helper()
	s := &Server{proto: proto, turns: turns, done: make(chan struct{}), errorf: t.Errorf, record: true}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = srv.URL + prefix
	t.Cleanup(func() {
		close(s.done)
		srv.Close()
	})
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	if json.Unmarshal(raw, &rec.Body) != nil {
		rec.Body = nil
	}

	s.mu.Lock()
	if s.record {
		s.requests = append(s.requests, rec)
	}
	n := len(s.requests)
	routed := r.Method == http.MethodPost && r.URL.Path == s.proto.path()
	var (
		turn Turn
		ok   bool
	)
	if routed && s.next < len(s.turns) {
		turn, ok = s.turns[s.next], true
		if !turn.Repeat {
			s.next++
		}
	}
	s.mu.Unlock()

	if !routed {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("llmtest: no route for %s %s", r.Method, r.URL.Path))
		return
	}
	if !ok {
		s.errorf("llmtest: %s server got request %d, but its script has only %d turns", s.proto.name(), n, len(s.turns))
		s.writeError(w, http.StatusInternalServerError, "llmtest: the script has no turn left")
		return
	}
	if !s.wait(r, turn.Delay) {
		return
	}
	for k, vs := range turn.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if turn.Status != 0 {
		s.writeError(w, turn.Status, turn.ErrorMessage)
		return
	}
	s.stream(w, r, turn, s.proto.plan(turn, rec))
}

func (s *Server) writeError(w http.ResponseWriter, status int, message string) {
	if message == "" {
		message = stockMessage(status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(s.proto.errorBody(status, message))
}

func stockMessage(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "Incorrect API key provided."
	case http.StatusTooManyRequests:
		return "Rate limit reached. Please try again later."
	case http.StatusInternalServerError:
		return "The server had an error while processing your request."
	case 529:
		return "Overloaded"
	}
	return http.StatusText(status)
}

// errorMessage is the message of t's error event.
func (t Turn) errorMessage() string {
	if t.ErrorMessage != "" {
		return t.ErrorMessage
	}
	return "The server had an error while processing your request (" + t.StreamError + ")."
}

// wait sleeps d unless the client or the test goes away first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// endlessPause paces an Endless turn that sets no ChunkDelay.
const endlessPause = 2 * time.Millisecond

func (s *Server) stream(w http.ResponseWriter, r *http.Request, turn Turn, p plan) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	send := func(frames []string, delay time.Duration) bool {
		for _, f := range frames {
			if !s.wait(r, delay) {
				return false
			}
			if _, err := io.WriteString(w, f); err != nil {
				return false
			}
			if rc.Flush() != nil {
				return false
			}
		}
		return true
	}
	if !send(p.head, turn.ChunkDelay) {
		return
	}
	switch {
	case turn.Endless && len(p.loop) > 0:
		delay := turn.ChunkDelay
		if delay <= 0 {
			delay = endlessPause
		}
		for send(p.loop, delay) {
		}
	case turn.Cut:
		conn, _, err := rc.Hijack()
		if err != nil {
			s.errorf("llmtest: cannot cut the stream: %v", err)
			return
		}
		_ = conn.Close()
	case turn.Stall, turn.Endless:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	default:
		send(p.tail, turn.ChunkDelay)
	}
}

// split cuts s into n pieces of about the same number of runes, never inside
// a rune.
func split(s string, n int) []string {
	if n <= 1 || s == "" {
		return []string{s}
	}
	runes := utf8.RuneCountInString(s)
	n = min(n, runes)
	pieces := make([]string, 0, n)
	for i := range n {
		size := runes / n
		if i < runes%n {
			size++
		}
		end := 0
		for range size {
			_, w := utf8.DecodeRuneInString(s[end:])
			end += w
		}
		pieces = append(pieces, s[:end])
		s = s[end:]
	}
	return pieces
}

// marshal encodes v as the APIs do: no HTML escaping.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("llmtest: %v", err)) // only our own maps and slices are encoded
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func callID(c ToolCall, prefix string, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return prefix + strconv.Itoa(i+1)
}
