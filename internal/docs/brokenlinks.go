package docs

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/docsmith/docsmith/internal/docs/mdx"
)

// BrokenLink is an internal link of a page that leads nowhere: to no page
// or file under the docs root, or to a heading the page it leads to does
// not have.
type BrokenLink struct {
	// File is the page file that holds the link, Line the line of the file.
	File string
	Line int
	// Target is the link as written (escapes decoded).
	Target string
	// Message is what Validate says about the link.
	Message string
	// Fix is the target to write instead when exactly one page, or one
	// heading, is what the link means; "" when there is no such fix.
	Fix string
	// Unfixed says why Fix is "": which pages or headings the link could
	// mean, or Message when nothing matches.
	Unfixed string
}

// BrokenLinks checks every internal link of every page under the docs root,
// as Validate checks the links of changed pages, and returns those that
// lead nowhere, in file and line order, with how many pages it read.
//
// For each broken link it looks for the one target the link means:
//   - a page whose path differs only in case, a .mdx or .md suffix, a
//     trailing slash or a final "/index";
//   - else a page elsewhere with the same file name (the page moved);
//   - for an #anchor the page does not have, a heading (or id) whose
//     anchor is the same once case and punctuation are ignored.
//
// A fix is offered only when exactly one page (and then one heading)
// matches and the fixed link resolves; otherwise Unfixed says why not.
// Files under snippets/ are never a fix: they are not pages of the site.
func BrokenLinks(fsys fs.FS) (broken []BrokenLink, pagesChecked int) {
	v := validator{fsys: fsys}
	v.loadSite()
	files := v.pageFiles()
	var pages []string // navigation paths a fixed link may lead to
	for _, f := range files {
		if !strings.HasPrefix(f, "snippets/") {
			np, _, _ := normalizeNavPath(f)
			pages = append(pages, np)
		}
	}
	for _, name := range files {
		src, err := ReadFile(fsys, name, MaxFileBytes)
		if err != nil {
			continue // Validate reports unreadable pages; they link nowhere
		}
		_, body, bodyLine, _ := ParseFrontMatter(src)
		if body == nil {
			continue
		}
		pagesChecked++
		from, _, _ := normalizeNavPath(name)
		for _, l := range mdx.Links(body) {
			r, msg := v.site.linkProblem(from, l.Target)
			if msg == "" {
				continue
			}
			bl := BrokenLink{File: name, Line: fileLine(bodyLine, l.Line), Target: l.Target, Message: msg}
			bl.Fix, bl.Unfixed = v.site.linkFix(from, l.Target, r, pages)
			if bl.Fix == "" && bl.Unfixed == "" {
				bl.Unfixed = msg
			}
			broken = append(broken, bl)
		}
	}
	return broken, pagesChecked
}

// linkFix finds the fix of a broken link resolved as r, or says why there
// is none ("" when nothing matches at all).
func (s *Site) linkFix(from, target string, r linkResult, pages []string) (fix, unfixed string) {
	if r.kind != linkBroken {
		// The page is there; its #anchor is not.
		return s.anchorFix(from, target, r.path, r.fragment)
	}
	if r.cand == "" || r.cand == ".." || strings.HasPrefix(r.cand, "../") {
		return "", ""
	}
	np, _, _ := normalizeNavPath(r.cand)
	found := s.matchPage(np, pages)
	switch len(found) {
	case 0:
		return "", ""
	case 1:
	default:
		urls := make([]string, len(found))
		for i, p := range found {
			urls[i] = withPath("", p)
		}
		return "", fmt.Sprintf("link %q could mean %s", target, orList(urls))
	}
	fixed := withPath(target, found[0])
	if s.resolves(from, fixed) {
		return fixed, ""
	}
	// The page is found; the link's #anchor must lead somewhere on it too.
	fr := s.resolveLink(from, fixed)
	if fr.kind != linkPage || fr.path != found[0] || fr.fragment == "" {
		return "", ""
	}
	if fix, _ := s.anchorFix(from, fixed, found[0], fr.fragment); fix != "" {
		return fix, ""
	}
	return "", fmt.Sprintf("link %q seems to mean %s, but #%s matches no single heading there", target, withPath("", found[0]), fr.fragment)
}

// anchorFix finds the fix of a link to page whose #fragment the page does
// not have, or says which headings it could mean.
func (s *Site) anchorFix(from, target, page, fragment string) (fix, unfixed string) {
	anchors := s.matchAnchor(page, fragment)
	switch len(anchors) {
	case 0:
		return "", ""
	case 1:
		if fixed := withFragment(target, anchors[0]); s.resolves(from, fixed) {
			return fixed, ""
		}
		return "", ""
	}
	for i, a := range anchors {
		anchors[i] = "#" + a
	}
	return "", fmt.Sprintf("link %q could mean %s", target, orList(anchors))
}

// resolves reports whether a link target of page from leads to a page (and
// heading), by the same check as Validate's: a fix that would still be
// broken is no fix.
func (s *Site) resolves(from, target string) bool {
	r, msg := s.linkProblem(from, target)
	return msg == "" && r.kind == linkPage
}

// matchPage returns the pages a broken link to navigation path np may
// mean: those whose path is the same up to case and a final "/index", or
// failing that, those with the same file name elsewhere. A link to a
// directory of the docs is not matched by name: its page did not move,
// the directory lacks an index.
func (s *Site) matchPage(np string, pages []string) []string {
	key := pageKey(np)
	var found []string
	for _, p := range pages {
		if pageKey(p) == key {
			found = append(found, p)
		}
	}
	if len(found) > 0 || key == "" {
		return found
	}
	if fi, err := StatNoLinks(s.fsys, np); err == nil && fi.IsDir() {
		return nil
	}
	name := path.Base(key)
	for _, p := range pages {
		if k := pageKey(p); k != "" && path.Base(k) == name {
			found = append(found, p)
		}
	}
	return found
}

// pageKey is a navigation path compared without case or a .mdx or .md
// suffix, with a directory's index page the same as the directory ("" for
// the site's index).
func pageKey(np string) string {
	k := strings.ToLower(np)
	for _, ext := range []string{".mdx", ".md"} {
		k = strings.TrimSuffix(k, ext)
	}
	if k == "index" {
		return ""
	}
	return strings.TrimSuffix(k, "/index")
}

// matchAnchor returns the anchors of a page that fragment may mean: one
// per heading (or id) that has an anchor equal to it once case and
// punctuation are ignored, the anchor Mintlify generates for it.
func (s *Site) matchAnchor(navPath, fragment string) []string {
	key := anchorKey(fragment)
	a := s.anchors(navPath)
	if key == "" || a == nil {
		return nil
	}
	var out []string
	for _, t := range a.targets {
		for _, x := range t {
			if anchorKey(x) == key {
				if !slices.Contains(out, t[0]) {
					out = append(out, t[0])
				}
				break
			}
		}
	}
	return out
}

// anchorKey keeps the letters and digits of an anchor, in lower case.
func anchorKey(anchor string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(anchor) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// withPath is target leading to page p instead, from the site root, with
// target's query and fragment kept as written.
func withPath(target, p string) string {
	rest, frag, hasFrag := strings.Cut(strings.TrimSpace(target), "#")
	_, query, hasQuery := strings.Cut(rest, "?")
	switch {
	case p == "index":
		p = ""
	case strings.HasSuffix(p, "/index"):
		p = strings.TrimSuffix(p, "/index")
	}
	out := (&url.URL{Path: "/" + p}).EscapedPath()
	if hasQuery {
		out += "?" + query
	}
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// withFragment is target with its #fragment replaced by anchor.
func withFragment(target, anchor string) string {
	rest, _, _ := strings.Cut(strings.TrimSpace(target), "#")
	return rest + "#" + anchor
}

// orList writes "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) == 1 {
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
