package search

import (
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/docsmith/docsmith/internal/docs"
)

func loadSite(t *testing.T, fsys fstest.MapFS) *docs.Site {
	t.Helper()
	site, err := docs.Load(fsys)
	if err != nil {
		t.Fatalf("load site: %v", err)
	}
	return site
}

// fixtureFS reads testdata/site into a MapFS that tests may change.
func fixtureFS(t *testing.T) fstest.MapFS {
	t.Helper()
	root := os.DirFS("testdata/site")
	out := fstest.MapFS{}
	for _, name := range []string{"docs.json", "openapi.json", "index.mdx", "snippets/caution.mdx",
		"guides/brewing.mdx", "guides/water.mdx", "guides/secret.mdx", "guides/unlisted.mdx", "guides/staff.mdx",
		"api/get-kettle.mdx", "es/guides/brewing.mdx", "zh/guides/brewing.mdx"} {
		b, err := fsReadFile(root, name)
		if err != nil {
			t.Fatalf("read fixture: %v", err)
		}
		out[name] = &fstest.MapFile{Data: b}
	}
	return out
}

func chunkByID(chunks []Chunk, id string) (Chunk, bool) {
	for _, c := range chunks {
		if c.ID == id {
			return c, true
		}
	}
	return Chunk{}, false
}

func TestChunksOfFixtureSite(t *testing.T) {
	t.Parallel()
	chunks := Chunks(loadSite(t, fixtureFS(t)), "https://docs.example/")

	var pages []string
	for _, c := range chunks {
		if !slices.Contains(pages, c.PagePath) {
			pages = append(pages, c.PagePath)
		}
	}
	wantPages := []string{"index", "guides/brewing", "guides/water", "guides/staff", "api/get-kettle", "es/guides/brewing", "zh/guides/brewing"}
	if !slices.Equal(pages, wantPages) {
		t.Errorf("pages = %q, want %q (hidden and noindex pages left out)", pages, wantPages)
	}

	top, ok := chunkByID(chunks, "guides/brewing")
	if !ok {
		t.Fatalf("no chunk guides/brewing in %v", chunks)
	}
	if top.URL != "https://docs.example/guides/brewing" || top.PageTitle != "Brewing tea" || top.Language != "en" {
		t.Errorf("top chunk = %+v", top)
	}
	for _, want := range []string{"Steep times and temperatures", "Green tea\nSteep green tea at 80 degrees", "Porcelain cups can crack"} {
		if !strings.Contains(top.Text, want) {
			t.Errorf("top chunk text lacks %q (description, merged small sections, inlined snippet):\n%s", want, top.Text)
		}
	}
	if !slices.Equal(top.Breadcrumb, []string{"Get started", "Brewing tea"}) {
		t.Errorf("breadcrumb = %q", top.Breadcrumb)
	}
	for _, want := range []string{"Brewing", "infusion", "steeping", "guides brewing"} {
		if !strings.Contains(top.Keywords, want) {
			t.Errorf("keywords %q lack %q (sidebar title, keywords, path)", top.Keywords, want)
		}
	}

	long, ok := chunkByID(chunks, "guides/brewing#troubleshooting-a-bitter-cup")
	if !ok {
		t.Fatal("the long section has no chunk of its own")
	}
	if long.URL != "https://docs.example/guides/brewing#troubleshooting-a-bitter-cup" || long.Heading != "Troubleshooting a bitter cup" || long.Seq != 1 {
		t.Errorf("section chunk = %+v", long)
	}
	if !slices.Equal(long.Breadcrumb, []string{"Get started", "Brewing tea", "Troubleshooting a bitter cup"}) {
		t.Errorf("section breadcrumb = %q", long.Breadcrumb)
	}
	if top.PageHash == "" || top.PageHash != long.PageHash {
		t.Errorf("chunks of one page must share one hash: %q, %q", top.PageHash, long.PageHash)
	}

	api, ok := chunkByID(chunks, "api/get-kettle")
	if !ok {
		t.Fatal("no chunk for the API page")
	}
	for _, want := range []string{"GET /kettles/{kettleId}", "current water temperature", "kettleId (path, string, required): Serial number engraved"} {
		if !strings.Contains(api.Text, want) {
			t.Errorf("API chunk lacks %q:\n%s", want, api.Text)
		}
	}
	if !strings.Contains(api.Keywords, "getKettle") {
		t.Errorf("API keywords %q lack the operation id", api.Keywords)
	}

	staff, _ := chunkByID(chunks, "guides/staff")
	if !slices.Equal(staff.Groups, []string{"staff"}) {
		t.Errorf("staff page groups = %q", staff.Groups)
	}
	zh, _ := chunkByID(chunks, "zh/guides/brewing")
	if zh.Language != "zh" || !strings.Contains(zh.Text, "绿茶用八十度的水") {
		t.Errorf("zh chunk = %+v", zh)
	}

	seen := map[string]bool{}
	for _, c := range chunks {
		if seen[c.ID] {
			t.Errorf("chunk id %q twice", c.ID)
		}
		seen[c.ID] = true
	}
}

// siteWith is a one-page site whose page has the given body and front
// matter lines.
func siteWith(t *testing.T, frontMatter, body string) *docs.Site {
	t.Helper()
	return loadSite(t, fstest.MapFS{
		"docs.json": {Data: []byte(`{"name": "T", "navigation": {"groups": [{"group": "G", "pages": ["page"]}]}}`)},
		"page.mdx":  {Data: []byte("---\ntitle: Page\n" + frontMatter + "---\n\n" + body)},
	})
}

func TestChunksSplitLongSections(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("## Long\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d talks about subject%d at some length so that the section grows well past the limit.\n\n", i, i)
	}
	chunks := Chunks(siteWith(t, "", b.String()), "")
	if len(chunks) < 3 {
		t.Fatalf("a %d-byte section gave %d chunks", b.Len(), len(chunks))
	}
	for i, c := range chunks {
		if len(c.Text) > maxChunk {
			t.Errorf("chunk %s has %d bytes, more than %d", c.ID, len(c.Text), maxChunk)
		}
		if c.Anchor != "long" || c.Heading != "Long" || c.Seq != i {
			t.Errorf("chunk %d = %s anchor %q heading %q seq %d", i, c.ID, c.Anchor, c.Heading, c.Seq)
		}
		if i == 0 {
			if c.ID != "page#long" || c.Overlap != 0 {
				t.Errorf("first part = %s overlap %d", c.ID, c.Overlap)
			}
			continue
		}
		if c.ID != fmt.Sprintf("page#long~%d", i+1) {
			t.Errorf("part %d id = %s", i+1, c.ID)
		}
		if c.Overlap <= 0 || c.Overlap > overlapChunk {
			t.Errorf("part %d overlap = %d", i+1, c.Overlap)
			continue
		}
		// The overlap repeats the end of the previous part.
		rep := strings.TrimSuffix(c.Text[:c.Overlap], "\n")
		if !strings.HasSuffix(chunks[i-1].Text, rep) {
			t.Errorf("part %d starts with %q, which does not end part %d", i+1, rep, i)
		}
	}
	// Every paragraph is somewhere.
	all := ""
	for _, c := range chunks {
		all += c.Text[c.Overlap:] + "\n"
	}
	for i := range 40 {
		if !strings.Contains(all, fmt.Sprintf("subject%d ", i)) {
			t.Errorf("paragraph %d lost", i)
		}
	}
}

func TestChunksSplitLongLine(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("汉字", 2000) // one 12,000-byte line without spaces
	chunks := Chunks(siteWith(t, "", line), "")
	if len(chunks) < 8 {
		t.Fatalf("got %d chunks", len(chunks))
	}
	for _, c := range chunks {
		if len(c.Text) > maxChunk || !strings.HasPrefix(c.Text, "汉") && !strings.HasPrefix(c.Text, "字") {
			t.Errorf("chunk %s: %d bytes, starts %q", c.ID, len(c.Text), c.Text[:min(6, len(c.Text))])
		}
	}
}

func TestChunksMergeSmallSections(t *testing.T) {
	t.Parallel()
	body := "Intro.\n\n## A\n\nShort a.\n\n### A1\n\nShort a1.\n\n## B\n\n" + strings.Repeat("Long b text. ", 114) + "\n\n## C\n\nShort c.\n"
	chunks := Chunks(siteWith(t, "", body), "")
	var got []string
	for _, c := range chunks {
		got = append(got, c.ID)
	}
	// The top absorbs A and A1 (small); B is large enough to stand alone,
	// so C, a sibling, does not join it.
	want := []string{"page", "page#b", "page#c"}
	if !slices.Equal(got, want) {
		t.Errorf("chunks = %q, want %q", got, want)
	}
	if !strings.Contains(chunks[0].Text, "A\nShort a.\nA1\nShort a1.") {
		t.Errorf("merged text = %q", chunks[0].Text)
	}
}

func TestChunksFrontMatter(t *testing.T) {
	t.Parallel()
	chunks := Chunks(siteWith(t, "boost: 3\ngroups: [admin, beta]\nkeywords: kettle\n", "Text."), "https://x.example")
	if len(chunks) != 1 {
		t.Fatalf("chunks = %v", chunks)
	}
	c := chunks[0]
	if c.Boost != 3 || !slices.Equal(c.Groups, []string{"admin", "beta"}) || !strings.Contains(c.Keywords, "kettle") || c.URL != "https://x.example/page" {
		t.Errorf("chunk = %+v", c)
	}
}

func TestChunksEmptyPage(t *testing.T) {
	t.Parallel()
	chunks := Chunks(siteWith(t, "", ""), "")
	if len(chunks) != 1 || chunks[0].ID != "page" || chunks[0].PageTitle != "Page" {
		t.Errorf("an empty page must still have one chunk (its title): %+v", chunks)
	}
}

func TestPageHashFollowsContent(t *testing.T) {
	t.Parallel()
	a := Chunks(siteWith(t, "", "One."), "")
	b := Chunks(siteWith(t, "", "One."), "")
	c := Chunks(siteWith(t, "", "Two."), "")
	if a[0].PageHash != b[0].PageHash {
		t.Error("the same page hashed differently")
	}
	if a[0].PageHash == c[0].PageHash {
		t.Error("a changed page kept its hash")
	}
}

func fsReadFile(fsys fs.FS, name string) ([]byte, error) { return fs.ReadFile(fsys, name) }
