package workflow

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
)

var testSecret = []byte("s3cret-for-tests")

func golden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// headers builds the headers each forge documents for a delivery signed
// with secret.
func headers(forge, event string, secret, body []byte) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	switch forge {
	case "github":
		h.Set("X-GitHub-Event", event)
		h.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		h.Set("X-Hub-Signature-256", "sha256="+sign(secret, body))
	case "gitlab":
		h.Set("X-Gitlab-Event", event)
		h.Set("X-Gitlab-Event-UUID", "13792a34-cac6-4fda-95a8-c58e00a3954e")
		h.Set("X-Gitlab-Token", string(secret))
	case "gitea":
		// Gitea also sends GitHub's and Gogs' headers for compatibility.
		h.Set("X-Gitea-Event", event)
		h.Set("X-Gitea-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473")
		h.Set("X-Gitea-Signature", sign(secret, body))
		h.Set("X-GitHub-Event", event)
		h.Set("X-GitHub-Delivery", "f6266f16-1bf3-46a5-9ea4-602e06ead473")
		h.Set("X-Hub-Signature-256", "sha256="+sign(secret, body))
	case "forgejo":
		h.Set("X-Forgejo-Event", event)
		h.Set("X-Forgejo-Delivery", "0b1d2c3e-4f50-6172-8394-a5b6c7d8e9f0")
		h.Set("X-Forgejo-Signature", sign(secret, body))
		h.Set("X-Gitea-Event", event)
		h.Set("X-Gitea-Delivery", "0b1d2c3e-4f50-6172-8394-a5b6c7d8e9f0")
		h.Set("X-Gitea-Signature", sign(secret, body))
	}
	return h
}

func TestReadWebhookPushes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, forge, event, file string
		wantForge                Forge
		wantID                   string
		want                     *Push
	}{
		{
			name: "github", forge: "github", event: "push", file: "github-push.json",
			wantForge: GitHub, wantID: "72d3162e-cc78-11e3-81ab-4c9367dc0958",
			want: &Push{
				Repo: "acme/api", Branch: "main", DefaultBranch: "main",
				Before: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", After: "9c1f0e6b2a7d4e3f8a5b6c7d8e9f0a1b2c3d4e5f",
				Pusher: "ada", TotalCommits: 2,
				Commits: []Commit{
					{ID: "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", Message: "Add the rate limit headers to the orders endpoint", Author: "ada",
						Added: []string{"internal/ratelimit/headers.go"}, Removed: []string{}, Modified: []string{"api/orders.go", "openapi.yaml"}},
					{ID: "9c1f0e6b2a7d4e3f8a5b6c7d8e9f0a1b2c3d4e5f", Message: "Drop the v1 orders export\n\nIt was deprecated a year ago.", Author: "Bo Example",
						Added: []string{}, Removed: []string{"api/v1/export.go"}, Modified: []string{"openapi.yaml"}},
				},
			},
		},
		{
			name: "gitlab with subgroup and truncated commits", forge: "gitlab", event: "Push Hook", file: "gitlab-push.json",
			wantForge: GitLab, wantID: "13792a34-cac6-4fda-95a8-c58e00a3954e",
			want: &Push{
				Repo: "acme/platform/billing", Branch: "release/2.4", DefaultBranch: "main",
				Before: "4b825dc642cb6eb9a060e54bf8d69288fbee4904", After: "7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a",
				Pusher: "cy", TotalCommits: 23,
				Commits: []Commit{{ID: "7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a", Message: "Invoices take a currency parameter\n", Author: "Cy Example",
					Added: []string{"docs/currency.md"}, Modified: []string{"invoice/create.go"}, Removed: []string{}}},
			},
		},
		{
			name: "gitea", forge: "gitea", event: "push", file: "gitea-push.json",
			wantForge: Gitea, wantID: "f6266f16-1bf3-46a5-9ea4-602e06ead473",
			want: &Push{
				Repo: "acme/sdk", Branch: "main", DefaultBranch: "main",
				Before: "aa11bb22cc33dd44ee55ff66aa77bb88cc99dd00", After: "0123456789abcdef0123456789abcdef01234567",
				Pusher: "di", TotalCommits: 1,
				Commits: []Commit{{ID: "0123456789abcdef0123456789abcdef01234567", Message: "Rename Client.Do to Client.Send\n", Author: "di",
					Added: []string{}, Removed: []string{}, Modified: []string{"client.go", "README.md"}}},
			},
		},
		{
			name: "forgejo", forge: "forgejo", event: "push", file: "gitea-push.json",
			wantForge: Gitea, wantID: "0b1d2c3e-4f50-6172-8394-a5b6c7d8e9f0",
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
			if d.Forge != tt.wantForge || d.ID != tt.wantID || d.Event != tt.event || d.Ignored != "" || d.Push == nil {
				t.Fatalf("delivery = %+v", d)
			}
			if tt.want != nil && !reflect.DeepEqual(d.Push, tt.want) {
				t.Fatalf("push = %+v\nwant   %+v", d.Push, tt.want)
			}
		})
	}
}

func TestReadWebhookIgnored(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, forge, event, file, want string
	}{
		{"github ping", "github", "ping", "github-ping.json", `event "ping" is not a push`},
		{"github tag", "github", "push", "github-tag.json", "tag push refs/tags/v2.4.0"},
		{"github branch deleted", "github", "push", "github-delete.json", "branch feature/old-export was deleted"},
		{"gitlab tag push event", "gitlab", "Tag Push Hook", "gitlab-tag.json", `event "Tag Push Hook" is not a push`},
		{"gitlab branch deleted", "gitlab", "Push Hook", "gitlab-delete.json", "branch spike was deleted"},
		{"gitea issue event", "gitea", "issues", "github-ping.json", `event "issues" is not a push`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := golden(t, tt.file)
			d, err := ReadWebhook(headers(tt.forge, tt.event, testSecret, body), bytes.NewReader(body), testSecret)
			if err != nil {
				t.Fatal(err)
			}
			if d.Push != nil || !strings.Contains(d.Ignored, tt.want) || d.ID == "" {
				t.Fatalf("delivery = %+v, want ignored with %q", d, tt.want)
			}
		})
	}
}

func TestReadWebhookRefused(t *testing.T) {
	t.Parallel()
	body := golden(t, "github-push.json")
	giteaBody := golden(t, "gitea-push.json")
	gitlabBody := golden(t, "gitlab-push.json")
	tampered := bytes.Replace(body, []byte(`"acme/api"`), []byte(`"evil/api"`), 1)
	tests := []struct {
		name   string
		header http.Header
		body   []byte
		secret []byte
		want   error
	}{
		{"github wrong secret", headers("github", "push", []byte("wrong"), body), body, testSecret, ErrSignature},
		{"github tampered body", headers("github", "push", testSecret, body), tampered, testSecret, ErrSignature},
		{"github missing signature", without(headers("github", "push", testSecret, body), "X-Hub-Signature-256"), body, testSecret, ErrSignature},
		{"github sha1 only", withSet(without(headers("github", "push", testSecret, body), "X-Hub-Signature-256"), "X-Hub-Signature", "sha1=00"), body, testSecret, ErrSignature},
		{"github signature without prefix", withSet(headers("github", "push", testSecret, body), "X-Hub-Signature-256", sign(testSecret, body)), body, testSecret, ErrSignature},
		{"github signature not hex", withSet(headers("github", "push", testSecret, body), "X-Hub-Signature-256", "sha256=zz"), body, testSecret, ErrSignature},
		{"github missing delivery", without(headers("github", "push", testSecret, body), "X-GitHub-Delivery"), body, testSecret, ErrMissingHeader},
		{"gitlab wrong token", headers("gitlab", "Push Hook", []byte("wrong"), gitlabBody), gitlabBody, testSecret, ErrSignature},
		{"gitlab token prefix of secret", headers("gitlab", "Push Hook", testSecret[:5], gitlabBody), gitlabBody, testSecret, ErrSignature},
		{"gitlab missing token", without(headers("gitlab", "Push Hook", testSecret, gitlabBody), "X-Gitlab-Token"), gitlabBody, testSecret, ErrSignature},
		{"gitlab missing uuid", without(headers("gitlab", "Push Hook", testSecret, gitlabBody), "X-Gitlab-Event-UUID"), gitlabBody, testSecret, ErrMissingHeader},
		// Gitea's GitHub-style signature is right, its own is wrong: the
		// Gitea header is the one checked.
		{"gitea wrong signature", withSet(headers("gitea", "push", testSecret, giteaBody), "X-Gitea-Signature", sign([]byte("wrong"), giteaBody)), giteaBody, testSecret, ErrSignature},
		{"gitea missing signature", without(headers("gitea", "push", testSecret, giteaBody), "X-Gitea-Signature"), giteaBody, testSecret, ErrSignature},
		{"gitea tampered body", headers("gitea", "push", testSecret, giteaBody), append(append([]byte{}, giteaBody...), ' '), testSecret, ErrSignature},
		{"forgejo wrong signature", withSet(headers("forgejo", "push", testSecret, giteaBody), "X-Forgejo-Signature", sign([]byte("wrong"), giteaBody)), giteaBody, testSecret, ErrSignature},
		{"no event header", http.Header{"X-Hub-Signature-256": {"sha256=" + sign(testSecret, body)}}, body, testSecret, ErrUnknownForge},
		{"no secret configured", headers("github", "push", nil, body), body, nil, ErrNoSecret},
		{"signed garbage", headers("github", "push", testSecret, []byte("{not json")), []byte("{not json"), testSecret, ErrPayload},
		{"signed payload without repository", headers("github", "push", testSecret, []byte(`{"ref":"refs/heads/main"}`)), []byte(`{"ref":"refs/heads/main"}`), testSecret, ErrPayload},
		{"signed payload with odd ref", headers("github", "push", testSecret, []byte(`{"ref":"refs/notes/x","repository":{"full_name":"a/b"}}`)), []byte(`{"ref":"refs/notes/x","repository":{"full_name":"a/b"}}`), testSecret, ErrPayload},
		{"form-encoded payload", headers("github", "push", testSecret, []byte("payload=%7B%7D")), []byte("payload=%7B%7D"), testSecret, ErrPayload},
		{"signed payload with trailing data", headers("github", "push", testSecret, []byte(`{} {}`)), []byte(`{} {}`), testSecret, ErrPayload},
		{"signed push without after", headers("github", "push", testSecret, noAfter), noAfter, testSecret, ErrPayload},
		{"signed push with a short before", headers("github", "push", testSecret, shortBefore), shortBefore, testSecret, ErrPayload},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := ReadWebhook(tt.header, bytes.NewReader(tt.body), tt.secret)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v (delivery %+v), want %v", err, d, tt.want)
			}
			// Only a verified delivery's sender is told what is wrong
			// with its payload.
			if wantUnverified := !errors.Is(tt.want, ErrPayload) || strings.Contains(tt.name, "delivery id"); errors.Is(err, ErrUnverified) != wantUnverified {
				t.Fatalf("err = %v: wraps ErrUnverified %v, want %v", err, errors.Is(err, ErrUnverified), wantUnverified)
			}
		})
	}
}

var (
	noAfter     = []byte(`{"ref":"refs/heads/main","before":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","repository":{"full_name":"acme/api"}}`)
	shortBefore = []byte(`{"ref":"refs/heads/main","before":"4b825dc","after":"9c1f0e6b2a7d4e3f8a5b6c7d8e9f0a1b2c3d4e5f","repository":{"full_name":"acme/api"}}`)
)

// TestReadWebhookBodyCap checks the cap on a body: a body over it is
// refused as unverified when only the body could have verified it, and
// as just too large once a GitLab token verified it; a body the server
// already cut off (http.MaxBytesReader) is refused the same way.
func TestReadWebhookBodyCap(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte(" "), MaxWebhookBytes+1)
	tests := []struct {
		name           string
		forge, event   string
		body           io.Reader
		wantUnverified bool
	}{
		{"github", "github", "push", bytes.NewReader(big), true},
		{"gitlab", "gitlab", "Push Hook", bytes.NewReader(big), false},
		{"cut off by the server", "github", "push", http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(big)), MaxWebhookBytes), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadWebhook(headers(tt.forge, tt.event, testSecret, big), tt.body, testSecret)
			if !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrUnverified) != tt.wantUnverified {
				t.Fatalf("err = %v, want ErrTooLarge, unverified %v", err, tt.wantUnverified)
			}
		})
	}
}

// untouchable is a body that fails the test if it is read.
type untouchable struct{ t *testing.T }

func (u untouchable) Read([]byte) (int, error) {
	u.t.Error("the body was read although the headers already refused the delivery")
	return 0, io.EOF
}

// TestReadWebhookRefusedBeforeTheBody checks that what the headers alone
// refuse is refused without reading a byte of the body.
func TestReadWebhookRefusedBeforeTheBody(t *testing.T) {
	t.Parallel()
	body := golden(t, "github-push.json")
	gitlabBody := golden(t, "gitlab-push.json")
	tests := []struct {
		name   string
		header http.Header
		secret []byte
	}{
		{"no secret configured", headers("github", "push", testSecret, body), nil},
		{"no event header", http.Header{"X-Hub-Signature-256": {"sha256=" + sign(testSecret, body)}}, testSecret},
		{"gitlab wrong token", headers("gitlab", "Push Hook", []byte("wrong"), gitlabBody), testSecret},
		{"github missing signature", without(headers("github", "push", testSecret, body), "X-Hub-Signature-256"), testSecret},
		{"github signature not hex", withSet(headers("github", "push", testSecret, body), "X-Hub-Signature-256", "sha256=zz"), testSecret},
		{"github signature too short", withSet(headers("github", "push", testSecret, body), "X-Hub-Signature-256", "sha256=0bad"), testSecret},
		{"gitea missing signature", without(headers("gitea", "push", testSecret, body), "X-Gitea-Signature"), testSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := ReadWebhook(tt.header, untouchable{t}, tt.secret); !errors.Is(err, ErrUnverified) {
				t.Fatalf("err = %v, want ErrUnverified", err)
			}
		})
	}
}

// TestReadCappedGrowsWithTheBody checks that the buffer grows with the
// bytes that arrive, not with what a sender announces, and never holds
// more than the cap and a byte.
func TestReadCappedGrowsWithTheBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		size    int
		wantErr error
	}{
		{"empty", 0, nil},
		{"small", 100, nil},
		{"at the first buffer", 32 << 10, nil},
		{"past the first buffer", 32<<10 + 1, nil},
		{"at the cap", 1 << 20, nil},
		{"over the cap", 1<<20 + 1, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := bytes.Repeat([]byte("x"), tt.size)
			got, err := readCapped(bytes.NewReader(in), 1<<20)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if !bytes.Equal(got, in) {
				t.Fatalf("read %d bytes, want the %d sent", len(got), len(in))
			}
			if limit := max(2*len(in), 32<<10) + 1; cap(got) > limit {
				t.Fatalf("a %d-byte body left a buffer of %d bytes, more than %d", len(in), cap(got), limit)
			}
		})
	}
}

func without(h http.Header, key string) http.Header {
	h.Del(key)
	return h
}

func withSet(h http.Header, key, value string) http.Header {
	h.Set(key, value)
	return h
}

func FuzzReadWebhook(f *testing.F) {
	for _, name := range []string{"github-push.json", "gitlab-push.json", "gitea-push.json", "github-delete.json"} {
		f.Add(golden(f, name))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, forge := range []string{"github", "gitlab", "gitea"} {
			event := "push"
			if forge == "gitlab" {
				event = "Push Hook"
			}
			d, err := ReadWebhook(headers(forge, event, testSecret, body), bytes.NewReader(body), testSecret)
			if err != nil {
				if errors.Is(err, ErrSignature) {
					t.Fatalf("%s: correctly signed body refused: %v", forge, err)
				}
				continue
			}
			if (d.Push == nil) == (d.Ignored == "") {
				t.Fatalf("%s: delivery must have exactly one of push and ignored: %+v", forge, d)
			}
			if d.Push != nil && (!ValidRepo(d.Push.Repo) || !validBranch(d.Push.Branch)) {
				t.Fatalf("%s: accepted push with repo %q branch %q", forge, d.Push.Repo, d.Push.Branch)
			}
		}
	})
}
