package gcfloor_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"

	"github.com/docsmith/docsmith/internal/gcfloor"
)

func TestPercent(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		want        int
	}{
		{4 * mib, 16 * mib, 400},  // collects at 20 MiB, not 8
		{8 * mib, 16 * mib, 200},  // at 24, not 16
		{16 * mib, 16 * mib, 100}, // at 32, as GOGC=100 does
		{64 * mib, 16 * mib, 100},
		{mib, 16 * mib, 1000}, // bounded
		{0, 16 * mib, 1000},
	} {
		if got := gcfloor.Percent(c.live, c.floor); got != c.want {
			t.Errorf("Percent(%d MiB live, %d MiB floor) = %d, want %d", c.live/mib, c.floor/mib, got, c.want)
		}
	}
}

// TestStartFollowsTheLiveHeap: after collections, GOGC is what Percent
// gives for the live heap, again after each of several collections (GOGC
// is set back to 100 before each, so only a tuner that runs after every
// collection raises it again), and stopping restores the GOGC of before.
// Not parallel: GOGC is the process's.
func TestStartFollowsTheLiveHeap(t *testing.T) {
	sample := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/live:bytes"}}
	read := func() (gogc int, live uint64) {
		metrics.Read(sample)
		return int(sample[0].Value.Uint64()), sample[1].Value.Uint64()
	}
	before, _ := read()
	const floor = 256 << 20 // far above this test's live heap
	stop := gcfloor.Start(floor)
	for round := range 3 {
		debug.SetGCPercent(100)
		var gogc int
		var live uint64
		for range 50 {
			runtime.GC()
			runtime.Gosched() // let the cleanup of the collection run
			if gogc, live = read(); gogc > 100 {
				break
			}
		}
		if want := gcfloor.Percent(live, floor); gogc <= 100 || gogc > want*2 || gogc < want/2 {
			t.Errorf("round %d: GOGC = %d with %d bytes live, want about %d", round, gogc, live, want)
		}
	}
	stop()
	if after, _ := read(); after != before {
		t.Errorf("GOGC after stop = %d, want %d as before", after, before)
	}
}
