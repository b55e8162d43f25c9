package docs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// maxRefDepth bounds chains of $ref files.
const maxRefDepth = 16

// maxNavDepth bounds how deep navigation entries may nest. Real sites use a
// handful of levels; the bound keeps hostile configs cheap.
const maxNavDepth = 64

// refResolver replaces {"$ref": "file.json"} objects in a config with the
// content of the file they name. docs.json uses them to keep translated
// navigation and redirects in their own files.
type refResolver struct {
	fsys     fs.FS
	sources  map[string][]byte
	problems []Problem
}

func (r *refResolver) resolve(v any, file string, depth int, stack []string) any {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok && !strings.HasPrefix(ref, "#") {
			delete(t, "$ref")
			if resolved, ok := r.load(ref, file, depth, stack); ok {
				if len(t) == 0 {
					return resolved
				}
				if m, isMap := resolved.(map[string]any); isMap {
					// Keys beside "$ref" override the file's.
					for k, e := range t {
						m[k] = r.resolve(e, file, depth, stack)
					}
					return m
				}
			}
		}
		for k, e := range t {
			t[k] = r.resolve(e, file, depth, stack)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = r.resolve(e, file, depth, stack)
		}
		return t
	default:
		return v
	}
}

func (r *refResolver) load(ref, file string, depth int, stack []string) (any, bool) {
	line := 0
	if i := strings.Index(string(r.sources[file]), ref); i >= 0 {
		line = lineAt(r.sources[file], i)
	}
	problem := func(format string, args ...any) (any, bool) {
		r.problems = append(r.problems, Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
		return nil, false
	}
	target := ref
	if !strings.HasPrefix(ref, "/") {
		target = path.Join(path.Dir(file), ref)
	}
	target, ok := cleanRootPath(target)
	if !ok {
		return problem("$ref %q points outside the docs root", ref)
	}
	if slices.Contains(stack, target) || target == file || depth >= maxRefDepth {
		return problem("$ref %q refers back to itself; break the cycle", ref)
	}
	raw, err := ReadFile(r.fsys, target, MaxFileBytes)
	var tooLarge *FileTooLargeError
	if errors.As(err, &tooLarge) {
		return problem("$ref %q: %v", ref, err)
	}
	if errors.Is(err, ErrSymlink) {
		return problem("$ref %q: %s is a symbolic link, which docsmith does not follow; point at the real file", ref, target)
	}
	if err != nil {
		return problem("$ref %q: cannot read %s; create it or fix the path", ref, target)
	}
	r.sources[target] = raw
	v, err := decodeJSON(target, raw)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			r.problems = append(r.problems, Problem{File: target, Line: ce.Line, Message: ce.Message})
			return nil, false
		}
		return problem("$ref %q: %v", ref, err)
	}
	return r.resolve(v, target, depth+1, append(slices.Clone(stack), file)), true
}

// navPageRef is a page named by the navigation.
type navPageRef struct {
	path    string // normalized navigation path
	ext     string // ".mdx" or ".md" when the entry named one
	raw     string // the entry as written
	loc     string // where in the config, like navigation.tabs[0].groups[1].pages[2]
	openapi string // spec inherited from the navigation
}

type navIssue struct {
	loc     string // where in the config, to find the line by
	quoted  string // a string of the config to find the line by when loc fails
	message string
}

// navParser turns a config's navigation into NavItems, recording the pages
// it names and what is malformed.
type navParser struct {
	pages  []navPageRef
	issues []navIssue
}

type navCtx struct {
	version, language, openapi string
	depth                      int
}

// navChild is a key that holds child entries, and the kind of entry it
// holds ("" for "pages": page paths or nested groups).
type navChild struct{ key, kind string }

// navChildren lists the keys of a navigation entry that hold children, in
// the order they are read. Mintlify allows one kind per level, so the order
// only matters for malformed configs.
func navChildren() []navChild {
	return []navChild{
		{"languages", KindLanguage},
		{"versions", KindVersion},
		{"products", KindProduct},
		{"dropdowns", KindDropdown},
		{"tabs", KindTab},
		{"anchors", KindAnchor},
		{"menu", KindMenu},
		{"groups", KindGroup},
		{"pages", ""},
	}
}

// titleKey is the field that names an entry of a kind.
func titleKey(kind string) string {
	if kind == KindMenu {
		return "item"
	}
	return kind
}

// parseDocs reads docs.json's "navigation" object.
func (p *navParser) parseDocs(cfg map[string]any) []NavItem {
	nav, ok := cfg["navigation"]
	if !ok {
		p.issue("", "", `docs.json has no "navigation"; add one with the site's groups and pages`)
		return nil
	}
	ctx := navCtx{openapi: apiOpenAPI(cfg)}
	switch t := nav.(type) {
	case map[string]any:
		items := p.children(t, "navigation", ctx)
		if g, ok := t["global"].(map[string]any); ok {
			items = append(items, p.children(g, "navigation.global", ctx)...)
		}
		return items
	case []any:
		// The mint.json shape in a docs.json: read it, but say so.
		p.issue("navigation", "", `in docs.json, "navigation" must be an object such as {"groups": [...]}, not a list`)
		return p.list(t, "pages", "", "navigation", ctx)
	default:
		p.issue("navigation", "", `"navigation" must be an object such as {"groups": [...]}`)
		return nil
	}
}

// apiOpenAPI is the first spec of docs.json's api.openapi, the default for
// endpoint entries.
func apiOpenAPI(cfg map[string]any) string {
	api, _ := cfg["api"].(map[string]any)
	if specs := specList(api["openapi"]); len(specs) > 0 {
		return specs[0]
	}
	return ""
}

func (p *navParser) issue(loc, quoted, format string, args ...any) {
	p.issues = append(p.issues, navIssue{loc: loc, quoted: quoted, message: fmt.Sprintf(format, args...)})
}

// children reads every child list of an entry.
func (p *navParser) children(m map[string]any, loc string, ctx navCtx) []NavItem {
	var out []NavItem
	for _, c := range navChildren() {
		v, ok := m[c.key]
		if !ok || v == nil {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			p.issue(loc+"."+c.key, "", "%s.%s must be a list", loc, c.key)
			continue
		}
		out = append(out, p.list(arr, c.key, c.kind, loc, ctx)...)
	}
	return out
}

func (p *navParser) list(arr []any, key, kind, loc string, ctx navCtx) []NavItem {
	var out []NavItem
	for i, e := range arr {
		eloc := fmt.Sprintf("%s.%s[%d]", loc, key, i)
		if key == "pages" {
			if it, ok := p.pageEntry(e, eloc, ctx); ok {
				out = append(out, it)
			}
			continue
		}
		m, ok := e.(map[string]any)
		if !ok {
			p.issue(eloc, stringOf(e), "%s must be an object with a %q field", eloc, titleKey(kind))
			continue
		}
		if it, ok := p.node(kind, m, eloc, ctx); ok {
			out = append(out, it)
		}
	}
	return out
}

// pageEntry reads one element of a "pages" list: a page path, an OpenAPI
// operation, or a nested group.
func (p *navParser) pageEntry(e any, loc string, ctx navCtx) (NavItem, bool) {
	switch t := e.(type) {
	case string:
		if isEndpointRef(t) {
			return NavItem{Kind: KindEndpoint, Page: strings.TrimSpace(t), OpenAPI: ctx.openapi, Version: ctx.version, Language: ctx.language}, true
		}
		np, ext, ok := normalizeNavPath(t)
		if !ok {
			p.issue(loc, t, "%s: %q is not a page path; write it like \"guides/setup\" (no \"..\", no spaces at the ends)", loc, t)
			return NavItem{}, false
		}
		p.pages = append(p.pages, navPageRef{path: np, ext: ext, raw: t, loc: loc, openapi: ctx.openapi})
		return NavItem{Kind: KindPage, Page: np, OpenAPI: ctx.openapi, Version: ctx.version, Language: ctx.language}, true
	case map[string]any:
		if _, ok := t["group"]; ok {
			return p.node(KindGroup, t, loc, ctx)
		}
		for _, c := range navChildren() {
			if c.kind == "" {
				continue
			}
			if _, ok := t[titleKey(c.kind)]; ok {
				return p.node(c.kind, t, loc, ctx)
			}
		}
		p.issue(loc, "", `%s must be a page path or a group such as {"group": "Name", "pages": [...]}`, loc)
	default:
		p.issue(loc, "", `%s must be a page path or a group such as {"group": "Name", "pages": [...]}`, loc)
	}
	return NavItem{}, false
}

// node reads an entry of the given kind and its children.
func (p *navParser) node(kind string, m map[string]any, loc string, ctx navCtx) (NavItem, bool) {
	if ctx.depth >= maxNavDepth {
		p.issue(loc, "", "%s: navigation nests deeper than %d levels", loc, maxNavDepth)
		return NavItem{}, false
	}
	ctx.depth++
	it := NavItem{Kind: kind}
	it.Title = stringOf(m[titleKey(kind)])
	if it.Title == "" {
		it.Title = stringOf(m["name"])
	}
	it.Hidden = m["hidden"] == true
	it.Searchable = m["searchable"] == true
	it.Href = stringOf(m["href"])
	if it.Href == "" && kind != KindGroup {
		it.Href = externalURL(stringOf(m["url"]))
	}
	if specs := specList(m["openapi"]); len(specs) > 0 {
		ctx.openapi = specs[0]
	}
	switch kind {
	case KindVersion:
		ctx.version = it.Title
	case KindLanguage:
		ctx.language = it.Title
	default:
		// mint.json puts "version" on groups, tabs and anchors.
		if v := stringOf(m["version"]); v != "" {
			ctx.version = v
		}
	}
	it.Version, it.Language, it.OpenAPI = ctx.version, ctx.language, ctx.openapi
	if r, ok := m["root"].(string); ok && r != "" {
		np, ext, ok := normalizeNavPath(r)
		if ok {
			it.Root = np
			p.pages = append(p.pages, navPageRef{path: np, ext: ext, raw: r, loc: loc + ".root", openapi: ctx.openapi})
		} else {
			p.issue(loc+".root", r, "%s.root: %q is not a page path", loc, r)
		}
	}
	it.Children = p.children(m, loc, ctx)
	return it, true
}

// parseMint reads mint.json: "navigation" is a list of groups, and the
// top-level "tabs" and "anchors" claim the groups whose pages start with their
// "url".
func (p *navParser) parseMint(cfg map[string]any) []NavItem {
	nav, ok := cfg["navigation"].([]any)
	if !ok {
		if _, present := cfg["navigation"]; present {
			p.issue("navigation", "", `in mint.json, "navigation" must be a list of groups`)
		} else {
			p.issue("", "", `mint.json has no "navigation"; add a list of groups`)
		}
		return nil
	}
	ctx := navCtx{}
	if specs := specList(cfg["openapi"]); len(specs) > 0 {
		ctx.openapi = specs[0]
	}
	var groups []NavItem
	for i, e := range nav {
		if it, ok := p.pageEntry(e, fmt.Sprintf("navigation[%d]", i), ctx); ok {
			groups = append(groups, it)
		}
	}

	type section struct {
		item   NavItem
		prefix string
	}
	var sections []section
	for _, key := range []string{"tabs", "anchors"} {
		kind := KindTab
		if key == "anchors" {
			kind = KindAnchor
		}
		arr, _ := cfg[key].([]any)
		for i, e := range arr {
			m, ok := e.(map[string]any)
			if !ok {
				p.issue(fmt.Sprintf("%s[%d]", key, i), "", "%s[%d] must be an object with \"name\" and \"url\"", key, i)
				continue
			}
			url := stringOf(m["url"])
			it := NavItem{Kind: kind, Title: stringOf(m["name"]), Version: stringOf(m["version"]), Hidden: m["hidden"] == true || m["isDefaultHidden"] == true}
			prefix := ""
			if ext := externalURL(url); ext != "" {
				it.Href = ext
			} else if c, ok := cleanRootPath(url); ok {
				prefix = c
			}
			sections = append(sections, section{item: it, prefix: prefix})
		}
	}
	var top []NavItem
	for _, g := range groups {
		first := firstPage(g)
		placed := false
		for i := range sections {
			pre := sections[i].prefix
			if pre != "" && first != "" && (first == pre || strings.HasPrefix(first, pre+"/")) {
				if sections[i].item.Version != "" && g.Version == "" {
					setVersion(&g, sections[i].item.Version)
				}
				sections[i].item.Children = append(sections[i].item.Children, g)
				placed = true
				break
			}
		}
		if !placed {
			top = append(top, g)
		}
	}
	for _, s := range sections {
		top = append(top, s.item)
	}
	return top
}

func setVersion(it *NavItem, v string) {
	if it.Version == "" {
		it.Version = v
	}
	for i := range it.Children {
		setVersion(&it.Children[i], v)
	}
}

// firstPage is the first page path under an item.
func firstPage(it NavItem) string {
	if it.Kind == KindPage {
		return it.Page
	}
	if it.Root != "" {
		return it.Root
	}
	for _, c := range it.Children {
		if p := firstPage(c); p != "" {
			return p
		}
	}
	return ""
}

// normalizeNavPath turns a navigation page entry into a navigation path:
// no leading slash, no .mdx/.md extension (returned separately).
func normalizeNavPath(s string) (p, ext string, ok bool) {
	s = strings.TrimSpace(s)
	for _, e := range []string{".mdx", ".md"} {
		if strings.HasSuffix(s, e) {
			s, ext = strings.TrimSuffix(s, e), e
			break
		}
	}
	c, ok := cleanRootPath(s)
	if !ok {
		return "", "", false
	}
	return c, ext, true
}

// isEndpointRef reports whether a navigation or front matter value names an
// OpenAPI operation: "GET /users", "spec.json GET /users", "webhook name",
// "spec.yaml webhook name".
func isEndpointRef(s string) bool {
	_, _, _, ok := parseOperationRef(s)
	return ok
}

// parseOperationRef splits "[spec] METHOD /path" or "[spec] webhook name".
// method is upper case, or "WEBHOOK" for webhooks.
func parseOperationRef(s string) (spec, method, target string, ok bool) {
	f := strings.Fields(s)
	if len(f) == 3 {
		spec, f = f[0], f[1:]
	}
	if len(f) != 2 {
		return "", "", "", false
	}
	m := strings.ToUpper(f[0])
	switch {
	case m == "WEBHOOK":
		return spec, m, f[1], true
	case isHTTPMethod(m) && strings.HasPrefix(f[1], "/"):
		return spec, m, f[1], true
	}
	return "", "", "", false
}

// specList reads an "openapi" value: a string, a list of strings, or an
// object with "source".
func specList(v any) []string {
	switch t := v.(type) {
	case string:
		if s := strings.TrimSpace(t); s != "" {
			return []string{s}
		}
	case []any:
		var out []string
		for _, e := range t {
			out = append(out, specList(e)...)
		}
		return out
	case map[string]any:
		return specList(t["source"])
	}
	return nil
}

// configSpecs lists the local spec files named by the config and the
// navigation, without duplicates.
func configSpecs(cfg map[string]any, nav []NavItem) []string {
	var names []string
	names = append(names, specList(cfg["openapi"])...)
	if api, ok := cfg["api"].(map[string]any); ok {
		names = append(names, specList(api["openapi"])...)
	}
	var walk func([]NavItem)
	walk = func(items []NavItem) {
		for _, it := range items {
			if it.OpenAPI != "" {
				names = append(names, it.OpenAPI)
			}
			walk(it.Children)
		}
	}
	walk(nav)
	var out []string
	for _, n := range names {
		if isURL(n) {
			continue
		}
		c, ok := cleanRootPath(n)
		if !ok || slices.Contains(out, c) {
			continue
		}
		out = append(out, c)
	}
	return out
}

func isURL(s string) bool {
	return strings.Contains(s, "://")
}

// externalURL returns s when it is an absolute URL, else "".
func externalURL(s string) string {
	if isURL(s) || strings.HasPrefix(s, "mailto:") {
		return s
	}
	return ""
}

func stringOf(v any) string {
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

func isHTTPMethod(m string) bool {
	switch m {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	return false
}
