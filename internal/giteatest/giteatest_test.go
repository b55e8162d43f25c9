package giteatest

import (
	"net/http"
	"testing"
)

// TestRealGiteaStarts checks the harness itself: a real Gitea answers, the
// token works, and a repository can be created.
func TestRealGiteaStarts(t *testing.T) {
	t.Parallel()
	s := Start(t)
	var me struct {
		Login string `json:"login"`
	}
	s.API(t, http.MethodGet, "/user", nil, http.StatusOK, &me)
	if me.Login != s.User {
		t.Fatalf("token belongs to %q, want %q", me.Login, s.User)
	}
	if url := s.CreateRepo(t, "docs"); url == "" {
		t.Fatal("no clone URL")
	}
}
