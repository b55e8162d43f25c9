package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	t.Parallel()
	r := &retrying{cfg: Config{RetryBase: 100 * time.Millisecond, MaxRetryWait: time.Second}}
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, 0, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 0, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 0, 200 * time.Millisecond, 400 * time.Millisecond},
		{5, 0, 500 * time.Millisecond, time.Second},
		{60, 0, 500 * time.Millisecond, time.Second},
		{1, 700 * time.Millisecond, 700 * time.Millisecond, 700 * time.Millisecond},
		{1, time.Hour, time.Second, time.Second},
	}
	for _, tt := range tests {
		for range 50 {
			if d := r.backoff(tt.attempt, tt.retryAfter); d < tt.lo || d > tt.hi {
				t.Fatalf("backoff(%d, %v) = %v, want within [%v, %v]", tt.attempt, tt.retryAfter, d, tt.lo, tt.hi)
			}
		}
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		want      bool
		wantAfter time.Duration
	}{
		{"429", &APIError{StatusCode: 429, RetryAfter: time.Second}, true, time.Second},
		{"500", &APIError{StatusCode: 500}, true, 0},
		{"529 in stream", &APIError{StatusCode: 529, InStream: true}, true, 0},
		{"408", &APIError{StatusCode: 408}, true, 0},
		{"400", &APIError{StatusCode: 400}, false, 0},
		{"401", fmt.Errorf("wrapped: %w", &APIError{StatusCode: 401}), false, 0},
		{"stream cut", fmt.Errorf("openai: %w: %w", ErrStreamCut, io.ErrUnexpectedEOF), true, 0},
		{"connection", &url.Error{Op: "Post", URL: "http://x", Err: errors.New("connection refused")}, true, 0},
		{"other", errors.New("the server sent a chunk that is not JSON"), false, 0},
		{"canceled", context.Canceled, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			after, ok := retryable(tt.err)
			if ok != tt.want || after != tt.wantAfter {
				t.Errorf("retryable = %v, %v; want %v, %v", after, ok, tt.wantAfter, tt.want)
			}
		})
	}
}

func TestIsOpenAIItself(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]bool{
		"":                             true,
		"https://api.openai.com/v1":    true,
		"https://API.openai.com/v1/":   true,
		"http://localhost:11434/v1":    false,
		"https://openrouter.ai/api/v1": false,
	} {
		if got := isOpenAIItself(u); got != want {
			t.Errorf("isOpenAIItself(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestRedactedError(t *testing.T) {
	t.Parallel()
	inner := &APIError{Provider: "openai", StatusCode: 400, Message: "bad key sk-1"}
	r := &retrying{secrets: []string{"sk-1"}}
	err := r.clean(fmt.Errorf("x: %w", inner))
	if got := err.Error(); got != "x: openai: 400 bad request: the server refused the request as sent (server said: bad key [redacted])" {
		t.Errorf("clean = %q", got)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Error("clean hides the APIError")
	}
}
