package docs

import (
	"io/fs"
	"os"
	"strings"
	"testing"
)

func TestResolveLink(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, os.DirFS("testdata/kettle"))
	tests := []struct {
		from, target string
		path         string
		internal, ok bool
	}{
		// Root-relative and relative page links.
		{"index", "/quickstart", "quickstart", true, true},
		{"index", "/quickstart/", "quickstart", true, true},
		{"index", "quickstart", "quickstart", true, true},
		{"index", "./guides/descaling#before-you-start", "guides/descaling#before-you-start", true, true},
		{"guides/brewing/index", "pressure", "guides/brewing/pressure", true, true},
		{"guides/brewing/index", "./temperatures#green-tea", "guides/brewing/temperatures#green-tea", true, true},
		{"guides/brewing/index.mdx", "../descaling#steps", "guides/descaling#steps", true, true},
		{"/guides/brewing/pressure", "../../quickstart", "quickstart", true, true},
		// A directory is served by its index page; the site root too.
		{"index", "/guides/brewing", "guides/brewing/index", true, true},
		{"fr/quickstart", "/fr", "fr/index", true, true},
		{"guides/descaling", "/", "index", true, true},
		// Same page, query strings, extensions, .md pages, escapes.
		{"quickstart", "#fill-the-kettle", "quickstart#fill-the-kettle", true, true},
		{"index", "/quickstart?tab=mac#switch-it-on", "quickstart#switch-it-on", true, true},
		{"index", "/quickstart.mdx", "quickstart", true, true},
		{"index", "/v1/quickstart", "v1/quickstart", true, true},
		{"index", "/guides/brewing/temperatures#green%20tea", "guides/brewing/temperatures#green tea", true, true},
		// Pages that are not in the navigation still resolve.
		{"index", "/guides/orphan", "guides/orphan", true, true},
		// Static files.
		{"index", "/images/kettle.svg", "images/kettle.svg", true, true},
		{"guides/descaling", "../images/kettle.svg", "images/kettle.svg", true, true},
		{"index", "/images/missing.png", "images/missing.png", true, false},
		// Redirects.
		{"index", "/old/brewing", "guides/brewing/index", true, true},
		{"index", "/legacy/descaling#steps", "guides/descaling#steps", true, true},
		{"index", "/legacy/nothing", "legacy/nothing", true, false},
		// Broken.
		{"index", "/nowhere", "nowhere", true, false},
		{"guides/descaling", "../../outside", "../outside", true, false},
		{"index", "", "", true, false},
		// External.
		{"index", "https://example.com/a#b", "https://example.com/a#b", false, true},
		{"index", "HTTP://EXAMPLE.COM", "HTTP://EXAMPLE.COM", false, true},
		{"index", "mailto:help@example.com", "mailto:help@example.com", false, true},
		{"index", "tel:+15550100", "tel:+15550100", false, true},
		{"index", "//cdn.example.com/x.js", "//cdn.example.com/x.js", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.from+" "+tc.target, func(t *testing.T) {
			t.Parallel()
			p, internal, ok := s.ResolveLink(tc.from, tc.target)
			if p != tc.path || internal != tc.internal || ok != tc.ok {
				t.Errorf("ResolveLink(%q, %q) = %q, %v, %v; want %q, %v, %v", tc.from, tc.target, p, internal, ok, tc.path, tc.internal, tc.ok)
			}
		})
	}
}

func TestMatchRedirect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		source, destination, path string
		want                      string
		ok                        bool
	}{
		{"/old", "/new", "old", "/new", true},
		{"/old/", "new", "old", "/new", true},
		{"/old", "/new", "old/x", "", false},
		{"/a/:slug", "/b/:slug", "a/x", "/b/x", true},
		{"/a/:slug", "/b/:slug", "a/x/y", "", false},
		{"/a/:slug*", "/b/:slug*", "a/x/y", "/b/x/y", true},
		{"/a/:slug*", "/b/:slug*", "a", "/b/", true},
		{"/a/*", "/b/*", "a/x/y", "/b/x/y", true},
		{"/a/*", "/b/*", "a", "", false},
		{"/a/:s/:slug", "/b/:slug/:s", "a/1/2", "/b/2/1", true},
		{"/a/*", "https://example.com/*", "a/x", "https://example.com/x", true},
	}
	for _, tc := range tests {
		got, ok := matchRedirect(tc.source, tc.destination, tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("matchRedirect(%q, %q, %q) = %q, %v; want %q, %v", tc.source, tc.destination, tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, os.DirFS("testdata/kettle"))
	tests := []struct {
		path string
		want string
		ok   bool
	}{
		{"/snippets/safety.mdx", "## Safety first\n\nUnplug the kettle before you clean it.\n", true},
		{"snippets/safety.mdx", "## Safety first\n\nUnplug the kettle before you clean it.\n", true},
		{"/quickstart.mdx", "\nimport Safety", true}, // front matter stripped
		{"/snippets/none.mdx", "", false},
		{"/images/kettle.svg", "", false},
		{"../secrets.mdx", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		got, ok := s.Snippet(tc.path)
		if ok != tc.ok || len(got) < len(tc.want) || string(got[:len(tc.want)]) != tc.want {
			t.Errorf("Snippet(%q) = %q, %v; want %q…, %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzResolveLink checks that any link target resolves without panicking,
// and that an internal target that resolves names a path under the root.
func FuzzResolveLink(f *testing.F) {
	s := mustLoad(f, os.DirFS("testdata/kettle"))
	for _, t := range []string{"/quickstart", "../x", "#a", "https://x", "/legacy/a/b", "%zz", "/a?b#c", "//x", "/", "..", "mailto:", ":x"} {
		f.Add("guides/brewing/index", t)
	}
	f.Fuzz(func(t *testing.T, from, target string) {
		p, internal, ok := s.ResolveLink(from, target)
		if !internal || !ok || p == "" {
			return
		}
		base, _, _ := strings.Cut(p, "#")
		if base != "" && !fs.ValidPath(base) {
			t.Fatalf("ResolveLink(%q, %q) = %q, not a path under the root", from, target, p)
		}
	})
}
