// Package gitlab finds, opens, edits and comments on merge requests on
// GitLab (gitlab.com or self-managed), through GitLab's client-go.
package gitlab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
)

// Forge is one GitLab project. It is safe for concurrent use.
type Forge struct {
	client  *gl.Client
	project string // the project path, namespace/name
	d       forgeapi.Describer
	log     *slog.Logger

	mu   sync.Mutex // guards meID
	meID int64      // the token's user, once learnt
}

// New returns the forge for cfg.RepoURL. cfg.APIBaseURL is required, e.g.
// https://gitlab.example/api/v4 (without /api/v4 it is added).
func New(cfg forgeapi.Config) (*Forge, error) {
	if strings.TrimSpace(cfg.APIBaseURL) == "" {
		return nil, errors.New("gitlab: no API base URL: set the project's forge URL, e.g. https://gitlab.com/api/v4")
	}
	api, err := forgeapi.ParseAPIBase(cfg.APIBaseURL)
	if err != nil {
		return nil, fmt.Errorf("gitlab: %w", err)
	}
	if !strings.HasSuffix(api.Path, "/api/v4") {
		api.Path += "/api/v4"
	}
	if cfg.Token == "" {
		return nil, errors.New("gitlab: no token: set the project's token (its environment variable or file)")
	}
	project, err := projectPath(cfg.RepoURL, api)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger()
	client, err := gl.NewClient(cfg.Token,
		gl.WithURLWarningLogger(log),
		gl.WithBaseURL(api.String()),
		gl.WithHTTPClient(cfg.Client()),
		// A retried turn retries; Open is idempotent by branch. Retrying
		// here would only hide how long a failing forge takes.
		gl.WithoutRetries(),
	)
	if err != nil {
		return nil, fmt.Errorf("gitlab: creating the client: %w", err)
	}
	return &Forge{
		client:  client,
		project: project,
		d:       forgeapi.NewDescriber("gitlab", api.String(), cfg.Token, cfg.TokenSource),
		log:     log.With("forge", "gitlab", "project", project),
	}, nil
}

// projectPath is the namespace/name of the project. A GitLab installed under
// a relative URL (https://host/gitlab/api/v4) has that prefix in its https
// clone URLs too, and it is not part of the namespace.
func projectPath(repoURL string, api *url.URL) (string, error) {
	owner, repo, err := forgeapi.OwnerRepo(repoURL)
	if err != nil {
		return "", fmt.Errorf("gitlab: %w", err)
	}
	project := owner + "/" + repo
	prefix := strings.Trim(strings.TrimSuffix(api.Path, "/api/v4"), "/")
	if prefix == "" {
		return project, nil
	}
	if u, err := url.Parse(strings.TrimSpace(repoURL)); err == nil && strings.EqualFold(u.Host, api.Host) &&
		(u.Scheme == "https" || u.Scheme == "http") {
		if rest, ok := strings.CutPrefix(project, prefix+"/"); ok && strings.Contains(rest, "/") {
			project = rest
		}
	}
	return project, nil
}

// FindOpen returns the open merge request from branch head of this project,
// preferring one into base, or nil when there is none.
func (f *Forge) FindOpen(ctx context.Context, head, base string) (*forgeapi.PullRequest, error) {
	if head == "" {
		return nil, errors.New("gitlab: find merge request: head branch is empty")
	}
	call := forgeapi.Call{Method: http.MethodGet, Path: f.path("/merge_requests?source_branch=%s&state=opened", head)}
	mrs, resp, err := f.client.MergeRequests.ListProjectMergeRequests(f.project, &gl.ListProjectMergeRequestsOptions{
		State:        gl.Ptr("opened"),
		SourceBranch: gl.Ptr(head),
	}, gl.WithContext(ctx))
	if err != nil {
		return nil, f.fail(ctx, call, resp, err)
	}
	var open []forgeapi.PullRequest
	for _, mr := range mrs {
		// The listed merge requests target this project; one from a fork's
		// branch of the same name is not ours.
		if mr == nil || mr.SourceBranch != head || (mr.State != "" && mr.State != "opened") ||
			(mr.SourceProjectID != 0 && mr.ProjectID != 0 && mr.SourceProjectID != mr.ProjectID) {
			continue
		}
		open = append(open, toPR(mr.IID, mr.WebURL, mr.Description, mr.SourceBranch, mr.TargetBranch))
	}
	return forgeapi.Pick(open, base), nil
}

// Open opens a merge request. When GitLab answers that one already exists
// for the branch (409), Open returns that one: a retried turn never opens a
// second.
func (f *Forge) Open(ctx context.Context, pr forgeapi.NewPullRequest) (forgeapi.PullRequest, error) {
	if err := pr.Validate(); err != nil {
		return forgeapi.PullRequest{}, fmt.Errorf("gitlab: open merge request: %w", err)
	}
	call := forgeapi.Call{
		Method:  http.MethodPost,
		Path:    f.path("/merge_requests"),
		Refused: fmt.Sprintf("check that branch %q was pushed and that %q exists", pr.Head, pr.Base),
	}
	mr, resp, err := f.client.MergeRequests.CreateMergeRequest(f.project, &gl.CreateMergeRequestOptions{
		Title:        gl.Ptr(pr.Title),
		Description:  gl.Ptr(pr.Body),
		SourceBranch: gl.Ptr(pr.Head),
		TargetBranch: gl.Ptr(pr.Base),
	}, gl.WithContext(ctx))
	if err != nil {
		ferr := f.fail(ctx, call, resp, err)
		if st := status(resp); st != http.StatusConflict && st != http.StatusUnprocessableEntity {
			return forgeapi.PullRequest{}, ferr
		}
		existing, lerr := f.FindOpen(ctx, pr.Head, pr.Base)
		if lerr != nil {
			return forgeapi.PullRequest{}, errors.Join(ferr, lerr)
		}
		if existing == nil {
			return forgeapi.PullRequest{}, ferr
		}
		f.log.InfoContext(ctx, "merge request already open; using it", "head", pr.Head, "number", existing.Number)
		return *existing, nil
	}
	if mr == nil || mr.IID <= 0 || mr.WebURL == "" {
		return forgeapi.PullRequest{}, f.d.BadReply(call, status(resp), "the reply names no merge request iid or web_url")
	}
	return toPR(mr.IID, mr.WebURL, mr.Description, mr.SourceBranch, mr.TargetBranch), nil
}

// UpdateBody replaces the description of merge request number (its iid).
func (f *Forge) UpdateBody(ctx context.Context, number int, body string) error {
	if number <= 0 {
		return fmt.Errorf("gitlab: update merge request: number %d is not a merge request iid", number)
	}
	call := forgeapi.Call{Method: http.MethodPut, Path: f.path("/merge_requests/%d", number), NotFound: f.notFound(number)}
	_, resp, err := f.client.MergeRequests.UpdateMergeRequest(f.project, int64(number), &gl.UpdateMergeRequestOptions{
		Description: gl.Ptr(body),
	}, gl.WithContext(ctx))
	if err != nil {
		return f.fail(ctx, call, resp, err)
	}
	return nil
}

// Comment adds a note to merge request number (its iid).
func (f *Forge) Comment(ctx context.Context, number int, body string) error {
	if number <= 0 {
		return fmt.Errorf("gitlab: comment: number %d is not a merge request iid", number)
	}
	if strings.TrimSpace(body) == "" {
		return errors.New("gitlab: comment: body is empty")
	}
	call := forgeapi.Call{Method: http.MethodPost, Path: f.path("/merge_requests/%d/notes", number), NotFound: f.notFound(number)}
	_, resp, err := f.client.Notes.CreateMergeRequestNote(f.project, int64(number), &gl.CreateMergeRequestNoteOptions{
		Body: gl.Ptr(body),
	}, gl.WithContext(ctx))
	if err != nil {
		return f.fail(ctx, call, resp, err)
	}
	return nil
}

func (f *Forge) path(format string, args ...any) string {
	return "/projects/" + gl.PathEscape(f.project) + fmt.Sprintf(format, args...)
}

func (f *Forge) notFound(number int) string {
	return fmt.Sprintf("check that merge request !%d exists in %s and that %s can see the project", number, f.project, f.d.Token())
}

func toPR(iid int64, webURL, description, source, target string) forgeapi.PullRequest {
	return forgeapi.PullRequest{Number: int(iid), URL: webURL, Body: description, Head: source, Base: target}
}

func status(resp *gl.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

// fail turns client-go's error into a *forgeapi.Error.
func (f *Forge) fail(ctx context.Context, call forgeapi.Call, resp *gl.Response, err error) error {
	var r forgeapi.Reply
	if resp != nil && resp.Response != nil {
		r.Status, r.Header = resp.StatusCode, resp.Header
	}
	var er *gl.ErrorResponse
	if errors.As(err, &er) {
		if r.Status == 0 {
			r.Status = er.StatusCode
		}
		r.Body = er.Body
		r.Message = er.Message
		if m := message(er.Body); m != "" {
			r.Message = m
		}
	}
	return f.d.Fail(ctx, call, r, err)
}

// message reads GitLab's error body: {"message": "…"}, {"message": ["…"]},
// {"message": {"field": ["…"]}} or OAuth's {"error": "…", "error_description": "…"}.
// client-go's own rendering of these keeps the braces.
func message(body []byte) string {
	var v struct {
		Message     any    `json:"message"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return ""
	}
	if m := flatten(v.Message); m != "" {
		return m
	}
	return strings.Trim(v.Error+": "+v.Description, ": ")
}

func flatten(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, e := range v {
			if s := flatten(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "; ")
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			if s := flatten(v[k]); s != "" {
				parts = append(parts, k+" "+s)
			}
		}
		return strings.Join(parts, "; ")
	}
	return ""
}

// maxComment is the longest note GitLab takes, in characters.
const maxComment = 1_000_000

// SetStatus sets the commit status named st.Context (GitLab's name) of
// commit sha. GitLab knows no "error": it and "failure" are sent as failed.
// GitLab refuses to set a pending status pending again; that is taken as
// done, so that a repeated call does not fail.
func (f *Forge) SetStatus(ctx context.Context, sha string, st forgeapi.CommitStatus) error {
	sha, st, err := forgeapi.PrepareStatus(sha, st)
	if err != nil {
		return fmt.Errorf("gitlab: set status: %w", err)
	}
	state := gl.BuildStateValue(st.State)
	if st.State == forgeapi.StatusFailure || st.State == forgeapi.StatusError {
		state = gl.Failed
	}
	opts := &gl.SetCommitStatusOptions{State: state, Name: gl.Ptr(st.Context)}
	if st.Description != "" {
		opts.Description = gl.Ptr(st.Description)
	}
	if st.TargetURL != "" {
		opts.TargetURL = gl.Ptr(st.TargetURL)
	}
	call := forgeapi.Call{
		Method:   http.MethodPost,
		Path:     f.path("/statuses/%s", sha),
		NotFound: fmt.Sprintf("check that commit %s was pushed to %s and that %s may set its statuses", sha, f.project, f.d.Token()),
	}
	_, resp, err := f.client.Commits.SetCommitStatus(f.project, sha, opts, gl.WithContext(ctx))
	if err != nil {
		ferr := f.fail(ctx, call, resp, err)
		var fe *forgeapi.Error
		if state == gl.Pending && status(resp) == http.StatusBadRequest && errors.As(ferr, &fe) &&
			strings.Contains(fe.Message, "Cannot transition status via :enqueue from :pending") {
			f.log.InfoContext(ctx, "commit status already pending", "sha", sha, "name", st.Context)
			return nil
		}
		return ferr
	}
	return nil
}

// UpsertComment keeps one note of merge request number (its iid) up to
// date: it edits the newest of the token's user's notes that holds marker,
// or adds body when there is none. When the token may not read its own
// user, a note of any author that holds the marker is taken.
func (f *Forge) UpsertComment(ctx context.Context, number int, marker, body string) error {
	if err := forgeapi.CheckComment(number, marker, body, maxComment, "GitLab"); err != nil {
		return fmt.Errorf("gitlab: upsert note on !%d: %w", number, err)
	}
	me, err := f.me(ctx)
	if err != nil {
		return err
	}
	done, err := forgeapi.Upsert{
		Me:          me,
		NewestFirst: true,
		List: func(ctx context.Context, page int) ([]forgeapi.Comment, int, error) {
			return f.notes(ctx, number, page)
		},
		Edit: func(ctx context.Context, id int64, body string) error {
			call := forgeapi.Call{Method: http.MethodPut, Path: f.path("/merge_requests/%d/notes/%d", number, id),
				NotFound: fmt.Sprintf("note %d of merge request !%d was deleted meanwhile: try again", id, number)}
			_, resp, err := f.client.Notes.UpdateMergeRequestNote(f.project, int64(number), id,
				&gl.UpdateMergeRequestNoteOptions{Body: gl.Ptr(body)}, gl.WithContext(ctx))
			if err != nil {
				return f.fail(ctx, call, resp, err)
			}
			return nil
		},
		Create: func(ctx context.Context, body string) error { return f.Comment(ctx, number, body) },
		Log:    f.log.With("number", number),
	}.Run(ctx, marker, body)
	if err != nil {
		return err
	}
	f.log.InfoContext(ctx, "merge request note kept up to date", "number", number, "note", done)
	return nil
}

// notes returns page of the notes of merge request number, newest first,
// without GitLab's system notes, and the next page.
func (f *Forge) notes(ctx context.Context, number, page int) ([]forgeapi.Comment, int, error) {
	call := forgeapi.Call{
		Method:   http.MethodGet,
		Path:     f.path("/merge_requests/%d/notes?order_by=created_at&sort=desc&page=%d&per_page=%d", number, page, forgeapi.CommentPageSize),
		NotFound: f.notFound(number),
	}
	list, resp, err := f.client.Notes.ListMergeRequestNotes(f.project, int64(number), &gl.ListMergeRequestNotesOptions{
		ListOptions: gl.ListOptions{Page: int64(page), PerPage: forgeapi.CommentPageSize},
		OrderBy:     gl.Ptr("created_at"),
		Sort:        gl.Ptr("desc"),
	}, gl.WithContext(ctx))
	if err != nil {
		return nil, 0, f.fail(ctx, call, resp, err)
	}
	out := make([]forgeapi.Comment, 0, len(list))
	for _, n := range list {
		if n == nil || n.System {
			continue
		}
		out = append(out, forgeapi.Comment{ID: n.ID, AuthorID: n.Author.ID, Body: n.Body})
	}
	return out, int(resp.NextPage), nil
}

// me returns the id of the token's user, learnt once, or 0 when GitLab will
// not say (403).
func (f *Forge) me(ctx context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.meID != 0 {
		return f.meID, nil
	}
	call := forgeapi.Call{Method: http.MethodGet, Path: "/user"}
	u, resp, err := f.client.Users.CurrentUser(gl.WithContext(ctx))
	switch {
	case err != nil && status(resp) == http.StatusForbidden:
		f.log.InfoContext(ctx, "the token may not read its own user; a note of any author that holds the marker is kept up to date")
		return 0, nil
	case err != nil:
		return 0, f.fail(ctx, call, resp, err)
	case u == nil || u.ID == 0:
		return 0, f.d.BadReply(call, status(resp), "the reply names no user id")
	}
	f.meID = u.ID
	return f.meID, nil
}
