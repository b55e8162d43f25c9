package gitea_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
	"github.com/docsmith/docsmith/internal/forge/gitea"
	"github.com/docsmith/docsmith/internal/giteatest"
)

// TestRealGiteaStatusAndComment sets a commit status and keeps a pull
// request comment up to date on a real Gitea: the status reads back, a
// comment upserted twice is one comment with the second body, the same body
// again changes nothing, a reader's comment that quotes the marker is never
// edited, and on a pull request with many comments the one to edit is
// still found.
func TestRealGiteaStatusAndComment(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	cloneURL := srv.CreateRepo(t, "docs")
	repo := "/repos/" + srv.User + "/docs"

	// A docs change on a branch, and its pull request.
	var file struct {
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	content := base64.StdEncoding.EncodeToString([]byte("# Backups\n\nStop the service, then copy the data directory back.\n"))
	srv.API(t, http.MethodPost, repo+"/contents/guides/backups.md", mustJSON(t, map[string]any{
		"content": content, "message": "Explain how to restore a backup", "branch": "main", "new_branch": "restore-backups",
	}), http.StatusCreated, &file)
	var pr struct {
		Number int `json:"number"`
	}
	srv.API(t, http.MethodPost, repo+"/pulls", mustJSON(t, map[string]any{
		"head": "restore-backups", "base": "main", "title": "Explain how to restore a backup",
	}), http.StatusCreated, &pr)

	f, err := gitea.New(forgeapi.Config{Kind: "gitea", APIBaseURL: srv.URL, RepoURL: cloneURL, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	// Pending, then the verdict: the status of that name is replaced.
	if err := f.SetStatus(ctx, file.Commit.SHA, forgeapi.CommitStatus{State: forgeapi.StatusPending, Context: "docsmith/answers",
		Description: "Asking 4 reader questions"}); err != nil {
		t.Fatal(err)
	}
	verdict := forgeapi.CommitStatus{State: forgeapi.StatusFailure, Context: "docsmith/answers",
		Description: "1 reader question now answered, 1 regressed", TargetURL: "https://docs.example/checks/3"}
	if err := f.SetStatus(ctx, strings.ToUpper(file.Commit.SHA), verdict); err != nil {
		t.Fatal(err)
	}
	var combined struct {
		State    string `json:"state"`
		Statuses []struct {
			Status      string `json:"status"`
			Context     string `json:"context"`
			Description string `json:"description"`
			TargetURL   string `json:"target_url"`
		} `json:"statuses"`
	}
	srv.API(t, http.MethodGet, repo+"/commits/"+file.Commit.SHA+"/status", nil, http.StatusOK, &combined)
	if combined.State != "failure" || len(combined.Statuses) != 1 || combined.Statuses[0].Context != verdict.Context ||
		combined.Statuses[0].Description != verdict.Description || combined.Statuses[0].TargetURL != verdict.TargetURL {
		t.Fatalf("combined status %+v, want one failure named %s", combined, verdict.Context)
	}

	// A reader quotes a marker in a comment of their own.
	const marker = "<!-- docsmith:answers -->"
	srv.API(t, http.MethodPost, "/admin/users", mustJSON(t, map[string]any{
		"username": "reader", "email": "reader@example.invalid", "password": "reader-password-1", "must_change_password": false,
	}), http.StatusCreated, nil)
	asReader(t, srv, http.MethodPost, fmt.Sprintf("%s/issues/%d/comments", repo, pr.Number),
		mustJSON(t, map[string]any{"body": "Quoting the bot:\n" + marker + "\nIs this right?"}))

	first := marker + "\n**1 reader question now answered, 1 regressed**"
	second := marker + "\n**2 reader questions now answered, 0 regressed**"
	for _, body := range []string{first, second, second} {
		if err := f.UpsertComment(ctx, pr.Number, marker, body); err != nil {
			t.Fatal(err)
		}
	}
	var comments []struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
		Created string `json:"created_at"`
		Updated string `json:"updated_at"`
	}
	srv.API(t, http.MethodGet, fmt.Sprintf("%s/issues/%d/comments", repo, pr.Number), nil, http.StatusOK, &comments)
	var ours []int
	for i, c := range comments {
		if c.User.Login == srv.User {
			ours = append(ours, i)
		} else if !strings.HasPrefix(c.Body, "Quoting the bot:") {
			t.Errorf("the reader's comment was changed: %q", c.Body)
		}
	}
	if len(comments) != 2 || len(ours) != 1 || comments[ours[0]].Body != second {
		t.Fatalf("comments after three upserts: %+v; want the reader's and one of ours with the second body", comments)
	}

	// On a busy pull request the comment comes after the first page that a
	// paging server would serve (50 comments by default): it is still found
	// and edited, not added again.
	srv.API(t, http.MethodPost, repo+"/contents/guides/upgrades.md", mustJSON(t, map[string]any{
		"content": content, "message": "Explain upgrades", "branch": "main", "new_branch": "upgrades",
	}), http.StatusCreated, nil)
	var busy struct {
		Number int `json:"number"`
	}
	srv.API(t, http.MethodPost, repo+"/pulls", mustJSON(t, map[string]any{"head": "upgrades", "base": "main", "title": "Explain upgrades"}),
		http.StatusCreated, &busy)
	for i := range 60 {
		asReader(t, srv, http.MethodPost, fmt.Sprintf("%s/issues/%d/comments", repo, busy.Number),
			mustJSON(t, map[string]any{"body": fmt.Sprintf("Review note %d", i+1)}))
	}
	for _, body := range []string{first, second} {
		if err := f.UpsertComment(ctx, busy.Number, marker, body); err != nil {
			t.Fatal(err)
		}
	}
	// Gitea 1.26 answers this list whole, whatever page is asked for; read
	// it by pages anyway, as a server that pages would serve it.
	seen := map[int64]bool{}
	var marked []string
	for page := 1; page <= 10; page++ {
		var got []struct {
			ID   int64  `json:"id"`
			Body string `json:"body"`
		}
		srv.API(t, http.MethodGet, fmt.Sprintf("%s/issues/%d/comments?limit=50&page=%d", repo, busy.Number, page), nil, http.StatusOK, &got)
		fresh := 0
		for _, c := range got {
			if seen[c.ID] {
				continue
			}
			seen[c.ID] = true
			fresh++
			if strings.Contains(c.Body, marker) {
				marked = append(marked, c.Body)
			}
		}
		if fresh == 0 {
			break
		}
	}
	if len(seen) != 61 || len(marked) != 1 || marked[0] != second {
		t.Fatalf("%d comments on the busy pull request, these holding the marker: %q; want 61, one with the second body", len(seen), marked)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// asReader calls the API as the user "reader", through the admin's token
// and Gitea's Sudo header.
func asReader(t *testing.T, srv *giteatest.Server, method, path string, body []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+"/api/v1"+path, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+srv.Token)
	req.Header.Set("Sudo", "reader")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("%s %s as reader = %d", method, path, resp.StatusCode)
	}
}
