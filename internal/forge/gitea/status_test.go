package gitea_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
	"github.com/docsmith/docsmith/internal/forge/forgetest"
	"github.com/docsmith/docsmith/internal/forge/gitea"
)

const (
	sha      = "0123456789abcdef0123456789abcdef01234567"
	statuses = "/api/v1/repos/acme/docs/statuses/" + sha
	comments = "/api/v1/repos/acme/docs/issues/7/comments"
	marker   = "<!-- docsmith:answers -->"
	botID    = 501
)

// me is Gitea's reply to GET /user for the token's user (trimmed).
var me = forgetest.Exchange{Method: "GET", Path: "/api/v1/user", Reply: `{"id":501,"login":"docsmith-bot","login_name":"","full_name":"","is_admin":false}`}

func commentsPage(page int) url.Values {
	return url.Values{"page": {fmt.Sprint(page)}, "limit": {"100"}}
}

// commentJSON is an issue comment as Gitea's and Forgejo's API return it
// (trimmed).
func commentJSON(id, userID int, body string) string {
	b, _ := json.Marshal(body)
	return fmt.Sprintf(`{"id":%d,"html_url":"https://gitea.example/acme/docs/pulls/7#issuecomment-%d",`+
		`"pull_request_url":"https://gitea.example/acme/docs/pulls/7","issue_url":"","user":{"id":%d,"login":"user%d"},`+
		`"original_author":"","original_author_id":0,"body":%s,"assets":[],"created_at":"2026-11-30T10:00:00Z","updated_at":"2026-11-30T10:00:00Z"}`,
		id, id, userID, userID, b)
}

// nextLink is the Link header Gitea sends with page of a list that has more.
func nextLink(page, last int) http.Header {
	return http.Header{"Link": {fmt.Sprintf(`<https://gitea.example/api/v1/repos/acme/docs/issues/7/comments?limit=100&page=%d>; rel="next",`+
		`<https://gitea.example/api/v1/repos/acme/docs/issues/7/comments?limit=100&page=%d>; rel="last"`, page+1, last)},
		"X-Total-Count": {fmt.Sprint(100 * last)}}
}

func TestGiteaSetStatusOnLocalServerSpeakingGitea(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		st   forgeapi.CommitStatus
		body map[string]any
	}{
		{
			name: "success with a link",
			st: forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers",
				Description: "4 reader questions now answered, 0 regressed", TargetURL: "https://docs.example/checks/12"},
			body: map[string]any{"state": "success", "context": "docsmith/answers",
				"description": "4 reader questions now answered, 0 regressed", "target_url": "https://docs.example/checks/12"},
		},
		{
			name: "failure on one line",
			st:   forgeapi.CommitStatus{State: forgeapi.StatusFailure, Context: "docsmith/answers", Description: "1 regressed:\n\thow to restore"},
			body: map[string]any{"state": "failure", "context": "docsmith/answers", "description": "1 regressed: how to restore"},
		},
		{
			name: "error",
			st:   forgeapi.CommitStatus{State: forgeapi.StatusError, Context: "docsmith/answers"},
			body: map[string]any{"state": "error", "context": "docsmith/answers"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newForge(t, forgetest.Exchange{Method: "POST", Path: statuses, Body: tt.body, Loose: true, Status: http.StatusCreated,
				Reply: fmt.Sprintf(`{"id":4,"status":%q,"context":"docsmith/answers","creator":{"id":501,"login":"docsmith-bot"}}`, tt.st.State)})
			if err := f.SetStatus(context.Background(), sha, tt.st); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestGiteaUpsertCommentOnLocalServerSpeakingGitea(t *testing.T) {
	t.Parallel()
	body := marker + "\n4 reader questions now answered, 0 regressed"
	old := marker + "\n3 reader questions now answered, 1 regressed"
	create := forgetest.Exchange{Method: "POST", Path: comments, Body: map[string]any{"body": body},
		Status: http.StatusCreated, Reply: commentJSON(90, botID, body)}
	edit := func(id int) forgetest.Exchange {
		return forgetest.Exchange{Method: "PATCH", Path: fmt.Sprintf("/api/v1/repos/acme/docs/issues/comments/%d", id),
			Body: map[string]any{"body": body}, Reply: commentJSON(id, botID, body)}
	}
	list := func(page int, header http.Header, cs ...string) forgetest.Exchange {
		return forgetest.Exchange{Method: "GET", Path: comments, Query: commentsPage(page), Header: header, Reply: "[" + strings.Join(cs, ",") + "]"}
	}
	tests := []struct {
		name   string
		script []forgetest.Exchange
	}{
		{
			name:   "created when no comment holds the marker",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(10, 7, "Looks good"), commentJSON(11, botID, "Pushed 2 files.")), create},
		},
		{
			name:   "created when the marker is only in another user's comment",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(10, 7, "> "+old)), create},
		},
		{
			name:   "edited when one holds it",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(10, 7, "Looks good"), commentJSON(11, botID, old)), edit(11)},
		},
		{
			name:   "the newest of two is edited",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(11, botID, old), commentJSON(15, botID, old)), edit(15)},
		},
		{
			name:   "left alone when identical",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(11, botID, body))},
		},
		{
			name: "found on the second page",
			script: []forgetest.Exchange{me,
				list(1, nextLink(1, 2), commentJSON(10, 7, "Looks good")),
				list(2, nil, commentJSON(111, botID, old)), edit(111)},
		},
		{
			name: "any author when the token may not read its user",
			script: []forgetest.Exchange{
				{Method: "GET", Path: "/api/v1/user", Status: http.StatusForbidden,
					Reply: `{"message":"token does not have at least one of required scope(s): [read:user]","url":"https://gitea.example/api/swagger"}`},
				list(1, nil, commentJSON(11, 99, old)), edit(11)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newForge(t, tt.script...)
			if err := f.UpsertComment(context.Background(), 7, marker, body); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGiteaUpsertCommentIgnoredPaging checks that a server that answers
// every page with the same comments (it ignores paging but says there is a
// next page) is read once.
func TestGiteaUpsertCommentIgnoredPaging(t *testing.T) {
	t.Parallel()
	body := marker + "\nAll answered."
	page := "[" + commentJSON(10, 7, "Looks good") + "]"
	f := newForge(t, me,
		forgetest.Exchange{Method: "GET", Path: comments, Query: commentsPage(1), Header: nextLink(1, 3), Reply: page},
		forgetest.Exchange{Method: "GET", Path: comments, Query: commentsPage(2), Header: nextLink(2, 3), Reply: page},
		forgetest.Exchange{Method: "POST", Path: comments, Body: map[string]any{"body": body}, Status: http.StatusCreated, Reply: commentJSON(90, botID, body)})
	if err := f.UpsertComment(context.Background(), 7, marker, body); err != nil {
		t.Fatal(err)
	}
}

func TestGiteaStatusAndCommentErrors(t *testing.T) {
	t.Parallel()
	success := forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers"}
	statusBody := map[string]any{"state": "success", "context": "docsmith/answers"}
	setStatus := func(ctx context.Context, f *gitea.Forge) error { return f.SetStatus(ctx, sha, success) }
	upsert := func(ctx context.Context, f *gitea.Forge) error { return f.UpsertComment(ctx, 7, marker, marker+" new") }
	tests := []struct {
		name      string
		script    []forgetest.Exchange
		run       func(context.Context, *gitea.Forge) error
		status    int
		temporary bool
		want      []string
	}{
		{
			name: "401 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Loose: true, Status: 401,
				Reply: `{"message":"user does not exist [uid: 0, name: ]","url":"https://gitea.example/api/swagger"}`}},
			run:    setStatus,
			status: 401,
			want:   []string{"gitea: 401 from POST /repos/acme/docs/statuses/" + sha + ": user does not exist", "check the token in ACME_GITEA_TOKEN"},
		},
		{
			name: "404 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Loose: true, Status: 404,
				Reply: `{"errors":null,"message":"object does not exist [id: ` + sha + `, rel_path: ]","url":"https://gitea.example/api/swagger"}`}},
			run:    setStatus,
			status: 404,
			want:   []string{"404 from POST", "object does not exist", "check that commit " + sha + " was pushed to acme/docs"},
		},
		{
			name: "500 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Loose: true, Status: 500,
				Reply: `{"message":"CreateCommitStatus: database is locked","url":"https://gitea.example/api/swagger"}`}},
			run:       setStatus,
			status:    500,
			temporary: true,
			want:      []string{"500 from POST", "database is locked", "try again later"},
		},
		{
			name: "401 learning the user",
			script: []forgetest.Exchange{{Method: "GET", Path: "/api/v1/user", Status: 401,
				Reply: `{"message":"user does not exist [uid: 0, name: ]"}`}},
			run:    upsert,
			status: 401,
			want:   []string{"gitea: 401 from GET /user", "check the token in ACME_GITEA_TOKEN"},
		},
		{
			name: "404 listing the comments",
			script: []forgetest.Exchange{me, {Method: "GET", Path: comments, Query: commentsPage(1), Status: 404,
				Reply: `{"message":"The target couldn't be found."}`}},
			run:    upsert,
			status: 404,
			want:   []string{"404 from GET /repos/acme/docs/issues/7/comments?page=1&limit=100", "check that pull request #7 exists in acme/docs"},
		},
		{
			name: "502 editing",
			script: []forgetest.Exchange{me,
				{Method: "GET", Path: comments, Query: commentsPage(1), Reply: "[" + commentJSON(11, botID, marker+" old") + "]"},
				{Method: "PATCH", Path: "/api/v1/repos/acme/docs/issues/comments/11", Body: map[string]any{"body": marker + " new"},
					Status: 502, ContentType: "text/html", Reply: "<html><head><title>502 Bad Gateway</title></head><body>" + token + "</body></html>"}},
			run:       upsert,
			status:    502,
			temporary: true,
			want:      []string{"502 from PATCH /repos/acme/docs/issues/comments/11", "HTML page", "try again later"},
		},
		{
			name: "403 creating",
			script: []forgetest.Exchange{me,
				{Method: "GET", Path: comments, Query: commentsPage(1), Reply: "[]"},
				{Method: "POST", Path: comments, Body: map[string]any{"body": marker + " new"}, Status: 403,
					Reply: `{"message":"token does not have at least one of required scope(s): [write:issue]"}`}},
			run:    upsert,
			status: 403,
			want:   []string{"403 from POST /repos/acme/docs/issues/7/comments", "write:issue", "may write"},
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
			if !errors.As(err, &fe) || fe.Status != tt.status || fe.Temporary() != tt.temporary {
				t.Errorf("want a *forgeapi.Error with status %d, temporary %v; got %#v", tt.status, tt.temporary, err)
			}
		})
	}
}

func TestGiteaStatusAndCommentRefuseBadArguments(t *testing.T) {
	t.Parallel()
	f := newForge(t) // no request may be sent
	ctx := context.Background()
	ok := forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers"}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"branch as sha", func() error { return f.SetStatus(ctx, "restore-backups", ok) }, "not a full commit id"},
		{"warning is not ours", func() error {
			return f.SetStatus(ctx, sha, forgeapi.CommitStatus{State: "warning", Context: "docsmith/answers"})
		}, `state "warning" is none of`},
		{"link with credentials", func() error {
			return f.SetStatus(ctx, sha, forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "c", TargetURL: "https://u:p@docs.example/x"})
		}, "without credentials"},
		{"marker on two lines", func() error { return f.UpsertComment(ctx, 7, "<!--\n-->", "<!--\n--> body") }, "one line"},
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
