package docs

import (
	"io/fs"
	"slices"
	"strings"
)

// NavReport is what CheckNavigation finds wrong with a site's navigation.
type NavReport struct {
	// ConfigFile is "docs.json" or "mint.json".
	ConfigFile string
	// Listed is how many pages the navigation names that have a file;
	// Pages is how many page files the docs hold (snippets aside).
	Listed, Pages int
	// Missing holds the entries that name a page without a file (or whose
	// file cannot be read), as Validate reports them.
	Missing []Problem
	// Unlisted holds the page files no navigation entry names, except those
	// whose front matter says hidden: true (deliberately left out) and
	// files under snippets/. It is empty when the config cannot be read.
	Unlisted []string
	// Duplicates holds the pages that more than one entry names within one
	// version and language.
	Duplicates []NavDuplicate
	// Other holds Validate's other problems with the config and the files
	// its "$ref"s name.
	Other []Problem
}

// NavDuplicate is a page the navigation names more than once.
type NavDuplicate struct {
	Page              string
	Version, Language string
	// Places says where each entry sits: the titles of the tabs, groups and
	// other entries above it, outermost first, joined by " › " ("" at the
	// top level).
	Places []string
}

// Problems counts what the report holds.
func (r NavReport) Problems() int {
	return len(r.Missing) + len(r.Unlisted) + len(r.Duplicates) + len(r.Other)
}

// CheckNavigation reads the navigation config and the page files, and
// reports entries naming missing pages, pages no entry names, pages named
// twice, and Validate's problems with the config. It changes nothing.
func CheckNavigation(fsys fs.FS) NavReport {
	v := validator{fsys: fsys}
	configRead := v.loadSite()
	r := NavReport{ConfigFile: v.site.ConfigFile, Listed: len(v.site.Pages), Missing: v.site.missingProblems}
	for _, p := range v.result() {
		if !slices.Contains(r.Missing, p) {
			r.Other = append(r.Other, p)
		}
	}
	listed := map[string]bool{}
	for _, p := range v.site.Pages {
		listed[p.File] = true
	}
	for _, f := range v.pageFiles() {
		if strings.HasPrefix(f, "snippets/") {
			continue
		}
		r.Pages++
		if configRead && !listed[f] && !hiddenPage(fsys, f) {
			r.Unlisted = append(r.Unlisted, f)
		}
	}
	r.Duplicates = navDuplicates(v.site.Nav)
	return r
}

// hiddenPage reports whether a page's front matter says hidden: true.
func hiddenPage(fsys fs.FS, name string) bool {
	src, err := ReadFile(fsys, name, MaxFileBytes)
	if err != nil {
		return false
	}
	fm, _, _, _ := ParseFrontMatter(src)
	return fmBool(fm, "hidden")
}

// navDuplicates finds the pages named by more than one entry of a "pages"
// list within one version and language, in the order they first appear.
func navDuplicates(nav []NavItem) []NavDuplicate {
	type key struct{ page, version, language string }
	places := map[key][]string{}
	var order []key
	var walk func(items []NavItem, crumbs []string)
	walk = func(items []NavItem, crumbs []string) {
		for _, it := range items {
			switch it.Kind {
			case KindPage:
				k := key{it.Page, it.Version, it.Language}
				if places[k] == nil {
					order = append(order, k)
				}
				places[k] = append(places[k], strings.Join(crumbs, " › "))
				continue
			case KindEndpoint:
				continue
			}
			next := crumbs
			if it.Title != "" && it.Kind != KindVersion && it.Kind != KindLanguage {
				next = append(slices.Clip(crumbs), it.Title)
			}
			walk(it.Children, next)
		}
	}
	walk(nav, nil)
	var out []NavDuplicate
	for _, k := range order {
		if len(places[k]) > 1 {
			out = append(out, NavDuplicate{Page: k.page, Version: k.version, Language: k.language, Places: places[k]})
		}
	}
	return out
}
