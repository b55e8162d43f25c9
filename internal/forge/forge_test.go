package forge_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/forge"
	"github.com/docsmith/docsmith/internal/forge/gitea"
	"github.com/docsmith/docsmith/internal/forge/github"
	"github.com/docsmith/docsmith/internal/forge/gitlab"
	"github.com/docsmith/docsmith/internal/forge/local"
)

const token = "glpat-0123456789abcdefXYZ"

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     forge.Config
		wantErr string // "" means New succeeds
		check   func(forge.Forge) bool
	}{
		{
			name:  "github with the default API",
			cfg:   forge.Config{Kind: "github", RepoURL: "https://github.com/acme/docs.git", Token: token},
			check: func(f forge.Forge) bool { _, ok := f.(*github.Forge); return ok },
		},
		{
			name:  "github enterprise, kind in capitals",
			cfg:   forge.Config{Kind: " GitHub ", APIBaseURL: "https://ghe.example/api/v3", RepoURL: "git@ghe.example:acme/docs.git", Token: token},
			check: func(f forge.Forge) bool { _, ok := f.(*github.Forge); return ok },
		},
		{
			name:  "gitlab",
			cfg:   forge.Config{Kind: "gitlab", APIBaseURL: "https://gitlab.example/api/v4", RepoURL: "https://gitlab.example/g/sub/docs.git", Token: token},
			check: func(f forge.Forge) bool { _, ok := f.(*gitlab.Forge); return ok },
		},
		{
			name:  "gitea",
			cfg:   forge.Config{Kind: "gitea", APIBaseURL: "https://gitea.example", RepoURL: "https://gitea.example/acme/docs.git", Token: token},
			check: func(f forge.Forge) bool { _, ok := f.(*gitea.Forge); return ok },
		},
		{
			name:  "local needs nothing",
			cfg:   forge.Config{Kind: "local", RepoURL: "/srv/git/docs.git"},
			check: func(f forge.Forge) bool { _, ok := f.(*local.Forge); return ok },
		},
		{name: "no kind", cfg: forge.Config{RepoURL: "https://github.com/acme/docs"}, wantErr: "forge: no kind: set it to github, gitlab, gitea or local"},
		{name: "unknown kind", cfg: forge.Config{Kind: "bitbucket"}, wantErr: `forge: unknown kind "bitbucket": use github, gitlab, gitea or local`},
		{
			name:    "gitlab without API base URL",
			cfg:     forge.Config{Kind: "gitlab", RepoURL: "https://gitlab.example/g/docs.git", Token: token},
			wantErr: "gitlab: no API base URL: set the project's forge URL",
		},
		{
			name:    "gitea without API base URL",
			cfg:     forge.Config{Kind: "gitea", RepoURL: "https://gitea.example/acme/docs.git", Token: token},
			wantErr: "gitea: no API base URL: set the project's forge URL",
		},
		{
			name:    "github without token",
			cfg:     forge.Config{Kind: "github", RepoURL: "https://github.com/acme/docs.git"},
			wantErr: "github: no token",
		},
		{
			name:    "gitlab without token",
			cfg:     forge.Config{Kind: "gitlab", APIBaseURL: "https://gitlab.example", RepoURL: "https://gitlab.example/g/docs.git"},
			wantErr: "gitlab: no token",
		},
		{
			name:    "gitea without token",
			cfg:     forge.Config{Kind: "gitea", APIBaseURL: "https://gitea.example", RepoURL: "https://gitea.example/acme/docs.git"},
			wantErr: "gitea: no token",
		},
		{
			name:    "github with a local path",
			cfg:     forge.Config{Kind: "github", RepoURL: "/srv/git/docs.git", Token: token},
			wantErr: "github: repository URL \"/srv/git/docs.git\" is not a forge URL",
		},
		{
			name:    "github with a nested path",
			cfg:     forge.Config{Kind: "github", RepoURL: "https://github.com/a/b/c.git", Token: token},
			wantErr: "more than OWNER/REPO",
		},
		{
			name:    "API base URL with credentials",
			cfg:     forge.Config{Kind: "gitlab", APIBaseURL: "https://root:" + token + "@gitlab.example/api/v4", RepoURL: "https://gitlab.example/g/docs.git", Token: token},
			wantErr: "holds credentials",
		},
		{
			name:    "API base URL without scheme",
			cfg:     forge.Config{Kind: "gitea", APIBaseURL: "gitea.example", RepoURL: "https://gitea.example/acme/docs.git", Token: token},
			wantErr: "not an http(s) URL",
		},
		{
			name:    "repository URL with a token",
			cfg:     forge.Config{Kind: "github", RepoURL: "https://x-access-token:" + token + "@github.com/acme", Token: token},
			wantErr: "does not name OWNER/REPO",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := forge.New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("New: want an error saying %q", tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("New error %q does not say %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), token) {
					t.Errorf("New error holds the token: %q", err)
				}
				if f != nil {
					t.Errorf("New returned %#v with its error", f)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if !tt.check(f) {
				t.Errorf("New returned %T", f)
			}
		})
	}
}

func TestLocalHasNoPullRequests(t *testing.T) {
	t.Parallel()
	f, err := forge.New(forge.Config{Kind: "local", RepoURL: "/srv/git/docs.git"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name string
		call func() error
	}{
		{"open", func() error {
			_, err := f.Open(ctx, forge.NewPullRequest{Title: "t", Head: "h", Base: "main"})
			return err
		}},
		{"update body", func() error { return f.UpdateBody(ctx, 1, "b") }},
		{"comment", func() error { return f.Comment(ctx, 1, "c") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.call(); !errors.Is(err, forge.ErrNoPullRequests) {
				t.Errorf("err = %v, want ErrNoPullRequests", err)
			}
		})
	}
	t.Run("find open finds none", func(t *testing.T) {
		t.Parallel()
		pr, err := f.FindOpen(ctx, "h", "main")
		if pr != nil || err != nil {
			t.Errorf("FindOpen = %v, %v; want nil, nil", pr, err)
		}
	})
}

func TestOwnerRepo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url, owner, repo, err string
	}{
		{url: "https://github.com/acme/docs.git", owner: "acme", repo: "docs"},
		{url: "git@gitlab.example:group/sub/project.git", owner: "group/sub", repo: "project"},
		{url: "./docs", err: "forge: repository URL"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			owner, repo, err := forge.OwnerRepo(tt.url)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Errorf("OwnerRepo(%q) error %v, want one starting %q", tt.url, err, tt.err)
				}
				return
			}
			if err != nil || owner != tt.owner || repo != tt.repo {
				t.Errorf("OwnerRepo(%q) = %q, %q, %v; want %q, %q", tt.url, owner, repo, err, tt.owner, tt.repo)
			}
		})
	}
}
