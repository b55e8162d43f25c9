package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// corporaDir finds shared/corpora by walking up from the package directory.
func corporaDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		for _, cand := range []string{
			filepath.Join(dir, "shared", "corpora"),
			filepath.Join(dir, "..", "shared", "corpora"),
		} {
			if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
				return cand
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("shared/corpora not found above the package directory")
		}
		dir = parent
	}
}

// corpusPageFiles lists every .mdx and .md file of a corpus except the
// copied repository notes.
func corpusPageFiles(t *testing.T, fsys fs.FS) []string {
	t.Helper()
	var files []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch name {
		case "README.md", "PROVENANCE.md":
			return nil
		}
		if strings.HasSuffix(name, ".mdx") || strings.HasSuffix(name, ".md") {
			files = append(files, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestCorpora loads the three real sites and validates every page of each.
// The sites build, so what Validate reports is either a real defect of the
// site (logged) or a false positive to fix.
func TestCorpora(t *testing.T) {
	t.Parallel()
	root := corporaDir(t)
	for _, name := range []string{"pezzo", "hoppscotch", "mintlify"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(root, name)
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("corpus %s absent", name)
			}
			fsys := os.DirFS(dir)
			site, err := Load(fsys)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			nav := site.NavPages()
			if len(nav) == 0 {
				t.Fatal("NavPages is empty")
			}
			noindex, hidden, api, ops := 0, 0, 0, 0
			for _, p := range site.Pages {
				if p.NoIndex {
					noindex++
				}
				if p.Hidden {
					hidden++
				}
				if p.OpenAPI != "" {
					api++
					if _, ok := site.Operation(p); ok {
						ops++
					}
				}
			}
			t.Logf("%s: config %s, %d nav pages, %d indexable, %d missing, %d noindex, %d hidden, %d openapi pages (%d operations found), specs %v",
				name, site.ConfigFile, len(nav), len(site.Indexable()), len(site.Missing), noindex, hidden, api, ops, site.OpenAPISpecs)
			for _, m := range site.Missing {
				t.Logf("  missing nav page: %s", m)
			}
			for _, p := range site.Problems {
				t.Logf("  load problem: %s", p)
			}

			files := corpusPageFiles(t, fsys)
			problems := Validate(fsys, files)
			kinds := map[string]int{}
			for _, p := range problems {
				kinds[problemKind(p)]++
			}
			t.Logf("%s: Validate(%d files): %d problems %v", name, len(files), len(problems), kinds)
			for _, p := range problems {
				t.Logf("  %s", p)
			}
		})
	}
}

// problemKind groups Validate's messages for the corpus summary.
func problemKind(p Problem) string {
	m := p.Message
	switch {
	case strings.Contains(m, "names page"):
		return "missing-nav-page"
	case strings.HasPrefix(m, "front matter"):
		return "front-matter"
	case strings.Contains(m, "has no heading with anchor"):
		return "anchor"
	case strings.Contains(m, "there is no file"):
		return "missing-static-file"
	case strings.HasPrefix(m, "link"):
		return "broken-link"
	case strings.HasPrefix(m, "openapi"):
		return "openapi"
	case slices.Contains([]string{".json", ".yaml", ".yml"}, filepath.Ext(p.File)):
		return "config"
	default:
		return "mdx"
	}
}
