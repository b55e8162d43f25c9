// Package github finds, opens, edits and comments on pull requests on
// GitHub and GitHub Enterprise Server, through go-github.
package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	gh "github.com/google/go-github/v89/github"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
)

const defaultAPI = "https://api.github.com"

// Forge is one GitHub repository. It is safe for concurrent use.
type Forge struct {
	client      *gh.Client
	owner, repo string
	d           forgeapi.Describer
	log         *slog.Logger

	mu   sync.Mutex // guards meID
	meID int64      // the token's user, once learnt
}

// New returns the forge for cfg.RepoURL. cfg.APIBaseURL is the REST root,
// https://ghe.example/api/v3 on Enterprise Server; empty means api.github.com.
func New(cfg forgeapi.Config) (*Forge, error) {
	if cfg.Token == "" {
		return nil, errors.New("github: no token: set the project's token (its environment variable or file)")
	}
	owner, repo, err := forgeapi.OwnerRepo(cfg.RepoURL)
	if err != nil {
		return nil, fmt.Errorf("github: %w", err)
	}
	if strings.Contains(owner, "/") {
		return nil, fmt.Errorf("github: repository URL %s has more than OWNER/REPO in its path", forgeapi.DisplayURL(cfg.RepoURL))
	}
	opts := []gh.ClientOptionsFunc{gh.WithHTTPClient(cfg.Client()), gh.WithAuthToken(cfg.Token)}
	api := defaultAPI
	if cfg.APIBaseURL != "" {
		u, err := forgeapi.ParseAPIBase(cfg.APIBaseURL)
		if err != nil {
			return nil, fmt.Errorf("github: %w", err)
		}
		api = u.String()
		base := api + "/"
		upload := base
		if strings.HasSuffix(u.Path, "/api/v3") {
			upload = strings.TrimSuffix(api, "/api/v3") + "/api/uploads/"
		}
		opts = append(opts, gh.WithURLs(&base, &upload))
	}
	client, err := gh.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github: creating the client: %w", err)
	}
	return &Forge{
		client: client,
		owner:  owner,
		repo:   repo,
		d:      forgeapi.NewDescriber("github", api, cfg.Token, cfg.TokenSource),
		log:    cfg.Logger().With("forge", "github", "repo", owner+"/"+repo),
	}, nil
}

// FindOpen returns the open pull request from branch head of this
// repository, preferring one into base, or nil when there is none.
func (f *Forge) FindOpen(ctx context.Context, head, base string) (*forgeapi.PullRequest, error) {
	if head == "" {
		return nil, errors.New("github: find pull request: head branch is empty")
	}
	label := f.owner + ":" + head
	call := forgeapi.Call{Method: http.MethodGet, Path: f.path("/pulls?head=%s&state=open", label)}
	prs, resp, err := f.client.PullRequests.List(ctx, f.owner, f.repo, &gh.PullRequestListOptions{State: "open", Head: label})
	if err != nil {
		return nil, f.fail(ctx, call, resp, err)
	}
	var open []forgeapi.PullRequest
	for _, p := range prs {
		// The filter is the server's; check it, so that a pull request from
		// another branch (or a fork's branch of the same name) is never taken.
		if p.GetHead().GetRef() != head || p.GetState() == "closed" ||
			(p.GetHead().GetLabel() != "" && !strings.EqualFold(p.GetHead().GetLabel(), label)) {
			continue
		}
		open = append(open, toPR(p))
	}
	return forgeapi.Pick(open, base), nil
}

// Open opens a pull request. When GitHub answers that one already exists
// for the branch, Open returns that one: a retried turn never opens a second.
func (f *Forge) Open(ctx context.Context, pr forgeapi.NewPullRequest) (forgeapi.PullRequest, error) {
	if err := pr.Validate(); err != nil {
		return forgeapi.PullRequest{}, fmt.Errorf("github: open pull request: %w", err)
	}
	call := forgeapi.Call{
		Method:  http.MethodPost,
		Path:    f.path("/pulls"),
		Refused: fmt.Sprintf("check that branch %q was pushed and has commits that %q lacks", pr.Head, pr.Base),
	}
	created, resp, err := f.client.PullRequests.Create(ctx, f.owner, f.repo, &gh.NewPullRequest{
		Title: &pr.Title, Body: &pr.Body, Head: &pr.Head, Base: &pr.Base,
	})
	if err != nil {
		ferr := f.fail(ctx, call, resp, err)
		if status(resp) != http.StatusUnprocessableEntity && status(resp) != http.StatusConflict {
			return forgeapi.PullRequest{}, ferr
		}
		existing, lerr := f.FindOpen(ctx, pr.Head, pr.Base)
		if lerr != nil {
			return forgeapi.PullRequest{}, errors.Join(ferr, lerr)
		}
		if existing == nil {
			return forgeapi.PullRequest{}, ferr
		}
		f.log.InfoContext(ctx, "pull request already open; using it", "head", pr.Head, "number", existing.Number)
		return *existing, nil
	}
	out := toPR(created)
	if out.Number <= 0 || out.URL == "" {
		return forgeapi.PullRequest{}, f.d.BadReply(call, status(resp), "the reply names no pull request number or html_url")
	}
	return out, nil
}

// UpdateBody replaces the body of pull request number.
func (f *Forge) UpdateBody(ctx context.Context, number int, body string) error {
	if number <= 0 {
		return fmt.Errorf("github: update pull request: number %d is not a pull request number", number)
	}
	call := forgeapi.Call{Method: http.MethodPatch, Path: f.path("/pulls/%d", number), NotFound: f.notFound(number)}
	_, resp, err := f.client.PullRequests.Edit(ctx, f.owner, f.repo, number, &gh.PullRequest{Body: &body})
	if err != nil {
		return f.fail(ctx, call, resp, err)
	}
	return nil
}

// Comment adds a comment to pull request number.
func (f *Forge) Comment(ctx context.Context, number int, body string) error {
	if number <= 0 {
		return fmt.Errorf("github: comment: number %d is not a pull request number", number)
	}
	if strings.TrimSpace(body) == "" {
		return errors.New("github: comment: body is empty")
	}
	call := forgeapi.Call{Method: http.MethodPost, Path: f.path("/issues/%d/comments", number), NotFound: f.notFound(number)}
	_, resp, err := f.client.Issues.CreateComment(ctx, f.owner, f.repo, number, &gh.IssueComment{Body: &body})
	if err != nil {
		return f.fail(ctx, call, resp, err)
	}
	return nil
}

func (f *Forge) path(format string, args ...any) string {
	return "/repos/" + f.owner + "/" + f.repo + fmt.Sprintf(format, args...)
}

func (f *Forge) notFound(number int) string {
	return fmt.Sprintf("check that pull request #%d exists in %s/%s and that %s can see the repository", number, f.owner, f.repo, f.d.Token())
}

func toPR(p *gh.PullRequest) forgeapi.PullRequest {
	return forgeapi.PullRequest{
		Number: p.GetNumber(),
		URL:    p.GetHTMLURL(),
		Body:   p.GetBody(),
		Head:   p.GetHead().GetRef(),
		Base:   p.GetBase().GetRef(),
	}
}

func status(resp *gh.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

// maxErrorBody bounds how much of an error reply is read again for its message.
const maxErrorBody = 64 << 10

// fail turns go-github's error into a *forgeapi.Error.
func (f *Forge) fail(ctx context.Context, call forgeapi.Call, resp *gh.Response, err error) error {
	var r forgeapi.Reply
	if resp != nil && resp.Response != nil {
		r.Status, r.Header = resp.StatusCode, resp.Header
	}
	var (
		er *gh.ErrorResponse
		rl *gh.RateLimitError
		ab *gh.AbuseRateLimitError
	)
	switch {
	case errors.As(err, &er) && er.Response != nil:
		r.Status, r.Header = er.Response.StatusCode, er.Response.Header
		r.Message = er.Message
		var details []string
		for _, e := range er.Errors {
			switch {
			case e.Message != "":
				details = append(details, e.Message)
			case e.Code != "":
				details = append(details, strings.TrimSpace(e.Code+" "+e.Field))
			}
		}
		if len(details) > 0 {
			r.Message = strings.TrimSpace(r.Message + " (" + strings.Join(details, "; ") + ")")
		}
		// go-github puts the body it read back into the response.
		if er.Response.Body != nil {
			r.Body, _ = io.ReadAll(io.LimitReader(er.Response.Body, maxErrorBody))
		}
	case errors.As(err, &rl) && rl.Response != nil:
		r.Status, r.Header, r.Message = rl.Response.StatusCode, rl.Response.Header, rl.Message
	case errors.As(err, &ab) && ab.Response != nil:
		r.Status, r.Header, r.Message = ab.Response.StatusCode, ab.Response.Header, ab.Message
	}
	return f.d.Fail(ctx, call, r, err)
}

// maxComment is the longest comment GitHub takes, in characters.
const maxComment = 65536

// SetStatus sets the commit status named st.Context of commit sha.
func (f *Forge) SetStatus(ctx context.Context, sha string, st forgeapi.CommitStatus) error {
	sha, st, err := forgeapi.PrepareStatus(sha, st)
	if err != nil {
		return fmt.Errorf("github: set status: %w", err)
	}
	call := forgeapi.Call{
		Method:   http.MethodPost,
		Path:     f.path("/statuses/%s", sha),
		NotFound: fmt.Sprintf("check that commit %s was pushed to %s/%s and that %s may set its statuses", sha, f.owner, f.repo, f.d.Token()),
	}
	repoStatus := gh.RepoStatus{State: &st.State, Context: &st.Context}
	if st.Description != "" {
		repoStatus.Description = &st.Description
	}
	if st.TargetURL != "" {
		repoStatus.TargetURL = &st.TargetURL
	}
	if _, resp, err := f.client.Repositories.CreateStatus(ctx, f.owner, f.repo, sha, repoStatus); err != nil {
		return f.fail(ctx, call, resp, err)
	}
	return nil
}

// UpsertComment keeps one comment of pull request number up to date: it
// edits the newest of the token's user's comments that holds marker, or
// adds body when there is none. When the token may not read its own user
// (a GitHub App's installation token), a comment of any author that holds
// the marker is taken.
func (f *Forge) UpsertComment(ctx context.Context, number int, marker, body string) error {
	if err := forgeapi.CheckComment(number, marker, body, maxComment, "GitHub"); err != nil {
		return fmt.Errorf("github: upsert comment on #%d: %w", number, err)
	}
	me, err := f.me(ctx)
	if err != nil {
		return err
	}
	done, err := forgeapi.Upsert{
		Me: me,
		List: func(ctx context.Context, page int) ([]forgeapi.Comment, int, error) {
			return f.comments(ctx, number, page)
		},
		Edit: func(ctx context.Context, id int64, body string) error {
			call := forgeapi.Call{Method: http.MethodPatch, Path: f.path("/issues/comments/%d", id),
				NotFound: fmt.Sprintf("comment %d of pull request #%d was deleted meanwhile: try again", id, number)}
			if _, resp, err := f.client.Issues.EditComment(ctx, f.owner, f.repo, id, &gh.IssueComment{Body: &body}); err != nil {
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
	f.log.InfoContext(ctx, "pull request comment kept up to date", "number", number, "comment", done)
	return nil
}

// comments returns page of the comments of pull request number, oldest
// first, and the next page.
func (f *Forge) comments(ctx context.Context, number, page int) ([]forgeapi.Comment, int, error) {
	call := forgeapi.Call{Method: http.MethodGet, Path: f.path("/issues/%d/comments?page=%d&per_page=%d", number, page, forgeapi.CommentPageSize), NotFound: f.notFound(number)}
	list, resp, err := f.client.Issues.ListComments(ctx, f.owner, f.repo, number, &gh.IssueListCommentsOptions{
		ListOptions: gh.ListOptions{Page: page, PerPage: forgeapi.CommentPageSize},
	})
	if err != nil {
		return nil, 0, f.fail(ctx, call, resp, err)
	}
	out := make([]forgeapi.Comment, 0, len(list))
	for _, c := range list {
		if c == nil {
			continue
		}
		out = append(out, forgeapi.Comment{ID: c.GetID(), AuthorID: c.GetUser().GetID(), Body: c.GetBody()})
	}
	return out, resp.NextPage, nil
}

// me returns the id of the token's user, learnt once, or 0 when GitHub will
// not say (403 that is no rate limit: an installation token of a GitHub App).
func (f *Forge) me(ctx context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.meID != 0 {
		return f.meID, nil
	}
	call := forgeapi.Call{Method: http.MethodGet, Path: "/user"}
	u, resp, err := f.client.Users.Get(ctx, "")
	var (
		rl *gh.RateLimitError
		ab *gh.AbuseRateLimitError
	)
	switch {
	case err != nil && status(resp) == http.StatusForbidden && !errors.As(err, &rl) && !errors.As(err, &ab):
		f.log.InfoContext(ctx, "the token may not read its own user; a comment of any author that holds the marker is kept up to date")
		return 0, nil
	case err != nil:
		return 0, f.fail(ctx, call, resp, err)
	case u.GetID() == 0:
		return 0, f.d.BadReply(call, status(resp), "the reply names no user id")
	}
	f.meID = u.GetID()
	return f.meID, nil
}
