package search

import (
	"strings"

	"github.com/docsmith/docsmith/internal/docs"
)

// SiteCatalog lists a docs site's indexed pages in navigation order, with
// what a listing of them shows (llms.txt): the site's name and description,
// and each page's title, link, description and place in the navigation. It
// is built with the index, from the same pages.
type SiteCatalog struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Pages       []CatalogPage `json:"pages"`
}

// CatalogPage is one page of a SiteCatalog.
type CatalogPage struct {
	Path        string `json:"path"`
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	// Section holds the titles of the tabs, anchors and groups above the
	// page, outermost first.
	Section  []string `json:"section,omitempty"`
	Version  string   `json:"version,omitempty"`
	Language string   `json:"language,omitempty"`
	// Groups are the page's access groups (see Chunk.Groups).
	Groups []string `json:"groups,omitempty"`
}

// Public reports whether the page is for every reader: it has no access
// groups.
func (p CatalogPage) Public() bool { return len(p.Groups) == 0 }

// Catalog lists the pages Chunks indexes, in navigation order, with the
// titles, links and access groups their chunks carry.
func Catalog(site *docs.Site, siteURL string) SiteCatalog {
	base := strings.TrimRight(siteURL, "/")
	c := SiteCatalog{Pages: []CatalogPage{}}
	if name, ok := site.Config["name"].(string); ok {
		c.Name = strings.TrimSpace(name)
	}
	if desc, ok := site.Config["description"].(string); ok {
		c.Description = strings.TrimSpace(desc)
	}
	for _, np := range site.Indexable() {
		p := site.Pages[np.Path]
		if p == nil {
			continue
		}
		c.Pages = append(c.Pages, CatalogPage{
			Path:        p.Path,
			Title:       pageTitle(p),
			URL:         base + "/" + p.Path,
			Description: strings.Join(strings.Fields(p.Description), " "),
			Section:     np.Breadcrumb,
			Version:     np.Version,
			Language:    np.Language,
			Groups:      stringList(p.FrontMatter["groups"]),
		})
	}
	return c
}
