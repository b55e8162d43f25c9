package github_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
	"github.com/docsmith/docsmith/internal/forge/forgetest"
	"github.com/docsmith/docsmith/internal/forge/github"
)

const (
	token  = "ghp_TESTTOKEN0123456789abcdefABCDEF"
	branch = "docsmith/1a2b3c-document-watch"
	pulls  = "/repos/acme/docs/pulls"
)

// listQuery is what FindOpen asks GitHub for: the branch of this owner, open.
var listQuery = url.Values{"head": {"acme:" + branch}, "state": {"open"}}

// prJSON is a pull request as GitHub's REST API returns it (trimmed to the
// fields docsmith reads, plus a few it ignores).
func prJSON(number, head, base, body string) string {
	return `{"id":1` + number + `,"number":` + number + `,"state":"open","title":"Document --watch",` +
		`"html_url":"https://github.com/acme/docs/pull/` + number + `","body":"` + body + `",` +
		`"head":{"label":"acme:` + head + `","ref":"` + head + `","sha":"abc"},` +
		`"base":{"label":"acme:` + base + `","ref":"` + base + `","sha":"def"}}`
}

func newForge(t *testing.T, exchanges ...forgetest.Exchange) *github.Forge {
	t.Helper()
	srv := forgetest.New(t, "Authorization", "Bearer "+token, exchanges...)
	f, err := github.New(forgeapi.Config{
		Kind:        "github",
		APIBaseURL:  srv.URL,
		RepoURL:     "https://github.com/acme/docs.git",
		Token:       token,
		TokenSource: "ACME_GITHUB_TOKEN",
		HTTPClient:  srv.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGitHub(t *testing.T) {
	t.Parallel()
	open := forgeapi.NewPullRequest{Title: "Document --watch", Body: "Adds the flag.", Head: branch, Base: "main"}
	want7 := &forgeapi.PullRequest{Number: 7, URL: "https://github.com/acme/docs/pull/7", Body: "Adds the flag.", Head: branch, Base: "main"}
	tests := []struct {
		name   string
		script []forgetest.Exchange
		run    func(context.Context, *github.Forge) (any, error)
		want   any
	}{
		{
			name:   "find none",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery, Reply: `[]`}},
			run:    findOpen,
			want:   (*forgeapi.PullRequest)(nil),
		},
		{
			name: "find one",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery,
				Reply: `[` + prJSON("7", branch, "main", "Adds the flag.") + `]`}},
			run:  findOpen,
			want: want7,
		},
		{
			name: "find ignores other branches the server returns and prefers the base",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery,
				Reply: `[` + prJSON("3", "other", "main", "x") + `,` + prJSON("5", branch, "dev", "y") + `,` +
					prJSON("7", branch, "main", "Adds the flag.") + `]`}},
			run:  findOpen,
			want: want7,
		},
		{
			name: "open",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls,
				Body:   map[string]any{"title": "Document --watch", "body": "Adds the flag.", "head": branch, "base": "main"},
				Status: http.StatusCreated, Reply: prJSON("7", branch, "main", "Adds the flag.")}},
			run:  func(ctx context.Context, f *github.Forge) (any, error) { return f.Open(ctx, open) },
			want: *want7,
		},
		{
			name: "open when one exists returns it",
			script: []forgetest.Exchange{
				{Method: "POST", Path: pulls,
					Body:   map[string]any{"title": "Document --watch", "body": "Adds the flag.", "head": branch, "base": "main"},
					Status: http.StatusUnprocessableEntity,
					Reply: `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom",` +
						`"message":"A pull request already exists for acme:` + branch + `."}],` +
						`"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`},
				{Method: "GET", Path: pulls, Query: listQuery, Reply: `[` + prJSON("7", branch, "main", "Adds the flag.") + `]`},
			},
			run:  func(ctx context.Context, f *github.Forge) (any, error) { return f.Open(ctx, open) },
			want: *want7,
		},
		{
			name: "update body",
			script: []forgetest.Exchange{{Method: "PATCH", Path: pulls + "/7", Body: map[string]any{"body": "New body"},
				Reply: prJSON("7", branch, "main", "New body")}},
			run: func(ctx context.Context, f *github.Forge) (any, error) { return nil, f.UpdateBody(ctx, 7, "New body") },
		},
		{
			name: "comment",
			script: []forgetest.Exchange{{Method: "POST", Path: "/repos/acme/docs/issues/7/comments", Body: map[string]any{"body": "Pushed 2 files."},
				Status: http.StatusCreated, Reply: `{"id":99,"body":"Pushed 2 files.","html_url":"https://github.com/acme/docs/pull/7#issuecomment-99"}`}},
			run: func(ctx context.Context, f *github.Forge) (any, error) {
				return nil, f.Comment(ctx, 7, "Pushed 2 files.")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newForge(t, tt.script...)
			got, err := tt.run(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func findOpen(ctx context.Context, f *github.Forge) (any, error) {
	return f.FindOpen(ctx, branch, "main")
}

func TestGitHubErrors(t *testing.T) {
	t.Parallel()
	open := forgeapi.NewPullRequest{Title: "T", Body: "B", Head: branch, Base: "main"}
	openBody := map[string]any{"title": "T", "body": "B", "head": branch, "base": "main"}
	doOpen := func(ctx context.Context, f *github.Forge) error { _, err := f.Open(ctx, open); return err }
	doFind := func(ctx context.Context, f *github.Forge) error {
		_, err := f.FindOpen(ctx, branch, "main")
		return err
	}
	tests := []struct {
		name   string
		script []forgetest.Exchange
		run    func(context.Context, *github.Forge) error
		status int
		want   []string // in the message, in order
	}{
		{
			name: "401",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls, Body: openBody, Status: 401,
				Reply: `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`}},
			run:    doOpen,
			status: 401,
			want:   []string{"github: 401 from POST /repos/acme/docs/pulls: Bad credentials: check the token in ACME_GITHUB_TOKEN"},
		},
		{
			name: "403",
			script: []forgetest.Exchange{{Method: "PATCH", Path: pulls + "/7", Body: map[string]any{"body": "b"}, Status: 403,
				Reply: `{"message":"Resource not accessible by personal access token","status":"403"}`}},
			run:    func(ctx context.Context, f *github.Forge) error { return f.UpdateBody(ctx, 7, "b") },
			status: 403,
			want:   []string{"403 from PATCH /repos/acme/docs/pulls/7", "not accessible", "check that the token in ACME_GITHUB_TOKEN may write"},
		},
		{
			name: "404 repository",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery, Status: 404,
				Reply: `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/pulls/pulls#list-pull-requests","status":"404"}`}},
			run:    doFind,
			status: 404,
			want:   []string{"404 from GET /repos/acme/docs/pulls?head=acme:" + branch + "&state=open: Not Found", "check the repository URL"},
		},
		{
			name: "404 pull request",
			script: []forgetest.Exchange{{Method: "POST", Path: "/repos/acme/docs/issues/8/comments", Body: map[string]any{"body": "c"}, Status: 404,
				Reply: `{"message":"Not Found"}`}},
			run:    func(ctx context.Context, f *github.Forge) error { return f.Comment(ctx, 8, "c") },
			status: 404,
			want:   []string{"404 from POST /repos/acme/docs/issues/8/comments", "check that pull request #8 exists in acme/docs and that the token in ACME_GITHUB_TOKEN can see"},
		},
		{
			name: "500 echoing the token",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls, Body: openBody, Status: 500,
				Reply: `{"message":"Server Error: bad header Bearer ` + token + `"}`}},
			run:    doOpen,
			status: 500,
			want:   []string{"500 from POST", "Server Error: bad header Bearer [redacted]", "the forge failed: try again later"},
		},
		{
			name: "HTML error page",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery, Status: 502, ContentType: "text/html",
				Reply: "<html><head><title>502 Bad Gateway</title></head><body>" + token + "</body></html>"}},
			run:    doFind,
			status: 502,
			want:   []string{"502 from GET", "the reply is an HTML page, not JSON (title 502 Bad Gateway)", "try again later", "API base URL http://"},
		},
		{
			name: "HTML with 200",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery, ContentType: "text/html; charset=utf-8",
				Reply: "<!DOCTYPE html><html><head><title>Sign in to GitHub</title></head></html>"}},
			run:    doFind,
			status: 200,
			want:   []string{"200 from GET", "HTML page, not JSON", "check the API base URL http://"},
		},
		{
			name: "non-JSON body",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery, Status: 503, ContentType: "text/plain",
				Reply: "upstream connect error or disconnect/reset before headers"}},
			run:    doFind,
			status: 503,
			want:   []string{"503 from GET", "the reply is not JSON: upstream connect error"},
		},
		{
			name: "422 that is no duplicate",
			script: []forgetest.Exchange{
				{Method: "POST", Path: pulls, Body: openBody, Status: 422,
					Reply: `{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"No commits between main and ` + branch + `"}]}`},
				{Method: "GET", Path: pulls, Query: listQuery, Reply: `[]`},
			},
			run:    doOpen,
			status: 422,
			want:   []string{"422 from POST /repos/acme/docs/pulls: Validation Failed (No commits between main and " + branch + ")", "was pushed"},
		},
		{
			name:   "created without a number",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls, Body: openBody, Status: 201, Reply: `{"id":1}`}},
			run:    doOpen,
			status: 201,
			want:   []string{"github: 201 from POST /repos/acme/docs/pulls: the reply names no pull request number or html_url: check the API base URL"},
		},
		{
			name:   "timeout",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery, Hang: true}},
			run: func(ctx context.Context, f *github.Forge) error {
				ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				_, err := f.FindOpen(ctx, branch, "main")
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("errors.Is(%v, DeadlineExceeded) = false", err)
				}
				return err
			},
			want: []string{"github: GET /repos/acme/docs/pulls", "no answer before the deadline"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newForge(t, tt.script...)
			err := tt.run(context.Background(), f)
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			t.Log(msg)
			rest := msg
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error %q\ndoes not say %q (in order)", msg, w)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(msg, token) {
				t.Errorf("error holds the token: %q", msg)
			}
			var fe *forgeapi.Error
			if !errors.As(err, &fe) || fe.Status != tt.status {
				t.Errorf("want a *forgeapi.Error with status %d, got %#v", tt.status, err)
			}
		})
	}
}

func TestGitHubUnreachable(t *testing.T) {
	t.Parallel()
	srv := forgetest.New(t, "Authorization", "Bearer "+token)
	base := srv.URL
	srv.Close()
	f, err := github.New(forgeapi.Config{APIBaseURL: base, RepoURL: "git@github.com:acme/docs.git", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Open(context.Background(), forgeapi.NewPullRequest{Title: "T", Head: branch, Base: "main"})
	var fe *forgeapi.Error
	if !errors.As(err, &fe) || fe.Status != 0 || !fe.Temporary() {
		t.Fatalf("want a temporary *forgeapi.Error without status, got %#v", err)
	}
	if !strings.Contains(err.Error(), "check the API base URL "+base) || strings.Contains(err.Error(), token) {
		t.Errorf("error %q", err)
	}
}

func TestGitHubRefusesBadArguments(t *testing.T) {
	t.Parallel()
	f := newForge(t) // no request may be sent
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"find without head", func() error { _, err := f.FindOpen(ctx, "", "main"); return err }, "head branch is empty"},
		{"open without title", func() error {
			_, err := f.Open(ctx, forgeapi.NewPullRequest{Head: branch, Base: "main"})
			return err
		}, "title is empty"},
		{"update number 0", func() error { return f.UpdateBody(ctx, 0, "b") }, "not a pull request number"},
		{"empty comment", func() error { return f.Comment(ctx, 7, " ") }, "body is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

func TestGitHubAPIBaseURL(t *testing.T) {
	t.Parallel()
	// Enterprise Server answers under /api/v3; the path given is used as is.
	srv := forgetest.New(t, "Authorization", "Bearer "+token,
		forgetest.Exchange{Method: "GET", Path: "/api/v3" + pulls, Query: listQuery, Reply: `[]`})
	f, err := github.New(forgeapi.Config{APIBaseURL: srv.URL + "/api/v3/", RepoURL: "ssh://git@ghe.example/acme/docs.git", Token: token, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := f.FindOpen(context.Background(), branch, "main"); pr != nil || err != nil {
		t.Errorf("FindOpen = %v, %v", pr, err)
	}
}
