package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/semantic/semantictest"
)

// vectorCases are the cases of passage vectors: kept by content hash,
// deleted when no passage uses them, held in memory beside the index and
// searched under the reader's filter.
func vectorCases() []testCase {
	return []testCase{
		{"Vectors/KeptAndDeleted", testVectorsKeptAndDeleted},
		{"Vectors/EmbeddedOnce", testVectorsEmbeddedOnce},
		{"Vectors/DenseSearchFiltered", testVectorsDenseFiltered},
		{"Vectors/SameHitsFromSnapshot", testVectorsSameFromSnapshot},
	}
}

// wordEmbedder embeds texts as the test embeddings server does, in process,
// counting the texts.
type wordEmbedder struct {
	model string
	texts int
}

func (e *wordEmbedder) Model() string { return e.model }

func (e *wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = semantictest.Vector(t, 32)
	}
	return out, nil
}

func testVectorsKeptAndDeleted(t *testing.T, s Store) {
	ctx := t.Context()
	if err := s.ReplacePages(ctx, "d", []search.Chunk{chunk("a", "alpha", nil)}, nil); err != nil {
		t.Fatal(err)
	}
	v0, _ := s.IndexVersion(ctx, "d")
	vecs := []search.Vector{{Hash: "h1", Values: []float32{1, 0, -0.5}}, {Hash: "h2", Values: []float32{0, 1, 0.25}}}
	// An earlier model's vectors, which the next model's write deletes.
	if err := s.PutVectors(ctx, "d", "m0", []search.Vector{{Hash: "h1", Values: []float32{1}}}, []string{"h1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutVectors(ctx, "d", "m1", vecs, []string{"h1", "h2"}); err != nil {
		t.Fatal(err)
	}
	if old, _ := s.VectorHashes(ctx, "d", "m0"); len(old) != 0 {
		t.Errorf("the earlier model's vectors were kept: %v", old)
	}
	if err := s.PutVectors(ctx, "other", "m1", vecs[:1], []string{"h1"}); err != nil {
		t.Fatal(err)
	}
	v1, _ := s.IndexVersion(ctx, "d")
	if v1 <= v0 {
		t.Errorf("index version %d after storing vectors, was %d", v1, v0)
	}
	got := map[string][]float32{}
	if err := s.DomainVectors(ctx, "d", "m1", func(v search.Vector) error { got[v.Hash] = v.Values; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got["h1"], vecs[0].Values) || !slices.Equal(got["h2"], vecs[1].Values) {
		t.Errorf("vectors read back = %v", got)
	}
	// Nothing new, nothing unused: the version stays.
	if err := s.PutVectors(ctx, "d", "m1", vecs[:1], []string{"h1", "h2"}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.IndexVersion(ctx, "d"); v != v1 {
		t.Errorf("index version %d after a write that changed nothing, want %d", v, v1)
	}
	// h2 no longer used.
	if err := s.PutVectors(ctx, "d", "m1", nil, []string{"h1"}); err != nil {
		t.Fatal(err)
	}
	hashes, err := s.VectorHashes(ctx, "d", "m1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hashes) != 1 || !hashes["h1"] {
		t.Errorf("hashes after the unused were deleted = %v", hashes)
	}
	if v, _ := s.IndexVersion(ctx, "d"); v <= v1 {
		t.Errorf("index version %d after deleting vectors, want above %d", v, v1)
	}
	if others, _ := s.VectorHashes(ctx, "other", "m1"); len(others) != 1 {
		t.Errorf("another domain's vectors = %v", others)
	}
}

func testVectorsEmbeddedOnce(t *testing.T, s Store) {
	ctx := t.Context()
	emb := &wordEmbedder{model: "test/words"}
	mem := search.NewMemory(s, search.MemoryConfig{Embedder: emb})
	chunks := []search.Chunk{chunk("a", "alpha teapot", nil), chunk("b", "beta kettle", nil), chunk("c", "gamma cup", nil)}
	if err := mem.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
	st, err := mem.UpdateVectors(ctx, "d")
	if err != nil || st.Passages != 3 || st.Embedded != 3 || emb.texts != 3 {
		t.Fatalf("first update: %+v, %d texts, err %v", st, emb.texts, err)
	}
	// One page changes, one goes: only the changed passage is embedded,
	// and the vector of the gone one is deleted.
	changed := chunk("b", "beta kettle descaled", func(c *search.Chunk) { c.PageHash = "h-b2" })
	if err := mem.ReplacePages(ctx, "d", []search.Chunk{changed}, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	st, err = mem.UpdateVectors(ctx, "d")
	if err != nil || st.Passages != 2 || st.Embedded != 1 || emb.texts != 4 {
		t.Fatalf("second update: %+v, %d texts, err %v", st, emb.texts, err)
	}
	hashes, err := s.VectorHashes(ctx, "d", "test/words")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{search.EmbedHash(&chunks[0]), search.EmbedHash(&changed)}
	if len(hashes) != 2 || !hashes[want[0]] || !hashes[want[1]] {
		t.Errorf("hashes kept = %v, want %v", hashes, want)
	}
	// The held index picks the new vectors up.
	hits, err := mem.SearchVector(ctx, "d", semantictest.Vector(search.EmbedText(&changed), 32), 1, search.Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != "b" || hits[0].Text != changed.Text {
		t.Errorf("nearest the changed passage: %q, err %v", hitIDs(hits), err)
	}
}

func testVectorsDenseFiltered(t *testing.T, s Store) {
	ctx := t.Context()
	emb := &wordEmbedder{model: "test/words"}
	mem := search.NewMemory(s, search.MemoryConfig{Embedder: emb})
	chunks := []search.Chunk{
		chunk("v1/a", "teapot kettle", func(c *search.Chunk) { c.Version = "v1" }),
		chunk("v2/a", "teapot kettle", func(c *search.Chunk) { c.Version = "v2" }),
		chunk("fr/a", "teapot kettle", func(c *search.Chunk) { c.Language = "fr" }),
		chunk("admin", "teapot kettle secret", func(c *search.Chunk) { c.Groups = []string{"admin"} }),
		chunk("open", "cup saucer", nil),
	}
	if err := mem.ReplacePages(ctx, "d", chunks, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.UpdateVectors(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	near := func(c search.Chunk, f search.Filter) []string {
		t.Helper()
		hits, err := mem.SearchVector(ctx, "d", semantictest.Vector(search.EmbedText(&c), 32), 10, f)
		if err != nil {
			t.Fatal(err)
		}
		return hitIDs(hits)
	}
	if got := near(chunks[3], search.Filter{}); slices.Contains(got, "admin") {
		t.Errorf("a reader in no group reached the restricted passage by vector: %q", got)
	}
	if got := near(chunks[3], search.Filter{Groups: []string{"admin"}}); len(got) == 0 || got[0] != "admin" {
		t.Errorf("a reader in the group: %q, want admin first", got)
	}
	if got := near(chunks[0], search.Filter{Version: "v2"}); slices.Contains(got, "v1/a") || !slices.Contains(got, "v2/a") {
		t.Errorf("version filter: %q", got)
	}
	if got := near(chunks[2], search.Filter{Language: "de"}); slices.Contains(got, "fr/a") {
		t.Errorf("language filter: %q", got)
	}
	if _, err := mem.SearchVector(ctx, "d", make([]float32, 7), 3, search.Filter{}); err == nil {
		t.Error("a query vector of another dimension was searched")
	}
}

// vectorCountingSource counts the loads of whole domains and keeps the
// store's vectors.
type vectorCountingSource struct {
	*countingSource
	search.VectorSource
}

func testVectorsSameFromSnapshot(t *testing.T, s Store) {
	ctx := t.Context()
	emb := &wordEmbedder{model: "test/words"}
	dir := t.TempDir()
	mem := search.NewMemory(s, search.MemoryConfig{Embedder: emb, SnapshotDir: dir})
	if _, err := search.Build(ctx, mem, "kettle", loadSite(t, fixtureFS(t)), "https://docs.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.UpdateVectors(ctx, "kettle"); err != nil {
		t.Fatal(err)
	}
	questions := []string{"why is my tea bitter", "descaling the kettle", "green tea temperature"}
	run := func(m *search.Memory) [][]search.Hit {
		t.Helper()
		r := search.NewRetriever(m).WithHybrid(search.Hybrid{Embedder: emb})
		var out [][]search.Hit
		for _, q := range questions {
			hits, err := r.Retrieve(ctx, "kettle", search.Request{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hits)
		}
		return out
	}
	want := run(mem)
	mem.Close() // the snapshot is written
	src := vectorCountingSource{countingSource: &countingSource{Source: s}, VectorSource: s}
	again := search.NewMemory(src, search.MemoryConfig{Embedder: emb, SnapshotDir: dir})
	got := run(again)
	again.Close()
	if src.loads.Load() != 0 {
		t.Error("the second process loaded the chunks, not the snapshot")
	}
	for i := range want {
		if !slices.Equal(hitIDs(got[i]), hitIDs(want[i])) {
			t.Errorf("%q from the snapshot: %q, want %q", questions[i], hitIDs(got[i]), hitIDs(want[i]))
		}
		for j := range min(len(got[i]), len(want[i])) {
			if got[i][j].Score != want[i][j].Score {
				t.Errorf("%q hit %d scores %v, want %v", questions[i], j, got[i][j].Score, want[i][j].Score)
			}
		}
	}
	// The dense path is at work in the loaded index: a passage's own text
	// finds it first.
	var staff search.Chunk
	_, _ = s.DomainChunks(ctx, "kettle", func(c search.Chunk) error {
		if c.PagePath == "guides/water" && staff.ID == "" {
			staff = c
		}
		return nil
	})
	hits, err := again.SearchVector(ctx, "kettle", semantictest.Vector(search.EmbedText(&staff), 32), 3, search.Filter{})
	if err != nil || len(hits) == 0 || hits[0].ID != staff.ID {
		t.Errorf("nearest %s: %q, err %v", staff.ID, hitIDs(hits), err)
	}
}
