// Command benchtable prints the load generator's JSON results of docsmith,
// the Node AI SDK server and the floor server as one table, with docsmith's
// ratio to each. Given two more files, docsmith's results with an openai/…
// model and the figures of the model server it streamed from (model.json:
// {"label", "streams", "cpu_ms_per_stream", "vmhwm_mib"}), it adds a column
// for docsmith with that model, with its ratios, and the model server's own
// cost in rows apart.
//
//	go run ./scripts/benchtable docsmith.json node.json floor.json [openai.json model.json]
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
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

// modelServer is the model server's cost over the openai/… load.
type modelServer struct {
	Label          string  `json:"label"`
	Streams        int     `json:"streams"`
	CPUPerStreamMs float64 `json:"cpu_ms_per_stream"`
	HWMMiB         float64 `json:"vmhwm_mib"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(files []string, w io.Writer) error {
	if len(files) != 3 && len(files) != 5 {
		return fmt.Errorf("want three result files (docsmith, node, floor), or five (and openai, model), got %d", len(files))
	}
	rs := make([]result, min(len(files), 4))
	for i := range rs {
		if err := readJSON(files[i], &rs[i]); err != nil {
			return err
		}
		if rs[i].Server == nil {
			return fmt.Errorf("%s has no server figures (was the load generator given -pid?)", files[i])
		}
	}
	ds, node, floor := rs[0], rs[1], rs[2]
	// The columns: each docsmith run, then the others; ratios of each
	// docsmith run to Node and to the floor.
	type column struct {
		name string
		r    result
	}
	docsmith := []column{{"docsmith (extractive)", ds}}
	var model *modelServer
	if len(files) == 5 {
		model = &modelServer{}
		if err := readJSON(files[4], model); err != nil {
			return err
		}
		name := "docsmith (openai/…)"
		if rs[3].Label != "" {
			name = "docsmith (" + rs[3].Label + ")"
		}
		docsmith = append(docsmith, column{name, rs[3]})
	}
	cols := append(append([]column(nil), docsmith...), column{"Node AI SDK server", node}, column{"floor", floor})

	rss := func(r result) float64 { return max(r.Server.PeakRSSMiB, r.Server.HWMMiB) }
	rows := []struct {
		name string
		v    func(result) float64
		unit string
	}{
		{"streams/s", func(r result) float64 { return r.StreamsPerS }, ""},
		{"TTFB p50", func(r result) float64 { return r.TTFBp50ms }, " ms"},
		{"TTFB p99", func(r result) float64 { return r.TTFBp99ms }, " ms"},
		{"CPU per stream", func(r result) float64 { return r.Server.CPUPerStreamMs }, " ms"},
		{"peak RSS", rss, " MiB"},
	}
	header := []string{""}
	for _, c := range cols {
		header = append(header, c.name)
	}
	short := func(c column) string {
		if len(docsmith) == 1 {
			return "docsmith"
		}
		return strings.TrimSuffix(strings.TrimPrefix(c.name, "docsmith ("), ")")
	}
	for _, d := range docsmith {
		header = append(header, short(d)+" ÷ Node", short(d)+" ÷ floor")
	}
	line := func(cells ...string) {
		for len(cells) < len(header) {
			cells = append(cells, "")
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	line(header...)
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(header)))
	for _, row := range rows {
		cells := []string{row.name}
		for _, c := range cols {
			cells = append(cells, num(row.v(c.r), row.unit))
		}
		for _, d := range docsmith {
			cells = append(cells, ratio(row.v(d.r), row.v(node)), ratio(row.v(d.r), row.v(floor)))
		}
		line(cells...)
	}
	cells := []string{"streams (errors)"}
	for _, c := range cols {
		cells = append(cells, fmt.Sprintf("%d (%d)", c.r.Completed, c.r.Errors))
	}
	line(cells...)
	if model != nil {
		// The model server's figures, in the openai column, apart from
		// docsmith's own.
		label := "model server"
		if model.Label != "" {
			label = model.Label
		}
		line(label+" (apart): CPU per stream", "", num(model.CPUPerStreamMs, " ms"))
		line(label+" (apart): peak RSS", "", num(model.HWMMiB, " MiB"))
	}
	return nil
}

func readJSON(file string, v any) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read results: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode %s: %w", file, err)
	}
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
