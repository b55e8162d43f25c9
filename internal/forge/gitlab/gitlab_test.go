package gitlab_test

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
	"github.com/docsmith/docsmith/internal/forge/gitlab"
)

const (
	token  = "glpat-TESTTOKEN0123456789abcdef"
	branch = "docsmith/1a2b3c-document-watch"
	// The project acme/team/docs, a subgroup's project, as GitLab wants it in
	// a path: one segment with the slashes escaped.
	mrs = "/api/v4/projects/acme%2Fteam%2Fdocs/merge_requests"
)

var listQuery = url.Values{"source_branch": {branch}, "state": {"opened"}}

// mrJSON is a merge request as GitLab's REST API returns it (trimmed).
func mrJSON(iid int, source, target, description string, sourceProject int) string {
	return fmt.Sprintf(`{"id":%d,"iid":%d,"project_id":42,"source_project_id":%d,"target_project_id":42,`+
		`"title":"Document --watch","description":%q,"state":"opened","source_branch":%q,"target_branch":%q,`+
		`"web_url":"https://gitlab.example/acme/team/docs/-/merge_requests/%d"}`,
		1000+iid, iid, sourceProject, description, source, target, iid)
}

func newForge(t *testing.T, exchanges ...forgetest.Exchange) *gitlab.Forge {
	t.Helper()
	srv := forgetest.New(t, "Private-Token", token, exchanges...)
	f, err := gitlab.New(forgeapi.Config{
		Kind:        "gitlab",
		APIBaseURL:  srv.URL + "/api/v4",
		RepoURL:     "https://gitlab.example/acme/team/docs.git",
		Token:       token,
		TokenSource: "ACME_GITLAB_TOKEN",
		HTTPClient:  srv.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGitLab(t *testing.T) {
	t.Parallel()
	open := forgeapi.NewPullRequest{Title: "Document --watch", Body: "Adds the flag.", Head: branch, Base: "main"}
	openBody := map[string]any{"title": "Document --watch", "description": "Adds the flag.", "source_branch": branch, "target_branch": "main"}
	want7 := &forgeapi.PullRequest{Number: 7, URL: "https://gitlab.example/acme/team/docs/-/merge_requests/7", Body: "Adds the flag.", Head: branch, Base: "main"}
	tests := []struct {
		name   string
		script []forgetest.Exchange
		run    func(context.Context, *gitlab.Forge) (any, error)
		want   any
	}{
		{
			name:   "find none",
			script: []forgetest.Exchange{{Method: "GET", Path: mrs, Query: listQuery, Reply: `[]`}},
			run:    findOpen,
			want:   (*forgeapi.PullRequest)(nil),
		},
		{
			name: "find one",
			script: []forgetest.Exchange{{Method: "GET", Path: mrs, Query: listQuery,
				Reply: `[` + mrJSON(7, branch, "main", "Adds the flag.", 42) + `]`}},
			run:  findOpen,
			want: want7,
		},
		{
			name: "find skips a fork's branch of the same name and prefers the base",
			script: []forgetest.Exchange{{Method: "GET", Path: mrs, Query: listQuery,
				Reply: `[` + mrJSON(9, branch, "main", "fork", 77) + `,` + mrJSON(8, branch, "dev", "x", 42) + `,` +
					mrJSON(7, branch, "main", "Adds the flag.", 42) + `]`}},
			run:  findOpen,
			want: want7,
		},
		{
			name: "open",
			script: []forgetest.Exchange{{Method: "POST", Path: mrs, Body: openBody,
				Status: http.StatusCreated, Reply: mrJSON(7, branch, "main", "Adds the flag.", 42)}},
			run:  func(ctx context.Context, f *gitlab.Forge) (any, error) { return f.Open(ctx, open) },
			want: *want7,
		},
		{
			name: "open when one exists returns it",
			script: []forgetest.Exchange{
				{Method: "POST", Path: mrs, Body: openBody, Status: http.StatusConflict,
					Reply: `{"message":["Another open merge request already exists for this source branch: !7"]}`},
				{Method: "GET", Path: mrs, Query: listQuery, Reply: `[` + mrJSON(7, branch, "main", "Adds the flag.", 42) + `]`},
			},
			run:  func(ctx context.Context, f *gitlab.Forge) (any, error) { return f.Open(ctx, open) },
			want: *want7,
		},
		{
			name: "update body",
			script: []forgetest.Exchange{{Method: "PUT", Path: mrs + "/7", Body: map[string]any{"description": "New body"},
				Reply: mrJSON(7, branch, "main", "New body", 42)}},
			run: func(ctx context.Context, f *gitlab.Forge) (any, error) { return nil, f.UpdateBody(ctx, 7, "New body") },
		},
		{
			name: "comment",
			script: []forgetest.Exchange{{Method: "POST", Path: mrs + "/7/notes", Body: map[string]any{"body": "Pushed 2 files."},
				Status: http.StatusCreated, Reply: `{"id":301,"body":"Pushed 2 files.","noteable_type":"MergeRequest","noteable_iid":7}`}},
			run: func(ctx context.Context, f *gitlab.Forge) (any, error) {
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

func findOpen(ctx context.Context, f *gitlab.Forge) (any, error) {
	return f.FindOpen(ctx, branch, "main")
}

func TestGitLabErrors(t *testing.T) {
	t.Parallel()
	open := forgeapi.NewPullRequest{Title: "T", Body: "B", Head: branch, Base: "main"}
	openBody := map[string]any{"title": "T", "description": "B", "source_branch": branch, "target_branch": "main"}
	doOpen := func(ctx context.Context, f *gitlab.Forge) error { _, err := f.Open(ctx, open); return err }
	doFind := func(ctx context.Context, f *gitlab.Forge) error {
		_, err := f.FindOpen(ctx, branch, "main")
		return err
	}
	tests := []struct {
		name   string
		script []forgetest.Exchange
		run    func(context.Context, *gitlab.Forge) error
		status int
		want   []string // in the message, in order
	}{
		{
			name:   "401",
			script: []forgetest.Exchange{{Method: "POST", Path: mrs, Body: openBody, Status: 401, Reply: `{"message":"401 Unauthorized"}`}},
			run:    doOpen,
			status: 401,
			want:   []string{"gitlab: 401 from POST /projects/acme%2Fteam%2Fdocs/merge_requests: 401 Unauthorized: check the token in ACME_GITLAB_TOKEN"},
		},
		{
			name: "403",
			script: []forgetest.Exchange{{Method: "PUT", Path: mrs + "/7", Body: map[string]any{"description": "b"}, Status: 403,
				Reply: `{"message":"403 Forbidden"}`}},
			run:    func(ctx context.Context, f *gitlab.Forge) error { return f.UpdateBody(ctx, 7, "b") },
			status: 403,
			want:   []string{"403 from PUT /projects/acme%2Fteam%2Fdocs/merge_requests/7", "check that the token in ACME_GITLAB_TOKEN may write"},
		},
		{
			name:   "404 project",
			script: []forgetest.Exchange{{Method: "GET", Path: mrs, Query: listQuery, Status: 404, Reply: `{"message":"404 Project Not Found"}`}},
			run:    doFind,
			status: 404,
			want:   []string{"404 from GET /projects/acme%2Fteam%2Fdocs/merge_requests?source_branch=" + branch + "&state=opened", "check the repository URL"},
		},
		{
			name: "404 merge request",
			script: []forgetest.Exchange{{Method: "POST", Path: mrs + "/8/notes", Body: map[string]any{"body": "c"}, Status: 404,
				Reply: `{"message":"404 Not found"}`}},
			run:    func(ctx context.Context, f *gitlab.Forge) error { return f.Comment(ctx, 8, "c") },
			status: 404,
			want:   []string{"404 from POST /projects/acme%2Fteam%2Fdocs/merge_requests/8/notes", "check that merge request !8 exists in acme/team/docs"},
		},
		{
			name: "500 echoing the token",
			script: []forgetest.Exchange{{Method: "POST", Path: mrs, Body: openBody, Status: 500,
				Reply: `{"message":"500 Internal Server Error for PRIVATE-TOKEN ` + token + `"}`}},
			run:    doOpen,
			status: 500,
			want:   []string{"500 from POST", "Internal Server Error for PRIVATE-TOKEN [redacted]", "try again later"},
		},
		{
			name: "HTML error page",
			script: []forgetest.Exchange{{Method: "GET", Path: mrs, Query: listQuery, Status: 502, ContentType: "text/html; charset=utf-8",
				Reply: "<!DOCTYPE html>\n<html><head><title>GitLab is not responding (502)</title></head><body>" + token + "</body></html>"}},
			run:    doFind,
			status: 502,
			want:   []string{"502 from GET", "HTML page, not JSON (title GitLab is not responding (502))", "try again later", "API base URL http://"},
		},
		{
			name: "HTML with 200",
			script: []forgetest.Exchange{{Method: "GET", Path: mrs, Query: listQuery, ContentType: "text/html",
				Reply: "<html><head><title>Sign in · GitLab</title></head></html>"}},
			run:    doFind,
			status: 200,
			want:   []string{"200 from GET", "HTML page, not JSON", "check the API base URL http://"},
		},
		{
			name: "409 and no open merge request",
			script: []forgetest.Exchange{
				{Method: "POST", Path: mrs, Body: openBody, Status: 409,
					Reply: `{"message":["Another open merge request already exists for this source branch: !7"]}`},
				{Method: "GET", Path: mrs, Query: listQuery, Reply: `[]`},
			},
			run:    doOpen,
			status: 409,
			want:   []string{"409 from POST", "Another open merge request already exists", "was pushed"},
		},
		{
			name:   "created without an iid",
			script: []forgetest.Exchange{{Method: "POST", Path: mrs, Body: openBody, Status: 201, Reply: `{"id":1}`}},
			run:    doOpen,
			status: 201,
			want:   []string{"gitlab: 201 from POST /projects/acme%2Fteam%2Fdocs/merge_requests: the reply names no merge request iid or web_url: check the API base URL"},
		},
		{
			name:   "timeout",
			script: []forgetest.Exchange{{Method: "GET", Path: mrs, Query: listQuery, Hang: true}},
			run: func(ctx context.Context, f *gitlab.Forge) error {
				ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				_, err := f.FindOpen(ctx, branch, "main")
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("errors.Is(%v, DeadlineExceeded) = false", err)
				}
				return err
			},
			want: []string{"gitlab: GET /projects/acme%2Fteam%2Fdocs/merge_requests", "no answer before the deadline"},
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

// TestGitLabProjectPath checks the project path for the URL forms GitLab
// clones use, including a GitLab installed under a relative URL.
func TestGitLabProjectPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prefix  string // the relative URL GitLab is installed under
		repoURL string
		path    string
	}{
		{"ssh with dots", "", "git@gitlab.example:acme/team/docs.site.git", "/api/v4/projects/acme%2Fteam%2Fdocs%2Esite/merge_requests"},
		{"ssh url", "", "ssh://git@gitlab.example:2222/acme/docs.git", "/api/v4/projects/acme%2Fdocs/merge_requests"},
		{"relative URL install", "/gitlab", "https://HOST/gitlab/acme/team/docs.git", "/gitlab/api/v4/projects/acme%2Fteam%2Fdocs/merge_requests"},
		{"relative URL, ssh", "/gitlab", "git@gitlab.example:gitlab/docs.git", "/gitlab/api/v4/projects/gitlab%2Fdocs/merge_requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := forgetest.New(t, "Private-Token", token,
				forgetest.Exchange{Method: "GET", Path: tt.path, Query: listQuery, Reply: `[]`})
			host := strings.TrimPrefix(srv.URL, "http://")
			f, err := gitlab.New(forgeapi.Config{
				APIBaseURL: srv.URL + tt.prefix, // without /api/v4, which New adds
				RepoURL:    strings.Replace(tt.repoURL, "HOST", host, 1),
				Token:      token,
				HTTPClient: srv.Client(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if pr, err := f.FindOpen(context.Background(), branch, "main"); pr != nil || err != nil {
				t.Errorf("FindOpen = %v, %v", pr, err)
			}
		})
	}
}

func TestGitLabRefusesBadArguments(t *testing.T) {
	t.Parallel()
	f := newForge(t) // no request may be sent
	ctx := context.Background()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"find without head", func() error { _, err := f.FindOpen(ctx, "", "main"); return err }, "head branch is empty"},
		{"open without base", func() error {
			_, err := f.Open(ctx, forgeapi.NewPullRequest{Title: "T", Head: branch})
			return err
		}, "base branch is empty"},
		{"update number -1", func() error { return f.UpdateBody(ctx, -1, "b") }, "not a merge request iid"},
		{"empty comment", func() error { return f.Comment(ctx, 7, "") }, "body is empty"},
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
