package gitlab_test

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
	"github.com/docsmith/docsmith/internal/forge/gitlab"
)

const (
	sha      = "0123456789abcdef0123456789abcdef01234567"
	statuses = "/api/v4/projects/acme%2Fteam%2Fdocs/statuses/" + sha
	notes    = mrs + "/7/notes"
	marker   = "<!-- docsmith:answers -->"
	botID    = 501
)

// me is GitLab's reply to GET /user for the token's user (a project access
// token's bot user, trimmed).
var me = forgetest.Exchange{Method: "GET", Path: "/api/v4/user", Reply: `{"id":501,"username":"project_42_bot_1","bot":true,"state":"active"}`}

func notesPage(page int) url.Values {
	return url.Values{"order_by": {"created_at"}, "sort": {"desc"}, "page": {fmt.Sprint(page)}, "per_page": {"100"}}
}

// noteJSON is a merge request note as GitLab's REST API returns it (trimmed).
func noteJSON(id, authorID int, body string, system bool) string {
	b, _ := json.Marshal(body)
	return fmt.Sprintf(`{"id":%d,"type":null,"body":%s,"author":{"id":%d,"username":"user%d","state":"active"},`+
		`"system":%t,"noteable_id":1007,"noteable_type":"MergeRequest","noteable_iid":7,"project_id":42,"resolvable":false}`,
		id, b, authorID, authorID, system)
}

// pageHeaders are the headers GitLab sends with page of a list.
func pageHeaders(page, next int) http.Header {
	h := http.Header{"X-Page": {fmt.Sprint(page)}, "X-Per-Page": {"100"}, "X-Next-Page": {""}}
	if next > 0 {
		h.Set("X-Next-Page", fmt.Sprint(next))
	}
	return h
}

func TestGitLabSetStatusOnLocalServerSpeakingGitLab(t *testing.T) {
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
			body: map[string]any{"state": "success", "name": "docsmith/answers",
				"description": "4 reader questions now answered, 0 regressed", "target_url": "https://docs.example/checks/12"},
		},
		{
			name: "failure is failed",
			st:   forgeapi.CommitStatus{State: forgeapi.StatusFailure, Context: "docsmith/answers", Description: "1 regressed"},
			body: map[string]any{"state": "failed", "name": "docsmith/answers", "description": "1 regressed"},
		},
		{
			name: "error is failed",
			st:   forgeapi.CommitStatus{State: forgeapi.StatusError, Context: "docsmith/answers"},
			body: map[string]any{"state": "failed", "name": "docsmith/answers"},
		},
		{
			name: "pending",
			st:   forgeapi.CommitStatus{State: forgeapi.StatusPending, Context: "docsmith/answers"},
			body: map[string]any{"state": "pending", "name": "docsmith/answers"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newForge(t, forgetest.Exchange{Method: "POST", Path: statuses, Body: tt.body, Status: http.StatusCreated,
				Reply: fmt.Sprintf(`{"id":93,"sha":%q,"ref":"docs-fix","status":%q,"name":"docsmith/answers","allow_failure":false}`, sha, tt.body["state"])})
			if err := f.SetStatus(context.Background(), sha, tt.st); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGitLabPendingAgainOnLocalServerSpeakingGitLab checks that GitLab's
// refusal to set a pending status pending again is no failure, and that the
// same refusal of another state still is.
func TestGitLabPendingAgainOnLocalServerSpeakingGitLab(t *testing.T) {
	t.Parallel()
	refusal := `{"message":"Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via \"enqueue\")"}`
	pending := forgeapi.CommitStatus{State: forgeapi.StatusPending, Context: "docsmith/answers"}
	f := newForge(t, forgetest.Exchange{Method: "POST", Path: statuses, Body: map[string]any{"state": "pending", "name": "docsmith/answers"},
		Status: http.StatusBadRequest, Reply: refusal})
	if err := f.SetStatus(context.Background(), sha, pending); err != nil {
		t.Fatalf("pending again: %v", err)
	}

	other := `{"message":"Cannot transition status via :run from :success (Reason(s): Status cannot transition via \"run\")"}`
	f = newForge(t, forgetest.Exchange{Method: "POST", Path: statuses, Body: map[string]any{"state": "pending", "name": "docsmith/answers"},
		Status: http.StatusBadRequest, Reply: other})
	var fe *forgeapi.Error
	if err := f.SetStatus(context.Background(), sha, pending); !errors.As(err, &fe) || fe.Status != http.StatusBadRequest {
		t.Fatalf("want the 400 as an error, got %v", err)
	}
}

func TestGitLabUpsertCommentOnLocalServerSpeakingGitLab(t *testing.T) {
	t.Parallel()
	body := marker + "\n4 reader questions now answered, 0 regressed"
	old := marker + "\n3 reader questions now answered, 1 regressed"
	create := forgetest.Exchange{Method: "POST", Path: notes, Body: map[string]any{"body": body},
		Status: http.StatusCreated, Reply: noteJSON(900, botID, body, false)}
	edit := func(id int) forgetest.Exchange {
		return forgetest.Exchange{Method: "PUT", Path: fmt.Sprintf("%s/%d", notes, id),
			Body: map[string]any{"body": body}, Reply: noteJSON(id, botID, body, false)}
	}
	list := func(page, next int, ns ...string) forgetest.Exchange {
		return forgetest.Exchange{Method: "GET", Path: notes, Query: notesPage(page), Header: pageHeaders(page, next), Reply: "[" + strings.Join(ns, ",") + "]"}
	}
	tests := []struct {
		name   string
		script []forgetest.Exchange
	}{
		{
			name: "created when no note holds the marker",
			script: []forgetest.Exchange{me, list(1, 0, noteJSON(12, 7, "Looks good", false),
				noteJSON(11, botID, "added 1 commit", true)), create},
		},
		{
			name:   "created when the marker is only in another user's note",
			script: []forgetest.Exchange{me, list(1, 0, noteJSON(12, 7, "> "+old, false)), create},
		},
		{
			name:   "edited when one holds it",
			script: []forgetest.Exchange{me, list(1, 0, noteJSON(12, 7, "Looks good", false), noteJSON(11, botID, old, false)), edit(11)},
		},
		{
			name: "the newest is edited, and the search stops at it",
			script: []forgetest.Exchange{me, list(1, 2, noteJSON(15, botID, old, false), noteJSON(12, 7, "ok", false),
				noteJSON(11, botID, old, false)), edit(15)},
		},
		{
			name:   "left alone when identical",
			script: []forgetest.Exchange{me, list(1, 0, noteJSON(11, botID, body+"\n", false))},
		},
		{
			name: "found on the second page",
			script: []forgetest.Exchange{me,
				list(1, 2, noteJSON(120, 7, "Looks good", false)),
				list(2, 0, noteJSON(11, botID, old, false)), edit(11)},
		},
		{
			name: "any author when the token may not read its user",
			script: []forgetest.Exchange{
				{Method: "GET", Path: "/api/v4/user", Status: http.StatusForbidden, Reply: `{"error":"insufficient_scope","error_description":"The request requires higher privileges than provided by the access token.","scope":"read_user api"}`},
				list(1, 0, noteJSON(11, 99, old, false)), edit(11)},
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

func TestGitLabStatusAndCommentErrors(t *testing.T) {
	t.Parallel()
	success := forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers"}
	statusBody := map[string]any{"state": "success", "name": "docsmith/answers"}
	setStatus := func(ctx context.Context, f *gitlab.Forge) error { return f.SetStatus(ctx, sha, success) }
	upsert := func(ctx context.Context, f *gitlab.Forge) error {
		return f.UpsertComment(ctx, 7, marker, marker+" new")
	}
	tests := []struct {
		name      string
		script    []forgetest.Exchange
		run       func(context.Context, *gitlab.Forge) error
		status    int
		temporary bool
		want      []string
	}{
		{
			name:   "401 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Status: 401, Reply: `{"message":"401 Unauthorized"}`}},
			run:    setStatus,
			status: 401,
			want:   []string{"gitlab: 401 from POST /projects/acme%2Fteam%2Fdocs/statuses/" + sha + ": 401 Unauthorized: check the token in ACME_GITLAB_TOKEN"},
		},
		{
			name:   "404 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Status: 404, Reply: `{"message":"404 Commit Not Found"}`}},
			run:    setStatus,
			status: 404,
			want:   []string{"404 from POST /projects/acme%2Fteam%2Fdocs/statuses/" + sha, "check that commit " + sha + " was pushed to acme/team/docs"},
		},
		{
			name: "503 on the status",
			script: []forgetest.Exchange{{Method: "POST", Path: statuses, Body: statusBody, Status: 503, ContentType: "text/html",
				Reply: "<!DOCTYPE html><html><head><title>GitLab is not responding (503)</title></head></html>"}},
			run:       setStatus,
			status:    503,
			temporary: true,
			want:      []string{"503 from POST", "HTML page", "try again later"},
		},
		{
			name:   "401 learning the user",
			script: []forgetest.Exchange{{Method: "GET", Path: "/api/v4/user", Status: 401, Reply: `{"message":"401 Unauthorized"}`}},
			run:    upsert,
			status: 401,
			want:   []string{"gitlab: 401 from GET /user: 401 Unauthorized: check the token in ACME_GITLAB_TOKEN"},
		},
		{
			name:   "404 listing the notes",
			script: []forgetest.Exchange{me, {Method: "GET", Path: notes, Query: notesPage(1), Status: 404, Reply: `{"message":"404 Not found"}`}},
			run:    upsert,
			status: 404,
			want:   []string{"404 from GET /projects/acme%2Fteam%2Fdocs/merge_requests/7/notes?order_by=created_at&sort=desc&page=1&per_page=100", "check that merge request !7 exists in acme/team/docs"},
		},
		{
			name: "500 editing, echoing the token",
			script: []forgetest.Exchange{me,
				{Method: "GET", Path: notes, Query: notesPage(1), Reply: "[" + noteJSON(11, botID, marker+" old", false) + "]"},
				{Method: "PUT", Path: notes + "/11", Body: map[string]any{"body": marker + " new"}, Status: 500,
					Reply: `{"message":"500 Internal Server Error for ` + token + `"}`}},
			run:       upsert,
			status:    500,
			temporary: true,
			want:      []string{"500 from PUT /projects/acme%2Fteam%2Fdocs/merge_requests/7/notes/11", "Internal Server Error for [redacted]", "try again later"},
		},
		{
			name: "429 creating",
			script: []forgetest.Exchange{me,
				{Method: "GET", Path: notes, Query: notesPage(1), Reply: "[]"},
				{Method: "POST", Path: notes, Body: map[string]any{"body": marker + " new"}, Status: 429, ContentType: "text/plain",
					Reply: "Retry later"}},
			run:       upsert,
			status:    429,
			temporary: true,
			want:      []string{"429 from POST /projects/acme%2Fteam%2Fdocs/merge_requests/7/notes", "try again later"},
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

func TestGitLabStatusAndCommentRefuseBadArguments(t *testing.T) {
	t.Parallel()
	f := newForge(t) // no request may be sent
	ctx := context.Background()
	ok := forgeapi.CommitStatus{State: forgeapi.StatusSuccess, Context: "docsmith/answers"}
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"short sha", func() error { return f.SetStatus(ctx, sha[:8], ok) }, "not a full commit id"},
		{"canceled is not ours", func() error {
			return f.SetStatus(ctx, sha, forgeapi.CommitStatus{State: "canceled", Context: "docsmith/answers"})
		}, `state "canceled" is none of`},
		{"body without the marker", func() error { return f.UpsertComment(ctx, 7, marker, "body") }, "does not hold the marker"},
		{"body over GitLab's limit", func() error {
			return f.UpsertComment(ctx, 7, marker, marker+strings.Repeat("x", 1_000_000))
		}, "more than the 1000000 GitLab takes"},
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
