package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/altcha-org/altcha-lib-go"

	"github.com/docsmith/docsmith/internal/pow"
)

// fetchAndSolve gets a challenge for domain from the server and solves it
// as the widget does.
func (s *assistantServer) fetchAndSolve(domain string) string {
	s.t.Helper()
	r := s.do(http.MethodGet, "/discovery/v1/challenge/"+domain, s.assistant, "")
	if r.status != http.StatusOK {
		s.t.Fatalf("challenge: %d %s", r.status, r.body)
	}
	var c altcha.Challenge
	if err := json.Unmarshal([]byte(r.body), &c); err != nil {
		s.t.Fatalf("challenge body %s: %v", r.body, err)
	}
	if c.Algorithm != "SHA-256" || c.MaxNumber != 1000 || c.Signature == "" || !strings.Contains(c.Salt, "expires=") {
		s.t.Fatalf("challenge = %+v; want a signed SHA-256 challenge with an expiry and the configured complexity", c)
	}
	sol, err := altcha.SolveChallenge(c.Challenge, c.Salt, altcha.SHA256, int(c.MaxNumber), 0, nil)
	if err != nil || sol == nil {
		s.t.Fatalf("solve: %v", err)
	}
	raw, err := json.Marshal(altcha.Payload{Algorithm: c.Algorithm, Challenge: c.Challenge, Number: int64(sol.Number), Salt: c.Salt, Signature: c.Signature})
	if err != nil {
		s.t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func TestProofOfWork(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	const guarded = "/discovery/v2/assistant/guarded/message"

	// A domain that does not ask for proof of work answers without one.
	if r := s.post(v2Path, s.assistant, question); r.status != http.StatusOK {
		t.Fatalf("domain without proof of work: %d %s", r.status, r.body)
	}

	// One that does refuses an answer without a solution, says where to
	// get a challenge, and lets the widget's origin read why.
	for _, path := range []string{guarded, "/discovery/v1/assistant/guarded/message"} {
		r := s.post(path, s.assistant, question, "Origin", "https://tern.example")
		if r.status != http.StatusForbidden || !strings.Contains(r.errorMessage(t), "GET /discovery/v1/challenge/guarded") ||
			r.header.Get(powChallengeHeader) != "/discovery/v1/challenge/guarded" ||
			!strings.Contains(r.header.Get("Access-Control-Expose-Headers"), powChallengeHeader) {
			t.Fatalf("%s without a solution: %d %v %s", path, r.status, r.header, r.body)
		}
	}

	// A solution opens one answer; the same solution again is refused.
	solution := s.fetchAndSolve("guarded")
	if r := s.post(guarded, s.assistant, question, pow.Header, solution); r.status != http.StatusOK {
		t.Fatalf("with a solution: %d %s", r.status, r.body)
	}
	r := s.post(guarded, s.assistant, question, pow.Header, solution)
	if r.status != http.StatusForbidden || !strings.Contains(r.errorMessage(t), "already used") {
		t.Fatalf("a solution used twice: %d %s", r.status, r.body)
	}

	// A solution for one domain does not open another's answers.
	other := s.fetchAndSolve("open")
	if r := s.post(guarded, s.assistant, question, pow.Header, other); r.status != http.StatusForbidden || !strings.Contains(r.errorMessage(t), "another domain") {
		t.Fatalf("another domain's solution: %d %s", r.status, r.body)
	}

	// The other discovery endpoints cost no model tokens and stay open.
	if r := s.post("/discovery/v1/search/guarded", s.assistant, `{"query":"sync"}`); r.status != http.StatusOK {
		t.Fatalf("search on the guarded domain: %d %s", r.status, r.body)
	}
}

func TestProofOfWorkChallengeEndpoint(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	tests := []struct {
		name   string
		path   string
		key    string
		status int
	}{
		{"no key", "/discovery/v1/challenge/guarded", "", http.StatusUnauthorized},
		{"admin key", "/discovery/v1/challenge/guarded", s.admin, http.StatusForbidden},
		{"another organization's domain", "/discovery/v1/challenge/globex-site", s.assistant, http.StatusNotFound},
		{"the key's domain", "/discovery/v1/challenge/guarded", s.assistant, http.StatusOK},
	}
	for _, tt := range tests {
		r := s.do(http.MethodGet, tt.path, tt.key, "", "Origin", "https://tern.example")
		if r.status != tt.status {
			t.Errorf("%s: %d %s; want %d", tt.name, r.status, r.body, tt.status)
		}
		if r.header.Get("Access-Control-Allow-Origin") != "https://tern.example" && tt.status != http.StatusNotFound {
			t.Errorf("%s: no CORS for the domain's origin: %v", tt.name, r.header)
		}
	}
	// The browser's preflight allows GET and the solution's header.
	r := s.do(http.MethodOptions, "/discovery/v1/challenge/guarded", "", "", "Origin", "https://tern.example",
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
	if r.status != http.StatusNoContent || !strings.Contains(r.header.Get("Access-Control-Allow-Methods"), "GET") {
		t.Fatalf("challenge preflight: %d %v", r.status, r.header)
	}
	r = s.do(http.MethodOptions, "/discovery/v2/assistant/guarded/message", "", "", "Origin", "https://tern.example",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type, x-docsmith-pow")
	if !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), pow.Header) {
		t.Fatalf("message preflight does not allow %s: %v", pow.Header, r.header)
	}
}
