package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// memSource is a Source kept in maps, counting loads.
type memSource struct {
	mu       sync.Mutex
	domains  map[string][]Chunk
	versions map[string]int64
	loads    map[string]int
	// pageReads counts the calls of Page.
	pageReads int
}

func newMemSource() *memSource {
	return &memSource{domains: map[string][]Chunk{}, versions: map[string]int64{}, loads: map[string]int{}}
}

func (s *memSource) ReplacePages(_ context.Context, domain string, chunks []Chunk, _ []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.domains[domain] = slices.Clone(chunks)
	s.versions[domain]++
	return nil
}

func (s *memSource) PageHashes(_ context.Context, domain string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return engine.PageHashes(s.domains[domain]), nil
}

func (s *memSource) Search(context.Context, string, Query) ([]Hit, error) { return nil, nil }

// Page assembles the page from its chunks in Seq order, as a store does,
// counting the reads.
func (s *memSource) Page(_ context.Context, domain, path string) (PageText, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageReads++
	var chunks []Chunk
	for _, c := range s.domains[domain] {
		if c.PagePath == path {
			chunks = append(chunks, c)
		}
	}
	slices.SortStableFunc(chunks, func(a, b Chunk) int { return cmp.Compare(a.Seq, b.Seq) })
	pt, ok := engine.AssemblePage(chunks)
	if !ok {
		return PageText{}, ErrPageNotFound
	}
	return pt, nil
}

func (s *memSource) IndexVersion(_ context.Context, domain string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versions[domain], nil
}

func (s *memSource) DomainChunks(_ context.Context, domain string, each func(Chunk) error) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads[domain]++
	for _, c := range s.domains[domain] {
		if err := each(c); err != nil {
			return 0, err
		}
	}
	return s.versions[domain], nil
}

func (s *memSource) loaded(domain string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loads[domain]
}

func textChunk(page, text string) Chunk {
	return Chunk{ID: page, PagePath: page, PageTitle: page, Text: text, PageHash: text}
}

// Under a small bound the least recently searched domains are dropped, and
// loaded again when searched.
func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := newMemSource()
	for _, d := range []string{"a", "b", "c"} {
		if err := src.ReplacePages(ctx, d, []Chunk{textChunk("p", "samovar "+d)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	one := engine.Build([]Chunk{textChunk("p", "samovar a")}, 1).Bytes()
	m := NewMemory(src, MemoryConfig{MaxBytes: 2*one + one/2})
	q := Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 5}
	for _, d := range []string{"a", "b", "a", "c"} {
		if hits, err := m.Search(ctx, d, q); err != nil || len(hits) != 1 {
			t.Fatalf("search %s: %v, %v", d, hits, err)
		}
	}
	held, used := m.Held()
	if !slices.Equal(held, []string{"c", "a"}) || used > 2*one+one/2 {
		t.Fatalf("held %v (%d bytes), want c and a within the bound", held, used)
	}
	if _, err := m.Search(ctx, "b", q); err != nil {
		t.Fatal(err)
	}
	if src.loaded("b") != 2 || src.loaded("a") != 1 {
		t.Fatalf("loads: b %d (want 2), a %d (want 1)", src.loaded("b"), src.loaded("a"))
	}
}

// A domain changed elsewhere is loaded again after Changed; unchanged, it is
// not.
func TestMemoryReloadsOnNewVersion(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := newMemSource()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(src.ReplacePages(ctx, "d", []Chunk{textChunk("p", "teapot")}, nil))
	m := NewMemory(src, MemoryConfig{CheckEvery: 1 << 62})
	q := Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 5}
	hits, err := m.Search(ctx, "d", q)
	must(err)
	m.Changed("d")
	_, err = m.Search(ctx, "d", q)
	must(err)
	if len(hits) != 0 || src.loaded("d") != 1 {
		t.Fatalf("hits %v, loads %d", hits, src.loaded("d"))
	}
	must(src.ReplacePages(ctx, "d", []Chunk{textChunk("p", "samovar")}, nil))
	if hits, _ = m.Search(ctx, "d", q); len(hits) != 0 {
		t.Fatal("a version check before it was due")
	}
	m.Changed("")
	if hits, _ = m.Search(ctx, "d", q); len(hits) != 1 || src.loaded("d") != 2 {
		t.Fatalf("after the change: hits %v, loads %d", hits, src.loaded("d"))
	}
}

// Warm loads domains in order while they fit the bound.
func TestMemoryWarm(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := newMemSource()
	for _, d := range []string{"a", "b", "c"} {
		if err := src.ReplacePages(ctx, d, []Chunk{textChunk("p", "samovar "+d)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	one := engine.Build([]Chunk{textChunk("p", "samovar a")}, 1).Bytes()
	m := NewMemory(src, MemoryConfig{MaxBytes: 2 * one})
	if err := m.Warm(ctx, []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	if held, _ := m.Held(); !slices.Equal(held, []string{"b", "a"}) || src.loaded("c") != 0 {
		t.Fatalf("held %v, c loaded %d times", held, src.loaded("c"))
	}
}

type failingSource struct {
	*memSource
	fail, failChunks bool
}

func (f *failingSource) IndexVersion(ctx context.Context, domain string) (int64, error) {
	if f.fail {
		return 0, errors.New("store away")
	}
	return f.memSource.IndexVersion(ctx, domain)
}

// DomainChunks fails after the first chunk: a read cut off half-way.
func (f *failingSource) DomainChunks(ctx context.Context, domain string, each func(Chunk) error) (int64, error) {
	if !f.fail && !f.failChunks {
		return f.memSource.DomainChunks(ctx, domain, each)
	}
	n := 0
	_, err := f.memSource.DomainChunks(ctx, domain, func(c Chunk) error {
		if n++; n > 1 {
			return errors.New("store away")
		}
		return each(c)
	})
	if err == nil {
		err = errors.New("store away")
	}
	return 0, err
}

// While the store does not answer, a domain held is still searched; one
// never loaded is an error.
func TestMemoryServesHeldIndexWhileStoreFails(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := &failingSource{memSource: newMemSource()}
	if err := src.ReplacePages(ctx, "d", []Chunk{textChunk("p", "samovar")}, nil); err != nil {
		t.Fatal(err)
	}
	m := NewMemory(src, MemoryConfig{})
	q := Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 5}
	if hits, err := m.Search(ctx, "d", q); err != nil || len(hits) != 1 {
		t.Fatalf("%v, %v", hits, err)
	}
	src.fail = true
	m.Changed("")
	if hits, err := m.Search(ctx, "d", q); err != nil || len(hits) != 1 {
		t.Fatalf("held index while the store fails: %v, %v", hits, err)
	}
	if _, err := m.Search(ctx, "other", q); err == nil {
		t.Fatal("a domain never loaded searched without its store")
	}
}

// A reload cut off half-way leaves the index held as it was, and the next
// check loads the new version whole.
func TestMemoryKeepsHeldIndexWhenReloadFails(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := &failingSource{memSource: newMemSource()}
	if err := src.ReplacePages(ctx, "d", []Chunk{textChunk("p", "samovar")}, nil); err != nil {
		t.Fatal(err)
	}
	m := NewMemory(src, MemoryConfig{CheckEvery: 1 << 62})
	search := func(word string) int {
		t.Helper()
		hits, err := m.Search(ctx, "d", Query{Terms: engine.ParseQuery(word, "en"), Limit: 5})
		if err != nil {
			t.Fatalf("search %s: %v", word, err)
		}
		return len(hits)
	}
	if n := search("samovar"); n != 1 {
		t.Fatalf("samovar: %d hits", n)
	}
	if err := src.ReplacePages(ctx, "d", []Chunk{textChunk("p", "kettle"), textChunk("q", "kettle teapot")}, nil); err != nil {
		t.Fatal(err)
	}
	src.failChunks = true
	m.Changed("d")
	if n, k := search("samovar"), search("kettle"); n != 1 || k != 0 {
		t.Fatalf("after a failed reload: samovar %d hits, kettle %d, want the old index", n, k)
	}
	src.failChunks = false
	m.Changed("d")
	if n, k := search("samovar"), search("kettle"); n != 0 || k != 2 {
		t.Fatalf("after the reload: samovar %d hits, kettle %d, want the new index", n, k)
	}
}

// TestMemoryPageCount counts a domain's pages in the index held in memory,
// loading it once, and sees a re-index.
func TestMemoryPageCount(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := newMemSource()
	m := NewMemory(src, MemoryConfig{CheckEvery: 1 << 62})
	if n, err := m.PageCount(ctx, "d"); err != nil || n != 0 {
		t.Fatalf("an empty domain has %d pages (%v)", n, err)
	}
	if err := m.ReplacePages(ctx, "d", []Chunk{textChunk("p", "teapot"), textChunk("q", "kettle")}, nil); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if n, err := m.PageCount(ctx, "d"); err != nil || n != 2 {
			t.Fatalf("pages = %d (%v), want 2", n, err)
		}
	}
	if got := src.loaded("d"); got != 2 {
		t.Errorf("loads = %d, want one before and one after the re-index", got)
	}
}

// CountPages says what a search for the term alone, required, one hit a
// page, says by its number of hits, for words, prefixes and phrases, under
// filters that keep some pages out, whatever the bound.
func TestCountPagesAsSearchCounts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := []string{"kettle", "kettles", "water", "boil", "boiling", "tea", "teapot", "green", "cup", "descale", "lid", "timer"}
	var chunks []Chunk
	for i := range 300 {
		var words []string
		for range 2 + rng.IntN(20) {
			words = append(words, vocab[int(float64(len(vocab))*rng.Float64()*rng.Float64())])
		}
		// Several chunks a page, some pages restricted, some versioned.
		page := fmt.Sprintf("p%02d", i/4)
		c := textChunk(page, fmt.Sprint(words))
		c.ID, c.Seq = fmt.Sprintf("%s-%d", page, i%4), i%4
		switch i / 4 % 5 {
		case 1:
			c.Groups = []string{"staff"}
		case 2:
			c.Version = "v2"
		}
		chunks = append(chunks, c)
	}
	src := newMemSource()
	m := NewMemory(src, MemoryConfig{CheckEvery: 1 << 62})
	if err := m.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
	terms := []Term{
		{Words: []string{"kettl"}, Prefix: true}, {Words: []string{"boil"}, Prefix: true}, {Words: []string{"te"}, Prefix: true},
		{Words: []string{"tea"}}, {Words: []string{"timer"}}, {Words: []string{"absent"}}, {Words: []string{"absen"}, Prefix: true},
		{Words: []string{"green", "cup"}}, {Words: []string{"green", "te"}, Prefix: true},
	}
	filters := []Filter{{}, {Groups: []string{"staff"}}, {Version: "v1"}, {Version: "v2", Groups: []string{"staff"}}}
	for _, term := range terms {
		term.Required = true
		for _, f := range filters {
			for _, upTo := range []int{1, 5, 20, 40, 75} {
				hits, err := m.Search(ctx, "d", Query{Terms: []Term{term}, Filter: f, Limit: upTo, MaxPerPage: 1})
				if err != nil {
					t.Fatal(err)
				}
				got, err := m.CountPages(ctx, "d", term, f, upTo)
				if err != nil {
					t.Fatal(err)
				}
				if got != len(hits) {
					t.Errorf("%v %+v up to %d: CountPages = %d, a search finds %d pages", term.Words, f, upTo, got, len(hits))
				}
				// Asked again, a word without a filter is answered from
				// what the index kept: the same count.
				if again, err := m.CountPages(ctx, "d", term, f, upTo); err != nil || again != got {
					t.Errorf("%v %+v up to %d: CountPages again = %d (%v), first %d", term.Words, f, upTo, again, err, got)
				}
			}
		}
	}
}

// TestPageCountsFollowTheIndex: the page counts an index keeps are its
// own: a re-index answers from the new pages.
func TestPageCountsFollowTheIndex(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := NewMemory(newMemSource(), MemoryConfig{CheckEvery: 1 << 62})
	kettle := Term{Words: []string{"kettl"}, Prefix: true, Required: true}
	for _, pages := range []int{2, 3, 1} {
		var chunks []Chunk
		for i := range 4 {
			text := "a cup of tea"
			if i < pages {
				text = "boil the kettle"
			}
			chunks = append(chunks, textChunk(fmt.Sprintf("p%d", i), text))
		}
		if err := m.ReplacePages(ctx, "d", chunks, nil); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if n, err := m.CountPages(ctx, "d", kettle, Filter{}, 10); err != nil || n != pages {
				t.Fatalf("CountPages = %d (%v) after indexing %d pages about kettles", n, err, pages)
			}
		}
	}
}

// TestMemorySnapshot: a Memory starting again loads a domain from the
// snapshot an earlier one wrote while the store holds the same pages, with
// the store's version and the same hits; a page changed meanwhile, a
// damaged snapshot or another analysis sends it to the store.
func TestMemorySnapshot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	src := newMemSource()
	chunks := snapshotChunks(3*64 + 5) // several of the builder's batches
	if err := src.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
	q := Query{Terms: engine.ParseQuery("kettle water timer", "en"), Limit: 8}
	start := func() (*Memory, []Hit) {
		t.Helper()
		m := NewMemory(src, MemoryConfig{SnapshotDir: dir, CheckEvery: 1 << 62})
		hits, err := m.Search(ctx, "d", q)
		if err != nil || len(hits) == 0 {
			t.Fatalf("search: %v, %v", hits, err)
		}
		m.Close()
		return m, hits
	}
	_, want := start()
	if src.loaded("d") != 1 {
		t.Fatalf("loads = %d", src.loaded("d"))
	}
	m, got := start()
	if src.loaded("d") != 1 || !reflect.DeepEqual(got, want) {
		t.Fatalf("start from the snapshot: loads %d, hits equal %v", src.loaded("d"), reflect.DeepEqual(got, want))
	}
	if di, _ := m.index(ctx, "d"); di.Version() != 1 {
		t.Fatalf("version = %d, want the store's", di.Version())
	}

	// The same pages written again: a new version, the same snapshot.
	if err := src.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
	m, _ = start()
	if di, _ := m.index(ctx, "d"); src.loaded("d") != 1 || di.Version() != 2 {
		t.Fatalf("same pages at version 2: loads %d, version %d", src.loaded("d"), di.Version())
	}

	// A page changed while no process ran: the store.
	changed := slices.Clone(chunks)
	changed[0].Text, changed[0].PageHash = "samovar", "changed"
	if err := src.ReplacePages(ctx, "d", changed, nil); err != nil {
		t.Fatal(err)
	}
	m = NewMemory(src, MemoryConfig{SnapshotDir: dir})
	if hits, err := m.Search(ctx, "d", Query{Terms: engine.ParseQuery("samovar", "en"), Limit: 3}); err != nil || len(hits) != 1 || src.loaded("d") != 2 {
		t.Fatalf("after a change: %v, %v, loads %d", hits, err, src.loaded("d"))
	}
	m.Close()
	// ...whose snapshot the next start uses.
	start()
	if src.loaded("d") != 2 {
		t.Fatalf("loads = %d, want the new snapshot used", src.loaded("d"))
	}

	// A damaged snapshot, and one of another analysis: the store.
	path := snapshotPath(dir, "d")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	start()
	if src.loaded("d") != 3 {
		t.Fatalf("loads = %d, want the damaged snapshot passed over", src.loaded("d"))
	}
	other := NewMemory(src, MemoryConfig{SnapshotDir: dir})
	other.analysis[0] ^= 1
	if _, err := other.Search(ctx, "d", q); err != nil || src.loaded("d") != 4 {
		t.Fatalf("another analysis: %v, loads %d", err, src.loaded("d"))
	}
	other.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("snapshot dir holds %d files, want the one snapshot", len(entries))
	}
}

// A Memory serves a page of a domain it holds from the chunks in memory,
// the very page the store assembles, whatever order the chunks came in; a
// domain it does not hold, or a page its index lacks, is the store's.
func TestMemoryPageFromHeldChunks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	chunks := Chunks(loadSite(t, fixtureFS(t)), "https://docs.example/")
	slices.Reverse(chunks)
	var pages []string
	for _, c := range chunks {
		if !slices.Contains(pages, c.PagePath) {
			pages = append(pages, c.PagePath)
		}
	}
	src := newMemSource()
	m := NewMemory(src, MemoryConfig{CheckEvery: 1 << 62})
	if err := m.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]PageText{}
	for _, p := range pages {
		pt, err := m.Page(ctx, "d", p)
		if err != nil {
			t.Fatalf("page %s before a search: %v", p, err)
		}
		want[p] = pt
	}
	if src.pageReads != len(pages) || src.loaded("d") != 0 {
		t.Fatalf("before a search: %d page reads and %d loads, want %d reads from the store and no load", src.pageReads, src.loaded("d"), len(pages))
	}
	if _, err := m.Search(ctx, "d", Query{Text: "kettle", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	reads := src.pageReads
	for _, p := range pages {
		pt, err := m.Page(ctx, "d", p)
		if err != nil {
			t.Fatalf("page %s from memory: %v", p, err)
		}
		if !reflect.DeepEqual(pt, want[p]) {
			t.Errorf("page %s from memory:\n%+v\nwant the store's:\n%+v", p, pt, want[p])
		}
	}
	if src.pageReads != reads {
		t.Errorf("the store read %d pages for a held domain, want none", src.pageReads-reads)
	}
	if _, err := m.Page(ctx, "d", "no/such/page"); !errors.Is(err, ErrPageNotFound) {
		t.Errorf("a page the index lacks: %v, want ErrPageNotFound", err)
	}
}

// snapshotChunks are chunks with every field set some of the time: nil and
// empty lists, groups, boosts, several chunks a page, mixed scripts.
func snapshotChunks(n int) []Chunk {
	rng := rand.New(rand.NewPCG(11, 12))
	vocab := []string{"kettle", "Kettles", "water", "randomUUID", "café", "侧边栏", "x²", "getID2", "timer"}
	var chunks []Chunk
	for i := range n {
		var words []string
		for range 1 + rng.IntN(30) {
			words = append(words, vocab[rng.IntN(len(vocab))])
		}
		page := fmt.Sprintf("p%03d", i/3)
		c := Chunk{
			ID: fmt.Sprintf("%s#%d", page, i), PagePath: page, Seq: i % 3, Anchor: fmt.Sprint("a", i%3),
			URL: "https://docs.example/" + page, PageTitle: "Title " + page, Heading: vocab[i%len(vocab)],
			Text: strings.Join(words, " "), Keywords: vocab[(i/3)%len(vocab)], PageHash: fmt.Sprintf("h%03d", i/3),
			Overlap: i % 7, Boost: float64(i % 4),
		}
		switch i % 5 {
		case 0:
			c.Breadcrumb = []string{"Guides", c.PageTitle, c.Heading}
		case 1:
			c.Breadcrumb = []string{}
			c.Groups = []string{}
		case 2:
			c.Groups = []string{"staff", "beta"}
			c.Version, c.Language = "v2", "en"
		case 3:
			c.Markdown, c.MarkdownOverlap = "```yaml\n"+c.Text+"\n  indented: true\n```\n", i%9
		}
		chunks = append(chunks, c)
	}
	return chunks
}
