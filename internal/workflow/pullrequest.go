package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrPullRequestPayload is the error of a verified pull request delivery
// whose payload cannot be read (a 400).
var ErrPullRequestPayload = errors.New("webhook payload is not a valid pull request event")

// PullRequest is a pull request event (a merge request on GitLab),
// whichever forge reported it.
type PullRequest struct {
	// Repo is the base repository's full name, "owner/name": the one the
	// pull request asks to merge into.
	Repo   string
	Number int
	// Action is the forge's action as sent ("opened", "synchronize",
	// "synchronized", "open", "update", …).
	Action string
	// NewHead is true when the action gave the pull request a head to
	// check: it was opened or reopened, or its branch got new commits.
	NewHead bool
	// HeadSHA is the commit at the head, in lower-case hex; HeadRef the
	// head's branch (in the fork, for a pull request from one) and
	// BaseRef the branch it merges into.
	HeadSHA string
	HeadRef string
	BaseRef string
	// Fork is true when the head is in another repository than the base
	// (or the forge does not say where it is). Its branch is never fetched
	// from there: the base repository's pull ref holds the same commits.
	Fork bool
	// URL is the pull request's web page.
	URL    string
	Merged bool
	Closed bool
}

// maxPullRequestNumber bounds a pull request's number; forges count far
// below it, and it keeps refs and keys short.
const maxPullRequestNumber = 1 << 40

func isPullRequestEvent(forge Forge, event string) bool {
	if forge == GitLab {
		return event == "Merge Request Hook"
	}
	return event == "pull_request"
}

// prSide is the head or the base of a GitHub or Gitea pull request.
type prSide struct {
	Ref  string `json:"ref"`
	SHA  string `json:"sha"`
	Repo *struct {
		FullName string `json:"full_name"`
	} `json:"repo"`
}

// prPayload is the union of GitHub's and Gitea's pull_request payloads
// and GitLab's Merge Request Hook.
type prPayload struct {
	Action      string `json:"action"`
	Number      int64  `json:"number"`
	PullRequest *struct {
		Number  int64  `json:"number"`
		HTMLURL string `json:"html_url"`
		State   string `json:"state"`
		Merged  bool   `json:"merged"`
		Head    prSide `json:"head"`
		Base    prSide `json:"base"`
	} `json:"pull_request"`
	Repository *struct {
		FullName string `json:"full_name"`
	} `json:"repository"`

	ObjectKind string `json:"object_kind"`
	Project    *struct {
		PathWithNamespace string `json:"path_with_namespace"`
	} `json:"project"`
	ObjectAttributes *struct {
		IID             int64  `json:"iid"`
		Action          string `json:"action"`
		State           string `json:"state"`
		SourceBranch    string `json:"source_branch"`
		TargetBranch    string `json:"target_branch"`
		SourceProjectID int64  `json:"source_project_id"`
		TargetProjectID int64  `json:"target_project_id"`
		URL             string `json:"url"`
		OldRev          string `json:"oldrev"`
		LastCommit      *struct {
			ID string `json:"id"`
		} `json:"last_commit"`
	} `json:"object_attributes"`
}

// parsePullRequest reads a pull request event. An action that gives the
// pull request no new head is returned too, with why it starts nothing.
func parsePullRequest(forge Forge, data []byte) (*PullRequest, string, error) {
	if bytes.HasPrefix(data, []byte("payload=")) {
		return nil, "", fmt.Errorf("%w: the body is form-encoded; set the webhook's content type to application/json", ErrPullRequestPayload)
	}
	var p prPayload
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrPullRequestPayload, err)
	}
	if dec.More() {
		return nil, "", fmt.Errorf("%w: trailing data after the JSON object", ErrPullRequestPayload)
	}
	var pr *PullRequest
	var err error
	if forge == GitLab {
		pr, err = gitlabMergeRequest(p)
	} else {
		pr, err = githubPullRequest(forge, p)
	}
	if err != nil {
		return nil, "", err
	}
	if err := pr.validate(); err != nil {
		return nil, "", err
	}
	if !pr.NewHead {
		return pr, fmt.Sprintf("pull request #%d: action %q gives it no new head to check", pr.Number, pr.Action), nil
	}
	return pr, "", nil
}

// githubPullRequest reads GitHub's and Gitea's payload, which share their
// names. GitHub says "synchronize" when the branch gets commits, Gitea
// "synchronized".
func githubPullRequest(forge Forge, p prPayload) (*PullRequest, error) {
	if p.PullRequest == nil {
		return nil, fmt.Errorf("%w: no pull_request object", ErrPullRequestPayload)
	}
	pr := &PullRequest{
		Number:  int(p.PullRequest.Number),
		Action:  p.Action,
		HeadSHA: strings.ToLower(p.PullRequest.Head.SHA),
		HeadRef: p.PullRequest.Head.Ref,
		BaseRef: p.PullRequest.Base.Ref,
		URL:     p.PullRequest.HTMLURL,
		Merged:  p.PullRequest.Merged,
		Closed:  p.PullRequest.State == "closed",
	}
	if pr.Number == 0 {
		pr.Number = int(p.Number)
	}
	if p.Repository != nil {
		pr.Repo = p.Repository.FullName
	}
	if base := p.PullRequest.Base.Repo; base != nil && pr.Repo == "" {
		pr.Repo = base.FullName
	}
	// A head whose repository is gone or not named is treated as a fork:
	// what cannot be shown to be ours gets nothing of ours.
	head, base := p.PullRequest.Head.Repo, p.PullRequest.Base.Repo
	pr.Fork = head == nil || base == nil || !strings.EqualFold(head.FullName, base.FullName)
	switch p.Action {
	case "opened", "reopened", "synchronize", "synchronized":
		pr.NewHead = !pr.Closed
	}
	return pr, nil
}

// gitlabMergeRequest reads GitLab's Merge Request Hook. An "update" moves
// the head only when it carries oldrev, the head before the push; other
// updates are edits of the title, labels or assignees.
func gitlabMergeRequest(p prPayload) (*PullRequest, error) {
	a := p.ObjectAttributes
	if a == nil || p.ObjectKind != "merge_request" {
		return nil, fmt.Errorf("%w: no merge_request object_attributes", ErrPullRequestPayload)
	}
	pr := &PullRequest{
		Number:  int(a.IID),
		Action:  a.Action,
		HeadRef: a.SourceBranch,
		BaseRef: a.TargetBranch,
		URL:     a.URL,
		Merged:  a.State == "merged",
		Closed:  a.State == "closed" || a.State == "merged",
		Fork:    a.SourceProjectID == 0 || a.SourceProjectID != a.TargetProjectID,
	}
	if a.LastCommit != nil {
		pr.HeadSHA = strings.ToLower(a.LastCommit.ID)
	}
	if p.Project != nil {
		pr.Repo = p.Project.PathWithNamespace
	}
	switch a.Action {
	case "open", "reopen":
		pr.NewHead = !pr.Closed
	case "update":
		pr.NewHead = !pr.Closed && a.OldRev != ""
	}
	return pr, nil
}

// validate checks what the pull request's check will use: names that go
// into refs, keys and links.
func (pr *PullRequest) validate() error {
	switch {
	case !ValidRepo(pr.Repo):
		return fmt.Errorf("%w: repository full name %q is missing or malformed", ErrPullRequestPayload, pr.Repo)
	case pr.Number <= 0 || pr.Number > maxPullRequestNumber:
		return fmt.Errorf("%w: pull request number %d is not a positive number", ErrPullRequestPayload, pr.Number)
	case !commitID(pr.HeadSHA):
		return fmt.Errorf("%w: the head commit must be a commit id (40 or 64 hex digits), got %q", ErrPullRequestPayload, clipText(pr.HeadSHA, 80))
	case !validBranch(pr.BaseRef):
		return fmt.Errorf("%w: base branch %q is missing or malformed", ErrPullRequestPayload, clipText(pr.BaseRef, 80))
	case pr.HeadRef != "" && !validBranch(pr.HeadRef):
		return fmt.Errorf("%w: head branch %q is malformed", ErrPullRequestPayload, clipText(pr.HeadRef, 80))
	case len(pr.Action) > 64:
		return fmt.Errorf("%w: action is longer than 64 bytes", ErrPullRequestPayload)
	}
	if pr.URL != "" {
		u, err := url.Parse(pr.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(pr.URL) > 2048 {
			return fmt.Errorf("%w: the pull request's URL %q is not an http(s) link", ErrPullRequestPayload, clipText(pr.URL, 80))
		}
	}
	return nil
}

// clipText cuts s to at most n bytes on a rune boundary, for messages.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
