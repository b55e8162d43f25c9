package docs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/docsmith/docsmith/internal/docs/mdx"
)

// Problem is something wrong with the docs that the agent can fix. Line is
// the 1-based line of File, or 0 when the problem is not on one line.
type Problem struct {
	File    string
	Line    int
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

// Validate is the check before the agent commits. changed lists the files
// the agent touched, as paths from the docs root (deleted files included).
//
// It returns what is wrong rather than an error, so the agent can fix it and
// run the check again:
//   - docs.json or mint.json (and the files its "$ref"s name) is valid JSON,
//     and every navigation entry names a page file (.mdx or .md) that exists;
//   - every changed page has front matter that parses as a YAML mapping, an
//     MDX body that passes mdx.Check, and an "openapi" operation that is in
//     its spec;
//   - internal links in changed pages lead to a page or to a file that
//     exists under the docs root;
//   - anchors ("#x") of internal links to pages name a heading of the target
//     page, when the link is in a changed page or its target changed; links
//     from other pages to a changed page that no longer exists are reported
//     too;
//   - changed .json and .yaml files (OpenAPI specs) parse.
//
// A changed .md file whose name is all capitals (README.md, AGENTS.md) and
// that the navigation does not name is not a page, and is not checked.
func Validate(fsys fs.FS, changed []string) []Problem {
	v := validator{fsys: fsys}
	v.loadSite()
	v.changed = map[string]bool{}
	var files []string
	for _, c := range changed {
		name, ok := cleanRootPath(c)
		if !ok {
			v.add(Problem{File: c, Message: "not a path under the docs root"})
			continue
		}
		if !v.changed[name] {
			v.changed[name] = true
			files = append(files, name)
		}
	}
	slices.Sort(files)
	targets := map[string]bool{} // navigation paths of changed pages
	for _, f := range files {
		if v.isPageFile(f) {
			np, _, _ := normalizeNavPath(f)
			targets[np] = true
		}
		v.checkFile(f)
	}
	v.checkInbound(targets)
	return v.result()
}

type validator struct {
	fsys     fs.FS
	site     *Site
	changed  map[string]bool
	problems []Problem
}

func (v *validator) add(p Problem) { v.problems = append(v.problems, p) }

// loadSite reads the config and reports its problems. When the config
// cannot be read, an empty site stands in so pages and links are still
// checked, and loadSite returns false.
func (v *validator) loadSite() bool {
	name, raw, err := readConfig(v.fsys)
	if err != nil {
		msg := "there is no docs.json or mint.json at the docs root; restore it"
		if !errors.Is(err, fs.ErrNotExist) {
			msg = "the navigation config cannot be read: " + err.Error()
		}
		v.add(Problem{File: DocsJSON, Message: msg})
		v.site = build(v.fsys, DocsJSON, nil, map[string]any{"navigation": map[string]any{}}, nil)
		return false
	}
	cfg, err := decodeConfig(name, raw)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			v.add(Problem{File: ce.File, Line: ce.Line, Message: ce.Message})
		} else {
			v.add(Problem{File: name, Message: err.Error()})
		}
		v.site = build(v.fsys, name, raw, map[string]any{"navigation": map[string]any{}}, nil)
		v.site.Config = nil
		return false
	}
	v.site = build(v.fsys, name, raw, cfg, nil)
	for _, p := range v.site.Problems {
		// Config problems always count; a page's own problems only when the
		// page changed (checkFile reports those).
		if _, isConfig := v.site.sources[p.File]; isConfig {
			v.add(p)
		}
	}
	return true
}

// isPageFile reports whether a file is a page to check.
func (v *validator) isPageFile(name string) bool {
	switch path.Ext(name) {
	case ".mdx":
		return true
	case ".md":
		np, _, _ := normalizeNavPath(name)
		if v.site.Pages[np] != nil && v.site.Pages[np].File == name {
			return true
		}
		base := strings.TrimSuffix(path.Base(name), ".md")
		return strings.IndexFunc(base, unicode.IsLower) >= 0
	}
	return false
}

func (v *validator) checkFile(name string) {
	if _, isConfig := v.site.sources[name]; isConfig {
		return // checked by loadSite
	}
	limit := int64(MaxFileBytes)
	switch strings.ToLower(path.Ext(name)) {
	case ".json", ".yaml", ".yml":
		limit = MaxSpecBytes
	}
	src, err := ReadFile(v.fsys, name, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return // deleted; checkInbound reports links to it
	}
	if err != nil {
		v.add(Problem{File: name, Message: fmt.Sprintf("cannot read the file: %v", err)})
		return
	}
	switch ext := strings.ToLower(path.Ext(name)); {
	case ext == ".json" || ext == ".yaml" || ext == ".yml":
		if p := validateSpecFile(name, src); p != nil {
			v.add(*p)
		}
	case v.isPageFile(name):
		v.checkPage(name, src)
	}
}

// checkPage checks a changed page: front matter, MDX, openapi, links.
func (v *validator) checkPage(name string, src []byte) {
	fm, body, bodyLine, err := ParseFrontMatter(src)
	if err != nil {
		v.add(pageErrProblem(name, err))
		if body == nil {
			return
		}
	}
	for _, mp := range mdx.Check(body) {
		v.add(Problem{File: name, Line: fileLine(bodyLine, mp.Line), Message: mp.Message})
	}
	np, _, _ := normalizeNavPath(name)
	if ref := strings.TrimSpace(fmString(fm, "openapi")); ref != "" {
		if _, err := v.site.operation(np, ref); err != nil && !errors.Is(err, errNoLocalSpec) {
			v.add(Problem{File: name, Line: fmLine(src, "openapi"), Message: err.Error()})
		}
	}
	for _, l := range mdx.Links(body) {
		v.checkLink(name, np, bodyLine, l, nil)
	}
}

// checkLink checks one link of page file name. When only is not nil, the
// link is in an unchanged page and is checked only if it leads to one of
// those (changed) pages.
func (v *validator) checkLink(name, from string, bodyLine int, l mdx.Link, only map[string]bool) {
	r, msg := v.site.linkProblem(from, l.Target)
	if msg == "" {
		return
	}
	if only != nil {
		if r.kind != linkBroken {
			if !only[r.path] {
				return
			}
		} else {
			np, _, _ := normalizeNavPath(r.cand)
			if !only[np] && !only[path.Join(np, "index")] {
				return
			}
			msg = fmt.Sprintf("link %q leads to /%s, which no longer exists; point the link at the page that replaced it, or remove it", l.Target, np)
		}
	}
	v.add(Problem{File: name, Line: fileLine(bodyLine, l.Line), Message: msg})
}

// linkProblem resolves a link target of page from and says what is wrong
// with it: it leads to no page or file, or its #anchor names no heading of
// the page it leads to. msg is "" when the link is fine (or is not a path
// to check).
func (s *Site) linkProblem(from, target string) (r linkResult, msg string) {
	if skipLink(target) {
		return linkResult{kind: linkExternal, path: target}, ""
	}
	r = s.resolveLink(from, target)
	switch r.kind {
	case linkBroken:
		return r, brokenLinkMessage(target, r.cand)
	case linkPage:
		if r.fragment == "" {
			return r, ""
		}
	default:
		return r, ""
	}
	anchors, ok := s.pageAnchors(r.path)
	if !ok || hasAnchor(anchors, r.fragment) {
		return r, ""
	}
	where := "/" + r.path
	if r.path == from {
		where = "this page"
	}
	return r, fmt.Sprintf("link %q: %s has no heading with anchor #%s%s; link to an existing heading or drop the #anchor",
		target, where, r.fragment, anchorHint(anchors))
}

// hasAnchor reports whether a page's anchors hold a link's fragment, as
// written or in lower case.
func hasAnchor(anchors map[string]bool, fragment string) bool {
	return anchors[fragment] || anchors[strings.ToLower(fragment)]
}

func brokenLinkMessage(target, cand string) string {
	if cand == "" {
		return fmt.Sprintf("link %q has no target; add one or remove the link", target)
	}
	if strings.HasPrefix(cand, "../") || cand == ".." {
		return fmt.Sprintf("link %q leads outside the docs root; use a path from the root like \"/guides/setup\"", target)
	}
	np, _, _ := normalizeNavPath(cand)
	if ext := path.Ext(cand); ext != "" && ext != ".mdx" && ext != ".md" {
		return fmt.Sprintf("link %q: there is no file %s under the docs root; fix the path or add the file", target, cand)
	}
	return fmt.Sprintf("link %q: there is no page %s.mdx or %s.md (or file %s) under the docs root; fix the link or create the page", target, np, np, cand)
}

// anchorHint lists some anchors the page does have.
func anchorHint(anchors map[string]bool) string {
	if len(anchors) == 0 {
		return " (the page has no headings)"
	}
	keys := sortedKeys(anchors)
	const maxShown = 8
	if len(keys) > maxShown {
		return fmt.Sprintf(" (it has #%s, … %d in all)", strings.Join(keys[:maxShown], ", #"), len(keys))
	}
	return " (it has #" + strings.Join(keys, ", #") + ")"
}

// skipLink reports link targets that are not paths: JSX expressions and
// template placeholders.
func skipLink(t string) bool {
	t = strings.TrimSpace(t)
	return strings.HasPrefix(t, "{") || strings.Contains(t, "{{") || strings.Contains(t, "${")
}

// checkInbound checks links in unchanged pages that lead to changed pages:
// their anchors must still exist, and so must the pages.
func (v *validator) checkInbound(targets map[string]bool) {
	if len(targets) == 0 {
		return
	}
	for _, name := range v.pageFiles() {
		if v.changed[name] {
			continue
		}
		src, err := ReadFile(v.fsys, name, MaxFileBytes)
		if err != nil {
			continue // an unreadable page cannot link anywhere
		}
		_, body, bodyLine, _ := ParseFrontMatter(src)
		if body == nil || !mentionsAny(body, targets) {
			continue
		}
		np, _, _ := normalizeNavPath(name)
		for _, l := range mdx.Links(body) {
			v.checkLink(name, np, bodyLine, l, targets)
		}
	}
}

// pageFiles lists the page files under the docs root in lexical order.
// Hidden directories and node_modules are skipped, and so are entries that
// cannot be read.
func (v *validator) pageFiles() []string {
	var out []string
	_ = fs.WalkDir(v.fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an unreadable entry holds no page; keep walking
		}
		if d.IsDir() {
			if name != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return fs.SkipDir
			}
			return nil
		}
		if v.isPageFile(name) {
			out = append(out, name)
		}
		return nil
	})
	return out
}

// mentionsAny is a quick filter: a page can only link to a target whose last
// path element appears in it.
func mentionsAny(body []byte, targets map[string]bool) bool {
	for t := range targets {
		base := path.Base(t)
		if base == "index" {
			base = path.Base(path.Dir(t))
		}
		if base == "." || bytes.Contains(body, []byte(base)) {
			return true
		}
	}
	return false
}

func (v *validator) result() []Problem {
	sortProblems(v.problems)
	return slices.Compact(v.problems)
}

// fileLine turns a line of the body into a line of the file.
func fileLine(bodyLine, line int) int {
	if line <= 0 {
		return bodyLine
	}
	return bodyLine + line - 1
}

// fmLine finds the line of a front matter field, or 1.
func fmLine(src []byte, key string) int {
	src = bytes.TrimPrefix(src, utf8BOM)
	for i, l := range bytes.Split(src, []byte("\n")) {
		if i > 0 && bytes.HasPrefix(l, []byte(key+":")) {
			return i + 1
		}
		if i > 0 && isFence(l) {
			break
		}
	}
	return 1
}

// Anchors besides headings: id attributes; the titles of accordions, tabs
// and steps and the labels of changelog updates, which Mintlify turns into
// anchors; and parameter and response fields, anchored as "param-<name>".
var (
	htmlIDRE      = regexp.MustCompile(`\bid=["']([^"']+)["']`)
	titledRE      = regexp.MustCompile(`<(?:Accordion|Tab|Step|Update)\b[^>]*?\b(?:title|label)=(?:"([^"]*)"|'([^']*)')`)
	fieldAnchorRE = regexp.MustCompile(`<(?:ParamField|ResponseField)\b[^>]*?\b(?:name|path|query|body|header|cookie)=(?:"([^"]*)"|'([^']*)')`)
)

// anchorSet is what links to a page can name after "#".
type anchorSet struct {
	// all holds every anchor of the page.
	all map[string]bool
	// targets holds, for each heading, titled component, id and field, the
	// anchors that lead to it, the one Mintlify generates first. A heading
	// read twice (on its own and among the sections) is listed twice.
	targets [][]string
}

func (a *anchorSet) add(anchors ...string) {
	var t []string
	for _, x := range anchors {
		if x != "" && !slices.Contains(t, x) {
			t = append(t, x)
			a.all[x] = true
		}
	}
	if len(t) > 0 {
		a.targets = append(a.targets, t)
	}
}

// pageAnchors returns the anchors of a page: its headings' (including the
// headings of snippets it imports) and its id attributes.
func (s *Site) pageAnchors(navPath string) (map[string]bool, bool) {
	a := s.anchors(navPath)
	if a == nil {
		return nil, false
	}
	return a.all, true
}

// anchors returns the anchor set of a page, nil when it cannot be read.
func (s *Site) anchors(navPath string) *anchorSet {
	s.mu.Lock()
	a, ok := s.headingsCache[navPath]
	s.mu.Unlock()
	if ok {
		return a
	}
	a = s.readAnchors(navPath)
	s.mu.Lock()
	s.headingsCache[navPath] = a
	s.mu.Unlock()
	return a
}

func (s *Site) readAnchors(navPath string) *anchorSet {
	file, ok := s.pageFile(navPath, "")
	if !ok {
		return nil
	}
	src, err := ReadFile(s.fsys, file, MaxFileBytes)
	if err != nil {
		return nil
	}
	_, body, _, _ := ParseFrontMatter(src)
	if body == nil {
		return nil
	}
	a := &anchorSet{all: map[string]bool{}}
	heading := func(text, anchor string) { a.add(anchor, plainSlug(text)) }
	for _, h := range mdx.Headings(body) {
		heading(h.Heading, h.Anchor)
	}
	for _, sec := range mdx.Sections(body, s.Snippet) {
		if sec.Level > 0 {
			heading(sec.Heading, sec.Anchor)
		}
	}
	for _, m := range htmlIDRE.FindAllSubmatch(body, -1) {
		a.add(string(m[1]))
	}
	for _, m := range titledRE.FindAllSubmatch(body, -1) {
		title := string(m[1]) + string(m[2])
		heading(title, mdx.Slug(title))
	}
	for _, m := range fieldAnchorRE.FindAllSubmatch(body, -1) {
		a.add("param-" + fieldSlug(string(m[1])+string(m[2])))
	}
	return a
}

// fieldSlug makes a field name an anchor the way Mintlify does for
// ParamField and ResponseField: lower case, and every run of other
// characters (such as the dot in "a.b") one hyphen.
func fieldSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

// plainSlug is the other anchor a heading may be linked by: GitHub's rule
// (lower case; letters, digits, "-" and "_" kept; spaces to hyphens; other
// punctuation dropped), with hyphens trimmed at the ends. Mintlify's own
// rule (mdx.Slug) keeps some punctuation, and both forms occur in links on
// real sites, so a link to either is accepted.
func plainSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsSpace(r):
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc):
			b.WriteRune(r)
		}
	}
	return strings.Trim(b.String(), "-")
}
