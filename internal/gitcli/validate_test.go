package gitcli

import (
	"errors"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidateRef(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ok   bool
		// stricter marks names git itself would accept as refs/heads/<name>
		// but we refuse on purpose.
		stricter bool
	}{
		{name: "main", ok: true},
		{name: "docsmith/1a2b3c4d-document-the-watch-flag", ok: true},
		{name: "feature/a.b_c-d", ok: true},
		{name: "release/v1.2.3", ok: true},
		{name: "ünïcode/branch", ok: true},
		{name: "a-", ok: true},
		{name: ""},
		{name: "-x", stricter: true},
		{name: "--upload-pack=evil", stricter: true},
		{name: "-", stricter: true},
		{name: "HEAD", stricter: true},
		{name: "@", stricter: true},
		{name: "a..b"},
		{name: "a b"},
		{name: "a~1"},
		{name: "a^"},
		{name: "a:b"},
		{name: "a?"},
		{name: "a*"},
		{name: "a[b"},
		{name: "a\\b"},
		{name: "a\x00b"},
		{name: "a\tb"},
		{name: "a\x7fb"},
		{name: "a@{1}"},
		{name: "/a"},
		{name: "a/"},
		{name: "a//b"},
		{name: "a."},
		{name: ".a"},
		{name: "a/.b"},
		{name: "a.lock"},
		{name: "a/b.lock/c"},
		{name: strings.Repeat("a", 256), stricter: true},
		{name: strings.Repeat("a", 255), ok: true},
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	for _, tt := range tests {
		t.Run(strings.ToValidUTF8(tt.name, "?"), func(t *testing.T) {
			t.Parallel()
			err := ValidateRef(tt.name)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateRef(%q) = %v, want ok %v", tt.name, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			if strings.ContainsRune(tt.name, 0) {
				return // cannot be passed in argv
			}
			// Our rules must never accept what git refuses.
			gitOK := exec.Command(gitPath, "check-ref-format", "refs/heads/"+tt.name).Run() == nil
			if tt.ok && !gitOK {
				t.Errorf("we accept %q but git check-ref-format does not", tt.name)
			}
			if !tt.ok && gitOK && !tt.stricter {
				t.Errorf("git accepts %q: mark it stricter if refusing it is deliberate", tt.name)
			}
		})
	}
}

func TestParseRemote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		allowHTTP bool
		kind      remoteKind // 0: refused
		host      string
	}{
		{in: "/srv/git/docs.git", kind: remoteLocal},
		{in: "relative/docs.git", kind: remoteLocal},
		{in: "./-dash", kind: remoteLocal},
		{in: "file:///srv/git/docs.git", kind: remoteLocal},
		{in: "https://github.com/acme/docs.git", kind: remoteHTTPS, host: "github.com"},
		{in: "HTTPS://example.com:8443/docs", kind: remoteHTTPS, host: "example.com:8443"},
		{in: "http://127.0.0.1:3000/acme/docs.git", allowHTTP: true, kind: remoteHTTP, host: "127.0.0.1:3000"},
		{in: "http://127.0.0.1:3000/acme/docs.git"},
		{in: ""},
		{in: "--foo"},
		{in: "-"},
		{in: "--upload-pack=touch /tmp/pwned"},
		{in: "ext::sh -c touch% /tmp/pwned"},
		{in: "fd::17"},
		{in: "git@github.com:acme/docs.git"},
		{in: "host:path"},
		{in: "ssh://git@github.com/acme/docs.git"},
		{in: "git://github.com/acme/docs.git"},
		{in: "https://x-access-token:ghp_secret@github.com/acme/docs.git"},
		{in: "https://user@github.com/acme/docs.git"},
		{in: "https:///nohost"},
		{in: "file://otherhost/srv/docs.git"},
		{in: "/srv/docs\n.git"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := parseRemote(tt.in, tt.allowHTTP)
			if tt.kind == 0 {
				if err == nil {
					t.Fatalf("parseRemote(%q) = %+v, want an error", tt.in, got)
				}
				if !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
				}
				if strings.Contains(err.Error(), "ghp_secret") {
					t.Fatalf("error %q shows the credentials", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRemote(%q): %v", tt.in, err)
			}
			if got.kind != tt.kind || got.host != tt.host {
				t.Fatalf("parseRemote(%q) = %+v, want kind %d host %q", tt.in, got, tt.kind, tt.host)
			}
			if strings.HasPrefix(got.url, "-") {
				t.Fatalf("parseRemote(%q) gave url %q", tt.in, got.url)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		secrets []string
		want    string
	}{
		{name: "userinfo", in: "fatal: unable to access 'https://x-access-token:s3cret@github.com/a/b.git/': 403",
			want: "fatal: unable to access 'https://***@github.com/a/b.git/': 403"},
		{name: "user only", in: "https://bob@host/x", want: "https://***@host/x"},
		{name: "two URLs", in: "http://a:b@h1/ and https://c:d@h2:80/p", want: "http://***@h1/ and https://***@h2:80/p"},
		{name: "no userinfo", in: "https://github.com/a@b", want: "https://github.com/a@b"},
		{name: "email is kept", in: "author bob@example.com", want: "author bob@example.com"},
		{name: "github token", in: "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 bad", want: "token ghp_*** bad"},
		{name: "fine-grained token", in: "github_pat_11ABCDEFG0123456789_abcdefXYZ", want: "github_pat_***"},
		{name: "gitlab token", in: "x glpat-aB3dE5fG7hJ9kL1mN3pQ", want: "x glpat-***"},
		{name: "short prefix-like word", in: "ghp_x and sghp_abcdefghijkl", want: "ghp_x and sghp_abcdefghijkl"},
		{name: "explicit secret", in: "password=hunter2!! and hunter2!!", secrets: []string{"hunter2!!"},
			want: "password=*** and ***"},
		{name: "empty secret ignored", in: "plain", secrets: []string{""}, want: "plain"},
		{name: "scheme at end", in: "see https://", want: "see https://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Redact(tt.in, tt.secrets...); got != tt.want {
				t.Fatalf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []Change
		wantErr bool
	}{
		{name: "empty", in: ""},
		{name: "kinds", in: "M  b.txt\x00R  c.txt\x00a.txt\x00A  n.txt\x00D  old.md\x00?? u.md\x00 M w.md\x00T  link\x00",
			want: []Change{
				{Path: "b.txt", Kind: Modified},
				{Path: "c.txt", OldPath: "a.txt", Kind: Renamed},
				{Path: "n.txt", Kind: Added},
				{Path: "old.md", Kind: Deleted},
				{Path: "u.md", Kind: Added},
				{Path: "w.md", Kind: Modified},
				{Path: "link", Kind: Modified},
			}},
		{name: "path with spaces and arrow", in: "A  a -> b.md\x00", want: []Change{{Path: "a -> b.md", Kind: Added}}},
		{name: "rename without source", in: "R  c.txt\x00", wantErr: true},
		{name: "unmerged", in: "UU x.md\x00", wantErr: true},
		{name: "garbage", in: "xyz\x00", wantErr: true},
		{name: "unknown code", in: "!! ignored\x00", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseStatus([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStatus: err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("parseStatus = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseNumstat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		in                    string
		files, added, removed int
		wantErr               bool
	}{
		{name: "empty", in: ""},
		{name: "plain", in: "1\t0\tREADME.md\x003\t0\tdocs/watch.mdx\x000\t2\tdocs/old.mdx\x00", files: 3, added: 4, removed: 2},
		{name: "rename", in: "0\t0\t\x00docs/a.mdx\x00docs/b.mdx\x002\t1\tx\x00", files: 2, added: 2, removed: 1},
		{name: "binary", in: "-\t-\tlogo.png\x00", files: 1},
		{name: "bad counts", in: "x\t1\tf\x00", wantErr: true},
		{name: "short rename", in: "0\t0\t\x00a\x00", wantErr: true},
		{name: "no tabs", in: "nonsense\x00", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files, added, removed, err := parseNumstat([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseNumstat: err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (files != tt.files || added != tt.added || removed != tt.removed) {
				t.Fatalf("parseNumstat = %d, %d, %d, want %d, %d, %d", files, added, removed, tt.files, tt.added, tt.removed)
			}
		})
	}
}

func TestParseLsTree(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []TreeFile
		wantErr bool
	}{
		{name: "empty", in: ""},
		{name: "files, link, submodule", in: "100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391      12\ta b.md\x00" +
			"120000 blob 0123456789012345678901234567890123456789       11\tlink\x00" +
			"160000 commit 1234567890123456789012345678901234567890       -\tvendor/sub\x00",
			want: []TreeFile{
				{Path: "a b.md", Mode: "100644", Size: 12, oid: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"},
				{Path: "link", Mode: "120000", Size: 11, oid: "0123456789012345678901234567890123456789"},
				{Path: "vendor/sub", Mode: "160000", Size: -1, oid: "1234567890123456789012345678901234567890"},
			}},
		{name: "tab in a path", in: "100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 1\ta\tb\x00",
			want: []TreeFile{{Path: "a\tb", Mode: "100644", Size: 1, oid: "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"}}},
		{name: "no tab", in: "100644 blob e69 1 a\x00", wantErr: true},
		{name: "bad size", in: "100644 blob e69 x\ta\x00", wantErr: true},
		{name: "negative size", in: "100644 blob e69 -5\ta\x00", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseLsTree([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{in: "git version 2.39.5", major: 2, minor: 39, ok: true},
		{in: "git version 2.45.1.windows.1", major: 2, minor: 45, ok: true},
		{in: "git version 2.32", major: 2, minor: 32, ok: true},
		{in: "hub version 2.14"},
		{in: "git version two"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			major, minor, ok := parseVersion(tt.in)
			if major != tt.major || minor != tt.minor || ok != tt.ok {
				t.Fatalf("parseVersion(%q) = %d, %d, %v", tt.in, major, minor, ok)
			}
		})
	}
}

func FuzzValidateRef(f *testing.F) {
	for _, s := range []string{"main", "docsmith/1a2b-x", "-x", "a..b", "a/.b", "a.lock", "@{", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateRef(s) != nil {
			return
		}
		if strings.HasPrefix(s, "-") || !utf8.ValidString(s) || strings.ContainsAny(s, " \x00\n~^:?*[\\") ||
			strings.Contains(s, "..") || s == "" {
			t.Fatalf("ValidateRef accepted %q", s)
		}
	})
}

func FuzzParseRemote(f *testing.F) {
	for _, s := range []string{"/srv/x.git", "https://h/x", "--foo", "ext::sh", "h:p", "https://u:p@h/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRemote(s, true)
		if err != nil {
			return
		}
		if strings.HasPrefix(r.url, "-") || strings.ContainsRune(r.url, 0) {
			t.Fatalf("parseRemote(%q) accepted url %q", s, r.url)
		}
		if u, err := url.Parse(r.url); r.kind != remoteLocal && (err != nil || u.User != nil) {
			t.Fatalf("parseRemote(%q) accepted url %q with userinfo", s, r.url)
		}
	})
}

func FuzzRedact(f *testing.F) {
	f.Add("fatal: https://u:%s@host/x", "tok3n")
	f.Add("%s%s", "ab")
	f.Fuzz(func(t *testing.T, text, secret string) {
		if secret == "" || strings.Contains(secret, "*") {
			return // "***" is what a secret becomes
		}
		out := Redact(text+secret+text, secret)
		if strings.Contains(out, secret) {
			t.Fatalf("Redact left %q in %q", secret, out)
		}
	})
}

func FuzzParseGitOutput(f *testing.F) {
	f.Add([]byte("R  c.txt\x00a.txt\x00?? u\x00"))
	f.Add([]byte("1\t2\tx\x000\t0\t\x00a\x00b\x00"))
	f.Add([]byte("100644 blob e69de29bb2d1d6434b8b29ae775ad8c2e48c5391       0\ta b\x00160000 commit 1234567890123456789012345678901234567890       -\tsub\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		_, _ = parseStatus(out)
		_, _, _, _ = parseNumstat(out)
		_, _ = parseLsTree(out)
	})
}
