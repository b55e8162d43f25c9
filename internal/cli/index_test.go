package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// An API page's text comes from the OpenAPI spec it names: after
// `docsmith index` the page is found by words only the spec holds, as
// `docsmith eval retrieval` finds it.
func TestIndexedOpenAPIPageIsSearchable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	site := filepath.Join(t.TempDir(), "site")
	if err := os.CopyFS(site, os.DirFS("../search/testdata/site")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "docs", "--repo", site, "--forge", "local"},
		{"domain", "create", "--org", "acme", "--domain", "acme-docs", "--project", "docs", "--site-url", "https://docs.acme.example"},
		{"index", "acme-docs"},
	} {
		if r := run(t, dir, args...); r.code != 0 {
			t.Fatalf("%s = %+v", strings.Join(args, " "), r)
		}
	}
	store, err := sqlite.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = store.Close() }()
	page, err := store.Page(t.Context(), "acme-docs", "api/get-kettle")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.Content, "engraved on the base") {
		t.Fatalf("the API page was indexed without its spec's text:\n%s", page.Content)
	}
	hits, err := search.NewRetriever(search.NewMemory(store, search.MemoryConfig{})).Retrieve(t.Context(), "acme-docs", search.Request{Query: "serial number engraved", PageSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].PagePath != "api/get-kettle" {
		t.Fatalf("search for the spec's words = %+v", hits)
	}
}
