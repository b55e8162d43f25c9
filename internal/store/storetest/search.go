package storetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
)

// searchCases are the cases of the search index and the assistant's
// threads. Searches run as the server runs them, on the domain's index in
// memory (search.Memory) loaded from the store under test.
func searchCases() []testCase {
	searches := []struct {
		name string
		fn   func(t *testing.T, s indexedStore)
	}{
		{"Search/Retrieval", testSearchRetrieval},
		{"Search/HiddenAndRestricted", testSearchRestricted},
		{"Search/Filters", testSearchFilters},
		{"Search/BoostsAndCaps", testSearchBoostsAndCaps},
		{"Search/IncrementalRebuild", testSearchIncremental},
		{"Search/Page", testSearchPage},
		{"Search/QuerySyntax", testSearchQuerySyntax},
		{"Search/DomainsIndependent", testSearchDomains},
		{"Search/SameRanking", testSearchSameRanking},
		{"Search/StatisticsPerDomain", testSearchStatisticsPerDomain},
		{"Search/ChangeSeenByAnotherProcess", testSearchChangeSeenElsewhere},
		{"Search/MarkdownRoundTrip", testSearchMarkdownRoundTrip},
	}
	cases := []testCase{
		{"Threads", testThreads},
		{"Threads/Feedback", testThreadFeedback},
		{"Catalogs", testCatalogs},
	}
	for _, c := range searches {
		cases = append(cases, testCase{c.name, func(t *testing.T, s Store) { c.fn(t, inMemory(t, s)) }})
	}
	return cases
}

// indexedStore is a store under test with the search of the index its
// chunks make in memory (inMemory), as the server searches.
type indexedStore interface {
	Store
	Search(ctx context.Context, domain string, q search.Query) ([]search.Hit, error)
}

// memoryStore is a store whose searches run in memory. Every search is also
// run on the domain's index as a process starting again loads it, from the
// snapshot another process wrote, and must give the same hits.
type memoryStore struct {
	Store
	mem *search.Memory
	t   *testing.T
}

func inMemory(t *testing.T, s Store) indexedStore {
	return memoryStore{Store: s, mem: search.NewMemory(s, search.MemoryConfig{}), t: t}
}

func (m memoryStore) ReplacePages(ctx context.Context, domain string, chunks []search.Chunk, removed []string) error {
	return m.mem.ReplacePages(ctx, domain, chunks, removed)
}

func (m memoryStore) Search(ctx context.Context, domain string, q search.Query) ([]search.Hit, error) {
	hits, err := m.mem.Search(ctx, domain, q)
	if err == nil {
		m.sameFromSnapshot(ctx, domain, q, hits)
	}
	return hits, err
}

// sameFromSnapshot runs q on the domain's index loaded from a snapshot: one
// Memory loads the domain from the store and writes its snapshot, another
// loads it from there, and its hits must be want. A store that keeps
// snapshots itself (search.SharedSnapshots) is checked the same way, with
// a Memory that has no snapshot of its own.
func (m memoryStore) sameFromSnapshot(ctx context.Context, domain string, q search.Query, want []search.Hit) {
	t := m.t
	t.Helper()
	dir := t.TempDir()
	shared, _ := m.Store.(search.SharedSnapshots)
	w := search.NewMemory(m.Store, search.MemoryConfig{SnapshotDir: dir, Shared: shared})
	_, err := w.Search(ctx, domain, q)
	w.Close()
	if err != nil {
		t.Errorf("search to write the snapshot: %v", err)
		return
	}
	m.sameLoaded(ctx, "the snapshot", search.MemoryConfig{SnapshotDir: dir}, domain, q, want)
	if shared != nil {
		m.sameLoaded(ctx, "the store's snapshot", search.MemoryConfig{Shared: shared}, domain, q, want)
	}
}

// sameLoaded runs q on a Memory configured by cfg, which must load the
// domain from the snapshot named from rather than from the chunks, and
// give want.
func (m memoryStore) sameLoaded(ctx context.Context, from string, cfg search.MemoryConfig, domain string, q search.Query, want []search.Hit) {
	t := m.t
	t.Helper()
	src := &countingSource{Source: m.Store}
	r := search.NewMemory(src, cfg)
	got, err := r.Search(ctx, domain, q)
	r.Close()
	switch {
	case err != nil:
		t.Errorf("search from %s: %v", from, err)
	case len(want) > 0 && src.loads.Load() != 0:
		t.Errorf("the index was loaded from the store's chunks, not from %s", from)
	case len(got) != len(want):
		t.Errorf("from %s: %d hits %q, want %d %q", from, len(got), hitIDs(got), len(want), hitIDs(want))
	default:
		for i := range want {
			if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
				t.Errorf("from %s, hit %d is %s (%v), want %s (%v)", from, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
			}
			if got[i].Text != want[i].Text || got[i].Markdown != want[i].Markdown || got[i].MarkdownOverlap != want[i].MarkdownOverlap {
				t.Errorf("from %s, hit %s is %q / %q (%d), want %q / %q (%d)", from, got[i].ID,
					got[i].Text, got[i].Markdown, got[i].MarkdownOverlap, want[i].Text, want[i].Markdown, want[i].MarkdownOverlap)
			}
		}
	}
}

// countingSource counts the loads of whole domains from the store.
type countingSource struct {
	search.Source
	loads atomic.Int64
}

func (c *countingSource) DomainChunks(ctx context.Context, domain string, each func(search.Chunk) error) (int64, error) {
	c.loads.Add(1)
	return c.Source.DomainChunks(ctx, domain, each)
}

// fixtureFS reads the search package's fixture site into a MapFS a test may
// change.
func fixtureFS(t *testing.T) fstest.MapFS {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the fixture site")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "search", "testdata", "site")
	out := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, p))
		out[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return out
}

func loadSite(t *testing.T, fsys fs.FS) *docs.Site {
	t.Helper()
	site, err := docs.Load(fsys)
	if err != nil {
		t.Fatalf("load site: %v", err)
	}
	return site
}

// buildFixture indexes the fixture site as domain "kettle".
func buildFixture(t *testing.T, s indexedStore) {
	t.Helper()
	if _, err := search.Build(t.Context(), s, "kettle", loadSite(t, fixtureFS(t)), "https://docs.example"); err != nil {
		t.Fatalf("build: %v", err)
	}
}

func hitIDs(hs []search.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

func hitPages(hs []search.Hit) []string {
	var out []string
	for _, h := range hs {
		if !slices.Contains(out, h.PagePath) {
			out = append(out, h.PagePath)
		}
	}
	return out
}

func testSearchRetrieval(t *testing.T, s indexedStore) {
	buildFixture(t, s)
	r := search.NewRetriever(s)
	tests := []struct {
		name      string
		req       search.Request
		wantFirst string
	}{
		{"words of the text", search.Request{Query: "Why does my cup taste bitter and metallic?"}, "guides/brewing"},
		{"stemming", search.Request{Query: "descaling programs"}, "guides/water"},
		{"camel case identifier found by its words", search.Request{Query: "where is the random UUID printed?"}, "guides/water"},
		{"environment variable compound", search.Request{Query: "KETTLE_DESCALE_INTERVAL"}, "guides/water"},
		{"prefix while typing", search.Request{Query: "porcel"}, "guides/brewing"},
		{"openapi page from its spec", search.Request{Query: "which endpoint returns the fill level of a kettle?"}, "api/get-kettle"},
		{"spanish question finds the spanish page", search.Request{Query: "¿A qué temperatura se infusiona el té verde?"}, "es/guides/brewing"},
		{"chinese question finds the chinese page", search.Request{Query: "绿茶应该用多少度的水？"}, "zh/guides/brewing"},
		{"english question prefers english", search.Request{Query: "green tea temperature 80 degrees"}, "guides/brewing"},
		{"language filter", search.Request{Query: "green tea temperature 80 degrees", Filter: search.Filter{Language: "es"}}, "es/guides/brewing"},
		{"snippet text is indexed", search.Request{Query: "porcelain cups crack"}, "guides/brewing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := r.Retrieve(t.Context(), "kettle", tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].PagePath != tt.wantFirst {
				t.Fatalf("hits = %q, want %s first", hitIDs(hits), tt.wantFirst)
			}
			for _, h := range hits {
				if h.Score <= 0 || h.Score >= 1 {
					t.Errorf("score %v of %s outside (0, 1)", h.Score, h.ID)
				}
			}
		})
	}
	hits, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: "hard water white marks"})
	if err != nil || len(hits) == 0 {
		t.Fatalf("hits %v, err %v", hits, err)
	}
	h := hits[0]
	if h.ID != "guides/brewing#troubleshooting-a-bitter-cup" || h.URL != "https://docs.example/guides/brewing#troubleshooting-a-bitter-cup" ||
		h.PageTitle != "Brewing tea" || h.Heading != "Troubleshooting a bitter cup" || h.Language != "en" || h.Seq != 1 ||
		!slices.Equal(h.Breadcrumb, []string{"Get started", "Brewing tea", "Troubleshooting a bitter cup"}) {
		t.Errorf("hit = %+v", h.Chunk)
	}
	if !strings.Contains(h.Text, "Hard water flattens") || h.PageHash == "" || !strings.Contains(h.Keywords, "infusion") {
		t.Errorf("hit text %q, hash %q, keywords %q", h.Text, h.PageHash, h.Keywords)
	}
}

func testSearchRestricted(t *testing.T, s indexedStore) {
	buildFixture(t, s)
	r := search.NewRetriever(s)
	for _, q := range []string{"smoked lapsang", "oolong", "matcha wholesale portal"} {
		hits, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) > 0 {
			t.Errorf("%q found %q", q, hitIDs(hits))
		}
	}
	hits, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: "matcha wholesale portal", Filter: search.Filter{Groups: []string{"guests", "staff"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].PagePath != "guides/staff" {
		t.Errorf("a reader in the staff group got %q", hitIDs(hits))
	}
}

// chunk is a hand-made chunk.
func chunk(page, text string, mod func(*search.Chunk)) search.Chunk {
	c := search.Chunk{ID: page, PagePath: page, PageTitle: page, Text: text, PageHash: "h-" + page}
	if mod != nil {
		mod(&c)
	}
	return c
}

func testSearchFilters(t *testing.T, s indexedStore) {
	ctx := t.Context()
	chunks := []search.Chunk{
		chunk("v1/a", "teapot kettle", func(c *search.Chunk) { c.Version = "v1" }),
		chunk("v2/a", "teapot kettle", func(c *search.Chunk) { c.Version = "v2" }),
		chunk("common", "teapot kettle", nil),
		chunk("fr/a", "teapot kettle", func(c *search.Chunk) { c.Language = "fr" }),
		chunk("admin", "teapot kettle", func(c *search.Chunk) { c.Groups = []string{"admin"} }),
		chunk("beta", "teapot kettle", func(c *search.Chunk) { c.Groups = []string{"beta", "admin"} }),
	}
	must(t, s.ReplacePages(ctx, "d", chunks, nil), "ReplacePages")
	terms := engine.ParseQuery("teapot", "en")
	tests := []struct {
		name   string
		filter search.Filter
		want   []string
	}{
		{"none: public pages of every version and language", search.Filter{}, []string{"common", "fr/a", "v1/a", "v2/a"}},
		{"version keeps unversioned", search.Filter{Version: "v2"}, []string{"common", "fr/a", "v2/a"}},
		{"language keeps unlabelled", search.Filter{Language: "FR"}, []string{"common", "fr/a", "v1/a", "v2/a"}},
		{"groups", search.Filter{Groups: []string{"beta"}}, []string{"beta", "common", "fr/a", "v1/a", "v2/a"}},
		{"groups any of", search.Filter{Groups: []string{"admin", "x"}}, []string{"admin", "beta", "common", "fr/a", "v1/a", "v2/a"}},
		{"all", search.Filter{Version: "v1", Language: "en", Groups: []string{"admin"}}, []string{"admin", "beta", "common", "v1/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := s.Search(ctx, "d", search.Query{Terms: terms, Limit: 50, Filter: tt.filter})
			if err != nil {
				t.Fatal(err)
			}
			got := hitPages(hits)
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("pages = %q, want %q", got, tt.want)
			}
		})
	}
	// Required terms must all match; a phrase in order only.
	q := search.Query{Terms: []search.Term{{Words: []string{"kettle", "teapot"}, Required: true}}, Limit: 10}
	if hits, err := s.Search(ctx, "d", q); err != nil || len(hits) != 0 {
		t.Errorf("phrase out of order: %q, %v", hitIDs(hits), err)
	}
	q.Terms[0].Words = []string{"teapot", "kettle"}
	if hits, err := s.Search(ctx, "d", q); err != nil || len(hitPages(hits)) != 4 {
		t.Errorf("phrase in order: %q, %v", hitIDs(hits), err)
	}
	q.Terms = []search.Term{{Words: []string{"teapot"}, Required: true}, {Words: []string{"samovar"}, Required: true}}
	if hits, err := s.Search(ctx, "d", q); err != nil || len(hits) != 0 {
		t.Errorf("a required word missing: %q, %v", hitIDs(hits), err)
	}
}

func testSearchBoostsAndCaps(t *testing.T, s indexedStore) {
	ctx := t.Context()
	var chunks []search.Chunk
	for i := range 4 {
		chunks = append(chunks, chunk("big", "kettle kettle kettle descale", func(c *search.Chunk) {
			c.ID = fmt.Sprintf("big#%d", i)
			c.Seq = i
		}))
	}
	chunks = append(chunks,
		chunk("small", "kettle and a lot of other words about something else entirely", nil),
		chunk("boosted", "kettle and a lot of other words about something else entirely", func(c *search.Chunk) { c.Boost = 100 }),
	)
	must(t, s.ReplacePages(ctx, "d", chunks, nil), "ReplacePages")
	q := search.Query{Terms: engine.ParseQuery("kettle", "en"), Limit: 10}

	q.MaxPerPage = 2
	hits, err := s.Search(ctx, "d", q)
	must(t, err, "Search")
	if got := hitIDs(hits); !slices.Equal(got, []string{"big#0", "big#1", "boosted", "small"}) {
		t.Errorf("capped at 2 a page: %q", got)
	} else if hits[2].Boost != 100 {
		t.Errorf("boost read back as %v", hits[2].Boost)
	}

	q.MaxPerPage = 0
	q.Limit = 3
	hits, err = s.Search(ctx, "d", q)
	must(t, err, "Search")
	if got := hitIDs(hits); len(got) != 3 || got[2] != "big#2" {
		t.Errorf("uncapped, limit 3: %q", got)
	}

	q.Limit = 10
	q.MaxPerPage = 1
	q.BoostPath, q.PathBoost = "small", 100
	hits, err = s.Search(ctx, "d", q)
	must(t, err, "Search")
	if got := hitIDs(hits); !slices.Equal(got, []string{"small", "big#0", "boosted"}) {
		t.Errorf("current page boosted: %q", got)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("scores not in order: %v after %v", hits[i].Score, hits[i-1].Score)
		}
	}
}

func testSearchIncremental(t *testing.T, s indexedStore) {
	ctx := t.Context()
	fsys := fixtureFS(t)
	stats, err := search.Build(ctx, s, "kettle", loadSite(t, fsys), "https://docs.example")
	must(t, err, "first build")
	if stats.Changed == 0 || stats.Unchanged != 0 {
		t.Fatalf("first build: %+v", stats)
	}
	hashes, err := s.PageHashes(ctx, "kettle")
	must(t, err, "PageHashes")
	if len(hashes) != stats.Pages || hashes["guides/water"] == "" {
		t.Fatalf("hashes %v after %+v", hashes, stats)
	}
	again, err := search.Build(ctx, s, "kettle", loadSite(t, fsys), "https://docs.example")
	must(t, err, "second build")
	if again.Changed != 0 || again.Removed != 0 || again.Unchanged != stats.Pages {
		t.Errorf("unchanged rebuild: %+v", again)
	}

	water := string(fsys["guides/water.mdx"].Data)
	fsys["guides/water.mdx"] = &fstest.MapFile{Data: []byte(water + "\n\n## Zanzibar\n\nThe zanzibarite filter removes limescale.\n")}
	var removed string
	for p := range fsys {
		if p == "guides/staff.mdx" {
			removed = p
		}
	}
	if removed != "" {
		delete(fsys, removed)
	}
	third, err := search.Build(ctx, s, "kettle", loadSite(t, fsys), "https://docs.example")
	must(t, err, "third build")
	if third.Changed != 1 {
		t.Errorf("one page changed: %+v", third)
	}
	r := search.NewRetriever(s)
	hits, err := r.Retrieve(ctx, "kettle", search.Request{Query: "zanzibarite filter"})
	must(t, err, "Retrieve")
	if len(hits) == 0 || hits[0].PagePath != "guides/water" {
		t.Errorf("the new section: %q", hitIDs(hits))
	}
	after, err := s.PageHashes(ctx, "kettle")
	must(t, err, "PageHashes")
	if after["guides/water"] == hashes["guides/water"] {
		t.Errorf("the changed page kept its hash %q", after["guides/water"])
	}
	if removed != "" {
		if _, ok := after["guides/staff"]; ok || third.Removed != 1 {
			t.Errorf("removed page still indexed: %+v, %v", third, after)
		}
	}

	// ReplacePages with only removedPages deletes; an unknown page is fine.
	must(t, s.ReplacePages(ctx, "kettle", nil, []string{"guides/water", "no/such/page"}), "remove")
	after, err = s.PageHashes(ctx, "kettle")
	must(t, err, "PageHashes")
	if _, ok := after["guides/water"]; ok {
		t.Error("guides/water still indexed after its removal")
	}
	// A chunk id twice is an error and changes nothing.
	err = s.ReplacePages(ctx, "kettle", []search.Chunk{chunk("x", "a", nil), chunk("x", "b", nil)}, []string{"guides/brewing"})
	if err == nil {
		t.Error("a duplicate chunk id was accepted")
	}
	after, err = s.PageHashes(ctx, "kettle")
	must(t, err, "PageHashes")
	if _, ok := after["guides/brewing"]; !ok {
		t.Error("a failed ReplacePages removed a page")
	}
}

func testSearchPage(t *testing.T, s indexedStore) {
	buildFixture(t, s)
	p, err := s.Page(t.Context(), "kettle", "guides/brewing")
	must(t, err, "Page")
	if p.Path != "guides/brewing" || p.Title != "Brewing tea" || p.URL != "https://docs.example/guides/brewing" {
		t.Errorf("page = %+v", p)
	}
	if !strings.HasPrefix(p.Content, "# Brewing tea\n") || !strings.Contains(p.Content, "\n## Troubleshooting a bitter cup\n") ||
		!strings.Contains(p.Content, "Hard water flattens") {
		t.Errorf("content = %q", p.Content)
	}
	// A restricted page carries its groups, for the caller to check.
	must(t, s.ReplacePages(t.Context(), "restricted", []search.Chunk{chunk("staff/rota", "teapot rota", func(c *search.Chunk) { c.Groups = []string{"staff", "admin"} })}, nil), "ReplacePages")
	if rota, err := s.Page(t.Context(), "restricted", "staff/rota"); err != nil || !slices.Equal(rota.Groups, []string{"staff", "admin"}) ||
		rota.VisibleTo(nil) || !rota.VisibleTo([]string{"admin"}) {
		t.Errorf("restricted page = %+v, %v", rota, err)
	}
	if len(p.Groups) != 0 || !p.VisibleTo(nil) {
		t.Errorf("public page groups = %q", p.Groups)
	}
	for _, missing := range [][2]string{{"kettle", "no/such/page"}, {"other", "guides/brewing"}} {
		if _, err := s.Page(t.Context(), missing[0], missing[1]); !errors.Is(err, search.ErrPageNotFound) {
			t.Errorf("Page(%s, %s) error = %v, want ErrPageNotFound", missing[0], missing[1], err)
		}
	}
}

// markdownFixture is Markdown a store must give back byte for byte:
// indented YAML in a fence with its info string, a table, trailing spaces
// (a hard line break), a tab, and text beyond ASCII.
const markdownFixture = "## Configure the kettle\n\n" +
	"```yaml title=\"kettle.yaml\"\nkettle:\n  water:\n    hardness: soft   # ppm\n  steps:\n    - boil\n    -   steep\n```\n\n" +
	"| Tea | Minutes |\n| --- | ---: |\n| Green | 2 |\n| Black \\| Assam | 4 |\n\n" +
	"A line that breaks  \nhere,\twith a tab and 茶 — **bold** [link](https://docs.example/tea).\n"

// testSearchMarkdownRoundTrip checks that each chunk's Markdown and
// Markdown overlap come back as written: from the store's chunks, in search
// hits, from the page, and from both snapshots (sameFromSnapshot).
func testSearchMarkdownRoundTrip(t *testing.T, s indexedStore) {
	ctx := t.Context()
	first := chunk("tea/kettle", "Configure the kettle kettle water hardness", func(c *search.Chunk) {
		c.ID, c.Seq, c.Markdown = "tea/kettle#a", 0, markdownFixture
	})
	second := chunk("tea/kettle", "here with a tab samovar", func(c *search.Chunk) {
		c.ID, c.Seq, c.Anchor = "tea/kettle#a~1", 1, "a"
		c.Markdown, c.MarkdownOverlap = "here,\twith a tab\n\nThe samovar keeps it hot.\n", len("here,\twith a tab\n")
	})
	old := chunk("tea/old", "indexed before Markdown samovar", nil)
	must(t, s.ReplacePages(ctx, "md", []search.Chunk{first, second, old}, nil), "ReplacePages")

	stored := map[string]search.Chunk{}
	if _, err := s.DomainChunks(ctx, "md", func(c search.Chunk) error { stored[c.ID] = c; return nil }); err != nil {
		t.Fatalf("DomainChunks: %v", err)
	}
	for _, want := range []search.Chunk{first, second, old} {
		got := stored[want.ID]
		if got.Markdown != want.Markdown || got.MarkdownOverlap != want.MarkdownOverlap || got.Text != want.Text {
			t.Errorf("stored %s = %q (%d), want %q (%d)", want.ID, got.Markdown, got.MarkdownOverlap, want.Markdown, want.MarkdownOverlap)
		}
	}
	hits, err := s.Search(ctx, "md", search.Query{Terms: []search.Term{{Words: []string{"samovar"}}}, Limit: 10})
	must(t, err, "Search")
	if len(hits) != 2 {
		t.Fatalf("hits = %q, want the second part and the old page", hitIDs(hits))
	}
	for _, h := range hits {
		want := map[string]search.Chunk{second.ID: second, old.ID: old}[h.ID]
		if h.Markdown != want.Markdown || h.MarkdownOverlap != want.MarkdownOverlap {
			t.Errorf("hit %s = %q (%d), want %q (%d)", h.ID, h.Markdown, h.MarkdownOverlap, want.Markdown, want.MarkdownOverlap)
		}
	}
	hits, err = s.Search(ctx, "md", search.Query{Terms: []search.Term{{Words: []string{"hardness"}}}, Limit: 10})
	must(t, err, "Search")
	if len(hits) != 1 || hits[0].Markdown != markdownFixture {
		t.Errorf("hits for hardness = %+v, want the first part with its Markdown", hits)
	}
	// The page is what AssemblePage makes of the stored chunks.
	page, err := s.Page(ctx, "md", "tea/kettle")
	must(t, err, "Page")
	if want, _ := engine.AssemblePage([]search.Chunk{first, second}); page.Content != want.Content {
		t.Errorf("page = %q, want %q", page.Content, want.Content)
	}
}

func testSearchQuerySyntax(t *testing.T, s indexedStore) {
	buildFixture(t, s)
	r := search.NewRetriever(s)
	for _, q := range []string{`"`, `""`, `"unclosed phrase`, `kettle*`, `NEAR(kettle water)`, `kettle AND OR NOT`, `title:kettle`,
		`^kettle`, `{title}: x`, `a"b"c`, `(((`, `-kettle +water`, "\x00kettle", `'; DROP TABLE search_chunks; --`,
		`kettle & !water`, `water:*`, `a <-> b`, `'kettle'`, `the of and`} {
		if _, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: q}); err != nil {
			t.Errorf("Retrieve(%q): %v", q, err)
		}
	}
}

func testSearchDomains(t *testing.T, s indexedStore) {
	ctx := t.Context()
	must(t, s.ReplacePages(ctx, "a", []search.Chunk{chunk("p", "teapot", nil)}, nil), "ReplacePages a")
	must(t, s.ReplacePages(ctx, "b", []search.Chunk{chunk("p", "samovar", nil)}, nil), "ReplacePages b")
	hits, err := s.Search(ctx, "a", search.Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 5})
	must(t, err, "Search")
	if len(hits) != 0 {
		t.Errorf("domain a found b's chunk: %q", hitIDs(hits))
	}
	hits, err = s.Search(ctx, "b", search.Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 5})
	must(t, err, "Search")
	if len(hits) != 1 {
		t.Errorf("domain b: %q", hitIDs(hits))
	}
}

func testThreads(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	th := assistant.Thread{ID: "thr_1", Domain: "docs.example", OrgID: "acme", FP: "anonymous", CreatedAt: t0, UpdatedAt: t0}
	must(t, s.CreateThread(ctx, th), "CreateThread")
	wantCode(t, s.CreateThread(ctx, th), apperr.Conflict, "CreateThread twice")
	must(t, s.CreateThread(ctx, assistant.Thread{ID: "thr_2", Domain: "other.example", OrgID: "globex", FP: "u1", CreatedAt: t0, UpdatedAt: t0}), "CreateThread 2")

	got, err := s.GetThread(ctx, "thr_1")
	must(t, err, "GetThread")
	if got.Domain != th.Domain || got.OrgID != th.OrgID || got.FP != th.FP {
		t.Errorf("thread = %+v", got)
	}
	sameTime(t, "created", got.CreatedAt, t0)
	_, err = s.GetThread(ctx, "thr_nope")
	wantCode(t, err, apperr.NotFound, "GetThread unknown")

	var want []assistant.Turn
	for i := 1; i <= 4; i++ {
		turn := assistant.Turn{
			ThreadID: "thr_1", MessageID: fmt.Sprintf("msg_%d", i), FP: "anonymous", Question: fmt.Sprintf("question %d", i),
			Answer: fmt.Sprintf("answer %d", i), Model: "builtin", Status: assistant.TurnAnswered,
			Sources:     []assistant.TurnSource{{ID: "src_1", URL: "https://docs.example/a", Title: "A", Path: "a", Score: 0.5}},
			InputTokens: 10 * i, OutputTokens: i, RetrievalTime: 1500 * 1000, FirstTextTime: 2 * 1000 * 1000, TotalTime: 3 * 1000 * 1000,
			CreatedAt: t0.Add(time.Duration(i) * time.Minute),
		}
		if i == 3 {
			turn.Sources, turn.Status, turn.Error = nil, assistant.TurnFailed, "model down"
		}
		if i == 4 {
			turn.Status, turn.StatusNote, turn.Missing = assistant.TurnPartial, "The docs don't mention Datadog.", []string{"Datadog"}
		}
		seq, err := s.AddTurn(ctx, turn)
		must(t, err, "AddTurn")
		if seq != i {
			t.Errorf("turn %d got seq %d", i, seq)
		}
		turn.Seq = seq
		if turn.Sources == nil {
			turn.Sources = []assistant.TurnSource{}
		}
		want = append(want, turn)
	}
	_, err = s.AddTurn(ctx, assistant.Turn{ThreadID: "thr_nope", MessageID: "m", FP: "x", Question: "q", Model: "m", Status: assistant.TurnAnswered, CreatedAt: t0})
	wantCode(t, err, apperr.NotFound, "AddTurn to an unknown thread")

	// A batch is all or nothing: a turn of an unknown thread stores none.
	must(t, s.CreateThread(ctx, assistant.Thread{ID: "thr_3", Domain: "docs.example", OrgID: "acme", FP: "u1", CreatedAt: t0, UpdatedAt: t0}), "CreateThread 3")
	other := assistant.Turn{ThreadID: "thr_3", MessageID: "msg_b", FP: "u1", Question: "q", Model: "builtin", Status: assistant.TurnAnswered, CreatedAt: t0}
	_, err = s.AddTurns(ctx, []assistant.Turn{other, {ThreadID: "thr_nope", MessageID: "m", FP: "x", Question: "q", Model: "m", Status: assistant.TurnAnswered, CreatedAt: t0}})
	wantCode(t, err, apperr.NotFound, "AddTurns with a turn of an unknown thread")
	if turns, err := s.RecentTurns(ctx, "thr_3", 5); err != nil || len(turns) != 0 {
		t.Errorf("a failed batch left turns behind: %v, %v", turns, err)
	}
	// Turns of several threads in one batch keep their order per thread.
	b1, b2 := other, other
	b2.MessageID = "msg_c"
	seqs, err := s.AddTurns(ctx, []assistant.Turn{b1, b2})
	must(t, err, "AddTurns")
	if !slices.Equal(seqs, []int{1, 2}) {
		t.Errorf("AddTurns seqs = %v, want [1 2]", seqs)
	}
	if turns, err := s.RecentTurns(ctx, "thr_3", 5); err != nil || len(turns) != 2 || turns[0].MessageID != "msg_b" || turns[1].MessageID != "msg_c" {
		t.Errorf("RecentTurns after a batch: %+v, %v", turns, err)
	}
	// A batch written again (its first commit's answer was lost) stores
	// nothing twice and answers the same turn numbers.
	seqs, err = s.AddTurns(ctx, []assistant.Turn{b1, b2})
	must(t, err, "AddTurns again")
	if !slices.Equal(seqs, []int{1, 2}) {
		t.Errorf("AddTurns again seqs = %v, want [1 2]", seqs)
	}
	if turns, err := s.RecentTurns(ctx, "thr_3", 5); err != nil || len(turns) != 2 {
		t.Errorf("a batch written twice holds %d turns (%v), want 2", len(turns), err)
	}

	// A turn that starts its thread stores the thread with it, once even
	// when the write is retried.
	starter := assistant.Thread{ID: "thr_new", Domain: "docs.example", OrgID: "acme", FP: "u2", CreatedAt: t0, UpdatedAt: t0}
	first := assistant.Turn{ThreadID: "thr_new", MessageID: "msg_n", FP: "u2", Question: "q", Model: "builtin", Status: assistant.TurnAnswered,
		CreatedAt: t0.Add(time.Minute), NewThread: &starter}
	for _, attempt := range []string{"AddTurns with a new thread", "AddTurns with a new thread again"} {
		seqs, err := s.AddTurns(ctx, []assistant.Turn{first})
		must(t, err, attempt)
		if !slices.Equal(seqs, []int{1}) {
			t.Errorf("%s: seqs = %v, want [1]", attempt, seqs)
		}
	}
	if got, err := s.GetThread(ctx, "thr_new"); err != nil || got.OrgID != "acme" || got.FP != "u2" {
		t.Errorf("thread stored with its first turn = %+v, %v", got, err)
	} else {
		sameTime(t, "new thread updated", got.UpdatedAt, t0.Add(time.Minute))
	}
	if turns, err := s.RecentTurns(ctx, "thr_new", 5); err != nil || len(turns) != 1 {
		t.Errorf("new thread holds %d turns (%v), want 1", len(turns), err)
	}
	mismatched := first
	mismatched.ThreadID, mismatched.MessageID = "thr_1", "msg_x"
	_, err = s.AddTurns(ctx, []assistant.Turn{mismatched})
	wantCode(t, err, apperr.Invalid, "AddTurns with a turn that starts another thread")

	got, err = s.GetThread(ctx, "thr_1")
	must(t, err, "GetThread")
	sameTime(t, "updated", got.UpdatedAt, t0.Add(time.Duration(4)*time.Minute))

	turns, err := s.RecentTurns(ctx, "thr_1", 3)
	must(t, err, "RecentTurns")
	if len(turns) != 3 {
		t.Fatalf("RecentTurns = %d turns, want 3", len(turns))
	}
	for i, tu := range turns {
		w := want[i+1]
		sameTime(t, "turn created", tu.CreatedAt, w.CreatedAt)
		tu.CreatedAt = w.CreatedAt
		if fmt.Sprintf("%+v", tu) != fmt.Sprintf("%+v", w) {
			t.Errorf("turn %d =\n  %+v\nwant\n  %+v", i, tu, w)
		}
	}
	if turns, err := s.RecentTurns(ctx, "thr_2", 5); err != nil || len(turns) != 0 {
		t.Errorf("RecentTurns of an empty thread: %v, %v", turns, err)
	}
}

func testThreadFeedback(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	for _, id := range []string{"thr_1", "thr_2"} {
		must(t, s.CreateThread(ctx, assistant.Thread{ID: id, Domain: "docs.example", OrgID: "acme", FP: "anonymous", CreatedAt: t0, UpdatedAt: t0}), "CreateThread")
	}
	for i, c := range []struct{ thread, message string }{{"thr_1", "msg_a"}, {"thr_1", "msg_b"}, {"thr_2", "msg_c"}} {
		_, err := s.AddTurn(ctx, assistant.Turn{ThreadID: c.thread, MessageID: c.message, FP: "anonymous", Question: "q", Answer: "a",
			Model: "extractive", Status: assistant.TurnAnswered, CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		must(t, err, "AddTurn")
	}
	rate := func(f assistant.Feedback) error { return s.RateTurn(ctx, f) }
	must(t, rate(assistant.Feedback{ThreadID: "thr_1", MessageID: "msg_b", Rating: assistant.RatingUp, CreatedAt: t0.Add(time.Hour)}), "RateTurn")
	// A second rating of the same answer replaces the first.
	second := assistant.Feedback{ThreadID: "thr_1", MessageID: "msg_b", Rating: assistant.RatingDown, Comment: "The flag is wrong: it is --max-rate, ünïcode.", CreatedAt: t0.Add(2 * time.Hour)}
	must(t, rate(second), "RateTurn again")
	// An answer is found only in its own thread.
	wantCode(t, rate(assistant.Feedback{ThreadID: "thr_2", MessageID: "msg_a", Rating: assistant.RatingUp, CreatedAt: t0}), apperr.NotFound, "RateTurn in another thread")
	wantCode(t, rate(assistant.Feedback{ThreadID: "thr_1", MessageID: "msg_nope", Rating: assistant.RatingUp, CreatedAt: t0}), apperr.NotFound, "RateTurn of an unknown answer")
	wantCode(t, rate(assistant.Feedback{ThreadID: "thr_nope", MessageID: "msg_a", Rating: assistant.RatingUp, CreatedAt: t0}), apperr.NotFound, "RateTurn in an unknown thread")

	turns, err := s.RecentTurns(ctx, "thr_1", 5)
	must(t, err, "RecentTurns")
	if len(turns) != 2 {
		t.Fatalf("RecentTurns = %d turns, want 2", len(turns))
	}
	if a := turns[0]; a.Rating != "" || a.Comment != "" || !a.RatedAt.IsZero() {
		t.Errorf("unrated turn = rating %q comment %q at %v", a.Rating, a.Comment, a.RatedAt)
	}
	b := turns[1]
	if b.MessageID != "msg_b" || b.Rating != second.Rating || b.Comment != second.Comment {
		t.Errorf("rated turn = %s rating %q comment %q", b.MessageID, b.Rating, b.Comment)
	}
	sameTime(t, "rated", b.RatedAt, second.CreatedAt)
	other, err := s.RecentTurns(ctx, "thr_2", 5)
	must(t, err, "RecentTurns")
	if len(other) != 1 || other[0].Rating != "" {
		t.Errorf("the other thread's turn was rated: %+v", other)
	}
}

func testCatalogs(t *testing.T, s Store) {
	ctx := t.Context()
	_, err := s.GetCatalog(ctx, "kettle")
	wantCode(t, err, apperr.NotFound, "GetCatalog before any")
	first := search.Catalog(loadSite(t, fixtureFS(t)), "https://docs.example")
	if len(first.Pages) == 0 {
		t.Fatal("the fixture's catalog is empty")
	}
	must(t, s.PutCatalog(ctx, "kettle", first), "PutCatalog")
	got, err := s.GetCatalog(ctx, "kettle")
	must(t, err, "GetCatalog")
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", first) {
		t.Errorf("catalog =\n  %+v\nwant\n  %+v", got, first)
	}
	// A new build replaces it whole; other domains keep theirs.
	second := search.SiteCatalog{Name: "Kettle", Pages: []search.CatalogPage{{Path: "a", Title: "A", URL: "https://docs.example/a", Section: []string{"Start"}, Groups: []string{"staff"}}}}
	must(t, s.PutCatalog(ctx, "kettle", second), "PutCatalog again")
	must(t, s.PutCatalog(ctx, "other", first), "PutCatalog other")
	got, err = s.GetCatalog(ctx, "kettle")
	must(t, err, "GetCatalog")
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", second) {
		t.Errorf("replaced catalog = %+v", got)
	}
}

// The ranking is the same whatever the store: the index of each runs these
// queries to the same chunks in the same order.
func testSearchSameRanking(t *testing.T, s indexedStore) {
	buildFixture(t, s)
	r := search.NewRetriever(s)
	tests := []struct {
		query string
		want  []string
	}{
		{"green tea temperature", sameRankingGreenTea},
		{"descale the kettle", sameRankingDescale},
		{"\"fill level\" kettle", sameRankingFillLevel},
	}
	for _, tt := range tests {
		hits, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: tt.query, PageSize: 8})
		must(t, err, "Retrieve")
		if got := hitIDs(hits); !slices.Equal(got, tt.want) {
			t.Errorf("%q ranks\n%q\nwant\n%q", tt.query, got, tt.want)
		}
	}
}

// Rankings of the fixture site, as every store must give them. The brewing
// page's troubleshooting section matches "green tea temperature" far less
// than its top, so the page is listed once (see
// search.DefaultSecondPassageRatio).
var (
	sameRankingGreenTea  = []string{"guides/brewing", "index", "es/guides/brewing", "api/get-kettle"}
	sameRankingDescale   = []string{"guides/water", "guides/brewing#troubleshooting-a-bitter-cup", "api/get-kettle", "index"}
	sameRankingFillLevel = []string{"api/get-kettle"}
)

// One domain's documents do not change another's ranking: the statistics
// (chunk count, lengths, document frequencies) are the domain's own.
func testSearchStatisticsPerDomain(t *testing.T, s indexedStore) {
	ctx := t.Context()
	buildFixture(t, s)
	q := search.Query{Terms: engine.ParseQuery("kettle descale", "en"), Limit: 20}
	before, err := s.Search(ctx, "kettle", q)
	must(t, err, "Search")
	var noise []search.Chunk
	for i := range 50 {
		noise = append(noise, chunk(fmt.Sprintf("n%d", i), "kettle kettle kettle descale", nil))
	}
	must(t, s.ReplacePages(ctx, "noise", noise, nil), "ReplacePages noise")
	after, err := s.Search(ctx, "kettle", q)
	must(t, err, "Search")
	if len(before) != len(after) {
		t.Fatalf("hits %d before another domain, %d after", len(before), len(after))
	}
	for i := range before {
		if before[i].ID != after[i].ID || before[i].Score != after[i].Score {
			t.Fatalf("another domain changed the ranking:\n%v\n%v", before[i], after[i])
		}
	}
}

// A domain re-indexed through one process is searched at its new version
// by another process holding it in memory, within a second.
func testSearchChangeSeenElsewhere(t *testing.T, s indexedStore) {
	ctx := t.Context()
	must(t, s.ReplacePages(ctx, "d", []search.Chunk{chunk("p", "teapot", nil)}, nil), "ReplacePages")
	other := search.NewMemory(s, search.MemoryConfig{})
	q := search.Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 5}
	hits, err := other.Search(ctx, "d", q)
	must(t, err, "Search")
	if len(hits) != 0 {
		t.Fatalf("hits before the change: %q", hitIDs(hits))
	}
	must(t, s.ReplacePages(ctx, "d", []search.Chunk{chunk("p", "samovar", nil)}, nil), "ReplacePages")
	changed := time.Now()
	for {
		hits, err := other.Search(ctx, "d", q)
		must(t, err, "Search")
		if len(hits) == 1 {
			break
		}
		if time.Since(changed) > time.Second {
			t.Fatal("the other process still searches the old index a second after the change")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
