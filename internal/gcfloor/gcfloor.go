// Package gcfloor keeps the garbage collector from running on a small heap
// far more often than on a large one.
//
// The collector's default (GOGC=100) lets the heap grow to twice what was
// live after the last collection. A server whose live heap is a few MiB
// (a docs site's index, its caches) then collects every few milliseconds
// under load: each collection costs CPU and marks goroutines' allocations
// with assists, which shows in the slowest requests. Start raises GOGC
// after each collection so that the heap may grow by at least a fixed
// floor of bytes: a live heap of 4 MiB with a floor of 16 MiB collects at
// 20 MiB instead of 8; one of 16 MiB or more collects at twice its size,
// as before. The memory this costs is bounded by the floor.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// ServerFloor is the floor docsmith serve runs with: a live heap of a few
// MiB collects at about 20 MiB, not at twice its size.
const ServerFloor = 16 << 20

// maxPercent bounds the GOGC Start sets, for a nearly empty heap.
const maxPercent = 1000

// liveHeap is the runtime metric of the heap found live by the last
// collection.
const liveHeap = "/gc/heap/live:bytes"

// Start sets GOGC after every collection so that the heap may grow by
// max(live heap, floor) before the next one, until the returned function
// is called, which restores the GOGC of before. It is meant for a server
// process; a GOGC set in the environment should be left alone (the caller
// decides).
func Start(floor uint64) (stop func()) {
	t := &tuner{floor: floor, sample: []metrics.Sample{{Name: liveHeap}}}
	previous := debug.SetGCPercent(100)
	t.adjust()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetGCPercent(previous)
	}
}

// tuner adjusts GOGC once per collection: a sentinel object, unreachable
// as soon as it is made, has a cleanup that runs after the collection that
// finds it, adjusts, and makes the next sentinel.
type tuner struct {
	floor   uint64
	mu      sync.Mutex
	sample  []metrics.Sample
	stopped bool
}

// sentinel is large enough not to share an allocation with other objects,
// so that its cleanup runs when it alone becomes unreachable.
type sentinel struct{ _ [64]byte }

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.stopped {
			return
		}
		t.adjust()
		t.arm()
	}, t)
}

// adjust sets GOGC for the heap the last collection found live. The
// caller holds mu, or is Start, before any cleanup is armed.
func (t *tuner) adjust() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(Percent(t.sample[0].Value.Uint64(), t.floor))
}

// Percent is the GOGC that lets a heap of live bytes grow by
// max(live, floor) before the next collection, at most maxPercent.
func Percent(live, floor uint64) int {
	if live == 0 {
		return maxPercent
	}
	if live >= floor {
		return 100
	}
	return int(min(floor*100/live, maxPercent))
}
