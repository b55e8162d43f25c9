package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/retrievaleval"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// fixtureDir is the small docs site the search package's tests use too.
const fixtureDir = "../../search/testdata/site"

// openSearchStore opens a store in a temp dir and returns its index as the
// server searches it: in memory, loaded from the store.
func openSearchStore(tb testing.TB) *search.Memory {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), tb.TempDir())
	if err != nil {
		tb.Fatalf("open sqlite store: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("close sqlite store: %v", err)
		}
	})
	return search.NewMemory(s, search.MemoryConfig{})
}

// fixtureFS copies the fixture site into a MapFS a test may change.
func fixtureFS(t *testing.T) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(fixtureDir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(fixtureDir, p))
		out[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return out
}

func load(t *testing.T, fsys fs.FS) *docs.Site {
	t.Helper()
	site, err := docs.Load(fsys)
	if err != nil {
		t.Fatalf("load site: %v", err)
	}
	return site
}

// builtStore is a store with the fixture site indexed as domain "kettle".
func builtStore(t *testing.T) *search.Memory {
	t.Helper()
	s := openSearchStore(t)
	if _, err := search.Build(t.Context(), s, "kettle", load(t, fixtureFS(t)), "https://docs.example"); err != nil {
		t.Fatalf("build: %v", err)
	}
	return s
}

func ids(hs []search.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return out
}

func pagesOf(hs []search.Hit) []string {
	var out []string
	for _, h := range hs {
		if !slices.Contains(out, h.PagePath) {
			out = append(out, h.PagePath)
		}
	}
	return out
}

func TestSearchRetrieval(t *testing.T) {
	t.Parallel()
	s := builtStore(t)
	r := search.NewRetriever(s)
	tests := []struct {
		name string
		req  search.Request
		// wantFirst is the page of the first hit.
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
			t.Parallel()
			hits, err := r.Retrieve(t.Context(), "kettle", tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].PagePath != tt.wantFirst {
				t.Fatalf("hits = %q, want %s first", ids(hits), tt.wantFirst)
			}
			for _, h := range hits {
				if h.Score <= 0 || h.Score >= 1 {
					t.Errorf("score %v of %s outside (0, 1)", h.Score, h.ID)
				}
			}
		})
	}
}

func TestSearchLeavesOutHiddenNoindexAndRestricted(t *testing.T) {
	t.Parallel()
	s := builtStore(t)
	r := search.NewRetriever(s)
	for _, q := range []string{"smoked lapsang", "oolong", "matcha wholesale portal"} {
		hits, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) > 0 {
			t.Errorf("%q found %q", q, ids(hits))
		}
	}
	hits, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: "matcha wholesale portal", Filter: search.Filter{Groups: []string{"guests", "staff"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].PagePath != "guides/staff" {
		t.Errorf("a reader in the staff group got %q", ids(hits))
	}
}

func TestSearchHitFields(t *testing.T) {
	t.Parallel()
	s := builtStore(t)
	hits, err := search.NewRetriever(s).Retrieve(t.Context(), "kettle", search.Request{Query: "hard water white marks"})
	if err != nil || len(hits) == 0 {
		t.Fatalf("hits %v, err %v", hits, err)
	}
	h := hits[0]
	want := search.Chunk{
		ID:         "guides/brewing#troubleshooting-a-bitter-cup",
		PagePath:   "guides/brewing",
		Anchor:     "troubleshooting-a-bitter-cup",
		URL:        "https://docs.example/guides/brewing#troubleshooting-a-bitter-cup",
		PageTitle:  "Brewing tea",
		Heading:    "Troubleshooting a bitter cup",
		Breadcrumb: []string{"Get started", "Brewing tea", "Troubleshooting a bitter cup"},
		Language:   "en",
		Seq:        1,
	}
	got := h.Chunk
	got.Text, got.Markdown, got.Keywords, got.PageHash, got.Groups = "", "", "", "", nil
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hit =\n  %+v\nwant\n  %+v", got, want)
	}
	if !strings.HasPrefix(h.Markdown, "## Troubleshooting a bitter cup\n\n") {
		t.Errorf("hit Markdown does not start with its heading: %q", h.Markdown)
	}
	if !strings.Contains(h.Text, "Hard water flattens") || h.PageHash == "" || !strings.Contains(h.Keywords, "infusion") {
		t.Errorf("hit text %q, hash %q, keywords %q", h.Text, h.PageHash, h.Keywords)
	}
}

// chunk is a hand-made chunk for filter tests.
func chunk(page, text string, mod func(*search.Chunk)) search.Chunk {
	c := search.Chunk{ID: page, PagePath: page, PageTitle: page, Text: text, PageHash: "h-" + page}
	if mod != nil {
		mod(&c)
	}
	return c
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	s := openSearchStore(t)
	ctx := t.Context()
	chunks := []search.Chunk{
		chunk("v1/a", "teapot kettle", func(c *search.Chunk) { c.Version = "v1" }),
		chunk("v2/a", "teapot kettle", func(c *search.Chunk) { c.Version = "v2" }),
		chunk("common", "teapot kettle", nil),
		chunk("fr/a", "teapot kettle", func(c *search.Chunk) { c.Language = "fr" }),
		chunk("admin", "teapot kettle", func(c *search.Chunk) { c.Groups = []string{"admin"} }),
		chunk("beta", "teapot kettle", func(c *search.Chunk) { c.Groups = []string{"beta", "admin"} }),
	}
	if err := s.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
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
			t.Parallel()
			hits, err := s.Search(ctx, "d", search.Query{Terms: terms, Limit: 50, Filter: tt.filter})
			if err != nil {
				t.Fatal(err)
			}
			got := pagesOf(hits)
			sort.Strings(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("pages = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSearchBoostsAndCaps(t *testing.T) {
	t.Parallel()
	s := openSearchStore(t)
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
	if err := s.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
	q := search.Query{Terms: engine.ParseQuery("kettle", "en"), Limit: 10}

	q.MaxPerPage = 2
	hits, err := s.Search(ctx, "d", q)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Equal(got, []string{"big#0", "big#1", "boosted", "small"}) {
		t.Errorf("capped at 2 a page: %q", got)
	}
	if hits[2].Boost != 100 {
		t.Errorf("boost read back as %v", hits[2].Boost)
	}

	q.MaxPerPage = 0
	q.Limit = 3
	if hits, err = s.Search(ctx, "d", q); err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); len(got) != 3 || got[2] != "big#2" {
		t.Errorf("uncapped, limit 3: %q", got)
	}

	q.Limit = 10
	q.MaxPerPage = 1
	q.BoostPath, q.PathBoost = "small", 100
	if hits, err = s.Search(ctx, "d", q); err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Equal(got, []string{"small", "big#0", "boosted"}) {
		t.Errorf("current page boosted: %q", got)
	}
}

func TestSearchQuerySyntaxIsNeverFTS(t *testing.T) {
	t.Parallel()
	s := builtStore(t)
	r := search.NewRetriever(s)
	for _, q := range []string{`"`, `""`, `"unclosed phrase`, `kettle*`, `NEAR(kettle water)`, `kettle AND OR NOT`, `title:kettle`,
		`^kettle`, `{title}: x`, `a"b"c`, `(((`, `-kettle +water`, "\x00kettle", `'; DROP TABLE search_chunks; --`} {
		if _, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: q}); err != nil {
			t.Errorf("Retrieve(%q): %v", q, err)
		}
	}
}

func TestSearchRequiredPhrase(t *testing.T) {
	t.Parallel()
	s := builtStore(t)
	r := search.NewRetriever(s)
	hits, err := r.Retrieve(t.Context(), "kettle", search.Request{Query: `"boiling water" pot`})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if !strings.Contains(strings.ToLower(h.Text), "boiling water") {
			t.Errorf("hit %s lacks the quoted phrase: %q", h.ID, h.Text)
		}
	}
	if len(hits) == 0 {
		t.Fatal("no hit for a phrase the fixture has")
	}
	// A phrase nothing has still ranks on its words.
	if hits, err = r.Retrieve(t.Context(), "kettle", search.Request{Query: `"descale kettle monthly"`}); err != nil || len(hits) == 0 {
		t.Errorf("relaxed phrase: %v, %v", ids(hits), err)
	}
}

func TestSearchIncrementalBuildAndPages(t *testing.T) {
	t.Parallel()
	s := openSearchStore(t)
	ctx := t.Context()
	fsys := fixtureFS(t)
	st, err := search.Build(ctx, s, "kettle", load(t, fsys), "https://docs.example")
	if err != nil {
		t.Fatal(err)
	}
	if st.Pages != 7 || st.Changed != 7 {
		t.Fatalf("first build = %+v", st)
	}
	// Another domain with the same pages stays apart.
	if _, err := search.Build(ctx, s, "other", load(t, fsys), "https://other.example"); err != nil {
		t.Fatal(err)
	}

	pt, err := s.Page(ctx, "kettle", "guides/brewing")
	if err != nil {
		t.Fatal(err)
	}
	if pt.Title != "Brewing tea" || pt.URL != "https://docs.example/guides/brewing" {
		t.Errorf("page = %+v", pt)
	}
	for _, want := range []string{"# Brewing tea\n", "## Green tea\n\nSteep green tea", "\n## Troubleshooting a bitter cup\n\nA bitter cup"} {
		if !strings.Contains(pt.Content, want) {
			t.Errorf("page content lacks %q:\n%s", want, pt.Content)
		}
	}
	if _, err := s.Page(ctx, "kettle", "guides/secret"); !errors.Is(err, search.ErrPageNotFound) {
		t.Errorf("hidden page: err = %v, want ErrPageNotFound", err)
	}

	fsys["guides/water.mdx"].Data = []byte("---\ntitle: Water quality\n---\n\nUse spring water from the mountains.\n")
	fsys["docs.json"].Data = []byte(strings.Replace(string(fsys["docs.json"].Data), `"guides/staff"`, `"guides/nothing"`, 1))
	if st, err = search.Build(ctx, s, "kettle", load(t, fsys), "https://docs.example"); err != nil {
		t.Fatal(err)
	}
	if st.Changed != 1 || st.Removed != 1 || st.Unchanged != 5 {
		t.Errorf("incremental build = %+v", st)
	}
	hashes, err := s.PageHashes(ctx, "kettle")
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes) != 6 || hashes["guides/staff"] != "" {
		t.Errorf("hashes = %v", hashes)
	}
	r := search.NewRetriever(s)
	if hits, _ := r.Retrieve(ctx, "kettle", search.Request{Query: "mountain spring water"}); len(hits) == 0 || hits[0].PagePath != "guides/water" {
		t.Errorf("the edited page is not searched with its new text: %q", ids(hits))
	}
	if hits, _ := r.Retrieve(ctx, "kettle", search.Request{Query: "descale program interval"}); slices.Contains(pagesOf(hits), "guides/water") {
		t.Errorf("the edited page is still found by its old text: %q", ids(hits))
	}
	if hits, _ := r.Retrieve(ctx, "other", search.Request{Query: "descale program interval"}); len(hits) == 0 || hits[0].PagePath != "guides/water" {
		t.Errorf("the other domain changed too: %q", ids(hits))
	}
	if hits, _ := r.Retrieve(ctx, "other", search.Request{Query: "matcha", Filter: search.Filter{Groups: []string{"staff"}}}); len(hits) != 1 {
		t.Errorf("the other domain lost a page: %q", ids(hits))
	}
}

func TestReplacePagesRejectsDuplicateIDs(t *testing.T) {
	t.Parallel()
	s := openSearchStore(t)
	err := s.ReplacePages(t.Context(), "d", []search.Chunk{chunk("a", "x", nil), chunk("a", "y", nil)}, nil)
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("err = %v", err)
	}
	// The transaction rolled back: nothing is indexed.
	if h, err := s.PageHashes(t.Context(), "d"); err != nil || len(h) != 0 {
		t.Errorf("hashes after a failed replace = %v, %v", h, err)
	}
}

func TestEvaluateOnFixture(t *testing.T) {
	t.Parallel()
	questions := filepath.Join(t.TempDir(), "q.jsonl")
	lines := []string{
		`{"id": "k-dev01", "question": "How hot should the water be for green tea?", "expected_paths": ["guides/brewing"], "answer_facts": ["80 degrees"], "kind": "lookup"}`,
		`{"id": "k-dev02", "question": "Which API call tells me how full a kettle is?", "expected_paths": ["api/get-kettle"], "answer_facts": ["fill level"], "kind": "lookup"}`,
		`{"id": "k-dev03", "question": "绿茶的水温是多少？", "expected_paths": ["zh/guides/brewing"], "answer_facts": ["八十度"], "kind": "lookup"}`,
		`{"id": "k-dev04", "question": "Can the kettle order pizza?", "expected_paths": [], "answer_facts": [], "kind": "not_in_docs"}`,
	}
	if err := os.WriteFile(questions, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := retrievaleval.Evaluate(t.Context(), openSearchStore(t), fixtureDir, questions, retrievaleval.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answerable != 3 || rep.NotInDocs != 1 || rep.RecallAt1 != 1 || rep.RecallAtK != 1 || rep.MRR != 1 || rep.FactsAtK != 1 {
		t.Errorf("report = %+v", rep)
	}
}

// corpusDir finds shared/corpora/NAME above the package directory, or skips.
func corpusDir(tb testing.TB, name string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		for _, cand := range []string{filepath.Join(dir, "shared", "corpora", name), filepath.Join(dir, "..", "shared", "corpora", name)} {
			if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
				return cand
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("corpus %s not found above the package directory", name)
		}
		dir = parent
	}
}

// BenchmarkSearchBuild indexes the mintlify corpus (about 1,000 pages) from
// scratch: chunking plus writing every chunk. B/op is the Go allocation of a
// build; MB-db is the size of the database file (and WAL) it leaves.
func BenchmarkSearchBuild(b *testing.B) {
	site, err := docs.Load(os.DirFS(corpusDir(b, "mintlify")))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	var chunks int
	var dbBytes int64
	for b.Loop() {
		dir := b.TempDir()
		s, err := sqlite.Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		st, err := search.Build(ctx, search.NewMemory(s, search.MemoryConfig{}), "bench", site, "https://docs.example")
		if err != nil {
			b.Fatal(err)
		}
		chunks = st.Chunks
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		dbBytes = dirSize(b, dir)
		b.StartTimer()
	}
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(dbBytes)/(1<<20), "MB-db")
}

func dirSize(tb testing.TB, dir string) int64 {
	tb.Helper()
	var n int64
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkSearchRebuildUnchanged is the incremental build when nothing
// changed: chunk and hash every page, write nothing.
func BenchmarkSearchRebuildUnchanged(b *testing.B) {
	site, err := docs.Load(os.DirFS(corpusDir(b, "mintlify")))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s := openSearchStore(b)
	if _, err := search.Build(ctx, s, "bench", site, "https://docs.example"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if st, err := search.Build(ctx, s, "bench", site, "https://docs.example"); err != nil || st.Changed != 0 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// BenchmarkSearchRetrieve runs assistant-style questions against the
// mintlify corpus and reports the latency percentiles.
func BenchmarkSearchRetrieve(b *testing.B) {
	site, err := docs.Load(os.DirFS(corpusDir(b, "mintlify")))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	s := openSearchStore(b)
	if _, err := search.Build(ctx, s, "bench", site, "https://docs.example"); err != nil {
		b.Fatal(err)
	}
	r := search.NewRetriever(s)
	questions := []string{
		"How do I add a custom domain to my docs?",
		"What does the navigation tabs setting do in docs.json?",
		"Can I hide a page from the sidebar but keep it reachable?",
		"How do I document an API endpoint with an OpenAPI file?",
		"¿Cómo configuro la búsqueda del sitio?",
		"如何配置自定义域名？",
		"mint dev",
		"analytics integration for posthog",
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if _, err := r.Retrieve(ctx, "bench", search.Request{Query: questions[i%len(questions)], PageSize: 5}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		i++
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
