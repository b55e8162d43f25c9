package llmstxt_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/llmstxt"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

const siteURL = "https://lumen.example/docs"

// fixture is the catalog of testdata/site and its pages as an index holds
// them (engine.AssemblePage over the chunks).
func fixture(t *testing.T) (search.SiteCatalog, llmstxt.PageFunc) {
	t.Helper()
	site, err := docs.Load(os.DirFS("testdata/site"))
	if err != nil {
		t.Fatal(err)
	}
	byPage := map[string][]search.Chunk{}
	for _, c := range search.Chunks(site, siteURL) {
		byPage[c.PagePath] = append(byPage[c.PagePath], c)
	}
	pages := func(_ context.Context, path string) (string, error) {
		pt, ok := engine.AssemblePage(byPage[path])
		if !ok {
			return "", fmt.Errorf("no page %s", path)
		}
		return pt.Content, nil
	}
	return search.Catalog(site, siteURL), pages
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestIndexGolden(t *testing.T) {
	t.Parallel()
	c, _ := fixture(t)
	got := llmstxt.Index(c, "lumen-docs")
	golden(t, "llms.txt", got)
	for _, left := range []string{"Audit log", "admin/audit", "Drafts"} {
		if strings.Contains(string(got), left) {
			t.Errorf("llms.txt lists %q, a page restricted to a group or kept out of search", left)
		}
	}
}

func TestFullGolden(t *testing.T) {
	t.Parallel()
	c, pages := fixture(t)
	got, err := llmstxt.Full(t.Context(), c, "lumen-docs", pages)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "llms-full.txt", got)
	if strings.Contains(string(got), "lumen audit") {
		t.Error("llms-full.txt holds the text of a page restricted to a group")
	}
}

func TestHeaderAndEscapes(t *testing.T) {
	t.Parallel()
	c := search.SiteCatalog{Pages: []search.CatalogPage{
		{Path: "a", Title: "Brackets [beta]", URL: "https://x.example/a (old)"},
		{Path: "b", Title: "Versioned", URL: "https://x.example/b", Version: "v1"},
	}}
	got := string(llmstxt.Index(c, "acme-docs"))
	want := "# acme-docs\n\n> The documentation of acme-docs.\n\n## Docs\n\n- [Brackets \\[beta\\]](https://x.example/a%20%28old%29.md)\n\n## v1\n\n- [Versioned](https://x.example/b.md)\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestMarkdownURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ path, url, want string }{
		{"guides/setup", "https://x.example/docs/guides/setup", "https://x.example/docs/guides/setup.md"},
		{"index", "https://x.example/docs/", "https://x.example/docs/index.md"},
		{"guides/index", "https://x.example/docs/guides", "https://x.example/docs/guides/index.md"},
		{"guides/setup", "/guides/setup", "/guides/setup.md"},
		{"index", "/", "/index.md"},
	} {
		if got := llmstxt.MarkdownURL(search.CatalogPage{Path: c.path, URL: c.url}); got != c.want {
			t.Errorf("MarkdownURL(%s, %s) = %s, want %s", c.path, c.url, got, c.want)
		}
	}
}

func TestFullKeepsMarkdown(t *testing.T) {
	t.Parallel()
	page := "# Setup\n\n```yaml\nkettle:\n  water: soft\n```\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n    indented code ends it  \n"
	c := search.SiteCatalog{Name: "Acme", Pages: []search.CatalogPage{{Path: "setup", Title: "Setup", URL: "https://x.example/setup"}}}
	got, err := llmstxt.Full(t.Context(), c, "acme", func(context.Context, string) (string, error) { return "\n\n" + page, nil })
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSuffix(page, "  \n")
	want := "# Setup\n\nSource: https://x.example/setup\n\n" + strings.TrimPrefix(body, "# Setup\n\n") + "\n"
	if _, section, _ := strings.Cut(string(got), "\n---\n\n"); section != want {
		t.Errorf("section =\n%q\nwant\n%q", section, want)
	}
}
