package indexer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/indexer"
)

// BenchmarkIndexUpdate measures, on a large docs site in a git repository
// (DOCSMITH_BENCH_SITE, else the mintlify corpus), a server's index update
// after a commit that edits one page, against a full build of the same
// commit into a fresh index: wall time, files read from the repository,
// pages cut into chunks, and the live heap's peak above what it was
// before the build (sampled every millisecond).
func BenchmarkIndexUpdate(b *testing.B) {
	site := os.Getenv("DOCSMITH_BENCH_SITE")
	if site == "" {
		site = corpusDir(b, "mintlify")
	}
	repo := newWorkRepo(b, os.DirFS(site))
	live := newIndexedDomain(b, repo.dir)
	if _, err := live.x.Index(b.Context(), live.d); err != nil {
		b.Fatal(err)
	}
	cfgName := "docs.json"
	if _, err := os.Stat(filepath.Join(repo.dir, cfgName)); err != nil {
		cfgName = "mint.json"
	}
	pages := navPageFiles(b, repo, cfgName)
	if len(pages) == 0 {
		b.Fatal("no page in the navigation")
	}
	page := filepath.Join(repo.dir, filepath.FromSlash(pages[len(pages)/2].file))

	var update, full []sample
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		data, err := os.ReadFile(page)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(page, append(data, fmt.Appendf(nil, "\nOne more line, %d.\n", i)...), 0o644); err != nil {
			b.Fatal(err)
		}
		repo.commit("one page")
		b.StartTimer()
		s := measure(b, live.x, live)
		if !s.res.Incremental || s.res.Changed != 1 {
			b.Fatalf("update = %+v", s.res)
		}
		update = append(update, s)
		b.StopTimer()
		fresh := live.fresh(b, fmt.Sprintf("full-%d", i))
		full = append(full, measure(b, fresh.x, fresh))
		b.StartTimer()
	}
	report := func(name string, ss []sample) {
		slices.SortFunc(ss, func(a, b sample) int { return int(a.took - b.took) })
		m := ss[len(ss)/2]
		b.ReportMetric(float64(m.took.Microseconds())/1000, name+"-ms")
		b.ReportMetric(float64(m.res.FilesRead), name+"-files-read")
		b.ReportMetric(float64(m.res.PagesChunked), name+"-pages-chunked")
		b.ReportMetric(float64(m.res.ChunksWritten), name+"-chunks-written")
		b.ReportMetric(float64(m.heap)/(1<<20), name+"-heap-peak-MiB")
	}
	report("update", update)
	report("full", full)
}

type sample struct {
	res  indexer.IndexResult
	took time.Duration
	heap uint64 // the live heap's peak above its size at the start
}

// measure runs one build of id, sampling the heap while it runs.
func measure(b *testing.B, x *indexer.Indexer, id indexedDomain) sample {
	b.Helper()
	runtime.GC()
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := read(); h > peak {
				peak = h
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	start := time.Now()
	res, err := x.Index(context.Background(), id.d)
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	return sample{res: res, took: took, heap: max(peak, base) - base}
}
