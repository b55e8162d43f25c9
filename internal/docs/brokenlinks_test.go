package docs

import (
	"strings"
	"testing"
	"testing/fstest"
)

// linkSite is a small site whose pages moved about: guides/setup.mdx used
// to be at start/setup.mdx, two pages are called widgets, and tools is a
// directory without an index beside a page reference/tools.mdx.
func linkSite(index string) fstest.MapFS {
	page := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"docs.json": page(`{"navigation": {"groups": [{"group": "Guides", "pages": ["index", "guides/setup", "guides/widgets", "reference/widgets"]}]}}`),
		"index.mdx": page("---\ntitle: Home\n---\n\n" + index),
		"guides/setup.mdx": page("---\ntitle: Setup\n---\n\n## Install steps\n\nRun it.\n\n## Node.js setup\n\n" +
			"## Set up\n\n## Setup\n\nSee [the steps](#Install_Steps).\n"),
		"guides/widgets.mdx":    page("---\ntitle: Widgets\n---\n\nGuide.\n"),
		"reference/widgets.mdx": page("---\ntitle: Widgets\n---\n\nReference.\n"),
		"snippets/intro.mdx":    page("Shared intro.\n"),
		"tools/readme.mdx":      page("---\ntitle: Tools\n---\n\nTools.\n"),
		"tools/hammer.mdx":      page("---\ntitle: Hammer\n---\n\nSee [the tools](/tools/readme).\n"),
		"reference/tools.mdx":   page("---\ntitle: Tool reference\n---\n\nReference.\n"),
	}
}

func TestBrokenLinksFixes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, link, fix, unfixed string
	}{
		{"moved page, same file name", "/start/setup", "/guides/setup", ""},
		{"relative link to a moved page", "start/setup", "/guides/setup", ""},
		{"case", "/Guides/Setup", "/guides/setup", ""},
		{"case and suffix", "/GUIDES/SETUP.MDX", "/guides/setup", ""},
		{"a final index", "/guides/setup/index", "/guides/setup", ""},
		{"moved, query and anchor kept", "/start/setup?os=mac#install-steps", "/guides/setup?os=mac#install-steps", ""},
		{"moved, anchor normalised", "/start/setup#install_steps", "/guides/setup#install-steps", ""},
		{"anchor in other case and punctuation", "/guides/setup#Install.Steps", "/guides/setup#install-steps", ""},
		{"anchor of a heading with two slugs", "/guides/setup#nodejs_setup", "/guides/setup#node-js-setup", ""},
		{"two pages of that name", "/widgets", "", `link "/widgets" could mean /guides/widgets or /reference/widgets`},
		{"two headings of that anchor", "/guides/setup#set_up", "", `link "/guides/setup#set_up" could mean #set-up or #setup`},
		{"moved, anchor matches nothing", "/start/setup#nothing", "", `seems to mean /guides/setup, but #nothing matches no single heading there`},
		{"nothing of that name", "/nowhere", "", "there is no page nowhere.mdx"},
		{"an anchor nothing matches", "/guides/setup#faq", "", "/guides/setup has no heading with anchor #faq"},
		{"a snippet is not a page", "/intro", "", "there is no page intro.mdx"},
		{"a directory without an index", "/tools", "", "there is no page tools.mdx"},
		{"a missing image", "/images/logo.png", "", "there is no file images/logo.png"},
		{"outside the docs", "../../x", "", "leads outside the docs root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			broken, _ := BrokenLinks(linkSite("[it](" + tc.link + ")\n"))
			var got *BrokenLink
			for i := range broken {
				if broken[i].File == "index.mdx" {
					got = &broken[i]
				}
			}
			if got == nil {
				t.Fatalf("the link %q is not reported broken: %+v", tc.link, broken)
			}
			if got.Target != tc.link || got.Line != 5 || got.Message == "" {
				t.Errorf("got %+v, want the link %q on line 5 with the validator's message", got, tc.link)
			}
			if got.Fix != tc.fix {
				t.Errorf("Fix = %q, want %q", got.Fix, tc.fix)
			}
			if tc.unfixed == "" && got.Unfixed != "" || !strings.Contains(got.Unfixed, tc.unfixed) {
				t.Errorf("Unfixed = %q, want it to contain %q", got.Unfixed, tc.unfixed)
			}
		})
	}
}

func TestBrokenLinksOfTheWholeSite(t *testing.T) {
	t.Parallel()
	broken, pages := BrokenLinks(linkSite("Fine: [setup](/guides/setup), [tools](tools/hammer).\n"))
	if pages != 8 {
		t.Errorf("checked %d pages, want 8 (every page and the snippet)", pages)
	}
	// The one broken link is a same-page anchor of guides/setup.mdx.
	if len(broken) != 1 {
		t.Fatalf("broken = %+v, want one", broken)
	}
	want := BrokenLink{File: "guides/setup.mdx", Line: 15, Target: "#Install_Steps", Fix: "#install-steps"}
	got := broken[0]
	got.Message = ""
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestBrokenLinksNone(t *testing.T) {
	t.Parallel()
	site := linkSite("[setup](/guides/setup#install-steps)\n")
	site["guides/setup.mdx"] = &fstest.MapFile{Data: []byte("---\ntitle: Setup\n---\n\n## Install steps\n")}
	if broken, pages := BrokenLinks(site); len(broken) != 0 || pages != 8 {
		t.Fatalf("BrokenLinks = %+v, %d; want none of 8 pages", broken, pages)
	}
}
