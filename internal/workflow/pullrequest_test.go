package workflow

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReadWebhookPullRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, forge, event, file string
		want                     PullRequest
		ignored                  string
	}{
		{
			name: "github synchronize", forge: "github", event: "pull_request", file: "github-pull-request.json",
			want: PullRequest{
				Repo: "acme/docs", Number: 42, Action: "synchronize", NewHead: true,
				HeadSHA: "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00", HeadRef: "restore-guide", BaseRef: "main",
				URL: "https://github.com/acme/docs/pull/42",
			},
		},
		{
			name: "github opened from a fork", forge: "github", event: "pull_request", file: "github-pull-request-fork.json",
			want: PullRequest{
				Repo: "acme/docs", Number: 43, Action: "opened", NewHead: true, Fork: true,
				HeadSHA: "3333333333333333333333333333333333333333", HeadRef: "main", BaseRef: "main",
				URL: "https://github.com/acme/docs/pull/43",
			},
		},
		{
			name: "github merged", forge: "github", event: "pull_request", file: "github-pull-request-closed.json",
			want: PullRequest{
				Repo: "acme/docs", Number: 42, Action: "closed", Merged: true, Closed: true,
				HeadSHA: "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00", HeadRef: "restore-guide", BaseRef: "main",
				URL: "https://github.com/acme/docs/pull/42",
			},
			ignored: `pull request #42: action "closed" gives it no new head to check`,
		},
		{
			name: "gitlab update with new commits", forge: "gitlab", event: "Merge Request Hook", file: "gitlab-merge-request.json",
			want: PullRequest{
				Repo: "acme/product/docs", Number: 7, Action: "update", NewHead: true,
				HeadSHA: "5555555555555555555555555555555555555555", HeadRef: "restore-guide", BaseRef: "main",
				URL: "https://gitlab.example.com/acme/product/docs/-/merge_requests/7",
			},
		},
		{
			name: "gitlab title edit from a fork", forge: "gitlab", event: "Merge Request Hook", file: "gitlab-merge-request-edit.json",
			want: PullRequest{
				Repo: "acme/product/docs", Number: 7, Action: "update", Fork: true,
				HeadSHA: "5555555555555555555555555555555555555555", HeadRef: "restore-guide", BaseRef: "main",
				URL: "https://gitlab.example.com/acme/product/docs/-/merge_requests/7",
			},
			ignored: `action "update" gives it no new head`,
		},
		{
			name: "gitea synchronized", forge: "gitea", event: "pull_request", file: "gitea-pull-request.json",
			want: PullRequest{
				Repo: "acme/docs", Number: 3, Action: "synchronized", NewHead: true,
				HeadSHA: "7777777777777777777777777777777777777777", HeadRef: "restore-guide", BaseRef: "main",
				URL: "http://127.0.0.1:3000/acme/docs/pulls/3",
			},
		},
		{
			name: "forgejo synchronized", forge: "forgejo", event: "pull_request", file: "gitea-pull-request.json",
			want: PullRequest{
				Repo: "acme/docs", Number: 3, Action: "synchronized", NewHead: true,
				HeadSHA: "7777777777777777777777777777777777777777", HeadRef: "restore-guide", BaseRef: "main",
				URL: "http://127.0.0.1:3000/acme/docs/pulls/3",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := golden(t, tt.file)
			d, err := ReadWebhook(headers(tt.forge, tt.event, testSecret, body), bytes.NewReader(body), testSecret)
			if err != nil {
				t.Fatal(err)
			}
			if d.Push != nil || d.PullRequest == nil {
				t.Fatalf("delivery = %+v, want a pull request", d)
			}
			if !reflect.DeepEqual(*d.PullRequest, tt.want) {
				t.Fatalf("pull request = %+v\nwant           %+v", *d.PullRequest, tt.want)
			}
			if tt.ignored == "" && d.Ignored != "" || !strings.Contains(d.Ignored, tt.ignored) {
				t.Fatalf("ignored = %q, want %q", d.Ignored, tt.ignored)
			}
		})
	}
}

// A pull request event is verified exactly as a push is: a wrong
// signature or token is refused before the payload is looked at.
func TestReadWebhookPullRequestUnverified(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ forge, event, file string }{
		{"github", "pull_request", "github-pull-request.json"},
		{"gitlab", "Merge Request Hook", "gitlab-merge-request.json"},
		{"gitea", "pull_request", "gitea-pull-request.json"},
	} {
		body := golden(t, tt.file)
		_, err := ReadWebhook(headers(tt.forge, tt.event, []byte("another secret"), body), bytes.NewReader(body), testSecret)
		if !errors.Is(err, ErrUnverified) || !errors.Is(err, ErrSignature) {
			t.Errorf("%s signed with another secret: err = %v, want unverified", tt.forge, err)
		}
	}
}

func TestReadWebhookPullRequestMalformed(t *testing.T) {
	t.Parallel()
	good := string(golden(t, "github-pull-request.json"))
	tests := []struct {
		name, forge, event, body, want string
	}{
		{"not json", "github", "pull_request", "{", "unexpected EOF"},
		{"form encoded", "github", "pull_request", "payload=%7B%7D", "content type to application/json"},
		{"no pull_request", "github", "pull_request", `{"action":"opened","repository":{"full_name":"acme/docs"}}`, "no pull_request object"},
		{"short head sha", "github", "pull_request", strings.Replace(good, "C0FFEE00C0FFEE00C0FFEE00C0FFEE00C0FFEE00", "c0ffee", 1), "head commit must be a commit id"},
		{"option as base", "github", "pull_request", strings.Replace(good, `"ref": "main"`, `"ref": "--upload-pack=x"`, 1), "base branch"},
		{"bad repo", "github", "pull_request", strings.ReplaceAll(good, `"full_name": "acme/docs"`, `"full_name": "../docs"`), "repository full name"},
		{"zero number", "github", "pull_request", strings.ReplaceAll(good, `"number": 42`, `"number": 0`), "not a positive number"},
		{"script link", "github", "pull_request", strings.Replace(good, `"html_url": "https://github.com/acme/docs/pull/42"`, `"html_url": "javascript:alert(1)"`, 1), "not an http(s) link"},
		{"gitlab not a merge request", "gitlab", "Merge Request Hook", `{"object_kind":"note"}`, "no merge_request"},
		{"trailing data", "gitea", "pull_request", good + "{}", "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := []byte(tt.body)
			_, err := ReadWebhook(headers(tt.forge, tt.event, testSecret, body), bytes.NewReader(body), testSecret)
			if !errors.Is(err, ErrPullRequestPayload) || errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a payload error saying %q", err, tt.want)
			}
		})
	}
}

func FuzzReadWebhookPullRequest(f *testing.F) {
	for _, name := range []string{"github-pull-request.json", "github-pull-request-fork.json", "gitlab-merge-request.json", "gitea-pull-request.json"} {
		f.Add(golden(f, name))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, forge := range []string{"github", "gitlab", "gitea"} {
			event := "pull_request"
			if forge == "gitlab" {
				event = "Merge Request Hook"
			}
			d, err := ReadWebhook(headers(forge, event, testSecret, body), bytes.NewReader(body), testSecret)
			if err != nil {
				if errors.Is(err, ErrSignature) {
					t.Fatalf("%s: correctly signed body refused: %v", forge, err)
				}
				continue
			}
			pr := d.PullRequest
			if pr == nil {
				t.Fatalf("%s: pull request event without a pull request or an error: %+v", forge, d)
			}
			if pr.NewHead == (d.Ignored != "") {
				t.Fatalf("%s: a new head must be checked, and only one: %+v, ignored %q", forge, pr, d.Ignored)
			}
			if !ValidRepo(pr.Repo) || !validBranch(pr.BaseRef) || !commitID(pr.HeadSHA) || pr.Number <= 0 {
				t.Fatalf("%s: accepted pull request %+v", forge, pr)
			}
		}
	})
}
