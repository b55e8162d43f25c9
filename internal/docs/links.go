package docs

import (
	"net/url"
	"path"
	"slices"
	"strings"
)

// maxRedirectHops bounds chains of redirects followed by ResolveLink.
const maxRedirectHops = 5

// redirect is one entry of the config's "redirects".
type redirect struct{ source, destination string }

func parseRedirects(cfg map[string]any) []redirect {
	arr, _ := cfg["redirects"].([]any)
	var out []redirect
	for _, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		src, dst := stringOf(m["source"]), stringOf(m["destination"])
		if src != "" && dst != "" {
			out = append(out, redirect{source: src, destination: dst})
		}
	}
	return out
}

// linkKind says what an internal link resolved to.
type linkKind int

const (
	linkBroken linkKind = iota
	linkPage            // a page file; path is its navigation path
	linkFile            // a static file; path is the file
	linkRoot            // the site root
	linkExternal
)

// linkResult is a link resolved against the site.
type linkResult struct {
	kind linkKind
	// path is the navigation path of a page, the file of a static file, or
	// the external URL.
	path string
	// cand is the path from the docs root the link names, before looking
	// for files ("guides/x" for "../x" from "guides/a/b").
	cand     string
	fragment string
}

// ResolveLink resolves a link target found in the page fromPage (a
// navigation path such as "guides/setup", or its file "guides/setup.mdx").
//
// External targets ("https://…", "mailto:…", "//host/…", any URL with a
// scheme) come back unchanged with internal=false and ok=true. Internal
// targets are root-relative ("/guides/x") or relative to the page's
// directory ("x", "./x", "../x"), as Mintlify resolves them; a query is
// dropped and a fragment kept. path is then the navigation path of the page
// ("guides/x", or "guides/x/index" for a directory's index page) followed by
// "#fragment" when there was one, or the file for a static file
// ("images/a.png"). A target that matches one of the config's redirects
// resolves to where the redirect leads. ok is false when an internal target
// names neither a page nor a file under the docs root.
func (s *Site) ResolveLink(fromPage, target string) (p string, internal bool, ok bool) {
	r := s.resolveLink(fromPage, target)
	switch r.kind {
	case linkExternal:
		return r.path, false, true
	case linkBroken:
		return r.cand, true, false
	}
	p = r.path
	if r.fragment != "" {
		p += "#" + r.fragment
	}
	return p, true, true
}

func (s *Site) resolveLink(fromPage, target string) linkResult {
	return s.resolveLinkHops(fromPage, target, 0)
}

func (s *Site) resolveLinkHops(fromPage, target string, hops int) linkResult {
	t := strings.TrimSpace(target)
	if isExternal(t) {
		return linkResult{kind: linkExternal, path: t}
	}
	rest, frag, _ := strings.Cut(t, "#")
	rest, _, _ = strings.Cut(rest, "?")
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if p, err := url.PathUnescape(rest); err == nil {
		rest = p
	}
	from, _, _ := normalizeNavPath(fromPage)
	if rest == "" {
		if t == "" {
			return linkResult{kind: linkBroken}
		}
		// "#anchor" (or "?q"): the page itself.
		return linkResult{kind: linkPage, path: from, cand: from, fragment: frag}
	}
	joined := rest
	if !strings.HasPrefix(rest, "/") {
		joined = path.Join(path.Dir(from), rest)
		if c := path.Clean(joined); c == ".." || strings.HasPrefix(c, "../") {
			return linkResult{kind: linkBroken, cand: joined}
		}
	}
	cand, ok := cleanRootPath(joined)
	if !ok {
		if path.Clean("/"+joined) != "/" {
			return linkResult{kind: linkBroken, cand: joined}
		}
		if _, found := s.pageFile("index", ""); found {
			return linkResult{kind: linkPage, path: "index", fragment: frag}
		}
		return linkResult{kind: linkRoot, fragment: frag}
	}
	res := linkResult{cand: cand, fragment: frag}
	// A page: "x" is x.mdx or x.md; "x.mdx" too; a directory "x" is served
	// by x/index.mdx.
	np, ext, _ := normalizeNavPath(cand)
	if _, found := s.pageFile(np, ext); found {
		res.kind, res.path = linkPage, np
		return res
	}
	if _, found := s.pageFile(path.Join(np, "index"), ""); found {
		res.kind, res.path = linkPage, path.Join(np, "index")
		return res
	}
	if s.isFile(cand) {
		res.kind, res.path = linkFile, cand
		return res
	}
	if hops < maxRedirectHops {
		for _, rd := range s.redirects {
			dst, ok := matchRedirect(rd.source, rd.destination, cand)
			if !ok {
				continue
			}
			if frag != "" && !strings.Contains(dst, "#") {
				dst += "#" + frag
			}
			next := s.resolveLinkHops("", dst, hops+1)
			if next.kind == linkBroken {
				next.cand = cand
			}
			return next
		}
	}
	res.kind = linkBroken
	return res
}

// isExternal reports whether a link target leaves the site: it has a URL
// scheme ("https:", "mailto:", "tel:") or starts with "//".
func isExternal(t string) bool {
	if strings.HasPrefix(t, "//") {
		return true
	}
	i := strings.IndexByte(t, ':')
	if i <= 0 {
		return false
	}
	for j, c := range t[:i] {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// matchRedirect matches a link path (no leading slash) against a redirect
// source such as "/old/:slug" or "/old/:slug*" and returns the destination
// with the parameters filled in.
func matchRedirect(source, destination, p string) (string, bool) {
	src := splitPath(source)
	segs := splitPath(p)
	params := map[string]string{}
	i := 0
	for ; i < len(src); i++ {
		s := src[i]
		if i == len(src)-1 && (s == "*" || strings.HasPrefix(s, ":") && strings.HasSuffix(s, "*")) {
			// ":name*" matches zero or more segments, a bare "*" one or
			// more (so "/a/*" does not catch "/a" itself).
			if s == "*" && i >= len(segs) {
				return "", false
			}
			params[strings.TrimSuffix(strings.TrimPrefix(s, ":"), "*")] = strings.Join(segs[min(i, len(segs)):], "/")
			i = len(segs)
			break
		}
		if i >= len(segs) {
			return "", false
		}
		if strings.HasPrefix(s, ":") {
			params[s[1:]] = segs[i]
			continue
		}
		if s != segs[i] {
			return "", false
		}
	}
	if i != len(segs) {
		return "", false
	}
	keys := sortedKeys(params)
	// Longest names first, so ":slug" does not eat into ":slugs".
	slices.SortStableFunc(keys, func(a, b string) int { return len(b) - len(a) })
	dst := destination
	for _, k := range keys {
		if k == "" {
			continue
		}
		dst = strings.ReplaceAll(dst, ":"+k+"*", params[k])
		dst = strings.ReplaceAll(dst, ":"+k, params[k])
	}
	if v, ok := params[""]; ok {
		dst = strings.ReplaceAll(dst, "*", v)
	}
	if !isExternal(dst) && !strings.HasPrefix(dst, "/") {
		dst = "/" + dst
	}
	return dst, true
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
