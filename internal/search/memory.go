package search

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docsmith/docsmith/internal/search/engine"
	"github.com/docsmith/docsmith/internal/semantic"
)

// Source is a store's search index as a Memory reads it: the store keeps
// the chunks; a Memory keeps an inverted index of each domain it serves,
// built from them, and searches it.
type Source interface {
	// ReplacePages, PageHashes and Page are Index's.
	ReplacePages(ctx context.Context, domain string, chunks []Chunk, removedPages []string) error
	PageHashes(ctx context.Context, domain string) (map[string]string, error)
	Page(ctx context.Context, domain, path string) (PageText, error)
	// IndexVersion returns the domain's index version, which changes with
	// every ReplacePages of the domain (0 for a domain never indexed).
	IndexVersion(ctx context.Context, domain string) (int64, error)
	// DomainChunks calls each with every chunk of the domain, in page
	// path then seq order, as it reads them, and returns the index version
	// they are at, read together with them. An error from each stops the
	// read and is returned.
	DomainChunks(ctx context.Context, domain string, each func(Chunk) error) (int64, error)
}

// Defaults of a Memory.
const (
	// DefaultMemoryBytes bounds the indexes held; a mintlify-sized domain
	// (about 1,000 pages) takes a few tens of MiB.
	DefaultMemoryBytes = 512 << 20
	// DefaultCheckEvery is how long a domain's index is served before its
	// version is checked again; a change signal checks it at once.
	DefaultCheckEvery = 250 * time.Millisecond
)

// MemoryConfig tunes a Memory; zero values take the defaults.
type MemoryConfig struct {
	MaxBytes   int64
	CheckEvery time.Duration
	// SnapshotDir, if set, keeps a snapshot of each domain's index loaded
	// from the store (see snapshot.go), from which a process starting
	// again loads the domain while the store still holds the same pages.
	SnapshotDir string
	// Shared, if set, also keeps the newest snapshot of each domain in the
	// store, for a process that has none of its own (a new replica) to
	// load rather than analyse every chunk again.
	Shared SharedSnapshots
	// Embedder, if set, makes the Memory hold the passage vectors of its
	// model beside each domain's index, read from the store (if it is a
	// VectorSource) whenever the domain is loaded, and embed the passages
	// without one on UpdateVectors. Vectors are not in snapshots: a
	// snapshot is checked by the pages it holds, and vectors change
	// without the pages changing.
	Embedder semantic.Embedder
	Log      *slog.Logger
}

// SharedSnapshots keeps each domain's newest index snapshot where every
// process using the store finds it. A snapshot kept there is a cache like
// a file in SnapshotDir: it is used only when its key, a digest of the
// analysis and of the pages it was built from, is the key of the pages the
// store holds now. Any change of the domain's pages may drop it.
type SharedSnapshots interface {
	// SharedSnapshotStamp returns the index version and key of the
	// domain's snapshot; version 0 when there is none.
	SharedSnapshotStamp(ctx context.Context, domain string) (version int64, key []byte, err error)
	// SharedSnapshot returns the domain's snapshot if its key is key and
	// it takes at most maxBytes; nil if not.
	SharedSnapshot(ctx context.Context, domain string, key []byte, maxBytes int64) ([]byte, error)
	// PutSharedSnapshot keeps data, built at index version, as the
	// domain's snapshot, unless the one kept was built at a later version.
	// While another process writes the domain's snapshot, it may write
	// nothing.
	PutSharedSnapshot(ctx context.Context, domain string, version int64, key, data []byte) error
}

// sharedSnapshotTimeout bounds the writing of one shared snapshot, in the
// background.
const sharedSnapshotTimeout = time.Minute

// Memory is an Index that searches in memory: each domain's chunks are
// loaded from the store on the first search, indexed, and kept while the
// store's version of the domain does not change (checked at most every
// CheckEvery, and at once after Changed). Domains least recently searched
// are dropped when the indexes held pass MaxBytes. Writes and pages go to
// the store. Ranking is the same whatever the store: bm25 over the domain's
// own statistics, then the page-level ranking of rankRows.
type Memory struct {
	src Source
	cfg MemoryConfig

	mu      sync.Mutex
	domains map[string]*memEntry
	lru     *list.List // of *memEntry, most recent first
	used    int64

	// analysis fingerprints this build's analysis, for snapshots; saving
	// counts the snapshots being written.
	analysis [32]byte
	saving   sync.WaitGroup
}

type memEntry struct {
	domain string
	elem   *list.Element
	// load serializes loads and version checks of the domain.
	load    sync.Mutex
	idx     atomic.Pointer[engine.Index]
	checked atomic.Int64 // unix nanoseconds of the last version check
	bytes   int64        // guarded by Memory.mu
}

var _ Index = (*Memory)(nil)

// NewMemory returns a Memory over src.
func NewMemory(src Source, cfg MemoryConfig) *Memory {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMemoryBytes
	}
	if cfg.CheckEvery <= 0 {
		cfg.CheckEvery = DefaultCheckEvery
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	m := &Memory{src: src, cfg: cfg, domains: map[string]*memEntry{}, lru: list.New()}
	if cfg.SnapshotDir != "" || cfg.Shared != nil {
		m.analysis = engine.AnalysisFingerprint()
	}
	if cfg.SnapshotDir != "" {
		sweepSnapshotTemps(cfg.SnapshotDir)
	}
	return m
}

// Close waits for the snapshots being written.
func (m *Memory) Close() {
	m.saving.Wait()
}

// ReplacePages writes to the store and drops the domain's index here; other
// processes see the new version through the store.
func (m *Memory) ReplacePages(ctx context.Context, domain string, chunks []Chunk, removedPages []string) error {
	err := m.src.ReplacePages(ctx, domain, chunks, removedPages)
	m.Changed(domain)
	return err
}

// PageHashes reads the store.
func (m *Memory) PageHashes(ctx context.Context, domain string) (map[string]string, error) {
	return m.src.PageHashes(ctx, domain)
}

// Page assembles the page from the chunks of the domain's index when the
// index is held in memory (they keep their Markdown), as the store would
// from the same chunks: the page the passages of a search come from. A
// domain not held, or a page its index lacks, is read from the store.
func (m *Memory) Page(ctx context.Context, domain, path string) (PageText, error) {
	if m.holds(domain) {
		di, err := m.index(ctx, domain)
		if err == nil {
			if pt, ok := di.Page(path); ok {
				return pt, nil
			}
		}
	}
	return m.src.Page(ctx, domain, path)
}

// holds reports whether the domain's index is in memory.
func (m *Memory) holds(domain string) bool {
	m.mu.Lock()
	e := m.domains[domain]
	m.mu.Unlock()
	return e != nil && e.idx.Load() != nil
}

// PageCount is how many pages of the domain have passages, counted in the
// index held in memory (loaded if it is not).
func (m *Memory) PageCount(ctx context.Context, domain string) (int, error) {
	di, err := m.index(ctx, domain)
	if err != nil {
		return 0, fmt.Errorf("count the pages of %s: %w", domain, err)
	}
	return di.Pages(), nil
}

// CountPages counts the pages of the domain that hold t in a chunk the
// filter keeps, up to upTo (0: all of them). It answers what a search for t
// alone as a required term, one hit a page, would say by its number of hits
// ("is this word on most pages?") without scoring or ranking a chunk.
func (m *Memory) CountPages(ctx context.Context, domain string, t Term, f Filter, upTo int) (int, error) {
	di, err := m.index(ctx, domain)
	if err != nil {
		return 0, fmt.Errorf("count the pages of %s: %w", domain, err)
	}
	return di.CountPages(t, f, upTo), nil
}

// Changed tells the Memory that the domain's index may have changed (every
// domain's, for ""): the next search checks the store's version.
func (m *Memory) Changed(domain string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if domain == "" {
		for _, e := range m.domains {
			e.checked.Store(0)
		}
		return
	}
	if e := m.domains[domain]; e != nil {
		e.checked.Store(0)
	}
}

// Search runs q on the domain's index in memory.
func (m *Memory) Search(ctx context.Context, domain string, q Query) ([]Hit, error) {
	di, err := m.index(ctx, domain)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", domain, err)
	}
	return di.Search(q), nil
}

// Warm loads the domains' indexes, in order, until they fill the memory
// bound (a domain past it is left to load when first searched).
func (m *Memory) Warm(ctx context.Context, domains []string) error {
	for _, d := range domains {
		if _, err := m.index(ctx, d); err != nil {
			return fmt.Errorf("load the index of %s: %w", d, err)
		}
		m.mu.Lock()
		full := m.used >= m.cfg.MaxBytes
		if full {
			// The last one made room by dropping an earlier one, or
			// filled the bound: keep what is held, load no more.
			m.mu.Unlock()
			return nil
		}
		m.mu.Unlock()
	}
	return nil
}

// Held returns the domains whose indexes are in memory, most recently
// searched first, and the bytes they take.
func (m *Memory) Held() ([]string, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for el := m.lru.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*memEntry).domain)
	}
	return out, m.used
}

// index returns the domain's index, loading it or checking its version
// when due.
func (m *Memory) index(ctx context.Context, domain string) (*engine.Index, error) {
	e := m.entry(domain)
	fresh := func() *engine.Index {
		di := e.idx.Load()
		checked := e.checked.Load()
		if di != nil && checked != 0 && time.Now().UnixNano()-checked < int64(m.cfg.CheckEvery) {
			return di
		}
		return nil
	}
	if di := fresh(); di != nil {
		return di, nil
	}
	if !e.load.TryLock() {
		// Another search checks or loads the domain: serve the index held
		// meanwhile rather than wait, if there is one.
		if di := e.idx.Load(); di != nil {
			return di, nil
		}
		e.load.Lock()
	}
	defer e.load.Unlock()
	if di := fresh(); di != nil {
		return di, nil
	}
	now := time.Now().UnixNano()
	held := e.idx.Load()
	if held != nil {
		v, err := m.src.IndexVersion(ctx, domain)
		if err != nil {
			// The store is slow or away: answer from what is held, and
			// check again at the next search.
			m.cfg.Log.WarnContext(ctx, "search: checking the index version failed", "domain", domain, "err", err)
			return held, nil
		}
		if v == held.Version() {
			e.checked.Store(now)
			return held, nil
		}
	}
	start := time.Now()
	var (
		di            *engine.Index
		from          string
		sharedDamaged bool
	)
	if held == nil {
		// A first load: a snapshot, if the store holds its pages.
		di, from, sharedDamaged = m.fromSnapshot(ctx, domain)
		if di != nil {
			m.attachVectors(ctx, domain, di)
		}
	}
	if di == nil {
		// The chunks are analysed as they arrive, while the rest are read.
		b := engine.NewBuilder()
		v, err := m.src.DomainChunks(ctx, domain, b.Add)
		if err != nil {
			b.Abort()
			if held != nil {
				m.cfg.Log.WarnContext(ctx, "search: reloading the index failed", "domain", domain, "err", err)
				return held, nil
			}
			return nil, err
		}
		di, from = b.Finish(v), "store"
		m.attachVectors(ctx, domain, di)
		if (m.cfg.SnapshotDir != "" || m.cfg.Shared != nil) && di.Snapshotable() {
			m.save(domain, di, sharedDamaged)
		}
	}
	e.idx.Store(di)
	e.checked.Store(now)
	m.account(e, di.Bytes())
	m.cfg.Log.DebugContext(ctx, "search index loaded", "domain", domain, "from", from, "version", di.Version(),
		"chunks", di.Chunks(), "bytes", di.Bytes(), "duration", time.Since(start))
	return di, nil
}

// fromSnapshot returns the domain's index from a snapshot, and where the
// snapshot was: the one in SnapshotDir, else the store's (Shared). A
// snapshot is used only when the store holds the pages it was built from,
// each with the same content hash, and it was written by this analysis;
// with none, fromSnapshot returns nil, and whether the store's snapshot
// was damaged. The index takes the version the store had before its pages
// were read: a change in between only makes the next check load the domain
// again.
func (m *Memory) fromSnapshot(ctx context.Context, domain string) (di *engine.Index, from string, sharedDamaged bool) {
	// local is the header of the snapshot in SnapshotDir, if it is of this
	// analysis.
	var local *engine.SnapshotHeader
	path := ""
	if m.cfg.SnapshotDir != "" {
		path = snapshotPath(m.cfg.SnapshotDir, domain)
		h, err := readSnapshotHeader(path)
		switch {
		case err == nil && h.Analysis == m.analysis:
			local = &h
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			m.cfg.Log.WarnContext(ctx, "search: the index snapshot cannot be read", "domain", domain, "err", err)
		}
	}
	if local == nil && m.cfg.Shared == nil {
		return nil, "", false
	}
	v, err := m.src.IndexVersion(ctx, domain)
	if err != nil {
		return nil, "", false
	}
	hashes, err := m.src.PageHashes(ctx, domain)
	if err != nil || len(hashes) == 0 {
		return nil, "", false
	}
	pages := engine.PagesDigest(hashes)
	if local != nil && local.Pages == pages {
		h, di, err := readSnapshot(path)
		switch {
		case err != nil:
			m.cfg.Log.WarnContext(ctx, "search: the index snapshot cannot be read", "domain", domain, "err", err)
		case h.Analysis == m.analysis && h.Pages == pages:
			di.SetVersion(v)
			return di, "snapshot", false
		}
	}
	if m.cfg.Shared == nil {
		return nil, "", false
	}
	data, err := m.cfg.Shared.SharedSnapshot(ctx, domain, snapshotKey(m.analysis, pages), m.cfg.MaxBytes)
	if err != nil {
		m.cfg.Log.WarnContext(ctx, "search: reading the shared index snapshot failed", "domain", domain, "err", err)
		return nil, "", false
	}
	if data == nil {
		return nil, "", false
	}
	h, di, err := engine.DecodeSnapshot(data)
	if err == nil && (h.Analysis != m.analysis || h.Pages != pages) {
		err = errors.New("it holds other pages than its key says")
	}
	if err != nil {
		m.cfg.Log.WarnContext(ctx, "search: the shared index snapshot cannot be read; the index is loaded from the store and the snapshot replaced",
			"domain", domain, "err", err)
		return nil, "", true
	}
	di.SetVersion(v)
	if path != "" {
		// The next start of this process finds it here.
		m.saving.Go(func() {
			if err := writeSnapshotBytes(path, data); err != nil {
				m.cfg.Log.Warn("search: writing the index snapshot failed", "domain", domain, "err", err)
			}
		})
	}
	return di, "shared snapshot", false
}

// snapshotKey is the key of a snapshot in the store: a digest of the
// analysis that wrote it and of the pages it was built from.
func snapshotKey(analysis, pages [32]byte) []byte {
	sum := sha256.Sum256(append(analysis[:], pages[:]...))
	return sum[:]
}

// save writes the domain's snapshot in the background: to the store, if
// it keeps snapshots and not yet this one (or a damaged one), and to
// SnapshotDir.
func (m *Memory) save(domain string, di *engine.Index, sharedDamaged bool) {
	m.saving.Go(func() {
		h := di.SnapshotHeader(m.analysis)
		var data []byte
		if m.cfg.Shared != nil {
			var err error
			if data, err = m.share(domain, h, di, sharedDamaged); err != nil {
				m.cfg.Log.Warn("search: writing the shared index snapshot failed", "domain", domain, "err", err)
			}
		}
		if m.cfg.SnapshotDir == "" {
			return
		}
		path := snapshotPath(m.cfg.SnapshotDir, domain)
		var err error
		if data != nil {
			err = writeSnapshotBytes(path, data)
		} else {
			err = writeSnapshotFile(path, func(w io.Writer) error { return engine.EncodeSnapshot(w, h, di) })
		}
		if err != nil {
			m.cfg.Log.Warn("search: writing the index snapshot failed", "domain", domain, "err", err)
		}
	})
}

// share puts di's snapshot, with header h, in the store unless the store
// keeps it (and it is not damaged) or a later one already (another process
// loaded the domain first). It returns the snapshot if it encoded it.
func (m *Memory) share(domain string, h engine.SnapshotHeader, di *engine.Index, damaged bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedSnapshotTimeout)
	defer cancel()
	key := snapshotKey(h.Analysis, h.Pages)
	version, kept, err := m.cfg.Shared.SharedSnapshotStamp(ctx, domain)
	if err != nil {
		return nil, err
	}
	if version > di.Version() || (version == di.Version() && bytes.Equal(kept, key) && !damaged) {
		return nil, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(di.Bytes()))
	if err := engine.EncodeSnapshot(&buf, h, di); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > m.cfg.MaxBytes {
		// No process could load it from the store; the caller may still
		// write it to its own directory, without encoding it again.
		return buf.Bytes(), nil
	}
	return buf.Bytes(), m.cfg.Shared.PutSharedSnapshot(ctx, domain, di.Version(), key, buf.Bytes())
}

// entry returns the domain's entry, created if needed, as the most recently
// used.
func (m *Memory) entry(domain string) *memEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.domains[domain]
	if e == nil {
		e = &memEntry{domain: domain}
		e.elem = m.lru.PushFront(e)
		m.domains[domain] = e
		return e
	}
	if e.elem != nil {
		m.lru.MoveToFront(e.elem)
	} else {
		e.elem = m.lru.PushFront(e)
	}
	return e
}

// account records e's new size and drops the least recently used other
// domains while the total passes the bound.
func (m *Memory) account(e *memEntry, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.domains[e.domain] != e {
		return // dropped while it loaded
	}
	m.used += bytes - e.bytes
	e.bytes = bytes
	for m.used > m.cfg.MaxBytes {
		el := m.lru.Back()
		if el == nil || el.Value.(*memEntry) == e {
			break
		}
		old := el.Value.(*memEntry)
		m.lru.Remove(el)
		old.elem = nil
		delete(m.domains, old.domain)
		m.used -= old.bytes
		old.bytes = 0
	}
}
