package app_test

// The docs as Markdown on every surface: a site of our own with code
// blocks of several languages and a table, indexed from a git repository
// with the real CLI; its pages read through the page endpoints, MCP and
// llms-full.txt, its passages through search.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// kettleYAML is indented YAML, whose meaning is its indentation.
const kettleYAML = "```yaml title=\"kettle.yaml\"\n" +
	"kettle:\n" +
	"  water:\n" +
	"    hardness: soft\n" +
	"    litres: 1.5\n" +
	"  steps:\n" +
	"    - boil\n" +
	"    - name: steep\n" +
	"      minutes: 4\n" +
	"```"

const kettleGo = "```go\n" +
	"func brew(k *Kettle) error {\n" +
	"\tif err := k.Boil(); err != nil {\n" +
	"\t\treturn fmt.Errorf(\"boil: %w\", err)\n" +
	"\t}\n" +
	"\treturn nil\n" +
	"}\n" +
	"```"

const kettleShell = "```bash\n" +
	"kettle config set water.hardness soft \\\n" +
	"  --litres 1.5\n" +
	"```"

const kettleJSON = "```json\n" +
	"{\n" +
	"  \"kettle\": { \"steps\": [\"boil\", \"steep\"] }\n" +
	"}\n" +
	"```"

const teaTable = "| Tea | Minutes | Temperature |\n" +
	"| --- | ---: | --- |\n" +
	"| Green | 2 | 80 °C |\n" +
	"| Black | 4 | 95 °C |\n" +
	"| Oolong | 3 | 90 °C |"

// markdownSite is a small docs site whose configure page holds every code
// block above and the table.
func markdownSite() fstest.MapFS {
	page := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"docs.json": page(`{"name": "Kettle", "navigation": {"groups": [{"group": "Guides", "pages": ["index", "guides/configure"]}]}}`),
		"index.mdx": page("---\ntitle: Kettle\ndescription: The kettle that brews by itself.\n---\n\nKettle boils water and steeps tea on a schedule.\n"),
		"guides/configure.mdx": page("---\ntitle: Configure the kettle\ndescription: Water, steps and steeping times.\n---\n\n" +
			"The kettle reads `kettle.yaml` when it starts.\n\n" +
			"## Water and steps\n\n" + kettleYAML + "\n\nOr set one value from a shell:\n\n" + kettleShell + "\n\n" +
			"## Steeping times\n\n" + teaTable + "\n\n" +
			"## From code\n\nBrew from Go:\n\n" + kettleGo + "\n\nThe API takes JSON:\n\n" + kettleJSON + "\n"),
	}
}

func TestMarkdownOnEverySurface(t *testing.T) {
	t.Parallel()
	s := setup(t)
	git, err := gitcli.New(gitcli.Config{HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir() + "/kettle-docs.git"
	if err := git.SeedBare(t.Context(), repo, "main", markdownSite(), gitcli.CommitOptions{Message: "docs", AuthorName: "t", AuthorEmail: "t@example.com"}); err != nil {
		t.Fatal(err)
	}
	s.cli("project", "create", "--org", orgA, "--id", "kettle", "--repo", repo)
	s.cli("domain", "create", "--org", orgA, "--domain", "kettle", "--project", "kettle", "--site-url", "https://kettle.example/docs")
	if out := s.cli("index", "kettle"); !strings.Contains(out, "2 pages") {
		t.Fatalf("docsmith index printed %q", out)
	}

	// The page as each surface serves it.
	const path = "guides/configure"
	posted := s.post("/discovery/v1/page/kettle", s.assistantA, map[string]any{"path": path})
	expectStatus(t, posted, http.StatusOK)
	var page struct{ Path, Content string }
	if err := json.Unmarshal(posted.body, &page); err != nil {
		t.Fatal(err)
	}
	md := page.Content
	surfaces := map[string]string{}
	got := s.get("/discovery/v1/page/kettle/"+path+".md", s.assistantA)
	expectStatus(t, got, http.StatusOK)
	if ct := got.header.Get("Content-Type"); ct != "text/markdown; charset=utf-8" {
		t.Errorf("GET .md Content-Type %q", ct)
	}
	surfaces["GET .md"] = string(got.body)

	cs := connectMCP(t, s, "kettle")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "get_page", Arguments: map[string]any{"path": path}})
	if err != nil || res.IsError {
		t.Fatalf("get_page: %v %+v", err, res)
	}
	surfaces["MCP get_page"] = res.Content[0].(*mcp.TextContent).Text
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://page/" + path})
	if err != nil || len(read.Contents) != 1 {
		t.Fatalf("resource read: %v %+v", err, read)
	}
	if read.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("resource MIME type %q", read.Contents[0].MIMEType)
	}
	surfaces["docs:// resource"] = read.Contents[0].Text
	for name, text := range surfaces {
		if text != md {
			t.Errorf("%s differs from the POST page endpoint:\n%s\n--- want\n%s", name, text, md)
		}
	}

	// llms-full.txt holds the page under its title and source line.
	full := s.get("/discovery/v1/llms-full.txt/kettle", "")
	expectStatus(t, full, http.StatusOK)
	title, body, _ := strings.Cut(md, "\n")
	section := "\n---\n\n" + title + "\n\nSource: https://kettle.example/docs/" + path + "\n\n" + strings.Trim(body, "\n") + "\n"
	if !strings.Contains(string(full.body), section) {
		t.Errorf("llms-full.txt lacks the page's section\n%s\n--- in\n%s", section, full.body)
	}

	// llms.txt links each page to its Markdown, which the page endpoint
	// serves under the same path (the proxy rule of docs/assistant/mcp-and-llms-txt.mdx).
	index := s.get("/discovery/v1/llms.txt/kettle", "")
	expectStatus(t, index, http.StatusOK)
	for link, pagePath := range map[string]string{
		"https://kettle.example/docs/guides/configure.md": "guides/configure",
		"https://kettle.example/docs/index.md":            "index",
	} {
		if !strings.Contains(string(index.body), "]("+link+")") {
			t.Errorf("llms.txt does not link to %s:\n%s", link, index.body)
			continue
		}
		u, _ := url.Parse(link)
		r := s.get("/discovery/v1/page/kettle/"+strings.TrimPrefix(u.Path, "/docs/"), s.assistantA)
		expectStatus(t, r, http.StatusOK)
		want := s.post("/discovery/v1/page/kettle", s.assistantA, map[string]any{"path": pagePath})
		var wp struct{ Content string }
		_ = json.Unmarshal(want.body, &wp)
		if string(r.body) != wp.Content {
			t.Errorf("%s serves %q, want %q", link, r.body, wp.Content)
		}
	}
	missing := s.get("/discovery/v1/page/kettle/guides/nope.md", s.assistantA)
	expectStatus(t, missing, http.StatusNotFound)
	if !strings.Contains(string(missing.body), `"message"`) || !strings.Contains(string(missing.body), "guides/nope") {
		t.Errorf("unknown page: %s", missing.body)
	}

	// Every code block and the table of the source page come back byte
	// for byte.
	for _, block := range []string{kettleYAML, kettleGo, kettleShell, kettleJSON, teaTable} {
		if !strings.Contains(md, block) {
			t.Errorf("the page lacks, byte for byte:\n%s\n--- page\n%s", block, md)
		}
		if !strings.Contains(string(full.body), block) {
			t.Errorf("llms-full.txt lacks, byte for byte:\n%s", block)
		}
	}

	// Search results and MCP passages carry each chunk's Markdown: the
	// index is given chunks with Markdown of their own, as the chunker
	// writes them, and the server serves them.
	searchCarriesMarkdown(t, s, cs)
}

// searchCarriesMarkdown replaces the kettle's configure page with chunks
// whose Markdown holds the YAML block and the table, through the store the
// server reads, and checks that the search endpoint and MCP search return
// that Markdown once the server sees the change.
func searchCarriesMarkdown(t *testing.T, s *server, cs *mcp.ClientSession) {
	t.Helper()
	store, err := sqlite.Open(t.Context(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	chunk := func(anchor, heading, text, md string, seq int) search.Chunk {
		return search.Chunk{ID: "guides/configure#" + anchor, PagePath: "guides/configure", Anchor: anchor, Seq: seq,
			URL: "https://kettle.example/docs/guides/configure#" + anchor, PageTitle: "Configure the kettle", Heading: heading,
			Text: text, Markdown: md, PageHash: "hand-made"}
	}
	yamlChunk := chunk("water-and-steps", "Water and steps", "Water and steps kettle water hardness soft samovar",
		"## Water and steps\n\n"+kettleYAML+"\n", 0)
	tableChunk := chunk("steeping-times", "Steeping times", "Steeping times Tea Minutes Oolong 3 samovar",
		"## Steeping times\n\n"+teaTable+"\n", 1)
	if err := store.ReplacePages(t.Context(), "kettle", []search.Chunk{yamlChunk, tableChunk}, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{yamlChunk.URL: yamlChunk.Markdown, tableChunk.URL: tableChunk.Markdown}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := s.post("/discovery/v1/search/kettle", s.assistantA, map[string]any{"query": "samovar"})
		expectStatus(t, r, http.StatusOK)
		var results []struct {
			Content  string
			Metadata struct{ URL string }
		}
		if err := json.Unmarshal(r.body, &results); err != nil {
			t.Fatal(err)
		}
		ok := len(results) == 2
		for _, res := range results {
			ok = ok && want[res.Metadata.URL] == res.Content
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search results do not carry the chunks' Markdown: %s", r.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "samovar"}})
	if err != nil || res.IsError {
		t.Fatalf("MCP search: %v %+v", err, res)
	}
	var out struct {
		Passages []struct{ URL, Text string }
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Passages) != 2 {
		t.Fatalf("MCP search: %v %s", err, raw)
	}
	for _, p := range out.Passages {
		if want[p.URL] != p.Text {
			t.Errorf("MCP passage %s = %q, want %q", p.URL, p.Text, want[p.URL])
		}
	}
}

// connectMCP connects the Go MCP client to a domain with the assistant key.
func connectMCP(t *testing.T, s *server, domain string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "docsmith-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   s.base + "/discovery/v1/mcp/" + domain,
		HTTPClient: &http.Client{Transport: benchBearer{key: s.assistantA, next: http.DefaultTransport}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect MCP: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
