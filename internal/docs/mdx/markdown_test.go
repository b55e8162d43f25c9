package mdx

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/markdown")

// renderPage renders a page body the way the golden files show it: each
// section's heading as a Markdown heading line, then its Markdown.
func renderPage(body []byte, opts Options) string {
	var out strings.Builder
	for _, s := range Render(body, opts) {
		if s.Heading != "" {
			if out.Len() > 0 {
				out.WriteString("\n\n")
			}
			out.WriteString(strings.Repeat("#", s.Level) + " " + s.Heading)
		}
		if md := JoinLines(s.Lines); md != "" {
			if out.Len() > 0 {
				out.WriteString("\n\n")
			}
			out.WriteString(md)
		}
	}
	return out.String() + "\n"
}

// TestRenderGolden renders each testdata/markdown/*.mdx page and compares
// it with the .md beside it (go test -run RenderGolden -update rewrites
// them). Snippets are read from testdata/markdown/snippets.
func TestRenderGolden(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("testdata/markdown/*.mdx")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no golden pages: %v", err)
	}
	resolve := func(p string) ([]byte, bool) {
		b, err := os.ReadFile(filepath.Join("testdata/markdown/snippets", filepath.Base(p)))
		return b, err == nil
	}
	for _, page := range pages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			body, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			got := renderPage(body, Options{Resolve: resolve, SiteURL: "https://docs.example/", PagePath: "guides/page"})
			golden := strings.TrimSuffix(page, ".mdx") + ".md"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", page, golden, got, want)
			}
			// Render's Text is Sections' Text, and its Lines carry it.
			plain := Sections(body, resolve)
			rendered := Render(body, Options{Resolve: resolve})
			if len(plain) != len(rendered) {
				t.Fatalf("Render has %d sections, Sections %d", len(rendered), len(plain))
			}
			for i := range plain {
				if plain[i].Text != rendered[i].Text {
					t.Errorf("section %d text = %q, Sections has %q", i, rendered[i].Text, plain[i].Text)
				}
				var lines []string
				for _, l := range rendered[i].Lines {
					if l.Text != "" {
						lines = append(lines, l.Text)
					}
				}
				if got := strings.Join(lines, "\n"); got != plain[i].Text {
					t.Errorf("section %d: the Lines' text\n%q\nis not the section's text\n%q", i, got, plain[i].Text)
				}
			}
		})
	}
}
