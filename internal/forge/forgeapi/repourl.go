package forgeapi

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// OwnerRepo returns the owner and the name of the repository a clone URL
// points at. It accepts https://host/owner/repo, ssh://git@host:port/owner/repo
// and git@host:owner/repo, each with or without .git. On GitLab the owner is
// the whole namespace: https://gitlab.example/group/sub/project gives
// ("group/sub", "project"), and owner + "/" + repo is the project path. A
// local path has no owner and is an error. Credentials in the URL never
// appear in the error.
func OwnerRepo(repoURL string) (owner, repo string, err error) {
	raw := strings.TrimSpace(repoURL)
	if raw == "" {
		return "", "", fmt.Errorf("repository URL is empty: give the clone URL, e.g. https://github.com/OWNER/REPO.git")
	}
	var path string
	switch {
	case strings.Contains(raw, "://"):
		u, perr := url.Parse(raw)
		if perr != nil {
			return "", "", fmt.Errorf("repository URL %s does not parse: give the clone URL, e.g. https://host/OWNER/REPO.git", DisplayURL(raw))
		}
		switch strings.ToLower(u.Scheme) {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		case "file":
			return "", "", fmt.Errorf("repository URL %s is a local path: only a forge URL names an owner and a repository", DisplayURL(raw))
		default:
			return "", "", fmt.Errorf("repository URL %s has scheme %q: use https://, ssh:// or git@host:OWNER/REPO", DisplayURL(raw), u.Scheme)
		}
		if u.Host == "" {
			return "", "", fmt.Errorf("repository URL %s has no host", DisplayURL(raw))
		}
		path = u.Path
	case scpLike(raw):
		_, path, _ = strings.Cut(raw, ":")
	default:
		return "", "", fmt.Errorf("repository URL %s is not a forge URL: use https://host/OWNER/REPO.git or git@host:OWNER/REPO.git", DisplayURL(raw))
	}

	// A GitLab web address (…/project/-/tree/main) names the project before "/-/".
	if i := strings.Index(path, "/-/"); i >= 0 {
		path = path[:i]
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	path = strings.TrimSuffix(path, "/")
	segs := strings.Split(path, "/")
	if len(segs) < 2 {
		return "", "", fmt.Errorf("repository URL %s does not name OWNER/REPO", DisplayURL(raw))
	}
	for _, s := range segs {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "?#\\ \t\n") {
			return "", "", fmt.Errorf("repository URL %s has an invalid path segment %q", DisplayURL(raw), s)
		}
	}
	return strings.Join(segs[:len(segs)-1], "/"), segs[len(segs)-1], nil
}

// scpLike reports whether s is git's scp-like form, [user@]host:path: a colon
// before any slash, after a host longer than one letter (C:\ is a drive).
func scpLike(s string) bool {
	colon := strings.IndexByte(s, ':')
	slash := strings.IndexByte(s, '/')
	if colon < 0 || (slash >= 0 && slash < colon) {
		return false
	}
	host := s[:colon]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	return len(host) > 1 && !strings.ContainsAny(host, "\\ ")
}

var userinfoRE = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/]*@`)

// DisplayURL returns a repository or API URL fit for a message: quoted, and
// without any user name or password (a token is often put there).
func DisplayURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if strings.Contains(raw, "://") {
		if u, err := url.Parse(raw); err == nil {
			u.User = nil
			return fmt.Sprintf("%q", u.String())
		}
		return fmt.Sprintf("%q", userinfoRE.ReplaceAllString(raw, "$1"))
	}
	if scpLike(raw) {
		hostPart, path, _ := strings.Cut(raw, ":")
		if at := strings.LastIndexByte(hostPart, '@'); at >= 0 {
			hostPart = hostPart[at+1:]
		}
		return fmt.Sprintf("%q", hostPart+":"+path)
	}
	return fmt.Sprintf("%q", raw)
}

// ParseAPIBase checks an API base URL: absolute http or https, with a host,
// and no credentials, query or fragment. The result has no trailing slash.
func ParseAPIBase(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("API base URL %s is not an http(s) URL with a host, e.g. https://gitlab.example/api/v4", DisplayURL(raw))
	}
	if u.User != nil {
		return nil, fmt.Errorf("API base URL %s holds credentials: give the token on its own, never in the URL", DisplayURL(raw))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("API base URL %s has a query or fragment: give only scheme, host and path", DisplayURL(raw))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}
