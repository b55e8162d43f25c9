package engine

// Version is the index version of the chunks the index was built from.
func (di *Index) Version() int64 { return di.version }

// SetVersion records the version of the chunks an index decoded from a
// snapshot stands for now: the store's version when it was loaded. It is for
// an index not yet shared with other goroutines.
func (di *Index) SetVersion(v int64) { di.version = v }

// Bytes estimates the memory the index takes.
func (di *Index) Bytes() int64 { return di.bytes }

// Chunks is how many chunks the index holds.
func (di *Index) Chunks() int { return len(di.chunks) }

// Pages is how many pages have chunks in the index.
func (di *Index) Pages() int { return len(di.pages) }

// Snapshotable reports whether the index may be kept as a snapshot: it has
// chunks, and every one has a PageHash, which the snapshot is checked by.
func (di *Index) Snapshotable() bool {
	for i := range di.chunks {
		if di.chunks[i].PageHash == "" {
			return false
		}
	}
	return len(di.chunks) > 0
}
