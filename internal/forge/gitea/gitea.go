// Package gitea finds, opens, edits and comments on pull requests on Gitea
// and Forgejo, through code.gitea.io/sdk/gitea.
//
// The SDK keeps one context per client, so each call builds a client of its
// own around the caller's context (a struct, no I/O), and it asks the server
// for its version when a client is made unless told one, so each client is
// told to skip that: the calls used here exist on every Gitea since 1.11 and
// on every Forgejo.
package gitea

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
)

// pageSize is the page asked for when listing open pull requests; a server
// may cap it lower (MAX_RESPONSE_ITEMS), which the paging below allows for.
const pageSize = 50

// maxPages bounds the search for a branch's pull request, so that a server
// that ignores paging cannot keep FindOpen busy.
const maxPages = 20

// Forge is one Gitea or Forgejo repository. It is safe for concurrent use.
type Forge struct {
	root        string // the server root; the SDK adds /api/v1
	token       string
	http        *http.Client
	owner, repo string
	d           forgeapi.Describer
	log         *slog.Logger

	mu   sync.Mutex // guards meID
	meID int64      // the token's user, once learnt
}

// New returns the forge for cfg.RepoURL. cfg.APIBaseURL is required: the
// server root, https://gitea.example, or its API root, .../api/v1.
func New(cfg forgeapi.Config) (*Forge, error) {
	if strings.TrimSpace(cfg.APIBaseURL) == "" {
		return nil, errors.New("gitea: no API base URL: set the project's forge URL, e.g. https://gitea.example/api/v1")
	}
	api, err := forgeapi.ParseAPIBase(cfg.APIBaseURL)
	if err != nil {
		return nil, fmt.Errorf("gitea: %w", err)
	}
	api.Path = strings.TrimSuffix(api.Path, "/api/v1")
	if cfg.Token == "" {
		return nil, errors.New("gitea: no token: set the project's token (its environment variable or file)")
	}
	owner, repo, err := forgeapi.OwnerRepo(cfg.RepoURL)
	if err != nil {
		return nil, fmt.Errorf("gitea: %w", err)
	}
	// Gitea has no nested owners; more segments are the sub-path the
	// server is installed under (https://host/git/owner/repo).
	if i := strings.LastIndexByte(owner, '/'); i >= 0 {
		owner = owner[i+1:]
	}
	root := api.String()
	return &Forge{
		root:  root,
		token: cfg.Token,
		http:  cfg.Client(),
		owner: owner,
		repo:  repo,
		d:     forgeapi.NewDescriber("gitea", root+"/api/v1", cfg.Token, cfg.TokenSource),
		log:   cfg.Logger().With("forge", "gitea", "repo", owner+"/"+repo),
	}, nil
}

func (f *Forge) client(ctx context.Context) (*sdk.Client, error) {
	c, err := sdk.NewClient(f.root,
		sdk.SetGiteaVersion(""), // no /api/v1/version probe
		sdk.SetToken(f.token),
		sdk.SetHTTPClient(f.http),
		sdk.SetContext(ctx),
		sdk.SetUserAgent("docsmith"),
	)
	if err != nil {
		return nil, f.d.Errorf("creating the client: %w", err)
	}
	return c, nil
}

// FindOpen returns the open pull request from branch head of this
// repository, preferring one into base, or nil when there is none. Gitea
// cannot filter by head, so FindOpen pages through the open pull requests,
// most recently updated first.
func (f *Forge) FindOpen(ctx context.Context, head, base string) (*forgeapi.PullRequest, error) {
	if head == "" {
		return nil, errors.New("gitea: find pull request: head branch is empty")
	}
	c, err := f.client(ctx)
	if err != nil {
		return nil, err
	}
	var open []forgeapi.PullRequest
	for page, pages := 1, 0; page > 0; pages++ {
		if pages == maxPages {
			f.log.WarnContext(ctx, "stopped looking for the branch's pull request", "head", head, "pages", pages)
			break
		}
		call := forgeapi.Call{Method: http.MethodGet, Path: f.path("/pulls?state=open&sort=recentupdate&page=%d&limit=%d", page, pageSize)}
		prs, resp, err := c.ListRepoPullRequests(f.owner, f.repo, sdk.ListPullRequestsOptions{
			ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize},
			State:       sdk.StateOpen,
			Sort:        "recentupdate",
		})
		if err != nil {
			return nil, f.fail(ctx, call, resp, err)
		}
		for _, p := range prs {
			if p == nil || p.Head == nil || p.Head.Ref != head || (p.State != "" && p.State != sdk.StateOpen) {
				continue
			}
			// A fork's branch of the same name is not ours.
			if p.Base != nil && p.Head.RepoID != 0 && p.Base.RepoID != 0 && p.Head.RepoID != p.Base.RepoID {
				continue
			}
			open = append(open, toPR(p))
		}
		if got := forgeapi.Pick(open, base); got != nil && got.Base == base {
			return got, nil
		}
		page = nextPage(page, len(prs), resp)
	}
	return forgeapi.Pick(open, base), nil
}

// nextPage follows the Link header Gitea and Forgejo send; without one, a
// full page means there may be more. 0 means done.
func nextPage(page, n int, resp *sdk.Response) int {
	switch {
	case resp != nil && resp.NextPage > page:
		return resp.NextPage
	case resp != nil && resp.Response != nil && resp.Header.Get("Link") == "" && n >= pageSize:
		return page + 1
	}
	return 0
}

// Open opens a pull request. When Gitea answers that one already exists for
// the branch (409, or 422 on older servers), Open returns that one: a
// retried turn never opens a second.
func (f *Forge) Open(ctx context.Context, pr forgeapi.NewPullRequest) (forgeapi.PullRequest, error) {
	if err := pr.Validate(); err != nil {
		return forgeapi.PullRequest{}, fmt.Errorf("gitea: open pull request: %w", err)
	}
	c, err := f.client(ctx)
	if err != nil {
		return forgeapi.PullRequest{}, err
	}
	call := forgeapi.Call{
		Method:  http.MethodPost,
		Path:    f.path("/pulls"),
		Refused: fmt.Sprintf("check that branch %q was pushed and has commits that %q lacks", pr.Head, pr.Base),
	}
	created, resp, err := c.CreatePullRequest(f.owner, f.repo, sdk.CreatePullRequestOption{
		Head: pr.Head, Base: pr.Base, Title: pr.Title, Body: pr.Body,
	})
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
		return fmt.Errorf("gitea: update pull request: number %d is not a pull request number", number)
	}
	c, err := f.client(ctx)
	if err != nil {
		return err
	}
	call := forgeapi.Call{Method: http.MethodPatch, Path: f.path("/pulls/%d", number), NotFound: f.notFound(number)}
	_, resp, err := c.EditPullRequest(f.owner, f.repo, int64(number), sdk.EditPullRequestOption{Body: &body})
	if err != nil {
		return f.fail(ctx, call, resp, err)
	}
	return nil
}

// Comment adds a comment to pull request number.
func (f *Forge) Comment(ctx context.Context, number int, body string) error {
	if number <= 0 {
		return fmt.Errorf("gitea: comment: number %d is not a pull request number", number)
	}
	if strings.TrimSpace(body) == "" {
		return errors.New("gitea: comment: body is empty")
	}
	c, err := f.client(ctx)
	if err != nil {
		return err
	}
	call := forgeapi.Call{Method: http.MethodPost, Path: f.path("/issues/%d/comments", number), NotFound: f.notFound(number)}
	_, resp, err := c.CreateIssueComment(f.owner, f.repo, int64(number), sdk.CreateIssueCommentOption{Body: body})
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

func toPR(p *sdk.PullRequest) forgeapi.PullRequest {
	if p == nil {
		return forgeapi.PullRequest{}
	}
	out := forgeapi.PullRequest{Number: int(p.Index), URL: p.HTMLURL, Body: p.Body}
	if p.Head != nil {
		out.Head = p.Head.Ref
	}
	if p.Base != nil {
		out.Base = p.Base.Ref
	}
	return out
}

func status(resp *sdk.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

// unknownRE matches the SDK's error for a reply that is not JSON, which
// carries the whole body: "unknown API error: 502\nRequest: '…' with 'GET'
// method and '<body>' body".
var unknownRE = regexp.MustCompile(`(?s)^unknown API error: \d+\s*Request: .*? method and '(.*)' body$`)

// fail turns the SDK's error into a *forgeapi.Error.
func (f *Forge) fail(ctx context.Context, call forgeapi.Call, resp *sdk.Response, err error) error {
	var r forgeapi.Reply
	if resp != nil && resp.Response != nil {
		r.Status, r.Header = resp.StatusCode, resp.Header
		if r.Status < 200 || r.Status > 299 {
			r.Message = err.Error()
			if m := unknownRE.FindStringSubmatch(r.Message); m != nil {
				r.Body, r.Message = []byte(m[1]), ""
			}
		}
	}
	return f.d.Fail(ctx, call, r, err)
}

// maxComment bounds a comment's length, in characters. Gitea and Forgejo
// set no limit; this is GitLab's, so that a runaway body is never sent.
const maxComment = 1_000_000

// SetStatus sets the commit status named st.Context of commit sha.
func (f *Forge) SetStatus(ctx context.Context, sha string, st forgeapi.CommitStatus) error {
	sha, st, err := forgeapi.PrepareStatus(sha, st)
	if err != nil {
		return fmt.Errorf("gitea: set status: %w", err)
	}
	c, err := f.client(ctx)
	if err != nil {
		return err
	}
	call := forgeapi.Call{
		Method:   http.MethodPost,
		Path:     f.path("/statuses/%s", sha),
		NotFound: fmt.Sprintf("check that commit %s was pushed to %s/%s and that %s may set its statuses", sha, f.owner, f.repo, f.d.Token()),
	}
	_, resp, err := c.CreateStatus(f.owner, f.repo, sha, sdk.CreateStatusOption{
		State:       sdk.StatusState(st.State),
		TargetURL:   st.TargetURL,
		Description: st.Description,
		Context:     st.Context,
	})
	if err != nil {
		return f.fail(ctx, call, resp, err)
	}
	return nil
}

// UpsertComment keeps one comment of pull request number up to date: it
// edits the newest of the token's user's comments that holds marker, or
// adds body when there is none. When the token may not read its own user
// (a token without the read:user scope), a comment of any author that holds
// the marker is taken.
func (f *Forge) UpsertComment(ctx context.Context, number int, marker, body string) error {
	if err := forgeapi.CheckComment(number, marker, body, maxComment, "Gitea"); err != nil {
		return fmt.Errorf("gitea: upsert comment on #%d: %w", number, err)
	}
	c, err := f.client(ctx)
	if err != nil {
		return err
	}
	me, err := f.me(ctx, c)
	if err != nil {
		return err
	}
	done, err := forgeapi.Upsert{
		Me: me,
		List: func(ctx context.Context, page int) ([]forgeapi.Comment, int, error) {
			return f.comments(ctx, c, number, page)
		},
		Edit: func(ctx context.Context, id int64, body string) error {
			call := forgeapi.Call{Method: http.MethodPatch, Path: f.path("/issues/comments/%d", id),
				NotFound: fmt.Sprintf("comment %d of pull request #%d was deleted meanwhile: try again", id, number)}
			if _, resp, err := c.EditIssueComment(f.owner, f.repo, id, sdk.EditIssueCommentOption{Body: body}); err != nil {
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
// first, and the next page. Gitea 1.26 answers with every comment whatever
// page is asked for, and no next page; a server that pages sends a Link
// header, which the SDK reads.
func (f *Forge) comments(ctx context.Context, c *sdk.Client, number, page int) ([]forgeapi.Comment, int, error) {
	call := forgeapi.Call{
		Method:   http.MethodGet,
		Path:     f.path("/issues/%d/comments?page=%d&limit=%d", number, page, forgeapi.CommentPageSize),
		NotFound: f.notFound(number),
	}
	list, resp, err := c.ListIssueComments(f.owner, f.repo, int64(number), sdk.ListIssueCommentOptions{
		ListOptions: sdk.ListOptions{Page: page, PageSize: forgeapi.CommentPageSize},
	})
	if err != nil {
		return nil, 0, f.fail(ctx, call, resp, err)
	}
	out := make([]forgeapi.Comment, 0, len(list))
	for _, cm := range list {
		if cm == nil {
			continue
		}
		var author int64
		if cm.Poster != nil {
			author = cm.Poster.ID
		}
		out = append(out, forgeapi.Comment{ID: cm.ID, AuthorID: author, Body: cm.Body})
	}
	next := 0
	if resp != nil && resp.NextPage > page {
		next = resp.NextPage
	}
	return out, next, nil
}

// me returns the id of the token's user, learnt once, or 0 when the server
// will not say (403: a token without the read:user scope).
func (f *Forge) me(ctx context.Context, c *sdk.Client) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.meID != 0 {
		return f.meID, nil
	}
	call := forgeapi.Call{Method: http.MethodGet, Path: "/user"}
	u, resp, err := c.GetMyUserInfo()
	switch {
	case err != nil && status(resp) == http.StatusForbidden:
		f.log.InfoContext(ctx, "the token may not read its own user; a comment of any author that holds the marker is kept up to date")
		return 0, nil
	case err != nil:
		return 0, f.fail(ctx, call, resp, err)
	case u == nil || u.ID == 0:
		return 0, f.d.BadReply(call, status(resp), "the reply names no user id")
	}
	f.meID = u.ID
	return f.meID, nil
}
