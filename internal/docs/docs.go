// Package docs reads a Mintlify-style documentation site — a docs.json (or
// legacy mint.json) navigation plus .mdx/.md pages with YAML front matter and
// optional OpenAPI specs — from an fs.FS, so the same code works on a
// checkout directory (os.DirFS, an os.Root) or a git tree.
//
// Load gives the search index and the assistant the pages in navigation
// order with their breadcrumbs; Validate is the check the agent runs before
// it commits, and reports problems the agent can fix rather than failing.
package docs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Config file names, in the order Load looks for them.
const (
	DocsJSON = "docs.json"
	MintJSON = "mint.json"
)

// Navigation item kinds.
const (
	KindTab      = "tab"
	KindAnchor   = "anchor"
	KindDropdown = "dropdown"
	KindVersion  = "version"
	KindLanguage = "language"
	KindGroup    = "group"
	KindPage     = "page"
	KindProduct  = "product"
	KindMenu     = "menu"
	// KindEndpoint is a navigation entry that names an OpenAPI operation
	// ("GET /users", "spec.json POST /users", "webhook orderUpdated") instead
	// of a page file; the site generates its page from the spec.
	KindEndpoint = "endpoint"
)

// Site is a docs site read by Load. Its methods are safe for concurrent
// use; they read files lazily (specs, anchors) and cache what they read.
type Site struct {
	// ConfigFile is "docs.json" or "mint.json".
	ConfigFile string
	// Config is the decoded config file, with every {"$ref": "file.json"}
	// replaced by that file's content.
	Config map[string]any
	// Nav is the navigation tree, in the order the config lists it.
	Nav []NavItem
	// Pages holds every page the navigation names that has a file, by its
	// navigation path ("guides/setup": no extension, no leading slash).
	Pages map[string]*Page
	// OpenAPISpecs are the local spec files the config names (top-level
	// "openapi", docs.json "api.openapi" and "openapi" on navigation
	// entries), as paths from the docs root. Specs given as URLs are left
	// out: there is nothing local to read.
	OpenAPISpecs []string
	// Missing lists navigation pages that have no .mdx or .md file, in
	// navigation order.
	Missing []string
	// Problems is what Load found wrong but could read past: missing
	// navigation pages, front matter that does not parse, unreadable $ref
	// files, malformed navigation entries.
	Problems []Problem
	// Links are the symbolic links a navigation page was to be read
	// through and was not (paths from the docs root), in navigation order.
	Links []string

	fsys       fs.FS
	sources    map[string][]byte // config file and $ref files, for line numbers
	redirects  []redirect
	indexAll   bool              // seo.indexing is "all": hidden pages are indexed too
	navOpenAPI map[string]string // page path → spec set on its navigation entry

	// missingProblems are the Problems of the Missing pages, in order.
	missingProblems []Problem

	mu            sync.Mutex // guards the caches below
	exists        map[string]bool
	specs         map[string]*specDoc
	specErrs      map[string]error
	headingsCache map[string]*anchorSet // nil: the page cannot be read
}

// NavItem is one entry of the navigation.
type NavItem struct {
	// Kind is one of tab, anchor, dropdown, version, language, group, page,
	// product, menu (a menu item of a tab or product) or endpoint.
	Kind string
	// Title is the label shown: the tab, group, anchor… name, the version or
	// language code, or for a page its sidebarTitle, else its title.
	Title string
	// Page is the navigation path for Kind page, and the operation
	// reference ("GET /users") for Kind endpoint.
	Page string
	// Root is the landing page of a group ("root" in docs.json).
	Root string
	// Href is the external link of a tab, anchor, dropdown… that has one.
	Href string
	// OpenAPI is the spec that applies to this entry, its own or inherited.
	OpenAPI string
	// Version and Language are the version and language this entry belongs
	// to, its own or inherited.
	Version, Language string
	// Hidden is true when the entry is hidden: "hidden": true in the
	// navigation, or for a page, hidden: true in its front matter.
	Hidden bool
	// Searchable is "searchable": true on a hidden tab or group: its pages
	// stay out of the navigation but are still indexed.
	Searchable bool
	Children   []NavItem
}

// Page is a page file the navigation names.
type Page struct {
	// Path is the navigation path, "guides/setup".
	Path string
	// File is the file under the docs root, "guides/setup.mdx".
	File string
	// FrontMatter is the decoded front matter (empty when there is none or
	// it does not parse).
	FrontMatter map[string]any

	// Title, Description and SidebarTitle are the front matter fields of
	// those names.
	Title, Description, SidebarTitle string
	// OpenAPI is the page's "openapi" front matter: "GET /users" or
	// "spec.json GET /users". See Site.Operation.
	OpenAPI string
	NoIndex bool
	Hidden  bool
	// Body is the file after the front matter.
	Body []byte
	// BodyLine is the line of the file on which Body starts.
	BodyLine int
	// Err is why the front matter did not parse, nil when it did.
	Err error
}

// NavPage is a page in navigation order, with where it sits.
type NavPage struct {
	Path string
	// Breadcrumb holds the titles of the tabs, anchors, dropdowns, products,
	// menu items and groups above the page, outermost first.
	Breadcrumb []string
	Version    string
	Language   string
	// Groups holds the titles of the groups above the page, outermost first.
	Groups []string
	// NavHidden is true when a hidden tab, group or other entry above the
	// page keeps it out of the navigation (and "searchable" does not bring
	// it back).
	NavHidden bool
}

// Load reads a site's config and every page its navigation names.
//
// It fails only when there is no docs.json or mint.json, or the config is
// not a JSON object; everything else it can read past (a page file that does
// not exist, front matter that does not parse, a $ref it cannot read) is
// recorded in Site.Missing, Page.Err and Site.Problems.
func Load(fsys fs.FS) (*Site, error) {
	name, raw, err := readConfig(fsys)
	if err != nil {
		return nil, err
	}
	cfg, err := decodeConfig(name, raw)
	if err != nil {
		return nil, err
	}
	return build(fsys, name, raw, cfg, nil), nil
}

// LoadPages is Load reading only the navigation pages keep accepts (by
// navigation path): the config and the navigation are read whole, the
// other pages not at all, as if they had no file. An index update that
// knows which pages changed reads only those.
func LoadPages(fsys fs.FS, keep func(navPath string) bool) (*Site, error) {
	name, raw, err := readConfig(fsys)
	if err != nil {
		return nil, err
	}
	cfg, err := decodeConfig(name, raw)
	if err != nil {
		return nil, err
	}
	return build(fsys, name, raw, cfg, keep), nil
}

// readConfig finds docs.json, else mint.json.
func readConfig(fsys fs.FS) (string, []byte, error) {
	for _, name := range []string{DocsJSON, MintJSON} {
		raw, err := ReadFile(fsys, name, MaxFileBytes)
		if err == nil {
			return name, raw, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	return "", nil, fmt.Errorf("no %s or %s at the docs root: %w", DocsJSON, MintJSON, fs.ErrNotExist)
}

// ConfigError is a config file that is not valid JSON or not an object.
type ConfigError struct {
	File    string
	Line    int
	Message string
}

func (e *ConfigError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Message)
}

func decodeConfig(name string, raw []byte) (map[string]any, error) {
	v, err := decodeJSON(name, raw)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &ConfigError{File: name, Line: 1, Message: "the config must be a JSON object ({ … })"}
	}
	return m, nil
}

// decodeJSON decodes a JSON file, turning syntax errors into a ConfigError
// with the line of the problem.
func decodeJSON(name string, raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		line := 0
		msg := err.Error()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line = lineAt(raw, int(se.Offset))
			msg = "invalid JSON: " + se.Error()
		case errors.As(err, &te):
			line = lineAt(raw, int(te.Offset))
		}
		if len(strings.TrimSpace(string(raw))) == 0 {
			msg = "the file is empty; it must hold a JSON object"
		}
		return nil, &ConfigError{File: name, Line: line, Message: msg}
	}
	return v, nil
}

// lineAt returns the 1-based line of byte offset off in b.
func lineAt(b []byte, off int) int {
	off = min(max(off, 0), len(b))
	n := 1
	for _, c := range b[:off] {
		if c == '\n' {
			n++
		}
	}
	return n
}

// build makes the Site from a decoded config.
func build(fsys fs.FS, name string, raw []byte, cfg map[string]any, keep func(string) bool) *Site {
	s := &Site{
		ConfigFile: name,
		Pages:      map[string]*Page{},
		fsys:       fsys,
		sources:    map[string][]byte{name: raw},
		navOpenAPI: map[string]string{},
		exists:     map[string]bool{},
		specs:      map[string]*specDoc{},
		specErrs:   map[string]error{},

		headingsCache: map[string]*anchorSet{},
	}
	r := refResolver{fsys: fsys, sources: s.sources}
	if v, ok := r.resolve(cfg, name, 0, nil).(map[string]any); ok {
		cfg = v
	}
	s.Config = cfg
	s.Problems = append(s.Problems, r.problems...)

	var np navParser
	if name == MintJSON {
		s.Nav = np.parseMint(cfg)
	} else {
		s.Nav = np.parseDocs(cfg)
	}
	for _, iss := range np.issues {
		s.Problems = append(s.Problems, s.configProblem(iss.loc, iss.quoted, iss.message))
	}

	s.loadPages(np.pages, keep)
	s.setPageTitles(s.Nav)
	s.OpenAPISpecs = configSpecs(cfg, s.Nav)
	s.redirects = parseRedirects(cfg)
	if seo, ok := cfg["seo"].(map[string]any); ok {
		s.indexAll = seo["indexing"] == "all"
	}
	sortProblems(s.Problems)
	return s
}

func sortProblems(ps []Problem) {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Message, b.Message))
	})
}

// loadPages reads every page the navigation names (that keep accepts, if
// keep is set), once, in order.
func (s *Site) loadPages(refs []navPageRef, keep func(string) bool) {
	seen := map[string]bool{}
	for _, ref := range refs {
		if ref.openapi != "" {
			if _, ok := s.navOpenAPI[ref.path]; !ok {
				s.navOpenAPI[ref.path] = ref.openapi
			}
		}
		if seen[ref.path] {
			continue
		}
		seen[ref.path] = true
		if keep != nil && !keep(ref.path) {
			continue
		}
		file, ok := s.pageFile(ref.path, ref.ext)
		if !ok {
			p := s.configProblem(ref.loc, ref.raw,
				fmt.Sprintf("%s names page %q, but there is no %s.mdx or %s.md; create the page or fix the entry", ref.loc, ref.raw, ref.path, ref.path))
			s.Missing = append(s.Missing, ref.path)
			s.missingProblems = append(s.missingProblems, p)
			s.Problems = append(s.Problems, p)
			continue
		}
		src, err := ReadFile(s.fsys, file, MaxFileBytes)
		var tooLarge *FileTooLargeError
		if errors.As(err, &tooLarge) {
			// The page is there but is not read: it stays out of the
			// index, and Validate reports it.
			p := &Page{Path: ref.path, File: file, Err: err}
			s.Problems = append(s.Problems, Problem{File: file, Message: err.Error()})
			s.Pages[ref.path] = p
			continue
		}
		if err != nil {
			if pe := (*fs.PathError)(nil); errors.Is(err, ErrSymlink) && errors.As(err, &pe) && !slices.Contains(s.Links, pe.Path) {
				s.Links = append(s.Links, pe.Path)
			}
			p := Problem{File: file, Message: fmt.Sprintf("cannot read the page: %v", err)}
			s.Missing = append(s.Missing, ref.path)
			s.missingProblems = append(s.missingProblems, p)
			s.Problems = append(s.Problems, p)
			continue
		}
		p := newPage(ref.path, file, src)
		if p.Err != nil {
			s.Problems = append(s.Problems, pageErrProblem(file, p.Err))
		}
		s.Pages[ref.path] = p
	}
}

// newPage parses a page file.
func newPage(navPath, file string, src []byte) *Page {
	fm, body, bodyLine, err := ParseFrontMatter(src)
	p := &Page{Path: navPath, File: file, FrontMatter: fm, Body: body, BodyLine: bodyLine, Err: err}
	p.Title = fmString(fm, "title")
	p.Description = fmString(fm, "description")
	p.SidebarTitle = fmString(fm, "sidebarTitle")
	p.OpenAPI = strings.TrimSpace(fmString(fm, "openapi"))
	p.NoIndex = fmBool(fm, "noindex")
	p.Hidden = fmBool(fm, "hidden")
	return p
}

func pageErrProblem(file string, err error) Problem {
	var fe *FrontMatterError
	if errors.As(err, &fe) {
		return Problem{File: file, Line: fe.Line, Message: "front matter: " + fe.Message}
	}
	return Problem{File: file, Message: err.Error()}
}

// setPageTitles fills page items' titles and hidden flags from their pages.
func (s *Site) setPageTitles(items []NavItem) {
	for i := range items {
		it := &items[i]
		if it.Kind == KindPage {
			if p := s.Pages[it.Page]; p != nil {
				it.Title = p.Title
				if p.SidebarTitle != "" {
					it.Title = p.SidebarTitle
				}
				it.Hidden = it.Hidden || p.Hidden
			}
		}
		s.setPageTitles(it.Children)
	}
}

// pageFile finds the file of a navigation path: path.mdx, then path.md.
// ext is the extension the navigation wrote, if any, tried first.
func (s *Site) pageFile(p, ext string) (string, bool) {
	cands := []string{p + ".mdx", p + ".md"}
	if ext != "" {
		cands = append([]string{p + ext}, cands...)
	}
	for _, c := range cands {
		if s.isFile(c) {
			return c, true
		}
	}
	return "", false
}

// isFile reports whether name is a file in the site, caching the answer. A
// symbolic link counts as a file here so that reading it reports the
// refusal; it is never followed.
func (s *Site) isFile(name string) bool {
	if !fs.ValidPath(name) || name == "." {
		return false
	}
	s.mu.Lock()
	v, ok := s.exists[name]
	s.mu.Unlock()
	if ok {
		return v
	}
	fi, err := StatNoLinks(s.fsys, name)
	v = err == nil && !fi.IsDir() || errors.Is(err, ErrSymlink)
	s.mu.Lock()
	s.exists[name] = v
	s.mu.Unlock()
	return v
}

// configProblem makes a problem about a navigation entry, pointing at the
// line of the config that holds the entry at loc ("navigation.tabs[0]"), or
// failing that the line of the config or $ref file that holds quoted.
func (s *Site) configProblem(loc, quoted, msg string) Problem {
	p := Problem{File: s.ConfigFile, Message: msg}
	if l := jsonPathLine(s.sources[s.ConfigFile], loc); l > 0 {
		p.Line = l
		return p
	}
	if quoted == "" {
		return p
	}
	needle, err := json.Marshal(quoted)
	if err != nil {
		return p
	}
	// The config file first, then $ref files in name order.
	if i := bytes.Index(s.sources[s.ConfigFile], needle); i >= 0 {
		p.Line = lineAt(s.sources[s.ConfigFile], i)
		return p
	}
	for _, name := range sortedKeys(s.sources) {
		if i := bytes.Index(s.sources[name], needle); i >= 0 {
			p.File = name
			p.Line = lineAt(s.sources[name], i)
			return p
		}
	}
	return p
}

// jsonPathLine returns the line of the value at loc (like
// "navigation.tabs[0].pages[2]") in a JSON document, or 0.
func jsonPathLine(raw []byte, loc string) int {
	if loc == "" || len(raw) == 0 {
		return 0
	}
	var segs []any // string keys and int indexes
	for _, part := range strings.Split(loc, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			segs = append(segs, key)
		}
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if !ok || err != nil {
				return 0
			}
			segs = append(segs, i)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	off, ok := seekJSON(dec, segs)
	if !ok {
		return 0
	}
	return lineAt(raw, int(off))
}

// seekJSON reads the next value of dec, descending along segs; it returns
// the offset just after the first token of the value segs leads to.
func seekJSON(dec *json.Decoder, segs []any) (int64, bool) {
	tok, err := dec.Token()
	if err != nil {
		return 0, false
	}
	if len(segs) == 0 {
		return dec.InputOffset(), true
	}
	switch tok {
	case json.Delim('{'):
		key, ok := segs[0].(string)
		if !ok {
			return 0, false
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return 0, false
			}
			if kt == key {
				return seekJSON(dec, segs[1:])
			}
			if skipJSON(dec) != nil {
				return 0, false
			}
		}
	case json.Delim('['):
		idx, ok := segs[0].(int)
		if !ok {
			return 0, false
		}
		for i := 0; dec.More(); i++ {
			if i == idx {
				return seekJSON(dec, segs[1:])
			}
			if skipJSON(dec) != nil {
				return 0, false
			}
		}
	}
	return 0, false
}

// skipJSON reads past the next value of dec.
func skipJSON(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// NavPages returns the pages the navigation names that have a file, in
// navigation order. A page named more than once is returned at its first
// place. A group's root page comes before the group's other pages.
func (s *Site) NavPages() []NavPage {
	var out []NavPage
	seen := map[string]bool{}
	add := func(p string, st walkState) {
		if seen[p] || s.Pages[p] == nil {
			return
		}
		seen[p] = true
		out = append(out, NavPage{
			Path:       p,
			Breadcrumb: clone(st.crumbs),
			Version:    st.version,
			Language:   st.language,
			Groups:     clone(st.groups),
			NavHidden:  st.hidden,
		})
	}
	var walk func(items []NavItem, st walkState)
	walk = func(items []NavItem, st walkState) {
		for _, it := range items {
			cur := st
			if it.Version != "" {
				cur.version = it.Version
			}
			if it.Language != "" {
				cur.language = it.Language
			}
			if it.Hidden && it.Kind != KindPage {
				cur.hidden = !it.Searchable
			} else if it.Searchable {
				cur.hidden = false
			}
			switch it.Kind {
			case KindPage:
				add(it.Page, cur)
				continue
			case KindEndpoint:
				continue
			case KindVersion, KindLanguage:
			default:
				if it.Title != "" {
					cur.crumbs = append(clone(cur.crumbs), it.Title)
				}
				if it.Kind == KindGroup && it.Title != "" {
					cur.groups = append(clone(cur.groups), it.Title)
				}
			}
			if it.Root != "" {
				add(it.Root, cur)
			}
			walk(it.Children, cur)
		}
	}
	walk(s.Nav, walkState{})
	return out
}

type walkState struct {
	crumbs, groups    []string
	version, language string
	hidden            bool
}

// Indexable returns the navigation pages a search index and the assistant
// should use: NavPages without the pages the site asks to keep out of
// search.
//
// A page with noindex: true (or searchable: false) stays in the navigation
// but asks to be left out of search engines, site search and AI context; a
// hidden page (hidden: true, or under a hidden tab or group that is not
// "searchable") is deliberately unlisted. Mintlify excludes both from its own
// search and assistant, so answers here should not cite them either, unless
// docs.json sets seo.indexing to "all", which brings hidden (but not noindex)
// pages back. Pages whose front matter does not parse are left out too: what
// they ask for cannot be known.
func (s *Site) Indexable() []NavPage {
	var out []NavPage
	for _, np := range s.NavPages() {
		p := s.Pages[np.Path]
		if p == nil || p.Err != nil || p.NoIndex || fmFalse(p.FrontMatter, "searchable") {
			continue
		}
		if !s.indexAll && (p.Hidden || np.NavHidden) {
			continue
		}
		out = append(out, np)
	}
	return out
}

// Snippet returns the body of a snippet file (an .mdx or .md file such as
// "snippets/intro.mdx" or "/snippets/intro.mdx", or "intro.mdx" for
// snippets/intro.mdx as <Snippet file="intro.mdx" /> names it) without its
// front matter, for mdx.Sections to inline imported snippets.
func (s *Site) Snippet(p string) ([]byte, bool) {
	name, ok := cleanRootPath(p)
	if !ok {
		return nil, false
	}
	switch path.Ext(name) {
	case ".mdx", ".md":
	default:
		return nil, false
	}
	src, err := ReadFile(s.fsys, name, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) && !strings.Contains(name, "/") {
		// <Snippet file="name.mdx" /> names a file of snippets/.
		src, err = ReadFile(s.fsys, "snippets/"+name, MaxFileBytes)
	}
	if err != nil {
		return nil, false
	}
	_, body, _, err := ParseFrontMatter(src)
	if err != nil {
		if body == nil {
			return nil, false
		}
	}
	return body, true
}

// cleanRootPath turns "/a/./b" or "a/b" into "a/b", refusing paths that
// leave the docs root.
func cleanRootPath(p string) (string, bool) {
	c := path.Clean(strings.TrimLeft(strings.TrimSpace(p), "/"))
	if c == "." || c == ".." || strings.HasPrefix(c, "../") || !fs.ValidPath(c) {
		return "", false
	}
	return c, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func clone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}
