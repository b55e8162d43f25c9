package search

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docsmith/docsmith/internal/search/engine"
)

const markdownDocsJSON = `{"name": "Kettle", "navigation": {"pages": ["guide", "reference"]}}`

// markdownSite is a site of one guide page with the given body.
func markdownSite(t *testing.T, body string) []Chunk {
	t.Helper()
	fsys := fstest.MapFS{
		"docs.json": {Data: []byte(markdownDocsJSON)},
		"guide.mdx": {Data: []byte("---\ntitle: Guide\n---\n\n" + body)},
	}
	return Chunks(loadSite(t, fsys), "https://docs.example")
}

func TestChunkMarkdownOfFixtureSite(t *testing.T) {
	t.Parallel()
	chunks := Chunks(loadSite(t, fixtureFS(t)), "https://docs.example/")
	for _, c := range chunks {
		if c.Heading != "" && !strings.Contains(c.ID, "~") {
			if !strings.HasPrefix(c.Markdown, "#") || !strings.Contains(strings.SplitN(c.Markdown, "\n", 2)[0], " "+c.Heading) {
				t.Errorf("chunk %s does not start with its heading line:\n%s", c.ID, c.Markdown)
			}
		}
		if strings.TrimSpace(c.Text) != "" && strings.TrimSpace(c.Markdown) == "" {
			t.Errorf("chunk %s has text but no Markdown", c.ID)
		}
	}
	api, _ := chunkByID(chunks, "api/get-kettle")
	for _, want := range []string{"**GET** `/kettles/{kettleId}`", "- **`kettleId`** `string` (path, required) — Serial number engraved"} {
		if !strings.Contains(api.Markdown, want) {
			t.Errorf("API chunk Markdown lacks %q:\n%s", want, api.Markdown)
		}
	}
}

func TestChunkMarkdownHeadingsAndLinks(t *testing.T) {
	t.Parallel()
	chunks := markdownSite(t, "Intro with a [link](/other) and [a relative one](next).\n\n## Setup\n\nSome setup.\n\n### Details\n\n<Note>Read this.</Note>\n")
	if len(chunks) != 1 {
		t.Fatalf("chunks = %d, want the small sections merged into the top: %+v", len(chunks), chunks)
	}
	want := "Intro with a [link](https://docs.example/other) and [a relative one](https://docs.example/next).\n\n" +
		"## Setup\n\nSome setup.\n\n### Details\n\n> **Note:** Read this."
	if chunks[0].Markdown != want {
		t.Errorf("Markdown =\n%s\nwant\n%s", chunks[0].Markdown, want)
	}
	if want := "Intro with a link and a relative one.\nSetup\nSome setup.\nDetails\nRead this."; chunks[0].Text != want {
		t.Errorf("Text = %q, want %q", chunks[0].Text, want)
	}
	pt, _ := engine.AssemblePage(chunks)
	if want := "# Guide\n\n" + want + "\n"; pt.Content != want {
		t.Errorf("page =\n%s\nwant\n%s", pt.Content, want)
	}
}

// paragraphs returns n paragraphs of about 100 bytes.
func paragraphs(n int, word string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Paragraph %d about %s %s.\n\n", i, word, strings.Repeat(word+" ", 12))
	}
	return b.String()
}

func codeLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "  key_%02d:   value %d  \n", i, i)
	}
	return b.String()
}

func TestSplitKeepsACodeBlockWhole(t *testing.T) {
	t.Parallel()
	code := codeLines(20) // about 500 bytes
	chunks := markdownSite(t, "## Long\n\n"+paragraphs(11, "kettle")+"```yaml config.yaml\n"+code+"```\n\n"+paragraphs(6, "steam"))
	if len(chunks) < 2 {
		t.Fatalf("the section was not split: %d chunks", len(chunks))
	}
	whole := "```yaml config.yaml\n" + code + "```"
	found := 0
	for _, c := range chunks {
		if strings.Count(c.Markdown, "```")%2 != 0 {
			t.Errorf("chunk %s cuts the code block:\n%s", c.ID, c.Markdown)
		}
		if strings.Contains(c.Markdown[c.MarkdownOverlap:], whole) {
			found++
		}
	}
	if found != 1 {
		t.Errorf("the code block is whole in %d chunks, want 1", found)
	}
	assertAssembled(t, chunks, whole)
}

func TestSplitReopensACodeBlockTooLongForAChunk(t *testing.T) {
	t.Parallel()
	code := codeLines(300) // about 4,800 bytes of text
	open := "```yaml title=\"config.yaml\" {1-3}"
	chunks := markdownSite(t, "## Long\n\n<Steps>\n<Step title=\"Configure\">\n  "+open+"\n"+indent(code, "  ")+"  ```\n</Step>\n</Steps>\n")
	if len(chunks) < 3 {
		t.Fatalf("chunks = %d, want the code cut in 3 or more", len(chunks))
	}
	for i, c := range chunks {
		if strings.Count(c.Markdown, "```")%2 != 0 {
			t.Errorf("chunk %s leaves a fence open:\n%s", c.ID, c.Markdown)
		}
		if i > 0 && !strings.HasPrefix(c.Markdown, "   "+open+"\n") {
			t.Errorf("chunk %s does not reopen the fence with its info string:\n%.200s", c.ID, c.Markdown)
		}
		if i > 0 && c.MarkdownOverlap <= len(open) {
			t.Errorf("chunk %s: MarkdownOverlap %d does not cover the reopened fence", c.ID, c.MarkdownOverlap)
		}
		// Text and Markdown hold the same lines of code.
		for _, line := range strings.Split(c.Text, "\n") {
			if strings.HasPrefix(line, "key_") && !strings.Contains(c.Markdown, strings.Fields(line)[0]) {
				t.Errorf("chunk %s: text line %q is not in its Markdown", c.ID, line)
			}
		}
	}
	assertAssembled(t, chunks, "1. **Configure**\n\n   "+open+"\n"+indent(code, "   ")+"   ```")
}

func TestSplitRepeatsATableHeader(t *testing.T) {
	t.Parallel()
	var rows strings.Builder
	for i := range 80 {
		fmt.Fprintf(&rows, "| `option_%02d` | string | The %02d option of the kettle's boiling program. |\n", i, i)
	}
	header := "| Name | Type | Description |\n| --- | --- | --- |"
	chunks := markdownSite(t, "## Options\n\n"+header+"\n"+rows.String())
	if len(chunks) < 3 {
		t.Fatalf("chunks = %d, want the table cut", len(chunks))
	}
	for i, c := range chunks {
		if i > 0 && !strings.HasPrefix(c.Markdown, header+"\n") {
			t.Errorf("chunk %s does not repeat the table's header:\n%.300s", c.ID, c.Markdown)
		}
	}
	assertAssembled(t, chunks, header+"\n"+strings.TrimSuffix(rows.String(), "\n"))
}

// assertAssembled checks that the page assembled from chunks holds want
// exactly once.
func assertAssembled(t *testing.T, chunks []Chunk, want string) {
	t.Helper()
	pt, ok := engine.AssemblePage(chunks)
	if !ok {
		t.Fatal("no page")
	}
	if n := strings.Count(pt.Content, want); n != 1 {
		t.Errorf("the page holds the block %d times, want once:\n%s", n, pt.Content)
	}
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

func TestAssemblePageWithoutMarkdown(t *testing.T) {
	t.Parallel()
	chunks := []Chunk{
		{PagePath: "p", PageTitle: "P", URL: "https://d/p", Text: "top"},
		{PagePath: "p", PageTitle: "P", URL: "https://d/p#a", Anchor: "a", Heading: "A", Text: "one\ntwo"},
		{PagePath: "p", PageTitle: "P", URL: "https://d/p#a", Anchor: "a", Heading: "A", Text: "two\nthree", Overlap: 4},
	}
	pt, _ := engine.AssemblePage(chunks)
	if want := "# P\n\ntop\n\n## A\none\ntwo\n\nthree\n"; pt.Content != want {
		t.Errorf("content = %q, want %q", pt.Content, want)
	}
}
