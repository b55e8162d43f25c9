package httpapi

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
)

func TestDecodePrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		limit       int64
		want        string
		code        apperr.Code
		message     string // substring of the error message
	}{
		{name: "ok", body: `{"prompt":"hi"}`, want: "hi"},
		{name: "charset parameter", contentType: "application/json; charset=utf-8", body: `{"prompt":"hi"}`, want: "hi"},
		{name: "unknown fields ignored", body: `{"prompt":"hi","model":"x","extra":{"a":[1]}}`, want: "hi"},
		{name: "no content type", contentType: "-", body: `{"prompt":"hi"}`, code: apperr.UnsupportedType, message: "Content-Type: application/json"},
		{name: "form content type", contentType: "application/x-www-form-urlencoded", body: `{"prompt":"hi"}`, code: apperr.UnsupportedType},
		{name: "missing prompt", body: `{}`, code: apperr.Invalid, message: `"prompt" is required`},
		{name: "null prompt", body: `{"prompt":null}`, code: apperr.Invalid, message: `"prompt" is required`},
		{name: "number prompt", body: `{"prompt":5}`, code: apperr.Invalid, message: `field "prompt" must be a string, not number`},
		{name: "array prompt", body: `{"prompt":["a"]}`, code: apperr.Invalid, message: `field "prompt" must be a string, not array`},
		{name: "not an object", body: `[1,2]`, code: apperr.Invalid, message: "must be a JSON object"},
		{name: "empty", body: ``, code: apperr.Invalid, message: "empty"},
		{name: "syntax", body: `{"prompt":`, code: apperr.Invalid, message: "ends in the middle"},
		{name: "bad token", body: `{"prompt" "x"}`, code: apperr.Invalid, message: "not valid JSON"},
		{name: "trailing data", body: `{"prompt":"a"}{"prompt":"b"}`, code: apperr.Invalid, message: "data after the JSON object"},
		{name: "too large", body: `{"prompt":"` + strings.Repeat("a", 100) + `"}`, limit: 50, code: apperr.TooLarge, message: "limit of 50 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			switch tc.contentType {
			case "":
				r.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				r.Header.Set("Content-Type", tc.contentType)
			}
			limit := tc.limit
			if limit == 0 {
				limit = 1 << 20
			}
			got, err := decodePrompt(httptest.NewRecorder(), r, limit)
			if tc.code == "" {
				if err != nil || got != tc.want {
					t.Fatalf("decodePrompt = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if apperr.CodeOf(err) != tc.code {
				t.Fatalf("error %v has code %s, want %s", err, apperr.CodeOf(err), tc.code)
			}
			if !strings.Contains(apperr.MessageOf(err), tc.message) {
				t.Fatalf("message %q does not contain %q", apperr.MessageOf(err), tc.message)
			}
		})
	}
}

// FuzzDecodePromptBody checks that no body makes the decoder panic, and that
// every refusal is a client error with a message, never an internal one.
func FuzzDecodePromptBody(f *testing.F) {
	for _, s := range []string{`{"prompt":"x"}`, `{"prompt":1}`, `[]`, `{"prompt":"\u0000"}`, `{"a":{"b":[{}]}}`, `nul`, `{"prompt":"a"} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var dst promptBody
		err := decodeBody(body, &dst)
		if err == nil {
			return
		}
		if apperr.CodeOf(err) != apperr.Invalid || apperr.MessageOf(err) == "" {
			t.Fatalf("decodeBody(%q) = %v: want an Invalid error with a message", body, err)
		}
	})
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"x", "!!!", encodeRaw("12"), encodeRaw("abc:id"), encodeRaw("12:")} {
		if _, err := decodeCursor(bad); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("decodeCursor(%q) = %v, want Invalid", bad, err)
		}
	}
}

func encodeRaw(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// FuzzListQuery checks that any query string either parses into a valid
// page request or is refused as invalid input, and that cursors round-trip.
func FuzzListQuery(f *testing.F) {
	f.Add("limit=5&status=active")
	f.Add("cursor=" + encodeRaw("1700000000000000:abc"))
	f.Add("limit=-1&cursor=%%%")
	f.Fuzz(func(t *testing.T, rawQuery string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.RawQuery = rawQuery
		q, err := parseListQuery(r)
		if err != nil {
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("parseListQuery(%q) = %v, want Invalid", rawQuery, err)
			}
			return
		}
		if q.Limit < 1 || q.Limit > maxPageSize {
			t.Fatalf("limit %d out of range for %q", q.Limit, rawQuery)
		}
		if q.After != nil {
			again, err := decodeCursor(encodeCursor(*q.After))
			if err != nil || again.ID != q.After.ID || !again.CreatedAt.Equal(q.After.CreatedAt) {
				t.Fatalf("cursor does not round-trip: %+v -> %+v, %v", *q.After, again, err)
			}
		}
	})
}

func FuzzLastEventID(f *testing.F) {
	for _, s := range []string{"", "0", "42", "-1", "9223372036854775808", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Last-Event-ID", v)
		id, err := lastEventID(r)
		if err != nil && !apperr.Is(err, apperr.Invalid) || id < 0 {
			t.Fatalf("lastEventID(%q) = %d, %v", v, id, err)
		}
	})
}
