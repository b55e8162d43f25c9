package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeIndex keeps chunks in memory and answers searches with a canned
// function; it records what it was asked.
type fakeIndex struct {
	mu       sync.Mutex
	pages    map[string][]Chunk
	queries  []Query
	replaced []string // pages written, in order
	removed  []string
	search   func(q Query) []Hit
}

func newFakeIndex() *fakeIndex { return &fakeIndex{pages: map[string][]Chunk{}} }

func (f *fakeIndex) ReplacePages(_ context.Context, _ string, chunks []Chunk, removed []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fresh := map[string][]Chunk{}
	for _, c := range chunks {
		fresh[c.PagePath] = append(fresh[c.PagePath], c)
	}
	for p, cs := range fresh {
		f.pages[p] = cs
		f.replaced = append(f.replaced, p)
	}
	for _, p := range removed {
		delete(f.pages, p)
		f.removed = append(f.removed, p)
	}
	return nil
}

func (f *fakeIndex) PageHashes(context.Context, string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for p, cs := range f.pages {
		out[p] = cs[0].PageHash
	}
	return out, nil
}

func (f *fakeIndex) Search(_ context.Context, _ string, q Query) ([]Hit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, q)
	if f.search == nil {
		return nil, nil
	}
	return f.search(q), nil
}

func (f *fakeIndex) Page(_ context.Context, _, path string) (PageText, error) {
	return PageText{}, ErrPageNotFound
}

func hit(path, lang string, score float64) Hit {
	return Hit{Chunk: Chunk{ID: path, PagePath: path, Language: lang}, Score: score}
}

func hitPaths(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.PagePath)
	}
	return out
}

func TestRetrieveBuildsTheQuery(t *testing.T) {
	t.Parallel()
	idx := newFakeIndex()
	r := NewRetriever(idx)
	_, err := r.Retrieve(t.Context(), "d", Request{
		Query:       "How do I rotate an API key?",
		Context:     []string{"const client = new KettleClient({ apiKey })", strings.Repeat("word ", 5) + "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi"},
		CurrentPath: "/guides/keys.mdx#rotate",
		PageSize:    7,
		Filter:      Filter{Version: "v2", Groups: []string{"admin"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.queries) != 1 {
		t.Fatalf("%d searches", len(idx.queries))
	}
	q := idx.queries[0]
	if q.BoostPath != "guides/keys" || q.PathBoost != DefaultPathBoost || q.MaxPerPage != DefaultMaxPerPage {
		t.Errorf("boost and cap = %q %v %d", q.BoostPath, q.PathBoost, q.MaxPerPage)
	}
	if q.Limit < 7 || q.Filter.Version != "v2" || !slices.Equal(q.Filter.Groups, []string{"admin"}) {
		t.Errorf("limit %d, filter %+v", q.Limit, q.Filter)
	}
	terms := termStrings(q.Terms)
	for _, want := range []string{"rotate", "api key", "kettleclient", "kettle", "client", "alpha"} {
		if !slices.Contains(strings.Split(terms, " | "), want) {
			t.Errorf("terms %q lack %q", terms, want)
		}
	}
	if strings.Contains(terms, "lambda") {
		t.Errorf("terms %q take more than %d words from one context value", terms, maxContextTerms)
	}
}

func TestRetrieveRanksAndTrims(t *testing.T) {
	t.Parallel()
	hits := []Hit{hit("es/a", "es", 0.9), hit("b", "en", 0.8), hit("c", "", 0.5), hit("d", "en", 0.2)}
	search := func(Query) []Hit { return slices.Clone(hits) }
	tests := []struct {
		name string
		req  Request
		want []string
	}{
		{"English question demotes other languages", Request{Query: "How do I brew a green tea at home?"}, []string{"b", "c", "es/a", "d"}},
		{"Spanish question demotes English", Request{Query: "¿Cómo preparo un té verde en casa?"}, []string{"es/a", "c", "b", "d"}},
		{"language filter turns the preference off", Request{Query: "How do I brew a green tea at home?", Filter: Filter{Language: "en"}}, []string{"es/a", "b", "c", "d"}},
		{"current page's language", Request{Query: "té", CurrentPath: "/es/guides/x"}, []string{"es/a", "c", "b", "d"}},
		{"page size", Request{Query: "How do I brew a green tea at home?", PageSize: 2}, []string{"b", "c"}},
		{"threshold", Request{Query: "How do I brew a green tea at home?", ScoreThreshold: 0.5}, []string{"b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			idx := newFakeIndex()
			idx.search = search
			got, err := NewRetriever(idx).Retrieve(t.Context(), "d", tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(hitPaths(got), tt.want) {
				t.Errorf("got %q, want %q", hitPaths(got), tt.want)
			}
		})
	}
}

func TestRetrieveRelaxesAPhraseNothingHas(t *testing.T) {
	t.Parallel()
	idx := newFakeIndex()
	idx.search = func(q Query) []Hit {
		if hasRequired(q.Terms) {
			return nil
		}
		return []Hit{hit("a", "", 0.5)}
	}
	got, err := NewRetriever(idx).Retrieve(t.Context(), "d", Request{Query: `"green kettle" recipes`})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(idx.queries) != 2 {
		t.Fatalf("got %v after %d searches", got, len(idx.queries))
	}
	if terms := termStrings(idx.queries[1].Terms); terms != "green kettle | green | kettle | recipes*" {
		t.Errorf("relaxed terms = %s", terms)
	}
}

func TestRetrieveNothingToSearch(t *testing.T) {
	t.Parallel()
	idx := newFakeIndex()
	got, err := NewRetriever(idx).Retrieve(t.Context(), "d", Request{Query: "how do I do it?"})
	if err != nil || got != nil || len(idx.queries) != 0 {
		t.Errorf("got %v, %v after %d searches", got, err, len(idx.queries))
	}
}

type failingIndex struct{ *fakeIndex }

func (failingIndex) Search(context.Context, string, Query) ([]Hit, error) {
	return nil, errors.New("disk on fire")
}

func TestRetrieveWrapsIndexErrors(t *testing.T) {
	t.Parallel()
	_, err := NewRetriever(failingIndex{newFakeIndex()}).Retrieve(t.Context(), "d", Request{Query: "kettle"})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("err = %v", err)
	}
}

func TestPagePath(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"/", "index"},
		{"/guides/setup", "guides/setup"},
		{"guides/setup/", "guides/setup"},
		{"/guides/setup.mdx#install", "guides/setup"},
		{"/guides/./setup?tab=1", "guides/setup"},
	}
	for _, tt := range tests {
		if got := PagePath(tt.in); got != tt.want {
			t.Errorf("PagePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBuildIsIncremental(t *testing.T) {
	t.Parallel()
	fsys := fixtureFS(t)
	idx := newFakeIndex()
	ctx := t.Context()
	st, err := Build(ctx, idx, "d", loadSite(t, fsys), "")
	if err != nil {
		t.Fatal(err)
	}
	if st.Pages != 7 || st.Changed != 7 || st.Unchanged != 0 || st.Removed != 0 || st.Chunks == 0 || st.ChunksWritten != st.Chunks {
		t.Errorf("first build = %+v", st)
	}

	idx.replaced, idx.removed = nil, nil
	if st, err = Build(ctx, idx, "d", loadSite(t, fsys), ""); err != nil {
		t.Fatal(err)
	}
	if st.Changed != 0 || st.Unchanged != 7 || len(idx.replaced) != 0 {
		t.Errorf("rebuild of the same site = %+v, wrote %q", st, idx.replaced)
	}

	fsys["guides/water.mdx"].Data = []byte("---\ntitle: Water quality\n---\n\nUse spring water.\n")
	cfg := strings.Replace(string(fsys["docs.json"].Data), `"guides/staff", `, "", 1)
	cfg = strings.Replace(cfg, `"guides/staff"`, `"guides/unlisted"`, 1)
	fsys["docs.json"].Data = []byte(cfg)
	if st, err = Build(ctx, idx, "d", loadSite(t, fsys), ""); err != nil {
		t.Fatal(err)
	}
	if st.Changed != 1 || st.Removed != 1 || st.Unchanged != 5 {
		t.Errorf("build after an edit and a removal = %+v", st)
	}
	if !slices.Equal(idx.replaced, []string{"guides/water"}) || !slices.Equal(idx.removed, []string{"guides/staff"}) {
		t.Errorf("wrote %q, removed %q", idx.replaced, idx.removed)
	}
}

// TestSortByScore checks sortByScore against a stable sort, ties included.
func TestSortByScore(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	byScore := func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) }
	for round := 0; round < 200; round++ {
		hits := make([]Hit, rng.IntN(4*MaxPageSize+1))
		for i := range hits {
			hits[i].ID = fmt.Sprint(i)
			hits[i].Score = float64(rng.IntN(6)) / 5
		}
		if round%3 == 0 {
			slices.SortStableFunc(hits, byScore)
		}
		want := slices.Clone(hits)
		slices.SortStableFunc(want, byScore)
		sortByScore(hits)
		for i := range hits {
			if hits[i].ID != want[i].ID || hits[i].Score != want[i].Score {
				t.Fatalf("round %d: place %d holds %s (%v), want %s (%v)", round, i, hits[i].ID, hits[i].Score, want[i].ID, want[i].Score)
			}
		}
	}
}

// termStrings writes terms as Term.String does, joined by " | ".
func termStrings(ts []Term) string {
	var out []string
	for _, t := range ts {
		out = append(out, t.String())
	}
	return strings.Join(out, " | ")
}
