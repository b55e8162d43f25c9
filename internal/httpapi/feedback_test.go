package httpapi

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
)

const feedbackPath = "/discovery/v1/assistant/tern/feedback"

// streamMessageID is the assistant message id a stream announced: the v2
// start part's messageId or the v1 f: part's.
func streamMessageID(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`"messageId":"(msg_[0-9a-f]{32})"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no messageId in the stream:\n%s", body)
	}
	return m[1]
}

// askForFeedback asks a question on path and returns the thread and the
// message id a widget would rate.
func (s *assistantServer) askForFeedback(path string) (thread, message string) {
	s.t.Helper()
	r := s.post(path, s.assistant, question)
	if r.status != http.StatusOK {
		s.t.Fatalf("ask: %d %s", r.status, r.body)
	}
	return r.header.Get("X-Thread-Id"), streamMessageID(s.t, r.body)
}

func feedbackJSONBody(thread, message, rating, comment string) string {
	b, _ := json.Marshal(map[string]string{"threadId": thread, "messageId": message, "rating": rating, "comment": comment})
	return string(b)
}

func TestFeedbackStoredWithTheTurn(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	for _, path := range []string{v2Path, v1Path} {
		t.Run(path, func(t *testing.T) {
			thread, message := s.askForFeedback(path)
			r := s.post(feedbackPath, s.assistant, feedbackJSONBody(thread, message, "up", ""))
			if r.status != http.StatusOK {
				t.Fatalf("up: %d %s", r.status, r.body)
			}
			// A second rating replaces the first.
			r = s.post(feedbackPath, s.assistant, feedbackJSONBody(thread, message, "down", "  The flag is --max-rate, not --limit.  "))
			var got feedbackJSON
			if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &got) != nil {
				t.Fatalf("down: %d %s", r.status, r.body)
			}
			if got.ThreadID != thread || got.MessageID != message || got.Rating != "down" || got.Comment != "The flag is --max-rate, not --limit." || got.CreatedAt.IsZero() {
				t.Errorf("answer = %+v", got)
			}
			turns, err := s.store.RecentTurns(t.Context(), thread, 5)
			if err != nil || len(turns) != 1 {
				t.Fatalf("turns: %v %v", turns, err)
			}
			if tu := turns[0]; tu.MessageID != message || tu.Rating != assistant.RatingDown || tu.Comment != got.Comment || !tu.RatedAt.Equal(got.CreatedAt) {
				t.Errorf("stored turn: message %s rating %q comment %q at %v", tu.MessageID, tu.Rating, tu.Comment, tu.RatedAt)
			}
		})
	}
}

func TestFeedbackErrors(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	thread, message := s.askForFeedback(v2Path)
	other, _ := s.askForFeedback("/discovery/v2/assistant/open/message")
	body := func(fields string) string {
		return `{"threadId":"` + thread + `","messageId":"` + message + `",` + fields + `}`
	}
	tests := []struct {
		name, path, key, body string
		status                int
		message               string
	}{
		{name: "no key", key: "-", body: body(`"rating":"up"`), status: 401, message: "Authorization header is missing"},
		{name: "admin key", key: "admin", body: body(`"rating":"up"`), status: 403, message: "assistant key"},
		{name: "other organization's domain", key: "globex", path: "/discovery/v1/assistant/globex-site/feedback", body: body(`"rating":"up"`), status: 404, message: "not found"},
		{name: "domain of another organization with this key", path: "/discovery/v1/assistant/globex-site/feedback", body: body(`"rating":"up"`), status: 404, message: `domain "globex-site" not found`},
		{name: "thread of another domain", body: `{"threadId":"` + other + `","messageId":"` + message + `","rating":"up"}`, status: 404, message: "not found"},
		{name: "thread asked for on another domain", path: "/discovery/v1/assistant/open/feedback", body: body(`"rating":"up"`), status: 404, message: "not found"},
		{name: "unknown message", body: `{"threadId":"` + thread + `","messageId":"msg_nope","rating":"up"}`, status: 404, message: `answer "msg_nope"`},
		{name: "unknown thread", body: `{"threadId":"thr_nope","messageId":"` + message + `","rating":"up"}`, status: 404, message: "not found"},
		{name: "long thread id", body: `{"threadId":"` + strings.Repeat("t", 100) + `","messageId":"m","rating":"up"}`, status: 404, message: "not found"},
		{name: "no rating", body: body(`"comment":"x"`), status: 400, message: `field "rating" is required`},
		{name: "bad rating", body: body(`"rating":"meh"`), status: 400, message: `field "rating" must be "up" or "down"`},
		{name: "rating not a string", body: body(`"rating":1`), status: 400, message: `field "rating" must be a string`},
		{name: "no thread", body: `{"messageId":"m","rating":"up"}`, status: 400, message: `field "threadId" is required`},
		{name: "no message", body: `{"threadId":"t","rating":"up"}`, status: 400, message: `field "messageId" is required`},
		{name: "comment too long", body: body(`"rating":"down","comment":"` + strings.Repeat("é", 2001) + `"`), status: 400, message: `field "comment" is 2001 characters long; the limit is 2000`},
		{name: "comment not a string", body: body(`"rating":"down","comment":["x"]`), status: 400, message: `field "comment" must be a string`},
		{name: "comment with NUL", body: body(`"rating":"down","comment":"a\u0000b"`), status: 400, message: `NUL`},
		{name: "not an object", body: `"up"`, status: 400, message: "must be a JSON object"},
		{name: "empty", body: ``, status: 415, message: "Content-Type: application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tc.path
			if path == "" {
				path = feedbackPath
			}
			key := map[string]string{"-": "", "admin": s.admin, "globex": s.globex, "": s.assistant}[tc.key]
			r := s.post(path, key, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if msg := r.errorMessage(t); !strings.Contains(msg, tc.message) {
				t.Fatalf("message %q does not contain %q", msg, tc.message)
			}
		})
	}
	// The comment limit is 2,000 characters, not bytes.
	if r := s.post(feedbackPath, s.assistant, body(`"rating":"down","comment":"`+strings.Repeat("é", 2000)+`"`)); r.status != http.StatusOK {
		t.Errorf("2000-character comment: %d %s", r.status, r.body)
	}
	// Nothing refused was stored on the thread asked about on another domain.
	turns, err := s.store.RecentTurns(t.Context(), other, 5)
	if err != nil || len(turns) != 1 || turns[0].Rating != "" {
		t.Errorf("other domain's turn: %+v %v", turns, err)
	}
}

func TestFeedbackCORSAndLimits(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{AssistantPerKeyMonth: 100, AssistantPerOrgHour: 3, AssistantPerIPDay: 100})
	thread, message := s.askForFeedback(v2Path) // 1 of 3
	r := s.do(http.MethodOptions, feedbackPath, "", "", "Origin", "https://tern.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization, content-type")
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "https://tern.example" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	// A refused body is not counted.
	if r := s.post(feedbackPath, s.assistant, `{"rating":"sideways"}`); r.status != 400 {
		t.Fatalf("bad body: %d %s", r.status, r.body)
	}
	for i := range 2 { // 2 and 3 of 3
		r := s.post(feedbackPath, s.assistant, feedbackJSONBody(thread, message, "up", ""), "Origin", "https://tern.example")
		if r.status != http.StatusOK || r.header.Get("RateLimit-Limit") != "3" || r.header.Get("Access-Control-Allow-Origin") != "https://tern.example" {
			t.Fatalf("feedback %d: %d %v %s", i, r.status, r.header, r.body)
		}
	}
	r = s.post(feedbackPath, s.assistant, feedbackJSONBody(thread, message, "down", ""), "Origin", "https://tern.example")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.header.Get("Access-Control-Allow-Origin") != "https://tern.example" {
		t.Fatalf("over the limit: %d %v %s", r.status, r.header, r.body)
	}
	if r := s.do(http.MethodGet, feedbackPath, s.assistant, ""); r.status != 405 || r.header.Get("Allow") != "POST, OPTIONS" {
		t.Errorf("GET: %d %v", r.status, r.header)
	}
}

// FuzzParseFeedbackBody checks that no body makes the decoder panic and
// that every refusal is a client error with a message.
func FuzzParseFeedbackBody(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"thr_1","messageId":"msg_1","rating":"up"}`,
		`{"threadId":"thr_1","messageId":"msg_1","rating":"down","comment":"\u0000\ud800"}`,
		`{"threadId":null,"rating":null}`, `[]`, `nul`, `{"rating":"up"} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fb, err := parseFeedbackBody(body)
		if err != nil {
			if apperr.CodeOf(err) != apperr.Invalid || apperr.MessageOf(err) == "" {
				t.Fatalf("parseFeedbackBody(%q) = %v: want an Invalid error with a message", body, err)
			}
			return
		}
		if fb.ThreadID == "" || fb.MessageID == "" || (fb.Rating != "up" && fb.Rating != "down") || len([]rune(fb.Comment)) > assistant.MaxFeedbackComment {
			t.Fatalf("parseFeedbackBody(%q) accepted %+v", body, fb)
		}
	})
}
