package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readerToken signs claims for tern with its reader secret, after edit.
func (s *assistantServer) readerToken(edit func(jwt.MapClaims)) string {
	s.t.Helper()
	c := jwt.MapClaims{"aud": "tern", "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(), "sub": "reader-1", "groups": []string{"admins"}}
	if edit != nil {
		edit(c)
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.readerSecret)
	if err != nil {
		s.t.Fatal(err)
	}
	return token
}

// readerEndpoint asks one endpoint of a domain about the audit log, a page
// restricted to the group "admins", and says whether the answer shows it.
type readerEndpoint struct {
	name string
	ask  func(s *assistantServer, domain, token string) (status int, restricted bool, body string)
	// hidden is the status when the page is not shown: 200 with other
	// results, or the page endpoint's 404.
	hidden int
}

func postAsReader(path, body string) func(s *assistantServer, domain, token string) (int, bool, string) {
	return func(s *assistantServer, domain, token string) (int, bool, string) {
		var header []string
		if token != "" {
			header = []string{readerTokenHeader, token}
		}
		r := s.post(strings.ReplaceAll(path, "{domain}", domain), s.assistant, body, header...)
		return r.status, r.status == http.StatusOK && (strings.Contains(r.body, "guides/audit") || strings.Contains(r.body, "tern audit")), r.body
	}
}

func getAsReader(path string) func(s *assistantServer, domain, token string) (int, bool, string) {
	return func(s *assistantServer, domain, token string) (int, bool, string) {
		var header []string
		if token != "" {
			header = []string{readerTokenHeader, token}
		}
		r := s.do(http.MethodGet, strings.ReplaceAll(path, "{domain}", domain), s.assistant, "", header...)
		return r.status, r.status == http.StatusOK && strings.Contains(r.body, "tern audit"), r.body
	}
}

// mcpAsReader calls an MCP tool with the reader token in the header, as an
// MCP client configured with one sends it. A refused token is seen on the
// first request, whose status and body are returned.
func mcpAsReader(tool string, args map[string]any) func(s *assistantServer, domain, token string) (int, bool, string) {
	return func(s *assistantServer, domain, token string) (int, bool, string) {
		rt := http.RoundTripper(bearer{key: s.assistant, next: http.DefaultTransport})
		if token != "" {
			rt = headerRoundTripper{name: readerTokenHeader, value: token, next: rt}
			ping := s.post("/discovery/v1/mcp/"+domain, s.assistant, `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
				readerTokenHeader, token, "Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-06-18")
			if ping.status != http.StatusOK {
				return ping.status, false, ping.body
			}
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "docsmith-test", Version: "1"}, nil)
		ctx, cancel := context.WithCancel(s.t.Context())
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: s.url + "/discovery/v1/mcp/" + domain, HTTPClient: &http.Client{Transport: rt}, MaxRetries: -1,
		}, nil)
		if err != nil {
			s.t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			s.t.Fatalf("%s: %v", tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		return http.StatusOK, !res.IsError && (strings.Contains(text, "guides/audit") || strings.Contains(text, "tern audit")), text
	}
}

type headerRoundTripper struct {
	name, value string
	next        http.RoundTripper
}

func (h headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.next.RoundTrip(r)
}

func TestReaderGroupsComeFromASignedToken(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	const auditQuestion = `"messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"How do I read the audit log of syncs?"}]}]`
	endpoints := []readerEndpoint{
		{"page", postAsReader("/discovery/v1/page/{domain}", `{"path":"guides/audit","filter":{"groups":["admins"]}}`), http.StatusNotFound},
		{"page .md", getAsReader("/discovery/v1/page/{domain}/guides/audit.md"), http.StatusNotFound},
		{"search", postAsReader("/discovery/v1/search/{domain}", `{"query":"audit log syncs","filter":{"groups":["admins"]}}`), http.StatusOK},
		{"assistant v2", postAsReader("/discovery/v2/assistant/{domain}/message", `{"fp":"anonymous","filter":{"groups":["admins"]},`+auditQuestion+`}`), http.StatusOK},
		{"assistant v1", postAsReader("/discovery/v1/assistant/{domain}/message", `{"fp":"anonymous","filter":{"groups":["admins"]},`+auditQuestion+`}`), http.StatusOK},
		{"mcp get_page", mcpAsReader("get_page", map[string]any{"path": "guides/audit", "groups": []string{"admins"}}), http.StatusOK},
		{"mcp search", mcpAsReader("search", map[string]any{"query": "audit log syncs", "filter": map[string]any{"groups": []string{"admins"}}}), http.StatusOK},
	}

	valid := s.readerToken(nil)
	head, rest, _ := strings.Cut(valid, ".")
	claims, sig, _ := strings.Cut(rest, ".")
	raised := s.readerToken(func(c jwt.MapClaims) { c["groups"] = []string{"admins", "owners"} })
	tampered := head + "." + strings.Split(raised, ".")[1] + "." + sig
	algNone := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + claims + "."

	tests := []struct {
		name       string
		domain     string
		token      string
		status     int
		restricted bool
		message    string
	}{
		{name: "groups named without a token", domain: "tern", status: 200},
		{name: "token for the group", domain: "tern", token: valid, status: 200, restricted: true},
		{name: "token without the group", domain: "tern", token: s.readerToken(func(c jwt.MapClaims) { c["groups"] = []string{"staff"} }), status: 200},
		{name: "expired token", domain: "tern", token: s.readerToken(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }), status: 401, message: "expired"},
		{name: "token for another domain", domain: "tern", token: s.readerToken(func(c jwt.MapClaims) { c["aud"] = "open" }), status: 401, message: "not for this domain"},
		{name: "tampered token", domain: "tern", token: tampered, status: 401, message: "signature does not match"},
		{name: "alg none", domain: "tern", token: algNone, status: 401, message: "HS256"},
		{name: "domain without a reader secret", domain: "open", token: s.readerToken(func(c jwt.MapClaims) { c["aud"] = "open" }), status: 401, message: "takes no reader tokens"},
	}
	for _, ep := range endpoints {
		for _, tt := range tests {
			t.Run(ep.name+"/"+tt.name, func(t *testing.T) {
				status, restricted, body := ep.ask(s, tt.domain, tt.token)
				if tt.status == http.StatusOK && !tt.restricted {
					tt.status = ep.hidden
				}
				if status != tt.status || restricted != tt.restricted {
					t.Fatalf("status %d, restricted page shown %v; want %d, %v\n%s", status, restricted, tt.status, tt.restricted, body)
				}
				if tt.message != "" && !strings.Contains(body, tt.message) {
					t.Errorf("refusal %s does not say %q", body, tt.message)
				}
			})
		}
	}
}

// The widget sends the token from the docs site's own origin, so a
// preflight must allow the header.
func TestCORSAllowsTheReaderTokenHeader(t *testing.T) {
	t.Parallel()
	s := newAssistantServer(t, Limits{})
	r := s.do(http.MethodOptions, "/discovery/v1/search/tern", "", "", "Origin", "https://tern.example",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "x-docsmith-reader-token")
	if got := r.header.Get("Access-Control-Allow-Headers"); !strings.Contains(strings.ToLower(got), "x-docsmith-reader-token") {
		t.Fatalf("Access-Control-Allow-Headers = %q", got)
	}
}
