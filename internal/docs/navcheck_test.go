package docs

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func navSite(config string) fstest.MapFS {
	page := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"docs.json":          page(config),
		"index.mdx":          page("---\ntitle: Home\n---\n"),
		"guides/setup.mdx":   page("---\ntitle: Setup\n---\n"),
		"guides/orphan.mdx":  page("---\ntitle: Orphan\n---\n"),
		"guides/secret.mdx":  page("---\ntitle: Secret\nhidden: true\n---\n"),
		"snippets/note.mdx":  page("A note.\n"),
		"README.md":          page("Not a page.\n"),
		"v2/guides/tips.mdx": page("---\ntitle: Tips\n---\n"),
	}
}

func TestCheckNavigation(t *testing.T) {
	t.Parallel()
	r := CheckNavigation(navSite(`{
  "navigation": {
    "versions": [
      {"version": "v1", "groups": [
        {"group": "Start", "pages": ["index", "guides/setup", "guides/old"]},
        {"group": "More", "pages": ["guides/setup", 7]}
      ]},
      {"version": "v2", "groups": [
        {"group": "Start", "pages": ["index", "v2/guides/tips"]}
      ]}
    ]
  }
}`))
	if r.ConfigFile != "docs.json" || r.Listed != 3 || r.Pages != 5 {
		t.Errorf("config %q, listed %d, pages %d; want docs.json, 3, 5", r.ConfigFile, r.Listed, r.Pages)
	}
	if len(r.Missing) != 1 || r.Missing[0].Line != 5 || !strings.Contains(r.Missing[0].Message, `names page "guides/old", but there is no guides/old.mdx`) {
		t.Errorf("Missing = %v", r.Missing)
	}
	if want := []string{"guides/orphan.mdx"}; !reflect.DeepEqual(r.Unlisted, want) {
		t.Errorf("Unlisted = %v, want %v (hidden pages, snippets and README.md aside)", r.Unlisted, want)
	}
	// index is in both versions, which is no duplicate.
	want := []NavDuplicate{{Page: "guides/setup", Version: "v1", Places: []string{"Start", "More"}}}
	if !reflect.DeepEqual(r.Duplicates, want) {
		t.Errorf("Duplicates = %+v, want %+v", r.Duplicates, want)
	}
	if len(r.Other) != 1 || !strings.Contains(r.Other[0].Message, "must be a page path or a group") {
		t.Errorf("Other = %v, want the entry 7", r.Other)
	}
	if r.Problems() != 4 {
		t.Errorf("Problems() = %d, want 4", r.Problems())
	}
}

func TestCheckNavigationClean(t *testing.T) {
	t.Parallel()
	site := navSite(`{"navigation": {"groups": [{"group": "Start", "pages": ["index", "guides/setup", "guides/orphan", "v2/guides/tips"]}]}}`)
	if r := CheckNavigation(site); r.Problems() != 0 || r.Listed != 4 || r.Pages != 5 {
		t.Fatalf("report = %+v, want no problems, 4 listed of 5 pages", r)
	}
}

func TestCheckNavigationWithoutConfig(t *testing.T) {
	t.Parallel()
	site := navSite("")
	delete(site, "docs.json")
	r := CheckNavigation(site)
	if len(r.Other) != 1 || !strings.Contains(r.Other[0].Message, "there is no docs.json or mint.json") {
		t.Errorf("Other = %v, want the missing config", r.Other)
	}
	if len(r.Unlisted) != 0 || len(r.Missing) != 0 || len(r.Duplicates) != 0 {
		t.Errorf("report = %+v, want only the missing config (every page would be unlisted)", r)
	}
}
