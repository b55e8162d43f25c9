package forgeapi_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
)

const token = "tok_0123456789abcdef"

func TestDescriberFail(t *testing.T) {
	t.Parallel()
	d := forgeapi.NewDescriber("github", "https://ghe.example/api/v3", token, "ACME_TOKEN")
	call := forgeapi.Call{Method: "POST", Path: "/repos/o/r/pulls"}
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	tests := []struct {
		name      string
		call      forgeapi.Call
		reply     forgeapi.Reply
		cause     error
		want      []string // in the message, in order
		temporary bool
	}{
		{
			name:  "401",
			reply: forgeapi.Reply{Status: 401, Message: "Bad credentials"},
			want:  []string{"github: 401 from POST /repos/o/r/pulls: Bad credentials: check the token in ACME_TOKEN"},
		},
		{
			name:  "403",
			reply: forgeapi.Reply{Status: 403, Message: "Resource not accessible by personal access token"},
			want:  []string{"403 from POST", "not accessible", "check that the token in ACME_TOKEN may write"},
		},
		{
			name:  "404 default",
			reply: forgeapi.Reply{Status: 404, Message: "Not Found"},
			want:  []string{"404 from POST", "check the repository URL (owner/repo)"},
		},
		{
			name:  "404 of the call",
			call:  forgeapi.Call{Method: "PATCH", Path: "/repos/o/r/pulls/9", NotFound: "check that pull request #9 exists"},
			reply: forgeapi.Reply{Status: 404, Message: "Not Found"},
			want:  []string{"404 from PATCH /repos/o/r/pulls/9", "check that pull request #9 exists"},
		},
		{
			name:  "422 of the call",
			call:  forgeapi.Call{Method: "POST", Path: "/repos/o/r/pulls", Refused: "check the branch"},
			reply: forgeapi.Reply{Status: 422, Message: "Validation Failed"},
			want:  []string{"422 from POST", "Validation Failed: check the branch"},
		},
		{
			name:      "500 echoing the token",
			reply:     forgeapi.Reply{Status: 500, Message: "boom with " + token + " inside"},
			want:      []string{"500 from POST", "boom with [redacted] inside", "try again later"},
			temporary: true,
		},
		{
			name:      "429",
			reply:     forgeapi.Reply{Status: 429},
			want:      []string{"429 from POST /repos/o/r/pulls: the forge limited the rate"},
			temporary: true,
		},
		{
			name: "HTML error page",
			reply: forgeapi.Reply{Status: 502, Header: html,
				Body: []byte("<!DOCTYPE html><html><head><title>502 Bad\nGateway</title></head><body>" + token + "</body></html>")},
			want:      []string{"502 from POST", "HTML page, not JSON (title 502 Bad Gateway)", "try again later", "API base URL https://ghe.example/api/v3"},
			temporary: true,
		},
		{
			name:  "HTML without content type, in the message",
			reply: forgeapi.Reply{Status: 404, Message: "unknown: <html><body>nope " + token + "</body></html>"},
			want:  []string{"404 from POST", "HTML page", "API base URL"},
		},
		{
			name:      "plain text body",
			reply:     forgeapi.Reply{Status: 503, Body: []byte("upstream connect error\x00 or disconnect " + token)},
			want:      []string{"503 from POST", "not JSON: upstream connect error or disconnect [redacted]"},
			temporary: true,
		},
		{
			name:  "2xx that is not JSON",
			reply: forgeapi.Reply{Status: 200, Header: html, Body: []byte("<html><title>Sign in</title></html>")},
			cause: errors.New("invalid character '<' looking for beginning of value"),
			want:  []string{"github: 200 from POST", "HTML page, not JSON (title Sign in)", "root of the forge's REST API"},
		},
		{
			name:  "2xx empty",
			reply: forgeapi.Reply{Status: 200},
			cause: errors.New("unexpected end of JSON input"),
			want:  []string{"github: 200 from POST /repos/o/r/pulls: the reply is not the JSON the API documents (unexpected end of JSON input): check the API base URL"},
		},
		{
			name:      "network",
			cause:     errors.New(`Post "https://ghe.example/api/v3/repos/o/r/pulls": dial tcp: connection refused`),
			want:      []string{"github: POST /repos/o/r/pulls: Post", "connection refused", "check the API base URL https://ghe.example/api/v3"},
			temporary: true,
		},
		{
			name:  "long reply is cut",
			reply: forgeapi.Reply{Status: 400, Message: strings.Repeat("x", 5000)},
			want:  []string{"400 from POST", strings.Repeat("x", 300) + "…"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.call
			if c.Method == "" {
				c = call
			}
			e := d.Fail(context.Background(), c, tt.reply, tt.cause)
			msg := e.Error()
			rest := msg
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("message %q\ndoes not say %q (in order)", msg, w)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(msg, token) {
				t.Errorf("message holds the token: %q", msg)
			}
			if len(msg) > 1000 {
				t.Errorf("message is %d bytes long", len(msg))
			}
			if e.Temporary() != tt.temporary {
				t.Errorf("Temporary() = %v, want %v", e.Temporary(), tt.temporary)
			}
			if e.Status != tt.reply.Status {
				t.Errorf("Status = %d, want %d", e.Status, tt.reply.Status)
			}
		})
	}
}

func TestDescriberContext(t *testing.T) {
	t.Parallel()
	d := forgeapi.NewDescriber("gitlab", "https://gitlab.example/api/v4", token, "")
	call := forgeapi.Call{Method: "GET", Path: "/projects/g%2Fp/merge_requests"}
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		is   error
		want string
	}{
		{"deadline", expired, context.DeadlineExceeded, "no answer before the deadline"},
		{"canceled", canceled, context.Canceled, "canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := error(d.Fail(tt.ctx, call, forgeapi.Reply{}, errors.New("net/http: request canceled")))
			if !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "gitlab: GET /projects/g%2Fp/merge_requests") {
				t.Errorf("message %q does not say %q", err, tt.want)
			}
			var fe *forgeapi.Error
			if !errors.As(err, &fe) || fe.Temporary() {
				t.Errorf("want a *forgeapi.Error that is not temporary, got %#v", err)
			}
		})
	}
}

func TestDescriberShortTokenAndErrorf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, token, text, want string
	}{
		{"long token scrubbed", token, "bad " + token, "gitea: bad [redacted]"},
		{"short token left alone", "tok", "check the token", "gitea: check the token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := forgeapi.NewDescriber("gitea", "https://gitea.example/api/v1", tt.token, "")
			cause := errors.New(tt.text)
			err := d.Errorf("%w", cause)
			if err.Error() != tt.want {
				t.Errorf("Errorf = %q, want %q", err, tt.want)
			}
			if !errors.Is(err, cause) {
				t.Error("Errorf does not wrap its cause")
			}
		})
	}
}

func TestNewPullRequestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pr   forgeapi.NewPullRequest
		want string // "" means valid
	}{
		{"valid", forgeapi.NewPullRequest{Title: "t", Head: "h", Base: "main"}, ""},
		{"no title", forgeapi.NewPullRequest{Title: " ", Head: "h", Base: "main"}, "title"},
		{"no head", forgeapi.NewPullRequest{Title: "t", Base: "main"}, "head"},
		{"no base", forgeapi.NewPullRequest{Title: "t", Head: "h"}, "base"},
		{"same", forgeapi.NewPullRequest{Title: "t", Head: "main", Base: "main"}, "both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.pr.Validate()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestPick(t *testing.T) {
	t.Parallel()
	a := forgeapi.PullRequest{Number: 1, Base: "dev"}
	b := forgeapi.PullRequest{Number: 2, Base: "main"}
	tests := []struct {
		name string
		prs  []forgeapi.PullRequest
		base string
		want int // 0: nil
	}{
		{"none", nil, "main", 0},
		{"base matches", []forgeapi.PullRequest{a, b}, "main", 2},
		{"no base match takes the first", []forgeapi.PullRequest{a, b}, "release", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := forgeapi.Pick(tt.prs, tt.base)
			if (got == nil && tt.want != 0) || (got != nil && got.Number != tt.want) {
				t.Errorf("Pick = %+v, want #%d", got, tt.want)
			}
		})
	}
}
