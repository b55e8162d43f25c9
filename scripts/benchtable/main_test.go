package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("d.json", `{"completed":800,"streams_per_s":800,"ttfb_p99_ms":20,"server":{"peak_rss_sampled_mib":50,"vmhwm_mib":60,"cpu_ms_per_stream":1}}`)
	node := write("n.json", `{"completed":40,"streams_per_s":40,"ttfb_p99_ms":3000,"server":{"peak_rss_sampled_mib":200,"cpu_ms_per_stream":20}}`)
	floor := write("f.json", `{"completed":4000,"streams_per_s":4000,"ttfb_p99_ms":10,"server":{"peak_rss_sampled_mib":15,"cpu_ms_per_stream":0.1}}`)
	var out strings.Builder
	if err := run([]string{ds, node, floor}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| streams/s | 800 | 40.0 | 4000 | 20.00× | 0.20× |", "| peak RSS | 60.0 MiB |", "| TTFB p99 | 20.0 ms | 3000 ms | 10.0 ms | 0.01× | 2.00× |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if err := run([]string{ds, node, write("x.json", `{"completed":1}`)}, &out); err == nil || !strings.Contains(err.Error(), "-pid") {
		t.Errorf("results without server figures: %v", err)
	}
}

// TestTableWithOpenAI: a fourth and fifth file add docsmith with an
// openai/… model as a column with its ratios, and the model server's cost
// in rows of its own.
func TestTableWithOpenAI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("d.json", `{"completed":800,"streams_per_s":800,"ttfb_p99_ms":20,"server":{"peak_rss_sampled_mib":50,"vmhwm_mib":60,"cpu_ms_per_stream":1}}`)
	oa := write("o.json", `{"label":"openai/bench","completed":400,"streams_per_s":400,"ttfb_p99_ms":40,"server":{"peak_rss_sampled_mib":70,"cpu_ms_per_stream":2}}`)
	node := write("n.json", `{"completed":40,"streams_per_s":40,"ttfb_p99_ms":3000,"server":{"peak_rss_sampled_mib":200,"cpu_ms_per_stream":20}}`)
	floor := write("f.json", `{"completed":4000,"streams_per_s":4000,"ttfb_p99_ms":10,"server":{"peak_rss_sampled_mib":15,"cpu_ms_per_stream":0.1}}`)
	model := write("m.json", `{"label":"OpenAI mock","streams":420,"cpu_ms_per_stream":0.75,"vmhwm_mib":12}`)
	var out strings.Builder
	if err := run([]string{ds, node, floor, oa, model}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| docsmith (extractive) | docsmith (openai/bench) | Node AI SDK server | floor | extractive ÷ Node | extractive ÷ floor | openai/bench ÷ Node | openai/bench ÷ floor |",
		"| streams/s | 800 | 400 | 40.0 | 4000 | 20.00× | 0.20× | 10.00× | 0.10× |",
		"| CPU per stream | 1.00 ms | 2.00 ms | 20.0 ms | 0.10 ms | 0.05× | 10.00× | 0.10× | 20.00× |",
		"| OpenAI mock (apart): CPU per stream |  | 0.75 ms |",
		"| OpenAI mock (apart): peak RSS |  | 12.0 MiB |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if err := run([]string{ds, node, floor, oa}, &out); err == nil {
		t.Error("four files were taken")
	}
}
