package search

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search/engine"
)

// corporaDir finds shared/corpora by walking up from the package directory,
// or skips the test.
func corporaDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		c := filepath.Join(dir, "shared", "corpora")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no shared/corpora directory above the package")
		}
		dir = parent
	}
}

// fencedCode is a fenced code block read from Markdown: its info string
// and its lines less the block's prefix (quote markers, the indentation of
// the list item or fence).
type fencedCode struct {
	info, body string
}

// linePrefix splits a line into its quote markers (each '>' with one
// optional space after it) and the rest.
func linePrefix(line string) (quotes int, rest string) {
	for {
		trimmed := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(trimmed, ">") {
			return quotes, line
		}
		line = strings.TrimPrefix(trimmed[1:], " ")
		quotes++
	}
}

// markdownCode returns the fenced code blocks of Markdown, read the way
// CommonMark reads them: an opening run of ``` or ~~~ (or $$), content lines
// less the quote markers of the opening line and as much indentation as
// the opening fence had (a list item's marker counting as indentation).
func markdownCode(md string) []fencedCode {
	var out []fencedCode
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		quotes, rest := linePrefix(lines[i])
		indent := 0
		for {
			trimmed := strings.TrimLeft(rest, " \t")
			indent += len(rest) - len(trimmed)
			rest = trimmed
			marker := listMarkerLen(rest)
			if marker == 0 {
				break
			}
			indent += marker
			rest = rest[marker:]
		}
		run := mdblock.FenceRun(rest)
		if run == "" || (run[0] == '`' && strings.Contains(rest[len(run):], "`")) {
			continue
		}
		block := fencedCode{info: strings.TrimSpace(rest[len(run):])}
		var body []string
		for i++; i < len(lines); i++ {
			q, content := linePrefix(lines[i])
			if q < quotes {
				break
			}
			if c := strings.TrimLeft(content, " \t"); strings.HasPrefix(c, run[:1]) {
				if r := mdblock.FenceRun(c); len(r) >= len(run) && r[0] == run[0] && strings.TrimSpace(c[len(r):]) == "" {
					break
				}
			}
			for k := 0; k < indent && content != "" && (content[0] == ' ' || content[0] == '\t'); k++ {
				content = content[1:]
			}
			body = append(body, content)
		}
		block.body = strings.Join(body, "\n")
		out = append(out, block)
	}
	return out
}

// listMarkerLen is the length of a list marker and the space after it at
// the start of s ("- ", "12. "), or 0.
func listMarkerLen(s string) int {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	switch {
	case n > 0 && n < len(s) && (s[n] == '.' || s[n] == ')'):
		n++
	case n == 0 && len(s) > 0 && (s[0] == '-' || s[0] == '*' || s[0] == '+'):
		n = 1
	default:
		return 0
	}
	if n < len(s) && s[n] == ' ' {
		return n + 1
	}
	return 0
}

// markdownTables returns the shape of each table in Markdown: for each
// row after the delimiter row (and the header first), its number of cells.
func markdownTables(md string) [][]int {
	var out [][]int
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	content := func(i int) string {
		_, rest := linePrefix(lines[i])
		return strings.TrimSpace(rest)
	}
	var fence string
	for i := 0; i+1 < len(lines); i++ {
		c := content(i)
		if r := mdblock.FenceRun(strings.TrimLeft(c, "-*+0123456789.) ")); r != "" {
			if fence == "" {
				fence = r
			} else if r[0] == fence[0] && len(r) >= len(fence) {
				fence = ""
			}
			continue
		}
		if fence != "" || !strings.Contains(c, "|") || !isDelimiterRow(content(i+1)) || cells(c) != cells(content(i+1)) {
			continue
		}
		shape := []int{cells(c)}
		for i += 2; i < len(lines); i++ {
			r := content(i)
			if r == "" || !strings.Contains(r, "|") || r[0] == '<' || r[0] == '{' || r[0] == '#' {
				break
			}
			shape = append(shape, cells(r))
		}
		i--
		out = append(out, shape)
	}
	return out
}

func isDelimiterRow(s string) bool {
	return s != "" && strings.Contains(s, "-") && strings.Trim(s, "|:- \t") == ""
}

// cells counts a row's cells: unescaped pipes outside a leading or trailing one.
func cells(row string) int {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, "\\|") {
		row = row[:len(row)-1]
	}
	n := 1
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// TestMarkdownFidelityOverCorpora indexes each docs corpus and checks, page
// by page, that the page assembled from its chunks' Markdown (what MCP
// get_page, the page endpoint and llms-full.txt serve) holds every fenced
// code block of the source page, info string and bytes, and every table
// with its rows and cells.
func TestMarkdownFidelityOverCorpora(t *testing.T) {
	t.Parallel()
	root := corporaDir(t)
	corpora, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range corpora {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			site, chunks, err := LoadFolder(filepath.Join(root, c.Name()), "", "https://docs.example")
			if err != nil {
				t.Skipf("not a docs site: %v", err)
			}
			byPage := map[string][]Chunk{}
			reopened := 0
			for _, ch := range chunks {
				byPage[ch.PagePath] = append(byPage[ch.PagePath], ch)
				// Each chunk is shown on its own (search results, answers):
				// no code block may be left open.
				if mdblock.InsideFence(ch.Markdown) {
					t.Errorf("chunk %s ends inside a code block:\n%s", ch.ID, ch.Markdown)
				}
				if ch.MarkdownOverlap > len(ch.Markdown) {
					t.Errorf("chunk %s: MarkdownOverlap %d past its %d bytes", ch.ID, ch.MarkdownOverlap, len(ch.Markdown))
				} else if mdblock.InsideFence(ch.Markdown[:ch.MarkdownOverlap]) {
					reopened++
				}
			}
			var blocks, tables int
			for path, pcs := range byPage {
				page := site.Pages[path]
				if page == nil {
					continue
				}
				pt, ok := engine.AssemblePage(pcs)
				if !ok {
					t.Fatalf("%s: no page", path)
				}
				got := markdownCode(pt.Content)
				for _, want := range markdownCode(string(page.Body)) {
					blocks++
					k := slices.Index(got, want)
					if k < 0 {
						t.Errorf("%s: code block ```%s not served byte for byte:\n%s\n--- page as served:\n%s", path, want.info, want.body, pt.Content)
						continue
					}
					got = slices.Delete(got, k, k+1)
				}
				gotTables := markdownTables(pt.Content)
				for _, want := range markdownTables(string(page.Body)) {
					tables++
					k := slices.IndexFunc(gotTables, func(g []int) bool { return slices.Equal(g, want) })
					if k < 0 {
						t.Errorf("%s: table with rows of %v cells not served whole:\n--- page as served:\n%s", path, want, pt.Content)
						continue
					}
					gotTables = slices.Delete(gotTables, k, k+1)
				}
			}
			t.Logf("%d pages, %d code blocks, %d tables; %d chunks start inside a code block", len(byPage), blocks, tables, reopened)
		})
	}
}
