package app_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/browsertest"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// brewMarkdown is a passage as the chunker keeps it: prose, a table, a
// YAML block whose indentation matters, and HTML that must stay text.
const brewMarkdown = "## Steeping times\n\n" +
	"Each tea wants its own time and temperature:\n\n" +
	"| Tea | Minutes | Temperature |\n" +
	"| --- | ---: | --- |\n" +
	"| Green | 2 | 80 °C |\n" +
	"| Oolong | 3 | 90 °C |\n\n" +
	"Set them in `tern.yaml`:\n\n" +
	"```yaml\n" +
	"steep:\n" +
	"  oolong:\n" +
	"    minutes: 3\n" +
	"    note: \"<script>window.__pwned = 1</script>\"\n" +
	"```\n\n" +
	"<img src=x onerror=\"window.__pwned = 1\">\n"

// TestWidgetInBrowserRendersMarkdown has the widget show an extractive
// answer that quotes a passage with a table and a code block: both render
// as a table and a code block (with its copy button), HTML in the passage
// stays out, and screenshots show it in light and dark, desktop and phone.
func TestWidgetInBrowserRendersMarkdown(t *testing.T) {
	t.Parallel()
	browser := browsertest.Find(t)
	artifacts := browsertest.ArtifactsDir(t, "widget-markdown")

	s := assistantSetup(t)
	keys := map[string]string{"valid": s.assistantA}
	host := hostServer(t, s.base+"/widget.js", keys)
	s.cli("domain", "create", "--org", orgA, "--domain", "widget", "--project", "tern",
		"--site-url", "https://tern.example/docs", "--allowed-origin", host.URL)
	s.cli("index", "widget")

	// The page's passage as the chunker writes it, Markdown and all.
	store, err := sqlite.Open(t.Context(), s.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	brew := search.Chunk{ID: "guides/brew#steeping-times", PagePath: "guides/brew", Anchor: "steeping-times",
		URL: "https://tern.example/docs/guides/brew#steeping-times", PageTitle: "Brew tea", Heading: "Steeping times",
		Text: "Steeping times\nEach tea wants its own time and temperature oolong steep minutes", Markdown: brewMarkdown, PageHash: "hand-made"}
	if err := store.ReplacePages(t.Context(), "widget", []search.Chunk{brew}, nil); err != nil {
		t.Fatal(err)
	}

	var run struct {
		Failure, Text, Error, Code, CodeClass string
		Console                               []string
		Table                                 *struct {
			Head   []string
			Rows   [][]string
			Align  []string
			Border string
		}
		CopyButton, Injected bool
		Screenshots          []struct{ File, Scheme, Name, PanelBackground string }
	}
	browser.Run(t, "widget-markdown.mjs", map[string]any{
		"artifacts": artifacts,
		"page":      host.URL + "/docs/guides/schedules",
		"question":  "How many minutes do I steep oolong?",
	}, &run)
	if run.Failure != "" || run.Error != "" {
		t.Fatalf("browser: %s %s\nconsole: %q", run.Failure, run.Error, run.Console)
	}
	if run.Table == nil || !slices.Equal(run.Table.Head, []string{"Tea", "Minutes", "Temperature"}) ||
		len(run.Table.Rows) != 2 || !slices.Equal(run.Table.Rows[1], []string{"Oolong", "3", "90 °C"}) {
		t.Errorf("the answer's table rendered as %+v; answer text %q", run.Table, run.Text)
	} else if !strings.HasSuffix(run.Table.Align[1], "right") || run.Table.Border == "none" {
		t.Errorf("table cells: alignment %q, border %q", run.Table.Align, run.Table.Border)
	}
	wantCode := "steep:\n  oolong:\n    minutes: 3\n    note: \"<script>window.__pwned = 1</script>\"\n"
	if strings.TrimSuffix(run.Code, "\n") != strings.TrimSuffix(wantCode, "\n") || !strings.Contains(run.CodeClass, "yaml") || !run.CopyButton {
		t.Errorf("the answer's code block rendered as %q (class %q, copy button %v), want %q", run.Code, run.CodeClass, run.CopyButton, wantCode)
	}
	if run.Injected {
		t.Error("HTML of the passage ran or rendered in the widget")
	}
	for _, sc := range run.Screenshots {
		if st, err := os.Stat(sc.File); err != nil || st.Size() < 10_000 {
			t.Errorf("screenshot %s: %v", sc.File, err)
		}
		if dark := sc.PanelBackground == "rgb(22, 25, 29)"; dark != (sc.Scheme == "dark") {
			t.Errorf("%s %s: panel background %s", sc.Name, sc.Scheme, sc.PanelBackground)
		}
	}
	if len(run.Screenshots) != 4 {
		t.Errorf("%d screenshots, want 4", len(run.Screenshots))
	}
	t.Logf("screenshots: %d in %s", len(run.Screenshots), artifacts)
}
