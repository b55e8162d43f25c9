package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// APIError is an error the provider reported: an HTTP error status, or an
// error event inside a stream.
type APIError struct {
	// Provider is "openai" or "anthropic".
	Provider string
	// StatusCode is the HTTP status. For an error inside a stream it is the
	// status the error's type stands for (429 for a rate limit, 529 for
	// overloaded, 500 for a server error, 400 otherwise).
	StatusCode int
	// Type is the provider's error type or code, e.g. "rate_limit_error".
	Type string
	// Message is what the provider said, with secrets removed.
	Message string
	// RetryAfter is how long the provider asked to wait (Retry-After or
	// retry-after-ms); 0 when it did not say.
	RetryAfter time.Duration
	// InStream is true for an error event inside a stream.
	InStream bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	if e.InStream {
		b.WriteString(": error in the stream")
		if e.Type != "" {
			b.WriteString(" (" + e.Type + ")")
		}
		b.WriteString(": " + hint(e.StatusCode))
	} else {
		fmt.Fprintf(&b, ": %d %s", e.StatusCode, hint(e.StatusCode))
	}
	if e.Message != "" {
		fmt.Fprintf(&b, " (server said: %s)", e.Message)
	}
	return b.String()
}

// hint says what a status means and what to do about it.
func hint(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "bad request: the server refused the request as sent"
	case http.StatusUnauthorized:
		return "unauthorized: check the API key"
	case http.StatusPaymentRequired:
		return "payment required: check the account's billing"
	case http.StatusForbidden:
		return "forbidden: the API key may not use this model or endpoint"
	case http.StatusNotFound:
		return "not found: check the model name and the base URL"
	case http.StatusRequestTimeout:
		return "request timeout: the server gave up waiting"
	case http.StatusRequestEntityTooLarge:
		return "request too large: shorten the conversation or the tool results"
	case http.StatusUnprocessableEntity:
		return "unprocessable request: check the model's support for tools and parameters"
	case http.StatusTooManyRequests:
		return "too many requests: rate limited or out of quota; wait, or raise the account's limits"
	case http.StatusInternalServerError:
		return "internal server error: the provider failed; try again later"
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return "the provider is unavailable; try again later"
	case 529:
		return "overloaded: the provider is overloaded; try again later"
	}
	if text := http.StatusText(status); text != "" {
		return strings.ToLower(text)
	}
	return "unexpected status"
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// NewAPIError reads an error response, closes its body and describes it.
// Every secret is removed from the provider's message.
func NewAPIError(provider string, res *http.Response, secrets ...string) *APIError {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_ = res.Body.Close()
	typ, msg := ParseErrorBody(body)
	return &APIError{
		Provider:   provider,
		StatusCode: res.StatusCode,
		Type:       Redact(typ, secrets...),
		Message:    Redact(msg, secrets...),
		RetryAfter: ParseRetryAfter(res.Header, time.Now()),
	}
}

// ParseErrorBody finds the error type and message in the error bodies of
// OpenAI ({"error":{"message","type","code"}}), Anthropic
// ({"type":"error","error":{"type","message"}}), vLLM ({"message","type"}),
// Ollama ({"error":"…"}) and anything else (plain text).
func ParseErrorBody(body []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", clip(string(body))
	}
	var inner struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var text string
	switch {
	case json.Unmarshal(v.Error, &inner) == nil && (inner.Message != "" || inner.Type != ""):
		typ = inner.Type
		if typ == "" || typ == "error" {
			var code string
			if json.Unmarshal(inner.Code, &code) == nil && code != "" {
				typ = code
			}
		}
		return clip(typ), clip(inner.Message)
	case json.Unmarshal(v.Error, &text) == nil:
		return "", clip(text)
	case v.Message != "":
		if v.Type == "error" {
			v.Type = ""
		}
		return clip(v.Type), clip(v.Message)
	}
	return "", clip(string(body))
}

// clip makes a provider's text fit on one line of an error message.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const maxLen = 300
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// maxRetryAfter bounds a parsed Retry-After; callers cap it further.
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads retry-after-ms (milliseconds) or Retry-After
// (seconds or an HTTP date). It returns 0 when neither says anything usable.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && ms > 0 {
			if ms >= float64(maxRetryAfter/time.Millisecond) {
				return maxRetryAfter
			}
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || math.IsNaN(s) {
			return 0
		}
		if s >= maxRetryAfter.Seconds() {
			return maxRetryAfter
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// Redact replaces every non-empty secret in s.
func Redact(s string, secrets ...string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// StatusOfStreamError gives the HTTP status an error type inside a stream
// stands for, so that it is retried like the status would be.
func StatusOfStreamError(typ string) int {
	switch typ {
	case "rate_limit_error", "rate_limit_exceeded":
		return http.StatusTooManyRequests
	case "overloaded_error":
		return 529
	case "api_error", "server_error", "internal_error":
		return http.StatusInternalServerError
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "authentication_error", "invalid_api_key":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// StreamFailure describes an error that ended a call, other than the
// provider's own in-stream error event (each adapter reads that first): a
// canceled or timed-out call and an *APIError pass through; a connection
// error names the base URL; a malformed event says so; anything else is a
// cut stream, which callers may retry.
func StreamFailure(provider, baseURL string, err error) error {
	var apiErr *APIError
	if errors.As(err, &apiErr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return fmt.Errorf("%s: cannot reach the server at %s (check the base URL and that the server is running): %w",
			provider, redactURL(baseURL), err)
	}
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Errorf("%s: the server sent an event that is not JSON: %w", provider, err)
	}
	return fmt.Errorf("%s: %w: %w", provider, ErrStreamCut, err)
}

// redactURL drops credentials and the query from a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery = ""
	return u.Redacted()
}
