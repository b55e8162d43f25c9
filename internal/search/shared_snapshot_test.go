package search

import (
	"context"
	"os"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// mapShared is a SharedSnapshots kept in a map, as the store's table
// keeps them.
type mapShared struct {
	mu    sync.Mutex
	snaps map[string]sharedSnap
	puts  int
}

type sharedSnap struct {
	version   int64
	key, data []byte
}

func (s *mapShared) SharedSnapshotStamp(_ context.Context, domain string) (int64, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snaps[domain].version, s.snaps[domain].key, nil
}

func (s *mapShared) SharedSnapshot(_ context.Context, domain string, key []byte, maxBytes int64) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.snaps[domain]
	if !ok || !slices.Equal(snap.key, key) || int64(len(snap.data)) > maxBytes {
		return nil, nil
	}
	return slices.Clone(snap.data), nil
}

func (s *mapShared) PutSharedSnapshot(_ context.Context, domain string, version int64, key, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snaps[domain].version <= version {
		s.snaps[domain] = sharedSnap{version: version, key: slices.Clone(key), data: slices.Clone(data)}
		s.puts++
	}
	return nil
}

func (s *mapShared) get(domain string) sharedSnap {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snaps[domain]
}

// damage flips a byte in the middle of the domain's snapshot.
func (s *mapShared) damage(domain string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.snaps[domain].data[len(s.snaps[domain].data)/2] ^= 0xff
}

// A process with no snapshot of its own loads a domain from the one another
// process left in the store, without reading the chunks, and keeps it in
// its own directory; a snapshot of other pages, or a damaged one, is not
// used, and the process that loads from the chunks instead replaces it.
func TestMemorySharedSnapshot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	src := newMemSource()
	shared := &mapShared{snaps: map[string]sharedSnap{}}
	if err := src.ReplacePages(ctx, "docs", snapshotChunks(60), nil); err != nil {
		t.Fatal(err)
	}
	q := Query{Terms: engine.ParseQuery("kettle water", "en"), Limit: 10}
	search := func(cfg MemoryConfig) []Hit {
		t.Helper()
		m := NewMemory(src, cfg)
		hits, err := m.Search(ctx, "docs", q)
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}

	// The first process loads from the chunks and shares its snapshot.
	want := search(MemoryConfig{Shared: shared})
	if len(want) == 0 {
		t.Fatal("no hits")
	}
	if got := shared.get("docs"); got.version != 1 || len(got.data) == 0 {
		t.Fatalf("the store keeps version %d, %d bytes; want version 1", got.version, len(got.data))
	}

	// A new replica: no snapshot of its own, the chunks not read.
	dir := t.TempDir()
	if got := search(MemoryConfig{Shared: shared, SnapshotDir: dir}); !reflect.DeepEqual(got, want) {
		t.Fatalf("from the shared snapshot: %v, want %v", got, want)
	}
	if n := src.loaded("docs"); n != 1 {
		t.Fatalf("the chunks were read %d times, want once", n)
	}
	local, err := os.ReadFile(snapshotPath(dir, "docs"))
	if err != nil || !slices.Equal(local, shared.get("docs").data) {
		t.Fatalf("the shared snapshot is not kept in the process's directory (%v)", err)
	}
	if shared.puts != 1 {
		t.Fatalf("%d snapshots written to the store, want 1", shared.puts)
	}

	// The pages change: the snapshot kept is of other pages.
	chunks := snapshotChunks(60)
	chunks[0].Text, chunks[0].PageHash = "kettle kettle kettle", "changed"
	if err := src.ReplacePages(ctx, "docs", chunks, nil); err != nil {
		t.Fatal(err)
	}
	want = search(MemoryConfig{Shared: shared})
	if n := src.loaded("docs"); n != 2 {
		t.Fatalf("after a change the chunks were read %d times in all, want 2", n)
	}
	if got := shared.get("docs"); got.version != 2 {
		t.Fatalf("the store keeps version %d, want 2", got.version)
	}

	// A damaged snapshot is read from the chunks instead, and replaced.
	shared.damage("docs")
	if got := search(MemoryConfig{Shared: shared}); !reflect.DeepEqual(got, want) {
		t.Fatalf("with a damaged shared snapshot: %v, want %v", got, want)
	}
	if n := src.loaded("docs"); n != 3 {
		t.Fatalf("with a damaged shared snapshot the chunks were read %d times in all, want 3", n)
	}
	if _, _, err := engine.DecodeSnapshot(shared.get("docs").data); err != nil {
		t.Fatalf("the damaged snapshot was not replaced: %v", err)
	}
	if got := search(MemoryConfig{Shared: shared}); !reflect.DeepEqual(got, want) || src.loaded("docs") != 3 {
		t.Fatalf("from the replaced snapshot: %v (chunks read %d times), want %v", got, src.loaded("docs"), want)
	}

	// A snapshot larger than the memory bound is not written (the store
	// does not return one to a reader either: the PostgreSQL store's
	// TestSharedSnapshots).
	other := newMemSource()
	if err := other.ReplacePages(ctx, "docs", snapshotChunks(60), nil); err != nil {
		t.Fatal(err)
	}
	small := &mapShared{snaps: map[string]sharedSnap{}}
	m := NewMemory(other, MemoryConfig{Shared: small, MaxBytes: 1024})
	if _, err := m.Search(ctx, "docs", q); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if small.puts != 0 {
		t.Fatal("a snapshot larger than the memory bound was written to the store")
	}
}
