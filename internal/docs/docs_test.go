package docs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// fixture returns a writable copy of a site under testdata, so a test can
// change files without touching the others.
func fixture(t testing.TB, name string) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	root := filepath.Join("testdata", name)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		m[filepath.ToSlash(rel)] = &fstest.MapFile{Data: b, Mode: 0o644}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustLoad(t testing.TB, fsys fs.FS) *Site {
	t.Helper()
	s, err := Load(fsys)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

// navLine renders a NavPage as one comparable line.
func navLine(np NavPage) string {
	l := np.Path + " | " + strings.Join(np.Breadcrumb, " > ") + " | " + np.Version + " | " + np.Language + " | " + strings.Join(np.Groups, " > ")
	if np.NavHidden {
		l += " | hidden"
	}
	return l
}

func navLines(nps []NavPage) []string {
	var out []string
	for _, np := range nps {
		out = append(out, navLine(np))
	}
	return out
}

func TestLoadDocsJSON(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, os.DirFS("testdata/kettle"))
	if s.ConfigFile != DocsJSON {
		t.Errorf("ConfigFile = %q", s.ConfigFile)
	}
	if len(s.Missing) != 0 || len(s.Problems) != 0 {
		t.Errorf("Missing = %v, Problems = %v; want none", s.Missing, s.Problems)
	}
	want := []string{
		"index | Guides > Get started | v2 | en | Get started",
		"quickstart | Guides > Get started | v2 | en | Get started",
		"guides/brewing/index | Guides > Get started > Brewing | v2 | en | Get started > Brewing",
		"guides/brewing/temperatures | Guides > Get started > Brewing | v2 | en | Get started > Brewing",
		"guides/brewing/pressure | Guides > Get started > Brewing > Advanced | v2 | en | Get started > Brewing > Advanced",
		"guides/internals | Guides > Internals | v2 | en | Internals | hidden",
		"guides/archive | Guides > Archive | v2 | en | Archive",
		"guides/descaling | Guides > Maintenance | v2 | en | Maintenance",
		"guides/drafts | Guides > Maintenance | v2 | en | Maintenance",
		"guides/secret | Guides > Maintenance | v2 | en | Maintenance",
		"api/list-kettles | API reference > REST > Kettles | v2 | en | Kettles",
		"api/get-kettle | API reference > REST > Kettles | v2 | en | Kettles",
		"api/kettle-boiled | API reference > REST > Kettles | v2 | en | Kettles",
		"recipes/green-tea | Community > Recipes > Tea | v2 | en | ",
		"v1/quickstart | Get started | v1 | en | Get started",
		"fr/index | Démarrer |  | fr | Démarrer",
		"fr/quickstart | Démarrer |  | fr | Démarrer",
	}
	if got := navLines(s.NavPages()); !slices.Equal(got, want) {
		t.Errorf("NavPages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(s.Pages) != len(want) {
		t.Errorf("len(Pages) = %d, want %d", len(s.Pages), len(want))
	}
	if !slices.Equal(s.OpenAPISpecs, []string{"api/kettle.yaml"}) {
		t.Errorf("OpenAPISpecs = %v", s.OpenAPISpecs)
	}
	if _, ok := s.Config["redirects"].([]any); !ok {
		t.Errorf(`Config["redirects"] = %#v, want the list from redirects.json`, s.Config["redirects"])
	}

	pages := []struct {
		path                                string
		file, title, desc, sidebar, openapi string
		noindex, hidden                     bool
		bodyLine                            int
		bodyStart                           string
	}{
		{path: "quickstart", file: "quickstart.mdx", title: "Quickstart", desc: "Boil your first litre.", sidebar: "Start here", bodyLine: 6, bodyStart: "\nimport Safety"},
		{path: "guides/drafts", file: "guides/drafts.mdx", title: "Drafts", noindex: true, bodyLine: 5},
		{path: "guides/secret", file: "guides/secret.mdx", title: "Secret menu", hidden: true, bodyLine: 5},
		{path: "api/get-kettle", file: "api/get-kettle.mdx", title: "Get a kettle", openapi: "/api/kettle.yaml GET /kettles/{id}", bodyLine: 5},
		{path: "v1/quickstart", file: "v1/quickstart.md", title: "Quickstart (v1)", bodyLine: 4},
	}
	for _, w := range pages {
		p := s.Pages[w.path]
		if p == nil {
			t.Errorf("Pages[%q] is missing", w.path)
			continue
		}
		got := []any{p.Path, p.File, p.Title, p.Description, p.SidebarTitle, p.OpenAPI, p.NoIndex, p.Hidden, p.BodyLine, p.Err}
		exp := []any{w.path, w.file, w.title, w.desc, w.sidebar, w.openapi, w.noindex, w.hidden, w.bodyLine, error(nil)}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("Pages[%q] = %v, want %v", w.path, got, exp)
		}
		if !strings.HasPrefix(string(p.Body), w.bodyStart) {
			t.Errorf("Pages[%q].Body starts %q, want %q", w.path, p.Body[:min(len(p.Body), 20)], w.bodyStart)
		}
	}
}

// flattenNav renders the navigation tree one item a line, indented.
func flattenNav(items []NavItem, depth int, out *[]string) {
	for _, it := range items {
		l := strings.Repeat("  ", depth) + it.Kind + " " + it.Title
		if it.Page != "" {
			l += " [" + it.Page + "]"
		}
		if it.Root != "" {
			l += " root=" + it.Root
		}
		if it.Href != "" {
			l += " href=" + it.Href
		}
		if it.Hidden {
			l += " hidden"
		}
		if it.Searchable {
			l += " searchable"
		}
		if it.Kind == KindEndpoint {
			l += " spec=" + it.OpenAPI
		}
		*out = append(*out, l)
		flattenNav(it.Children, depth+1, out)
	}
}

func TestNavTree(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, os.DirFS("testdata/kettle"))
	var got []string
	flattenNav(s.Nav, 0, &got)
	want := []string{
		"language en",
		"  version v2",
		"    tab Guides",
		"      group Get started",
		"        page Kettle [index]",
		"        page Start here [quickstart]",
		"        group Brewing root=guides/brewing/index",
		"          page Temperatures [guides/brewing/temperatures]",
		"          group Advanced",
		"            page Pressure [guides/brewing/pressure]",
		"      group Internals hidden",
		"        page Internals [guides/internals]",
		"      group Archive hidden searchable",
		"        page Archive [guides/archive]",
		"      group Maintenance",
		"        page Descaling [guides/descaling]",
		"        page Drafts [guides/drafts]",
		"        page Secret menu [guides/secret] hidden",
		"    tab API reference",
		"      dropdown REST",
		"        group Kettles",
		"          page List kettles [api/list-kettles]",
		"          page Get a kettle [api/get-kettle]",
		"          page Kettle boiled [api/kettle-boiled]",
		"          endpoint  [GET /kettles/{kettleId}/temperature] spec=api/kettle.yaml",
		"      dropdown Status href=https://status.example.com",
		"    tab Community",
		"      menu Recipes",
		"        anchor Tea",
		"          page Green tea [recipes/green-tea]",
		"        anchor Forum href=https://forum.example.com",
		"  version v1",
		"    group Get started",
		"      page Quickstart (v1) [v1/quickstart]",
		"language fr",
		"  group Démarrer",
		"    page Kettle [fr/index]",
		"    page Démarrage rapide [fr/quickstart]",
		"anchor Blog href=https://blog.example.com",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Nav:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestIndexable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		edit   func(fstest.MapFS)
		want   []string
		absent []string
	}{
		{
			name: "noindex, hidden pages and hidden groups are left out",
			want: []string{
				"index", "quickstart", "guides/brewing/index", "guides/brewing/temperatures", "guides/brewing/pressure",
				"guides/archive", "guides/descaling", "api/list-kettles", "api/get-kettle", "api/kettle-boiled",
				"recipes/green-tea", "v1/quickstart", "fr/index", "fr/quickstart",
			},
		},
		{
			name: "seo.indexing all brings hidden pages back, not noindex ones",
			edit: func(m fstest.MapFS) {
				m["docs.json"].Data = []byte(strings.Replace(string(m["docs.json"].Data), `"theme": "mint",`, `"theme": "mint", "seo": {"indexing": "all"},`, 1))
			},
			want: []string{
				"index", "quickstart", "guides/brewing/index", "guides/brewing/temperatures", "guides/brewing/pressure",
				"guides/internals", "guides/archive", "guides/descaling", "guides/secret", "api/list-kettles", "api/get-kettle", "api/kettle-boiled",
				"recipes/green-tea", "v1/quickstart", "fr/index", "fr/quickstart",
			},
		},
		{
			name: "searchable: false and broken front matter are left out",
			edit: func(m fstest.MapFS) {
				m["fr/index.mdx"].Data = []byte("---\ntitle: Kettle\nsearchable: false\n---\nBonjour\n")
				m["fr/quickstart.mdx"].Data = []byte("---\ntitle: [\n---\nBonjour\n")
			},
			absent: []string{"fr/index", "fr/quickstart"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := fixture(t, "kettle")
			if tc.edit != nil {
				tc.edit(m)
			}
			s := mustLoad(t, m)
			var got []string
			for _, np := range s.Indexable() {
				got = append(got, np.Path)
			}
			if tc.want != nil && !slices.Equal(got, tc.want) {
				t.Errorf("Indexable = %v\nwant %v", got, tc.want)
			}
			for _, a := range tc.absent {
				if slices.Contains(got, a) {
					t.Errorf("Indexable contains %s", a)
				}
			}
		})
	}
}

func TestLoadMintJSON(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, os.DirFS("testdata/legacy"))
	if s.ConfigFile != MintJSON {
		t.Errorf("ConfigFile = %q", s.ConfigFile)
	}
	want := []string{
		"introduction | Start |  |  | Start",
		"setup/install | Start > Setup |  |  | Start > Setup",
		"help/broken-front-matter | Troubleshooting | v1 |  | Troubleshooting",
		"api/ping | API > Endpoints |  |  | Endpoints",
		"api/brew | API > Endpoints |  |  | Endpoints",
		"recipes/chai | Recipes > Recipes |  |  | Recipes",
	}
	if got := navLines(s.NavPages()); !slices.Equal(got, want) {
		t.Errorf("NavPages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var tree []string
	flattenNav(s.Nav, 0, &tree)
	wantTree := []string{
		"group Start",
		"  page Introduction [introduction]",
		"  group Setup",
		"    page Install [setup/install]",
		"    page  [setup/gone]",
		"group Troubleshooting",
		"  page  [help/broken-front-matter]",
		"tab API",
		"  group Endpoints",
		"    page Ping [api/ping]",
		"    page Brew [api/brew]",
		"anchor Forum href=https://forum.example.com",
		"anchor Recipes",
		"  group Recipes",
		"    page Chai [recipes/chai]",
	}
	if !slices.Equal(tree, wantTree) {
		t.Errorf("Nav:\n%s\nwant:\n%s", strings.Join(tree, "\n"), strings.Join(wantTree, "\n"))
	}
	if !slices.Equal(s.Missing, []string{"setup/gone"}) {
		t.Errorf("Missing = %v", s.Missing)
	}
	broken := s.Pages["help/broken-front-matter"]
	var fe *FrontMatterError
	if broken == nil || !errors.As(broken.Err, &fe) || fe.Line != 3 {
		t.Fatalf("broken page = %+v, want a front matter error on line 3", broken)
	}
	if got := strings.TrimSpace(string(broken.Body)); got != "If nothing happens, check the fuse." {
		t.Errorf("broken page body = %q", got)
	}
	wantProblems := []Problem{
		{File: "help/broken-front-matter.mdx", Line: 3},
		{File: "mint.json", Line: 16},
	}
	if len(s.Problems) != len(wantProblems) {
		t.Fatalf("Problems = %v", s.Problems)
	}
	for i, w := range wantProblems {
		if p := s.Problems[i]; p.File != w.File || p.Line != w.Line || p.Message == "" {
			t.Errorf("Problems[%d] = %v, want %s:%d", i, p, w.File, w.Line)
		}
	}
	if !slices.Equal(s.OpenAPISpecs, []string{"openapi.json"}) {
		t.Errorf("OpenAPISpecs = %v", s.OpenAPISpecs)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fs       fstest.MapFS
		wantErr  string // "" when Load succeeds
		wantLine int
		config   string
	}{
		{name: "no config", fs: fstest.MapFS{"index.mdx": {Data: []byte("hi")}}, wantErr: "no docs.json or mint.json"},
		{name: "invalid JSON", fs: fstest.MapFS{"docs.json": {Data: []byte("{\n  \"name\": \"x\",\n  \"navigation\": {,}\n}\n")}}, wantErr: "invalid JSON", wantLine: 3},
		{name: "trailing comma", fs: fstest.MapFS{"docs.json": {Data: []byte("{\n  \"name\": \"x\",\n}\n")}}, wantErr: "invalid JSON", wantLine: 3},
		{name: "empty", fs: fstest.MapFS{"docs.json": {Data: nil}}, wantErr: "empty"},
		{name: "not an object", fs: fstest.MapFS{"docs.json": {Data: []byte("[]")}}, wantErr: "JSON object", wantLine: 1},
		{name: "mint.json", fs: fstest.MapFS{"mint.json": {Data: []byte(`{"navigation": []}`)}}, config: MintJSON},
		{
			name: "docs.json wins over mint.json",
			fs: fstest.MapFS{
				"docs.json": {Data: []byte(`{"navigation": {}}`)},
				"mint.json": {Data: []byte(`{"navigation": []}`)},
			},
			config: DocsJSON,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Load(tc.fs)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if s.ConfigFile != tc.config {
					t.Errorf("ConfigFile = %q, want %q", s.ConfigFile, tc.config)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
			var ce *ConfigError
			if tc.wantLine > 0 && (!errors.As(err, &ce) || ce.Line != tc.wantLine) {
				t.Errorf("err = %#v, want a ConfigError on line %d", err, tc.wantLine)
			}
		})
	}
}

// TestNavigation covers the shapes of docs.json navigation beyond the
// fixture: each case is a config and the pages it yields.
func TestNavigation(t *testing.T) {
	t.Parallel()
	pages := []string{"a", "b", "c", "d", "e", "x/y"}
	tests := []struct {
		name     string
		config   string
		extra    map[string]string
		want     []string // navLine of each NavPage
		problems []string // parts of Problem messages, in order
	}{
		{
			name:   "pages at the root",
			config: `{"navigation": {"pages": ["a", "/b", "c.mdx"]}}`,
			want:   []string{"a |  |  |  | ", "b |  |  |  | ", "c |  |  |  | "},
		},
		{
			name:   "groups at the root",
			config: `{"navigation": {"groups": [{"group": "G", "pages": ["a", {"group": "H", "pages": ["b"]}]}]}}`,
			want:   []string{"a | G |  |  | G", "b | G > H |  |  | G > H"},
		},
		{
			name: "products with tabs and menus",
			config: `{"navigation": {"products": [
				{"product": "P1", "tabs": [{"tab": "T", "menu": [{"item": "M", "groups": [{"group": "G", "pages": ["a"]}]}]}]},
				{"product": "P2", "pages": ["b"]},
				{"product": "P3", "href": "https://example.com"}]}}`,
			want: []string{"a | P1 > T > M > G |  |  | G", "b | P2 |  |  | "},
		},
		{
			name:   "anchors containing tabs",
			config: `{"navigation": {"anchors": [{"anchor": "A", "tabs": [{"tab": "T", "pages": ["a"]}]}]}}`,
			want:   []string{"a | A > T |  |  | "},
		},
		{
			name:   "dropdowns in versions in languages",
			config: `{"navigation": {"languages": [{"language": "de", "versions": [{"version": "1", "dropdowns": [{"dropdown": "D", "pages": ["a"]}]}]}]}}`,
			want:   []string{"a | D | 1 | de | "},
		},
		{
			name:   "a page named twice is listed once",
			config: `{"navigation": {"tabs": [{"tab": "T1", "pages": ["a"]}, {"tab": "T2", "pages": ["a", "b"]}]}}`,
			want:   []string{"a | T1 |  |  | ", "b | T2 |  |  | "},
		},
		{
			name:   "hidden tab, searchable group inside",
			config: `{"navigation": {"tabs": [{"tab": "T", "hidden": true, "groups": [{"group": "G", "pages": ["a"]}, {"group": "S", "searchable": true, "pages": ["b"]}]}]}}`,
			want:   []string{"a | T > G |  |  | G | hidden", "b | T > S |  |  | S"},
		},
		{
			name:   "endpoints are not pages",
			config: `{"navigation": {"groups": [{"group": "API", "openapi": "spec.json", "pages": ["a", "GET /users", "spec.json POST /users", "webhook ping"]}]}}`,
			want:   []string{"a | API |  |  | API"},
		},
		{
			name:     "missing page",
			config:   "{\"navigation\": {\"pages\": [\n\"a\",\n\"gone\"]}}",
			want:     []string{"a |  |  |  | "},
			problems: []string{`navigation.pages[1] names page "gone"`},
		},
		{
			name:     "malformed entries",
			config:   `{"navigation": {"groups": [{"group": "G", "pages": ["a", 7, {"title": "x"}, "../up"]}, "oops"], "tabs": {}}}`,
			want:     []string{"a | G |  |  | G"},
			problems: []string{"navigation.groups[0].pages[1] must be a page path or a group", "navigation.groups[0].pages[2] must be a page path or a group", `navigation.groups[0].pages[3]: "../up" is not a page path`, "navigation.groups[1] must be an object", "navigation.tabs must be a list"},
		},
		{
			name:     "navigation as a list in docs.json",
			config:   `{"navigation": [{"group": "G", "pages": ["a"]}]}`,
			want:     []string{"a | G |  |  | G"},
			problems: []string{`"navigation" must be an object`},
		},
		{
			name:     "no navigation",
			config:   `{"name": "x"}`,
			problems: []string{`no "navigation"`},
		},
		{
			name:   "$ref with keys beside it",
			config: `{"navigation": {"languages": [{"$ref": "nav/de.json", "language": "de-CH"}]}}`,
			extra:  map[string]string{"nav/de.json": `{"language": "de", "pages": [{"$ref": "group.json"}]}`, "nav/group.json": `{"group": "G", "pages": ["x/y"]}`},
			want:   []string{"x/y | G |  | de-CH | G"},
		},
		{
			name:     "$ref to a missing file",
			config:   `{"navigation": {"languages": [{"$ref": "./nope.json"}]}}`,
			problems: []string{`$ref "./nope.json": cannot read nope.json`},
		},
		{
			name:     "$ref cycle",
			config:   `{"navigation": {"$ref": "loop.json"}}`,
			extra:    map[string]string{"loop.json": `{"pages": ["a"], "groups": [{"$ref": "loop.json"}]}`},
			want:     []string{"a |  |  |  | "},
			problems: []string{"refers back to itself"},
		},
		{
			name:     "$ref outside the root",
			config:   `{"navigation": {"$ref": "../../etc/nav.json"}}`,
			problems: []string{"outside the docs root"},
		},
		{
			name:     "$ref to invalid JSON",
			config:   `{"navigation": {"$ref": "bad.json"}}`,
			extra:    map[string]string{"bad.json": "{\n\"pages\": [\n}"},
			problems: []string{"invalid JSON"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := fstest.MapFS{"docs.json": {Data: []byte(tc.config)}}
			for _, p := range pages {
				m[p+".mdx"] = &fstest.MapFile{Data: []byte("---\ntitle: " + p + "\n---\n")}
			}
			for name, data := range tc.extra {
				m[name] = &fstest.MapFile{Data: []byte(data)}
			}
			s := mustLoad(t, m)
			if got := navLines(s.NavPages()); !slices.Equal(got, tc.want) {
				t.Errorf("NavPages = %q\nwant %q", got, tc.want)
			}
			if len(s.Problems) != len(tc.problems) {
				t.Fatalf("Problems = %v\nwant %d matching %q", s.Problems, len(tc.problems), tc.problems)
			}
			for i, w := range tc.problems {
				if !strings.Contains(s.Problems[i].Message, w) {
					t.Errorf("Problems[%d] = %v, want it to contain %q", i, s.Problems[i], w)
				}
			}
		})
	}
}

// FuzzNavigation loads arbitrary docs.json and mint.json content: Load must
// not panic, and every NavPage must be a page Load read.
func FuzzNavigation(f *testing.F) {
	for _, s := range []string{
		`{"navigation": {"tabs": [{"tab": "T", "groups": [{"group": "G", "root": "a", "pages": ["a", {"group": "H", "pages": ["b"]}]}]}]}}`,
		`{"navigation": {"languages": [{"language": "fr", "$ref": "docs.json"}]}}`,
		`{"navigation": {"products": [{"product": "P", "menu": [{"item": "I", "pages": ["GET /x", "../a"]}]}]}}`,
		`{"navigation": [{"group": "G", "pages": ["a"]}], "tabs": [{"name": "T", "url": "a"}]}`,
		`{"navigation": {"pages": [1, null, true, [], {}]}, "redirects": [{"source": "/:a*", "destination": "/b"}]}`,
		`[]`,
		`{"navigation": {"global": {"anchors": [{"anchor": "A", "href": "https://x"}]}}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, config []byte, mint bool) {
		name := DocsJSON
		if mint {
			name = MintJSON
		}
		m := fstest.MapFS{
			name:     {Data: config},
			"a.mdx":  {Data: []byte("---\ntitle: A\n---\n# A\n")},
			"b.mdx":  {Data: []byte("---\ntitle: [\n---\n")},
			"x.json": {Data: config},
		}
		s, err := Load(m)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Load error %v is not a ConfigError", err)
			}
			return
		}
		for _, np := range s.NavPages() {
			if s.Pages[np.Path] == nil {
				t.Fatalf("NavPage %q has no Page", np.Path)
			}
			if !fs.ValidPath(np.Path) {
				t.Fatalf("NavPage path %q is not a valid path", np.Path)
			}
		}
		for _, miss := range s.Missing {
			if s.Pages[miss] != nil {
				t.Fatalf("%q is both missing and loaded", miss)
			}
		}
		_ = s.Indexable()
	})
}
