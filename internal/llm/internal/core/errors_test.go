package core

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.25"}}, 250 * time.Millisecond},
		{"milliseconds win", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"150"}}, 150 * time.Millisecond},
		{"bad milliseconds fall back", http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"soon"}}, 2 * time.Second},
		{"date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
		{"garbage", http.Header{"Retry-After": {"later"}}, 0},
		{"huge", http.Header{"Retry-After": {"1e300"}}, maxRetryAfter},
		{"infinite ms", http.Header{"Retry-After-Ms": {"+Inf"}}, maxRetryAfter},
		{"huge ms", http.Header{"Retry-After-Ms": {"1e300"}}, maxRetryAfter},
		{"NaN ms", http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"1"}}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ParseRetryAfter(tt.header, now); got != tt.want {
				t.Errorf("ParseRetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, typ, msg string
	}{
		{"openai", `{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "invalid_request_error", "Incorrect API key"},
		{"openai code only", `{"error":{"message":"slow down","type":null,"code":"rate_limit_exceeded"}}`, "rate_limit_exceeded", "slow down"},
		{"anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded"},
		{"vllm", `{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`, "NotFoundError", "The model does not exist."},
		{"ollama", `{"error":"model \"x\" not found, try pulling it first"}`, "", `model "x" not found, try pulling it first`},
		{"plain text", "Bad Gateway\n\n", "", "Bad Gateway"},
		{"empty", "", "", ""},
		{"json but no error", `{"ok":false}`, "", `{"ok":false}`},
		{"long", strings.Repeat("x", 1000), "", strings.Repeat("x", 300) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			typ, msg := ParseErrorBody([]byte(tt.body))
			if typ != tt.typ || msg != tt.msg {
				t.Errorf("ParseErrorBody = %q, %q; want %q, %q", typ, msg, tt.typ, tt.msg)
			}
		})
	}
}

func TestAPIErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  APIError
		want string
	}{
		{APIError{Provider: "openai", StatusCode: 401}, "openai: 401 unauthorized: check the API key"},
		{APIError{Provider: "anthropic", StatusCode: 429, Message: "slow down"},
			"anthropic: 429 too many requests: rate limited or out of quota; wait, or raise the account's limits (server said: slow down)"},
		{APIError{Provider: "anthropic", StatusCode: 529, Type: "overloaded_error", InStream: true},
			"anthropic: error in the stream (overloaded_error): overloaded: the provider is overloaded; try again later"},
		{APIError{Provider: "openai", StatusCode: 418}, "openai: 418 i'm a teapot"},
		{APIError{Provider: "openai", StatusCode: 599}, "openai: 599 unexpected status"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestNewAPIErrorRedacts(t *testing.T) {
	t.Parallel()
	res := &http.Response{
		StatusCode: http.StatusUnauthorized,
		Header:     http.Header{"Retry-After": {"3"}},
		Body:       readCloser(`{"error":{"message":"key sk-123 is wrong","type":"auth sk-123"}}`),
	}
	e := NewAPIError("openai", res, "sk-123", "")
	if strings.Contains(e.Error(), "sk-123") || e.Message != "key [redacted] is wrong" || e.RetryAfter != 3*time.Second {
		t.Errorf("NewAPIError = %+v (%s)", e, e)
	}
}

func TestStatusOfStreamError(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]int{
		"overloaded_error": 529, "rate_limit_error": 429, "api_error": 500, "invalid_request_error": 400, "": 400,
	} {
		if got := StatusOfStreamError(typ); got != want {
			t.Errorf("StatusOfStreamError(%q) = %d, want %d", typ, got, want)
		}
	}
}

func FuzzParseErrorBody(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"m","type":"t","code":"c"}}`))
	f.Add([]byte(`{"type":"error","error":{"type":"t","message":"m"}}`))
	f.Add([]byte(`{"error":"m"}`))
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, body []byte) {
		typ, msg := ParseErrorBody(body)
		for _, s := range []string{typ, msg} {
			if strings.ContainsAny(s, "\n\r\t") || len(s) > 300+len("…") {
				t.Errorf("unclipped %q", s)
			}
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "0.5", "-1", "1e400", "NaN", "Wed, 21 Oct 2015 07:28:00 GMT"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, seconds, ms string) {
		d := ParseRetryAfter(http.Header{"Retry-After": {seconds}, "Retry-After-Ms": {ms}}, time.Now())
		if d < 0 || d > maxRetryAfter {
			t.Errorf("ParseRetryAfter(%q, %q) = %v", seconds, ms, d)
		}
	})
}
