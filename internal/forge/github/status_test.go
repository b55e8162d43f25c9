package github_test

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
	"github.com/docsmith/docsmith/internal/forge/github"
)

const (
	sha      = "0123456789abcdef0123456789abcdef01234567"
	statuses = "/repos/acme/docs/statuses/" + sha
	comments = "/repos/acme/docs/issues/7/comments"
	marker   = "<!-- docsmith:answers -->"
	botID    = 501
)

// me is GitHub's reply to GET /user for the token's user.
var me = forgetest.Exchange{Method: "GET", Path: "/user", Reply: `{"login":"docsmith-bot","id":501,"type":"User"}`}

func commentsPage(page int) url.Values {
	return url.Values{"page": {fmt.Sprint(page)}, "per_page": {"100"}}
}

// commentJSON is an issue comment as GitHub's REST API returns it (trimmed).
func commentJSON(id, userID int, body string) string {
	b, _ := json.Marshal(body)
	return fmt.Sprintf(`{"id":%d,"node_id":"IC_%d","body":%s,"user":{"login":"user%d","id":%d,"type":"User"},`+
		`"html_url":"https://github.com/acme/docs/pull/7#issuecomment-%d","author_association":"MEMBER"}`, id, id, b, userID, userID, id)
}

// nextLink is the Link header GitHub sends with page of the comments when
// there is a next one.
func nextLink(page, last int) http.Header {
	return http.Header{"Link": {fmt.Sprintf(`<https://api.github.com/repositories/1/issues/7/comments?page=%d&per_page=100>; rel="next", `+
		`<https://api.github.com/repositories/1/issues/7/comments?page=%d&per_page=100>; rel="last"`, page+1, last)}}
}

func TestGitHubSetStatusOnLocalServerSpeakingGitHub(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 139) + "\n" + strings.Repeat("x", 20)
	tests := []struct {
		name string
		sha  string
		st   forgeapi.CommitStatus
		body map[string]any
	}{
		{
			name: "success with a link",
			sha:  sha,
			st: forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers",
				Description: "4 reader questions now answered, 0 regressed", TargetURL: "https://docs.example/checks/12"},
			body: map[string]any{"state": "success", "context": "docsmith/answers",
				"description": "4 reader questions now answered, 0 regressed", "target_url": "https://docs.example/checks/12"},
		},
		{
			name: "pending alone, the sha in capitals",
			sha:  strings.ToUpper(sha),
			st:   forgeapi.CommitStatus{State: forgeapi.StatusPending, Context: "docsmith/answers"},
			body: map[string]any{"state": "pending", "context": "docsmith/answers"},
		},
		{
			name: "a long description is cut at 140 characters",
			sha:  sha,
			st:   forgeapi.CommitStatus{State: forgeapi.StatusFailure, Context: "docsmith/answers", Description: long},
			body: map[string]any{"state": "failure", "context": "docsmith/answers", "description": strings.Repeat("é", 139) + "…"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newForge(t, forgetest.Exchange{Method: "POST", Path: statuses, Body: tt.body, Status: http.StatusCreated,
				Reply: `{"id":1,"state":"` + tt.st.State + `","context":"docsmith/answers","creator":{"login":"docsmith-bot","id":501}}`})
			if err := f.SetStatus(context.Background(), tt.sha, tt.st); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestGitHubUpsertCommentOnLocalServerSpeakingGitHub(t *testing.T) {
	t.Parallel()
	body := marker + "\n4 reader questions now answered, 0 regressed"
	old := marker + "\n3 reader questions now answered, 1 regressed"
	create := forgetest.Exchange{Method: "POST", Path: comments, Body: map[string]any{"body": body},
		Status: http.StatusCreated, Reply: commentJSON(90, botID, body)}
	edit := func(id int) forgetest.Exchange {
		return forgetest.Exchange{Method: "PATCH", Path: fmt.Sprintf("/repos/acme/docs/issues/comments/%d", id),
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
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(10, 7, "> "+old+"\nWhy?")), create},
		},
		{
			name:   "edited when one holds it",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(10, 7, "Looks good"), commentJSON(11, botID, old)), edit(11)},
		},
		{
			name: "the newest of two is edited",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(11, botID, old), commentJSON(12, 7, "ok"),
				commentJSON(15, botID, old)), edit(15)},
		},
		{
			name:   "left alone when identical",
			script: []forgetest.Exchange{me, list(1, nil, commentJSON(11, botID, strings.ReplaceAll(body, "\n", "\r\n")+"\n"))},
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
				{Method: "GET", Path: "/user", Status: http.StatusForbidden,
					Reply: `{"message":"Resource not accessible by integration","status":"403"}`},
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

// TestGitHubUpsertCommentStopsPaging checks that a pull request with more
// comments than the bound is not read to its end, and that the comment is
// then added.
func TestGitHubUpsertCommentStopsPaging(t *testing.T) {
	t.Parallel()
	body := marker + "\nAll answered."
	script := []forgetest.Exchange{me}
	for page := 1; page <= forgeapi.MaxCommentPages; page++ {
		script = append(script, forgetest.Exchange{Method: "GET", Path: comments, Query: commentsPage(page), Header: nextLink(page, 50),
			Reply: "[" + commentJSON(1000+page, 7, "chatter") + "]"})
	}
	script = append(script, forgetest.Exchange{Method: "POST", Path: comments, Body: map[string]any{"body": body},
		Status: http.StatusCreated, Reply: commentJSON(5000, botID, body)})
	f := newForge(t, script...)
	if err := f.UpsertComment(context.Background(), 7, marker, body); err != nil {
		t.Fatal(err)
	}
}

// TestGitHubLearnsItsUserOnce checks that a second upsert by the same forge
// asks no second time who the token's user is.
func TestGitHubLearnsItsUserOnce(t *testing.T) {
	t.Parallel()
	body := marker + "\nAll answered."
	list := forgetest.Exchange{Method: "GET", Path: comments, Query: commentsPage(1), Reply: "[" + commentJSON(11, botID, body) + "]"}
	f := newForge(t, me, list, list)
	for range 2 {
		if err := f.UpsertComment(context.Background(), 7, marker, body); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGitHubStatusAndCommentErrors(t *testing.T) {
	t.Parallel()
	success := forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers"}
	statusBody := map[string]any{"state": "success", "context": "docsmith/answers"}
	setStatus := func(ctx context.Context, f *github.Forge) error { return f.SetStatus(ctx, sha, success) }
	upsert := func(ctx context.Context, f *github.Forge) error {
		return f.UpsertComment(ctx, 7, marker, marker+" new")
	}
	tests := []struct {
		name      string
		script    []forgetest.Exchange
		run       func(context.Context, *github.Forge) error
		status    int
		temporary bool
		want      []string
	}{
		{
			name: "401 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Status: 401,
				Reply: `{"message":"Bad credentials","status":"401"}`}},
			run:    setStatus,
			status: 401,
			want:   []string{"github: 401 from POST " + statuses + ": Bad credentials: check the token in ACME_GITHUB_TOKEN"},
		},
		{
			name: "404 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Status: 404,
				Reply: `{"message":"Not Found","status":"404"}`}},
			run:    setStatus,
			status: 404,
			want:   []string{"404 from POST " + statuses, "check that commit " + sha + " was pushed to acme/docs"},
		},
		{
			name: "502 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Status: 502, ContentType: "text/html",
				Reply: "<html><head><title>502 Bad Gateway</title></head></html>"}},
			run:       setStatus,
			status:    502,
			temporary: true,
			want:      []string{"502 from POST", "HTML page", "try again later"},
		},
		{
			name: "401 learning the user",
			script: []forgetest.Exchange{{Method: "GET", Path: "/user", Status: 401,
				Reply: `{"message":"Bad credentials","status":"401"}`}},
			run:    upsert,
			status: 401,
			want:   []string{"github: 401 from GET /user: Bad credentials: check the token in ACME_GITHUB_TOKEN"},
		},
		{
			name: "403 of the rate limit learning the user",
			script: []forgetest.Exchange{{Method: "GET", Path: "/user", Status: 403,
				Header: http.Header{"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"1924992000"}},
				Reply:  `{"message":"API rate limit exceeded for user ID 501.","status":"403"}`}},
			run:    upsert,
			status: 403,
			want:   []string{"github: 403 from GET /user: API rate limit exceeded"},
		},
		{
			name: "404 listing the comments",
			script: []forgetest.Exchange{me, {Method: "GET", Path: comments, Query: commentsPage(1), Status: 404,
				Reply: `{"message":"Not Found","status":"404"}`}},
			run:    upsert,
			status: 404,
			want:   []string{"404 from GET " + comments + "?page=1&per_page=100", "check that pull request #7 exists in acme/docs"},
		},
		{
			name: "500 editing, echoing the token",
			script: []forgetest.Exchange{me,
				{Method: "GET", Path: comments, Query: commentsPage(1), Reply: "[" + commentJSON(11, botID, marker+" old") + "]"},
				{Method: "PATCH", Path: "/repos/acme/docs/issues/comments/11", Body: map[string]any{"body": marker + " new"}, Status: 500,
					Reply: `{"message":"Server Error for ` + token + `"}`}},
			run:       upsert,
			status:    500,
			temporary: true,
			want:      []string{"500 from PATCH /repos/acme/docs/issues/comments/11", "Server Error for [redacted]", "try again later"},
		},
		{
			name: "429 creating",
			script: []forgetest.Exchange{me,
				{Method: "GET", Path: comments, Query: commentsPage(1), Reply: "[]"},
				{Method: "POST", Path: comments, Body: map[string]any{"body": marker + " new"}, Status: 429,
					Header: http.Header{"Retry-After": {"30"}},
					Reply:  `{"message":"You have exceeded a secondary rate limit.","status":"429"}`}},
			run:       upsert,
			status:    429,
			temporary: true,
			want:      []string{"429 from POST " + comments, "secondary rate limit", "try again later"},
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

func TestGitHubStatusAndCommentRefuseBadArguments(t *testing.T) {
	t.Parallel()
	f := newForge(t) // no request may be sent
	ctx := context.Background()
	ok := forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers"}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"short sha", func() error { return f.SetStatus(ctx, sha[:12], ok) }, "not a full commit id"},
		{"branch as sha", func() error { return f.SetStatus(ctx, "main", ok) }, "not a full commit id"},
		{"non-hex sha", func() error { return f.SetStatus(ctx, strings.Repeat("g", 40), ok) }, "not a full commit id"},
		{"unknown state", func() error {
			return f.SetStatus(ctx, sha, forgeapi.CommitStatus{State: "warning", Context: "docsmith/answers"})
		}, `state "warning" is none of`},
		{"empty context", func() error {
			return f.SetStatus(ctx, sha, forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: " "})
		}, "context is empty"},
		{"script link", func() error {
			return f.SetStatus(ctx, sha, forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "c", TargetURL: "javascript:alert(1)"})
		}, "not an absolute http(s) URL"},
		{"comment number 0", func() error { return f.UpsertComment(ctx, 0, marker, marker) }, "not a pull request number"},
		{"empty marker", func() error { return f.UpsertComment(ctx, 7, "", "body") }, "marker is empty"},
		{"body without the marker", func() error { return f.UpsertComment(ctx, 7, marker, "body") }, "does not hold the marker"},
		{"body over GitHub's limit", func() error {
			return f.UpsertComment(ctx, 7, marker, marker+strings.Repeat("é", 65536))
		}, "more than the 65536 GitHub takes"},
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
