package workflow

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
)

// MaxWebhookBytes caps a webhook body. GitHub sends at most 25 MB, but a
// push with that much in its payload is not one we want to hold in memory;
// pushes past the cap are refused with ErrTooLarge.
const MaxWebhookBytes = 5 << 20

// Forge names the kind of server that sent a webhook.
type Forge string

const (
	GitHub Forge = "github"
	GitLab Forge = "gitlab"
	// Gitea covers Forgejo, which speaks the same protocol.
	Gitea Forge = "gitea"
)

// Errors a webhook handler maps to statuses. Every refusal made before the
// delivery is verified wraps ErrUnverified as well as the sentinel that
// says why: its sender may not be the forge, so it is told no more than
// that it was refused (401). After verification, ErrTooLarge is a 413 and
// the rest are 400s.
var (
	ErrUnverified    = errors.New("webhook not verified")
	ErrSignature     = errors.New("webhook signature or token does not match the project's secret")
	ErrTooLarge      = fmt.Errorf("webhook body is larger than %d bytes", MaxWebhookBytes)
	ErrUnknownForge  = errors.New("webhook carries no GitHub, GitLab, Gitea or Forgejo event header")
	ErrMissingHeader = errors.New("webhook is missing a required header")
	ErrPayload       = errors.New("webhook payload is not a valid push event")
	ErrNoSecret      = errors.New("no webhook secret is configured; refusing every delivery")
)

// Delivery is a verified webhook.
type Delivery struct {
	Forge Forge
	// Event is the forge's event name as sent ("push", "Push Hook", …).
	Event string
	// ID is the forge's delivery id; a redelivery carries the same one,
	// which is how replays are recognised.
	ID string
	// Push is the parsed push, or nil when Ignored says why there is none.
	Push *Push
	// PullRequest is the parsed pull request event; Ignored is set as
	// well when its action gives it no new head (PullRequest.NewHead).
	PullRequest *PullRequest
	// Ignored is why a genuine delivery starts nothing: another event,
	// a tag push, a deleted branch.
	Ignored string
}

// Push is a push to a branch, whichever forge reported it.
type Push struct {
	// Repo is the repository's full name, "owner/name".
	Repo string
	// Branch is the pushed branch, without "refs/heads/".
	Branch string
	// DefaultBranch is the repository's default branch as the payload
	// reports it, or "".
	DefaultBranch string
	Before, After string
	Commits       []Commit
	// TotalCommits is the number of commits pushed, which may exceed
	// len(Commits): forges truncate the list (GitLab to 20).
	TotalCommits int
	Pusher       string
}

// Commit is one pushed commit as the payload describes it. Its paths are
// the sender's words, not checked: fit for a prompt, not for opening files.
type Commit struct {
	ID       string
	Message  string
	Author   string
	Added    []string
	Modified []string
	Removed  []string
}

// ReadWebhook verifies and parses a webhook. Everything the headers say is
// checked before the body is read: GitLab's token is compared then, and a
// GitHub or Gitea signature must be a well-formed SHA-256. The body is then
// read once, into a buffer that grows with what arrives up to
// MaxWebhookBytes, while its HMAC is computed; it is compared with the
// signature in constant time before the payload is looked at. Errors wrap
// the sentinels above.
func ReadWebhook(h http.Header, body io.Reader, secret []byte) (Delivery, error) {
	if len(secret) == 0 {
		return Delivery{}, unverified(ErrNoSecret)
	}
	forge, event, id, err := identify(h)
	if err != nil {
		return Delivery{}, unverified(err)
	}
	check, err := newBodyCheck(forge, h, secret)
	if err != nil {
		return Delivery{}, unverified(err)
	}
	data, err := readCapped(io.TeeReader(body, check), MaxWebhookBytes)
	if err != nil {
		if !check.verifiedByHeader() {
			return Delivery{}, unverified(err)
		}
		return Delivery{}, err
	}
	if err := check.verify(); err != nil {
		return Delivery{}, unverified(err)
	}
	d := Delivery{Forge: forge, Event: event, ID: id}
	if isPullRequestEvent(forge, event) {
		pr, ignored, err := parsePullRequest(forge, data)
		if err != nil {
			return Delivery{}, err
		}
		d.PullRequest, d.Ignored = pr, ignored
		return d, nil
	}
	if !isPushEvent(forge, event) {
		d.Ignored = fmt.Sprintf("event %q is not a push", event)
		return d, nil
	}
	push, ignored, err := parsePush(forge, data)
	if err != nil {
		return Delivery{}, err
	}
	d.Push, d.Ignored = push, ignored
	return d, nil
}

func unverified(err error) error { return fmt.Errorf("%w: %w", ErrUnverified, err) }

// identify tells the forge apart by its headers. Gitea and Forgejo also
// send GitHub's headers for compatibility, so they are looked for first.
func identify(h http.Header) (forge Forge, event, id string, err error) {
	switch {
	case h.Get("X-Forgejo-Event") != "":
		forge, event, id = Gitea, h.Get("X-Forgejo-Event"), h.Get("X-Forgejo-Delivery")
		if id == "" {
			id = h.Get("X-Gitea-Delivery")
		}
	case h.Get("X-Gitea-Event") != "":
		forge, event, id = Gitea, h.Get("X-Gitea-Event"), h.Get("X-Gitea-Delivery")
	case h.Get("X-Gitlab-Event") != "":
		forge, event, id = GitLab, h.Get("X-Gitlab-Event"), h.Get("X-Gitlab-Event-UUID")
	case h.Get("X-GitHub-Event") != "":
		forge, event, id = GitHub, h.Get("X-GitHub-Event"), h.Get("X-GitHub-Delivery")
	default:
		return "", "", "", ErrUnknownForge
	}
	if id == "" {
		return "", "", "", fmt.Errorf("%w: the %s delivery id (replays are detected by it)", ErrMissingHeader, forge)
	}
	if len(id) > 128 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return "", "", "", fmt.Errorf("%w: delivery id is not a short printable token", ErrPayload)
	}
	return forge, event, id, nil
}

// bodyCheck verifies a delivery's body as it streams past: it computes
// the HMAC-SHA256 of what is written to it, for verify to compare with the
// signature header. A forge that authenticates with a token header
// (GitLab) was verified before the body was read; its check has no HMAC.
type bodyCheck struct {
	mac  hash.Hash
	want []byte
}

// newBodyCheck checks what the headers alone can tell: GitLab's token
// against secret, and that a GitHub or Gitea signature is there and is a
// hex SHA-256.
func newBodyCheck(forge Forge, h http.Header, secret []byte) (*bodyCheck, error) {
	var hexSig string
	switch forge {
	case GitLab:
		token := h.Get("X-Gitlab-Token")
		if token == "" {
			return nil, fmt.Errorf("%w: X-Gitlab-Token is missing", ErrSignature)
		}
		// Compare digests so the comparison takes the same time whatever
		// the lengths.
		a, b := sha256.Sum256([]byte(token)), sha256.Sum256(secret)
		if subtle.ConstantTimeCompare(a[:], b[:]) != 1 {
			return nil, ErrSignature
		}
		return &bodyCheck{}, nil
	case GitHub:
		sig := h.Get("X-Hub-Signature-256")
		if sig == "" {
			return nil, fmt.Errorf("%w: X-Hub-Signature-256 is missing", ErrSignature)
		}
		var ok bool
		if hexSig, ok = strings.CutPrefix(sig, "sha256="); !ok {
			return nil, fmt.Errorf("%w: X-Hub-Signature-256 does not start with sha256=", ErrSignature)
		}
	default:
		hexSig = h.Get("X-Forgejo-Signature")
		if hexSig == "" {
			hexSig = h.Get("X-Gitea-Signature")
		}
		if hexSig == "" {
			return nil, fmt.Errorf("%w: X-Gitea-Signature is missing", ErrSignature)
		}
	}
	want, err := hex.DecodeString(strings.TrimSpace(hexSig))
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("%w: the signature is not a hex HMAC-SHA256", ErrSignature)
	}
	return &bodyCheck{mac: hmac.New(sha256.New, secret), want: want}, nil
}

func (c *bodyCheck) Write(p []byte) (int, error) {
	if c.mac == nil {
		return len(p), nil
	}
	return c.mac.Write(p)
}

// verifiedByHeader reports whether the delivery was verified before its
// body was read.
func (c *bodyCheck) verifiedByHeader() bool { return c.mac == nil }

// verify compares the HMAC of the body written so far with the signature.
func (c *bodyCheck) verify() error {
	if c.mac != nil && !hmac.Equal(c.want, c.mac.Sum(nil)) {
		return ErrSignature
	}
	return nil
}

// readCapped reads r to its end. Its buffer grows with what arrives, never
// past limit+1 bytes, so a sender that announces a large body and sends
// little costs little; one that sends more than limit bytes is refused with
// ErrTooLarge as soon as it does.
func readCapped(r io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(limit+1, 32<<10))
	for {
		if len(buf) == cap(buf) {
			// Doubled by hand: append's growth could overshoot the cap.
			grown := make([]byte, len(buf), len(buf)+min(cap(buf), limit+1-len(buf)))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return nil, ErrTooLarge
		}
		var over *http.MaxBytesError
		switch {
		case err == io.EOF:
			return buf, nil
		case errors.As(err, &over):
			return nil, ErrTooLarge
		case err != nil:
			return nil, fmt.Errorf("read webhook body: %w", err)
		}
	}
}

func isPushEvent(forge Forge, event string) bool {
	if forge == GitLab {
		return event == "Push Hook"
	}
	return event == "push"
}

// payload is the union of the three forges' push payloads. GitHub's and
// Gitea's share names; GitLab names the repository "project" and the
// pusher "user_username".
type payload struct {
	Ref     string `json:"ref"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Deleted bool   `json:"deleted"`
	// GitLab counts in total_commits_count, Gitea in total_commits.
	TotalCommits      *int `json:"total_commits_count"`
	GiteaTotalCommits *int `json:"total_commits"`
	Commits           []struct {
		ID       string   `json:"id"`
		Message  string   `json:"message"`
		Added    []string `json:"added"`
		Modified []string `json:"modified"`
		Removed  []string `json:"removed"`
		Author   struct {
			Name     string `json:"name"`
			Username string `json:"username"`
		} `json:"author"`
	} `json:"commits"`
	Repository *struct {
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	Project *struct {
		PathWithNamespace string `json:"path_with_namespace"`
		DefaultBranch     string `json:"default_branch"`
	} `json:"project"`
	Pusher *struct {
		Name     string `json:"name"`
		Login    string `json:"login"`
		Username string `json:"username"`
	} `json:"pusher"`
	UserUsername string `json:"user_username"`
}

func parsePush(forge Forge, data []byte) (*Push, string, error) {
	if bytes.HasPrefix(data, []byte("payload=")) {
		return nil, "", fmt.Errorf("%w: the body is form-encoded; set the webhook's content type to application/json", ErrPayload)
	}
	var p payload
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&p); err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrPayload, err)
	}
	if dec.More() {
		return nil, "", fmt.Errorf("%w: trailing data after the JSON object", ErrPayload)
	}
	out := &Push{}
	switch forge {
	case GitLab:
		if p.Project != nil {
			out.Repo, out.DefaultBranch = p.Project.PathWithNamespace, p.Project.DefaultBranch
		}
		out.Pusher = p.UserUsername
	default:
		if p.Repository != nil {
			out.Repo, out.DefaultBranch = p.Repository.FullName, p.Repository.DefaultBranch
		}
		if p.Pusher != nil {
			out.Pusher = firstNonEmpty(p.Pusher.Login, p.Pusher.Username, p.Pusher.Name)
		}
	}
	if !ValidRepo(out.Repo) {
		return nil, "", fmt.Errorf("%w: repository full name %q is missing or malformed", ErrPayload, out.Repo)
	}
	if strings.HasPrefix(p.Ref, "refs/tags/") {
		return nil, "tag push " + p.Ref + " runs no workflow", nil
	}
	branch, ok := strings.CutPrefix(p.Ref, "refs/heads/")
	if !ok || !validBranch(branch) {
		return nil, "", fmt.Errorf("%w: ref %q is not a branch or tag", ErrPayload, p.Ref)
	}
	out.Branch = branch
	// A push is told apart from the others by its commits (a replay under
	// a new delivery id is the same push), so both must be commit ids.
	if !commitID(p.Before) || !commitID(p.After) {
		return nil, "", fmt.Errorf("%w: before and after must be commit ids (40 or 64 hex digits)", ErrPayload)
	}
	out.Before, out.After = strings.ToLower(p.Before), strings.ToLower(p.After)
	if p.Deleted || strings.Trim(out.After, "0") == "" {
		return nil, "branch " + branch + " was deleted", nil
	}
	for _, c := range p.Commits {
		out.Commits = append(out.Commits, Commit{
			ID: c.ID, Message: c.Message, Author: firstNonEmpty(c.Author.Username, c.Author.Name),
			Added: c.Added, Modified: c.Modified, Removed: c.Removed,
		})
	}
	out.TotalCommits = len(out.Commits)
	for _, n := range []*int{p.TotalCommits, p.GiteaTotalCommits} {
		if n != nil && *n > out.TotalCommits {
			out.TotalCommits = *n
		}
	}
	return out, "", nil
}

// commitID reports whether s is a SHA-1 or SHA-256 object id in hex.
func commitID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
