package forgeapi_test

import (
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/forge/forgeapi"
)

func TestOwnerRepo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		url         string
		owner, repo string
	}{
		{"https", "https://github.com/acme/docs", "acme", "docs"},
		{"https .git", "https://github.com/acme/docs.git", "acme", "docs"},
		{"https trailing slash", "https://github.com/acme/docs/", "acme", "docs"},
		{"https .git and slash", "https://github.com/acme/docs.git/", "acme", "docs"},
		{"http with port", "http://git.internal:3000/acme/docs.git", "acme", "docs"},
		{"https with credentials", "https://x-access-token:ghp_secret@github.com/acme/docs.git", "acme", "docs"},
		{"scp ssh", "git@github.com:acme/docs.git", "acme", "docs"},
		{"scp ssh without .git", "git@github.com:acme/docs", "acme", "docs"},
		{"scp without user", "github.com:acme/docs.git", "acme", "docs"},
		{"ssh url", "ssh://git@github.com/acme/docs.git", "acme", "docs"},
		{"ssh url with port", "ssh://git@gitea.example:2222/acme/docs.git", "acme", "docs"},
		{"gitlab subgroup", "https://gitlab.example/group/sub/project.git", "group/sub", "project"},
		{"gitlab deep subgroup ssh", "git@gitlab.example:group/a/b/project.git", "group/a/b", "project"},
		{"gitlab web url", "https://gitlab.example/group/sub/project/-/tree/main", "group/sub", "project"},
		{"dots in names", "https://github.com/acme.io/docs.site.git", "acme.io", "docs.site"},
		{"surrounding space", "  https://github.com/acme/docs.git\n", "acme", "docs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			owner, repo, err := forgeapi.OwnerRepo(tt.url)
			if err != nil {
				t.Fatalf("OwnerRepo(%q): %v", tt.url, err)
			}
			if owner != tt.owner || repo != tt.repo {
				t.Errorf("OwnerRepo(%q) = %q, %q; want %q, %q", tt.url, owner, repo, tt.owner, tt.repo)
			}
		})
	}
}

func TestOwnerRepoRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  string
		want string // in the error
	}{
		{"empty", "", "empty"},
		{"blank", "   ", "empty"},
		{"absolute local path", "/srv/git/docs", "not a forge URL"},
		{"relative local path", "./docs", "not a forge URL"},
		{"bare name", "docs", "not a forge URL"},
		{"windows path", `C:\repos\docs`, "not a forge URL"},
		{"file url", "file:///srv/git/docs.git", "local path"},
		{"ftp", "ftp://host/acme/docs", `scheme "ftp"`},
		{"no repo", "https://github.com/acme", "OWNER/REPO"},
		{"host only", "https://github.com", "OWNER/REPO"},
		{"only .git", "https://github.com/acme/.git", "OWNER/REPO"},
		{"empty segment", "https://github.com/acme//docs", "invalid path segment"},
		{"dot dot", "https://github.com/acme/../docs", "invalid path segment"},
		{"no host", "https:///acme/docs", "no host"},
		{"scp without path", "git@github.com:docs", "OWNER/REPO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			owner, repo, err := forgeapi.OwnerRepo(tt.url)
			if err == nil {
				t.Fatalf("OwnerRepo(%q) = %q, %q; want an error", tt.url, owner, repo)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OwnerRepo(%q) error %q does not say %q", tt.url, err, tt.want)
			}
		})
	}
}

func TestOwnerRepoHidesCredentials(t *testing.T) {
	t.Parallel()
	tests := []string{
		"https://ghp_supersecret@github.com/acme",
		"https://user:ghp_supersecret@github.com/acme",
		"https://user:ghp_supersecret@github.com/acme//docs",
		"ftp://user:ghp_supersecret@host/acme/docs",
		"https://user:ghp_supersecret@host/%zz/docs",
		"ghp_supersecret@github.com:docs",
	}
	for _, url := range tests {
		t.Run(url, func(t *testing.T) {
			t.Parallel()
			_, _, err := forgeapi.OwnerRepo(url)
			if err == nil {
				t.Fatalf("OwnerRepo(%q): want an error", url)
			}
			if strings.Contains(err.Error(), "supersecret") {
				t.Errorf("error shows the credentials: %v", err)
			}
		})
	}
}

func TestParseAPIBase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		want    string
		wantErr string
	}{
		{"plain", "https://gitlab.example/api/v4", "https://gitlab.example/api/v4", ""},
		{"trailing slash", "https://ghe.example/api/v3/", "https://ghe.example/api/v3", ""},
		{"http and port", "http://127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"no scheme", "gitlab.example/api/v4", "", "not an http(s) URL"},
		{"ftp", "ftp://gitlab.example", "", "not an http(s) URL"},
		{"credentials", "https://root:hunter2-secret@gitlab.example/api/v4", "", "holds credentials"},
		{"query", "https://gitlab.example/api/v4?private_token=x", "", "query"},
		{"empty", "", "", "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := forgeapi.ParseAPIBase(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseAPIBase(%q) error %v, want one saying %q", tt.raw, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAPIBase(%q): %v", tt.raw, err)
			}
			if u.String() != tt.want {
				t.Errorf("ParseAPIBase(%q) = %q, want %q", tt.raw, u, tt.want)
			}
		})
	}
}

func FuzzOwnerRepo(f *testing.F) {
	for _, s := range []string{
		"https://github.com/acme/docs.git", "git@gitlab.example:g/s/p.git", "ssh://git@h:22/o/r",
		"/srv/docs", "https://u:p@h/o/r", "C:\\x", "a:b", "https://h/-/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		owner, repo, err := forgeapi.OwnerRepo(s)
		if err != nil {
			return
		}
		if owner == "" || repo == "" || strings.Contains(repo, "/") ||
			strings.HasPrefix(owner, "/") || strings.HasSuffix(owner, "/") {
			t.Errorf("OwnerRepo(%q) = %q, %q", s, owner, repo)
		}
	})
}
