package gitcli

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxRefLen bounds a branch name. Git has no limit of its own, but file
// systems do (a ref is a file), and forges cap it at about this.
const maxRefLen = 255

// ValidateRef reports whether name is a branch name we are willing to pass
// to git: the rules of git check-ref-format for refs/heads/<name>, plus no
// leading '-' so that it can never be read as an option.
func ValidateRef(name string) error {
	why := refProblem(name)
	if why == "" {
		return nil
	}
	return invalid("ref", name, why)
}

// ValidateFetchRef reports whether name is a ref a mirror may read: a
// branch name (see ValidateRef), or one of the full refs forges keep a
// pull request's head under: refs/heads/BRANCH, refs/pull/N/head (GitHub,
// Gitea, Forgejo) and refs/merge-requests/N/head (GitLab). Any other name
// starting with "refs/" is refused.
func ValidateFetchRef(name string) error {
	if !strings.HasPrefix(name, "refs/") {
		return ValidateRef(name)
	}
	if branch, ok := strings.CutPrefix(name, "refs/heads/"); ok {
		if err := ValidateRef(branch); err != nil {
			return invalid("ref", name, "names a branch that "+refProblem(branch))
		}
		return nil
	}
	for _, prefix := range []string{"refs/pull/", "refs/merge-requests/"} {
		if number, ok := strings.CutPrefix(name, prefix); ok {
			number, ok = strings.CutSuffix(number, "/head")
			if ok && pullNumber(number) {
				return nil
			}
			return invalid("ref", name, "must be "+prefix+"NUMBER/head")
		}
	}
	return invalid("ref", name, "is not a branch, refs/heads/BRANCH, refs/pull/N/head or refs/merge-requests/N/head")
}

// pullNumber reports whether s is a pull request's number: 1 to 9 digits,
// no leading zero.
func pullNumber(s string) bool {
	if s == "" || len(s) > 9 || s[0] == '0' {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// fetchedRef is the ref a mirror keeps a validated name under: a branch
// under refs/heads/, a full ref under its own name.
func fetchedRef(name string) string {
	if strings.HasPrefix(name, "refs/") {
		return name
	}
	return "refs/heads/" + name
}

func refProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > maxRefLen:
		return fmt.Sprintf("is longer than %d bytes", maxRefLen)
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case strings.HasPrefix(name, "-"):
		return "starts with '-'"
	case name == "@" || name == "HEAD":
		return "is reserved"
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return "starts or ends with '/'"
	case strings.HasSuffix(name, "."):
		return "ends with '.'"
	case strings.Contains(name, "//"):
		return "contains '//'"
	case strings.Contains(name, ".."):
		return "contains '..'"
	case strings.Contains(name, "@{"):
		return "contains '@{'"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "contains a control character"
		}
		if strings.ContainsRune(" ~^:?*[\\", r) {
			return fmt.Sprintf("contains %q", r)
		}
	}
	for part := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(part, ".") {
			return "has a component that starts with '.'"
		}
		if strings.HasSuffix(part, ".lock") {
			return "has a component that ends with '.lock'"
		}
	}
	return ""
}

// validateRevision checks a revision given by a caller (a SHA, a branch, a
// remote-tracking ref, HEAD~1): no leading '-', no ranges, no whitespace.
func validateRevision(rev string) error {
	switch {
	case rev == "":
		return invalid("revision", rev, "is empty")
	case len(rev) > maxRefLen:
		return invalid("revision", rev, "is too long")
	case strings.HasPrefix(rev, "-"):
		return invalid("revision", rev, "starts with '-'")
	case strings.Contains(rev, ".."):
		return invalid("revision", rev, "is a range")
	}
	for _, r := range rev {
		if r <= 0x20 || r == 0x7f {
			return invalid("revision", rev, "contains a space or control character")
		}
	}
	return nil
}

// remoteKind is the transport a remote uses; it decides which protocol git
// may use and whether credentials can be offered.
type remoteKind int

const (
	remoteLocal remoteKind = iota + 1 // a path or file:// URL
	remoteHTTP
	remoteHTTPS
)

// remote is a validated remote repository location.
type remote struct {
	url  string // what git is given
	kind remoteKind
	host string // host[:port] of an HTTP(S) remote; credentials go only there
}

// parseRemote accepts a local path, a file:// URL, an https:// URL, and an
// http:// URL if allowHTTP. It refuses everything else (ssh, scp-like
// host:path, ext::, git://), anything starting with '-', and URLs with
// credentials in them: those belong in Credentials, not in argv or
// .git/config.
func parseRemote(s string, allowHTTP bool) (remote, error) {
	if s == "" {
		return remote{}, invalid("remote", s, "is empty")
	}
	if strings.HasPrefix(s, "-") {
		return remote{}, invalid("remote", s, "starts with '-'")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return remote{}, invalid("remote", s, "contains a control character")
		}
	}
	if scheme, _, ok := strings.Cut(s, "://"); ok {
		u, err := url.Parse(s)
		if err != nil {
			return remote{}, invalid("remote", s, "is not a valid URL")
		}
		if u.User != nil {
			return remote{}, invalid("remote", s, "has credentials in it; pass them as Credentials")
		}
		switch strings.ToLower(scheme) {
		case "file":
			if u.Host != "" || u.Path == "" {
				return remote{}, invalid("remote", s, "is not a file:///absolute/path URL")
			}
			return remote{url: s, kind: remoteLocal}, nil
		case "https":
			if u.Host == "" {
				return remote{}, invalid("remote", s, "has no host")
			}
			return remote{url: s, kind: remoteHTTPS, host: u.Host}, nil
		case "http":
			if !allowHTTP {
				return remote{}, invalid("remote", s, "uses plain http, which is off")
			}
			if u.Host == "" {
				return remote{}, invalid("remote", s, "has no host")
			}
			return remote{url: s, kind: remoteHTTP, host: u.Host}, nil
		default:
			return remote{}, invalid("remote", s, "uses an unsupported protocol")
		}
	}
	// Not a URL: git reads "host:path" and "transport::address" as remote
	// transports, so a colon before the first slash is refused.
	if i := strings.IndexByte(s, ':'); i >= 0 && !strings.Contains(s[:i], "/") {
		return remote{}, invalid("remote", s, "looks like host:path or transport::address")
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return remote{}, fmt.Errorf("resolve remote path: %w", err)
	}
	return remote{url: abs, kind: remoteLocal}, nil
}

// RemotePolicy decides which repository locations docsmith accepts. It is
// the one check of a location: projects are checked with it when they are
// stored, and every clone, fetch and mirror checks again, so a location
// stored before the operator narrowed the policy is refused when used.
type RemotePolicy struct {
	// AllowHTTP accepts plain http:// URLs (git_allow_http).
	AllowHTTP bool
	// Hosts, when not empty, are the only hosts an http(s) URL may name
	// (repo_hosts): "host" matches on any port, "host:port" on that port
	// only. Local paths are the operator's own and are not restricted.
	Hosts []string
}

// CheckRemote reports whether the policy accepts location as a repository:
// nil, or an error wrapping ErrInvalidArgument that says what is wrong and
// which forms are accepted. Use it for every repository location that comes
// from outside (a project's repository, a context repository).
func (p RemotePolicy) CheckRemote(location string) error {
	_, err := p.parse(location)
	return err
}

// parse is CheckRemote that also returns the parsed remote.
func (p RemotePolicy) parse(location string) (remote, error) {
	rem, err := parseRemote(location, p.AllowHTTP)
	if err != nil {
		return remote{}, fmt.Errorf("%w; %s", err, p.accepted())
	}
	if rem.kind != remoteLocal && !p.hostAllowed(rem.host) {
		return remote{}, fmt.Errorf("%w; %s", invalid("remote", location, "is on a host the operator did not allow"), p.accepted())
	}
	return rem, nil
}

// hostAllowed reports whether host (host[:port] of a URL) is on the list.
func (p RemotePolicy) hostAllowed(host string) bool {
	if len(p.Hosts) == 0 {
		return true
	}
	host = strings.ToLower(host)
	name := host
	if u, err := url.Parse("//" + host); err == nil {
		name = strings.ToLower(u.Hostname())
	}
	for _, h := range p.Hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && (h == host || h == name) {
			return true
		}
	}
	return false
}

// accepted says which repository locations the policy accepts, for errors
// that must say what to give instead.
func (p RemotePolicy) accepted() string {
	forms := "accepted: https://host/owner/repo.git, a local path or file:///path (http:// only with git_allow_http)"
	if p.AllowHTTP {
		forms = "accepted: https:// or http://host/owner/repo.git, a local path or file:///path"
	}
	if len(p.Hosts) > 0 {
		forms += ", URLs only on " + strings.Join(p.Hosts, ", ") + " (repo_hosts)"
	}
	return forms
}

// validateIdent checks a name or email for a commit identity: git would
// otherwise strip or refuse these characters, or worse, let them forge a
// header line.
func validateIdent(what, v string) error {
	if strings.TrimSpace(v) == "" {
		return invalid(what, v, "is empty")
	}
	if strings.ContainsAny(v, "<>\n\r\x00") {
		return invalid(what, v, "contains '<', '>' or a line break")
	}
	return nil
}

// validateTrailer checks "Token: value" on one line, the token made of
// letters, digits and '-', not starting with '-'.
func validateTrailer(t string) error {
	token, value, ok := strings.Cut(t, ": ")
	if !ok || token == "" || strings.TrimSpace(value) == "" {
		return invalid("trailer", t, "is not \"Token: value\"")
	}
	if strings.HasPrefix(token, "-") {
		return invalid("trailer", t, "starts with '-'")
	}
	for _, r := range token {
		if r > 0x7f || !isTokenByte(byte(r)) || r == '_' {
			return invalid("trailer", t, "has a token that is not letters, digits and '-'")
		}
	}
	if strings.ContainsAny(value, "\n\r\x00") {
		return invalid("trailer", t, "contains a line break")
	}
	return nil
}

// Redact removes credentials from text that came from git or mentions a
// remote: the userinfo of every URL (scheme://user:pass@host becomes
// scheme://***@host), well-known token shapes (ghp_…, github_pat_…,
// glpat-…), and each of the given secrets wherever it appears.
func Redact(s string, secrets ...string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "***")
		}
	}
	return redactTokens(redactUserinfo(s))
}

// redactUserinfo replaces what sits between "://" and the last '@' of a
// URL's authority.
func redactUserinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i + len("://")
		end := start
		for end < len(s) && !strings.ContainsRune("/?#\\ \t\r\n'\"<>`", rune(s[end])) {
			end++
		}
		authority := s[start:end]
		b.WriteString(s[:start])
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			b.WriteString("***")
			b.WriteString(authority[at:])
		} else {
			b.WriteString(authority)
		}
		s = s[end:]
	}
}

// tokenPrefixes are the fixed prefixes of forge tokens: GitHub's classic and
// fine-grained tokens and GitLab's personal access tokens.
func tokenPrefixes() []string {
	return []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"}
}

func redactTokens(s string) string {
	for _, p := range tokenPrefixes() {
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, p)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(p)
			for end < len(rest) && isTokenByte(rest[end]) {
				end++
			}
			b.WriteString(rest[:i])
			if end-i-len(p) >= 8 && (i == 0 || !isTokenByte(rest[i-1])) {
				b.WriteString(p)
				b.WriteString("***")
			} else {
				b.WriteString(rest[i:end])
			}
			rest = rest[end:]
		}
		s = b.String()
	}
	return s
}

func isTokenByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
