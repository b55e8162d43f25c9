// Command benchtable prints the load generator's JSON results of docsmith,
// the Node AI SDK server and the floor server as one table, with docsmith's
// ratio to each.
//
//	go run ./scripts/benchtable docsmith.json node.json floor.json
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// result is what the table reads of the load generator's -json output.
type result struct {
	Label       string  `json:"label"`
	Completed   int     `json:"completed"`
	Errors      int     `json:"errors"`
	StreamsPerS float64 `json:"streams_per_s"`
	TTFBp50ms   float64 `json:"ttfb_p50_ms"`
	TTFBp99ms   float64 `json:"ttfb_p99_ms"`
	Server      *struct {
		PeakRSSMiB     float64 `json:"peak_rss_sampled_mib"`
		HWMMiB         float64 `json:"vmhwm_mib"`
		CPUPerStreamMs float64 `json:"cpu_ms_per_stream"`
	} `json:"server"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(files []string, w io.Writer) error {
	if len(files) != 3 {
		return fmt.Errorf("want three result files (docsmith, node, floor), got %d", len(files))
	}
	var rs [3]result
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read results: %w", err)
		}
		if err := json.Unmarshal(raw, &rs[i]); err != nil {
			return fmt.Errorf("decode %s: %w", f, err)
		}
		if rs[i].Server == nil {
			return fmt.Errorf("%s has no server figures (was the load generator given -pid?)", f)
		}
	}
	ds, node, floor := rs[0], rs[1], rs[2]
	rss := func(r result) float64 { return max(r.Server.PeakRSSMiB, r.Server.HWMMiB) }
	rows := []struct {
		name       string
		v          func(result) float64
		unit       string
		higherWins bool
	}{
		{"streams/s", func(r result) float64 { return r.StreamsPerS }, "", true},
		{"TTFB p50", func(r result) float64 { return r.TTFBp50ms }, " ms", false},
		{"TTFB p99", func(r result) float64 { return r.TTFBp99ms }, " ms", false},
		{"CPU per stream", func(r result) float64 { return r.Server.CPUPerStreamMs }, " ms", false},
		{"peak RSS", rss, " MiB", false},
	}
	fmt.Fprintf(w, "| | docsmith (extractive) | Node AI SDK server | floor | docsmith ÷ Node | docsmith ÷ floor |\n")
	fmt.Fprintf(w, "|---|---|---|---|---|---|\n")
	for _, row := range rows {
		d, n, f := row.v(ds), row.v(node), row.v(floor)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", row.name, num(d, row.unit), num(n, row.unit), num(f, row.unit), ratio(d, n), ratio(d, f))
	}
	fmt.Fprintf(w, "| streams (errors) | %d (%d) | %d (%d) | %d (%d) | | |\n", ds.Completed, ds.Errors, node.Completed, node.Errors, floor.Completed, floor.Errors)
	return nil
}

func num(v float64, unit string) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f%s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f%s", v, unit)
	}
	return fmt.Sprintf("%.2f%s", v, unit)
}

func ratio(a, b float64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}
