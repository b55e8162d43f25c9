package gitea_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
	"github.com/docsmith/docsmith/internal/forge/forgetest"
	"github.com/docsmith/docsmith/internal/forge/gitea"
)

const (
	token  = "gta_TESTTOKEN0123456789abcdef"
	branch = "docsmith/1a2b3c-document-watch"
	pulls  = "/api/v1/repos/acme/docs/pulls"
)

// listQuery is page n of the open pull requests, most recently updated first.
func listQuery(page int) url.Values {
	return url.Values{"state": {"open"}, "sort": {"recentupdate"}, "page": {fmt.Sprint(page)}, "limit": {"50"}}
}

// prJSON is a pull request as Gitea's and Forgejo's API return it (trimmed).
func prJSON(number int, head, base, body string, headRepo int) string {
	return fmt.Sprintf(`{"id":%d,"number":%d,"state":"open","title":"Document --watch","body":%q,`+
		`"html_url":"https://gitea.example/acme/docs/pulls/%d",`+
		`"head":{"label":%q,"ref":%q,"sha":"abc","repo_id":%d},"base":{"label":%q,"ref":%q,"sha":"def","repo_id":5}}`,
		100+number, number, body, number, head, head, headRepo, base, base)
}

func newForge(t *testing.T, exchanges ...forgetest.Exchange) *gitea.Forge {
	t.Helper()
	srv := forgetest.New(t, "Authorization", "token "+token, exchanges...)
	f, err := gitea.New(forgeapi.Config{
		Kind:        "gitea",
		APIBaseURL:  srv.URL + "/api/v1", // the API root; the server root works too
		RepoURL:     "https://gitea.example/acme/docs.git",
		Token:       token,
		TokenSource: "ACME_GITEA_TOKEN",
		HTTPClient:  srv.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGitea(t *testing.T) {
	t.Parallel()
	open := forgeapi.NewPullRequest{Title: "Document --watch", Body: "Adds the flag.", Head: branch, Base: "main"}
	// The SDK sends every field of its option struct; the others must stay empty.
	openBody := map[string]any{"title": "Document --watch", "body": "Adds the flag.", "head": branch, "base": "main"}
	want7 := &forgeapi.PullRequest{Number: 7, URL: "https://gitea.example/acme/docs/pulls/7", Body: "Adds the flag.", Head: branch, Base: "main"}
	next := http.Header{"Link": {`<https://gitea.example/api/v1/repos/acme/docs/pulls?limit=50&page=2&sort=recentupdate&state=open>; rel="next",` +
		`<https://gitea.example/api/v1/repos/acme/docs/pulls?limit=50&page=2&sort=recentupdate&state=open>; rel="last"`}}
	last := http.Header{"Link": {`<https://gitea.example/api/v1/repos/acme/docs/pulls?limit=50&page=1&sort=recentupdate&state=open>; rel="first",` +
		`<https://gitea.example/api/v1/repos/acme/docs/pulls?limit=50&page=1&sort=recentupdate&state=open>; rel="prev"`}}
	tests := []struct {
		name   string
		script []forgetest.Exchange
		run    func(context.Context, *gitea.Forge) (any, error)
		want   any
	}{
		{
			name:   "find none",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1), Reply: `[]`}},
			run:    findOpen,
			want:   (*forgeapi.PullRequest)(nil),
		},
		{
			name: "find none among others",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1),
				Reply: `[` + prJSON(3, "other", "main", "x", 5) + `]`}},
			run:  findOpen,
			want: (*forgeapi.PullRequest)(nil),
		},
		{
			name: "find one",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1),
				Reply: `[` + prJSON(3, "other", "main", "x", 5) + `,` + prJSON(7, branch, "main", "Adds the flag.", 5) + `]`}},
			run:  findOpen,
			want: want7,
		},
		{
			name: "find follows the Link header and skips a fork's branch",
			script: []forgetest.Exchange{
				{Method: "GET", Path: pulls, Query: listQuery(1), Header: next,
					Reply: `[` + prJSON(9, branch, "main", "fork", 77) + `,` + prJSON(8, branch, "dev", "x", 5) + `]`},
				{Method: "GET", Path: pulls, Query: listQuery(2), Header: last,
					Reply: `[` + prJSON(7, branch, "main", "Adds the flag.", 5) + `]`},
			},
			run:  findOpen,
			want: want7,
		},
		{
			name: "find takes another base when there is nothing else",
			script: []forgetest.Exchange{
				{Method: "GET", Path: pulls, Query: listQuery(1), Header: last, Reply: `[` + prJSON(8, branch, "dev", "x", 5) + `]`},
			},
			run:  findOpen,
			want: &forgeapi.PullRequest{Number: 8, URL: "https://gitea.example/acme/docs/pulls/8", Body: "x", Head: branch, Base: "dev"},
		},
		{
			name: "open",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls, Body: openBody, Loose: true,
				Status: http.StatusCreated, Reply: prJSON(7, branch, "main", "Adds the flag.", 5)}},
			run:  func(ctx context.Context, f *gitea.Forge) (any, error) { return f.Open(ctx, open) },
			want: *want7,
		},
		{
			name: "open when one exists (409) returns it",
			script: []forgetest.Exchange{
				{Method: "POST", Path: pulls, Body: openBody, Loose: true, Status: http.StatusConflict,
					Reply: `{"message":"pull request already exists for these targets [id: 107, issue_id: 9, head_repo_id: 5, base_repo_id: 5, head_branch: ` + branch + `, base_branch: main]","url":"https://gitea.example/api/swagger"}`},
				{Method: "GET", Path: pulls, Query: listQuery(1), Reply: `[` + prJSON(7, branch, "main", "Adds the flag.", 5) + `]`},
			},
			run:  func(ctx context.Context, f *gitea.Forge) (any, error) { return f.Open(ctx, open) },
			want: *want7,
		},
		{
			name: "open when one exists (422, older servers) returns it",
			script: []forgetest.Exchange{
				{Method: "POST", Path: pulls, Body: openBody, Loose: true, Status: http.StatusUnprocessableEntity,
					Reply: `{"message":"pull request already exists for these targets","url":"https://gitea.example/api/swagger"}`},
				{Method: "GET", Path: pulls, Query: listQuery(1), Reply: `[` + prJSON(7, branch, "main", "Adds the flag.", 5) + `]`},
			},
			run:  func(ctx context.Context, f *gitea.Forge) (any, error) { return f.Open(ctx, open) },
			want: *want7,
		},
		{
			name: "update body",
			script: []forgetest.Exchange{{Method: "PATCH", Path: pulls + "/7", Body: map[string]any{"body": "New body"}, Loose: true,
				Status: http.StatusCreated, Reply: prJSON(7, branch, "main", "New body", 5)}},
			run: func(ctx context.Context, f *gitea.Forge) (any, error) { return nil, f.UpdateBody(ctx, 7, "New body") },
		},
		{
			name: "comment",
			script: []forgetest.Exchange{{Method: "POST", Path: "/api/v1/repos/acme/docs/issues/7/comments", Body: map[string]any{"body": "Pushed 2 files."},
				Status: http.StatusCreated, Reply: `{"id":55,"body":"Pushed 2 files.","html_url":"https://gitea.example/acme/docs/pulls/7#issuecomment-55"}`}},
			run: func(ctx context.Context, f *gitea.Forge) (any, error) {
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

func findOpen(ctx context.Context, f *gitea.Forge) (any, error) {
	return f.FindOpen(ctx, branch, "main")
}

func TestGiteaErrors(t *testing.T) {
	t.Parallel()
	open := forgeapi.NewPullRequest{Title: "T", Body: "B", Head: branch, Base: "main"}
	openBody := map[string]any{"title": "T", "body": "B", "head": branch, "base": "main"}
	doOpen := func(ctx context.Context, f *gitea.Forge) error { _, err := f.Open(ctx, open); return err }
	doFind := func(ctx context.Context, f *gitea.Forge) error { _, err := f.FindOpen(ctx, branch, "main"); return err }
	tests := []struct {
		name   string
		script []forgetest.Exchange
		run    func(context.Context, *gitea.Forge) error
		status int
		want   []string // in the message, in order
	}{
		{
			name: "401",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls, Body: openBody, Loose: true, Status: 401,
				Reply: `{"message":"user does not exist [uid: 0, name: ]","url":"https://gitea.example/api/swagger"}`}},
			run:    doOpen,
			status: 401,
			want:   []string{"gitea: 401 from POST /repos/acme/docs/pulls: user does not exist", "check the token in ACME_GITEA_TOKEN"},
		},
		{
			name: "403",
			script: []forgetest.Exchange{{Method: "PATCH", Path: pulls + "/7", Body: map[string]any{"body": "b"}, Loose: true, Status: 403,
				Reply: `{"message":"token does not have at least one of required scope(s): [write:repository]","url":"https://gitea.example/api/swagger"}`}},
			run:    func(ctx context.Context, f *gitea.Forge) error { return f.UpdateBody(ctx, 7, "b") },
			status: 403,
			want:   []string{"403 from PATCH /repos/acme/docs/pulls/7", "required scope(s)", "check that the token in ACME_GITEA_TOKEN may write"},
		},
		{
			name: "404 repository",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1), Status: 404,
				Reply: `{"errors":["GetRepositoryByName"],"message":"The target couldn't be found.","url":"https://gitea.example/api/swagger"}`}},
			run:    doFind,
			status: 404,
			want:   []string{"404 from GET /repos/acme/docs/pulls?state=open&sort=recentupdate&page=1&limit=50: The target couldn't be found.", "check the repository URL"},
		},
		{
			name: "404 pull request",
			script: []forgetest.Exchange{{Method: "POST", Path: "/api/v1/repos/acme/docs/issues/8/comments", Body: map[string]any{"body": "c"}, Status: 404,
				Reply: `{"message":"The target couldn't be found."}`}},
			run:    func(ctx context.Context, f *gitea.Forge) error { return f.Comment(ctx, 8, "c") },
			status: 404,
			want:   []string{"404 from POST /repos/acme/docs/issues/8/comments", "check that pull request #8 exists in acme/docs"},
		},
		{
			name: "500 echoing the token",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls, Body: openBody, Loose: true, Status: 500,
				Reply: `{"message":"CreatePullRequest: token ` + token + ` broke it"}`}},
			run:    doOpen,
			status: 500,
			want:   []string{"500 from POST", "CreatePullRequest: token [redacted] broke it", "try again later"},
		},
		{
			name: "HTML error page",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1), Status: 502, ContentType: "text/html",
				Reply: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>" + token + "</body></html>"}},
			run:    doFind,
			status: 502,
			want:   []string{"502 from GET", "HTML page, not JSON (title 502 Bad Gateway)", "try again later", "API base URL http://"},
		},
		{
			name: "non-JSON body",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1), Status: 500, ContentType: "text/plain",
				Reply: "Internal Server Error " + token}},
			run:    doFind,
			status: 500,
			want:   []string{"500 from GET", "the reply is not JSON: Internal Server Error [redacted]", "try again later"},
		},
		{
			name: "HTML with 200",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1), ContentType: "text/html; charset=utf-8",
				Reply: "<!DOCTYPE html><html><head><title>Gitea: Git with a cup of tea</title></head></html>"}},
			run:    doFind,
			status: 200,
			want:   []string{"200 from GET", "HTML page, not JSON", "check the API base URL http://"},
		},
		{
			name: "409 and no open pull request",
			script: []forgetest.Exchange{
				{Method: "POST", Path: pulls, Body: openBody, Loose: true, Status: 409,
					Reply: `{"message":"pull request already exists for these targets"}`},
				{Method: "GET", Path: pulls, Query: listQuery(1), Reply: `[]`},
			},
			run:    doOpen,
			status: 409,
			want:   []string{"409 from POST", "already exists", "was pushed"},
		},
		{
			name:   "created without a number",
			script: []forgetest.Exchange{{Method: "POST", Path: pulls, Body: openBody, Loose: true, Status: 201, Reply: `{"id":1}`}},
			run:    doOpen,
			status: 201,
			want:   []string{"gitea: 201 from POST /repos/acme/docs/pulls: the reply names no pull request number or html_url: check the API base URL"},
		},
		{
			name:   "timeout",
			script: []forgetest.Exchange{{Method: "GET", Path: pulls, Query: listQuery(1), Hang: true}},
			run: func(ctx context.Context, f *gitea.Forge) error {
				ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				_, err := f.FindOpen(ctx, branch, "main")
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("errors.Is(%v, DeadlineExceeded) = false", err)
				}
				return err
			},
			want: []string{"gitea: GET /repos/acme/docs/pulls", "no answer before the deadline"},
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

// TestGiteaServerRoot checks that a server root works as the API base URL,
// that no version probe is sent, and that a sub-path install's clone URL
// still names the right repository.
func TestGiteaServerRoot(t *testing.T) {
	t.Parallel()
	srv := forgetest.New(t, "Authorization", "token "+token,
		forgetest.Exchange{Method: "GET", Path: "/git/api/v1/repos/acme/docs/pulls", Query: listQuery(1), Reply: `[]`})
	f, err := gitea.New(forgeapi.Config{
		APIBaseURL: srv.URL + "/git/",
		RepoURL:    "https://forgejo.example/git/acme/docs.git",
		Token:      token,
		HTTPClient: srv.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := f.FindOpen(context.Background(), branch, "main"); pr != nil || err != nil {
		t.Errorf("FindOpen = %v, %v", pr, err)
	}
}

// TestGiteaStopsPaging checks that a server that keeps answering full pages
// cannot keep FindOpen going for ever.
func TestGiteaStopsPaging(t *testing.T) {
	t.Parallel()
	full := make([]string, 50)
	for i := range full {
		full[i] = prJSON(1000+i, fmt.Sprintf("other-%d", i), "main", "x", 5)
	}
	reply := "[" + strings.Join(full, ",") + "]"
	var script []forgetest.Exchange
	for page := 1; page <= 20; page++ {
		script = append(script, forgetest.Exchange{Method: "GET", Path: pulls, Query: listQuery(page), Reply: reply})
	}
	f := newForge(t, script...)
	if pr, err := f.FindOpen(context.Background(), branch, "main"); pr != nil || err != nil {
		t.Errorf("FindOpen = %v, %v", pr, err)
	}
}

func TestGiteaRefusesBadArguments(t *testing.T) {
	t.Parallel()
	f := newForge(t) // no request may be sent
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"find without head", func() error { _, err := f.FindOpen(ctx, "", "main"); return err }, "head branch is empty"},
		{"open onto itself", func() error {
			_, err := f.Open(ctx, forgeapi.NewPullRequest{Title: "T", Head: "main", Base: "main"})
			return err
		}, "both"},
		{"update number 0", func() error { return f.UpdateBody(ctx, 0, "b") }, "not a pull request number"},
		{"empty comment", func() error { return f.Comment(ctx, 7, "\n") }, "body is empty"},
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
