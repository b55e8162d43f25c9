package assistant

import (
	"slices"
	"testing"

	"github.com/docsmith/docsmith/internal/search/engine"
)

func TestQuestionNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question string
		names    []string
	}{
		{"Does it support Windows 11?", []string{"Windows 11"}},
		{"Can I read the keys from Azure Key Vault when it boots?", []string{"Azure Key Vault"}},
		{"How do I pass --dry-run to the CLI?", []string{"--dry-run", "CLI"}},
		{"Where is my_config.yaml read, and does it run on arm64?", []string{"my_config.yaml", "arm64"}},
		{"What does `pkg-name` do?", []string{"pkg-name"}},
		// A capital starting a sentence makes no name; "I'm" is no name.
		{"Sync runs nightly. Where do I'm supposed to look?", nil},
		{"Is the built-in theme dark?", []string{"built-in"}},
		{"Is there an Elixir library, or a Phoenix plugin?", []string{"Elixir", "Phoenix"}},
	}
	for _, tc := range tests {
		var got []string
		for _, n := range questionWords(tc.question, nil).names {
			got = append(got, n.text)
		}
		if !slices.Equal(got, tc.names) {
			t.Errorf("names of %q = %q, want %q", tc.question, got, tc.names)
		}
	}
}

func TestQuestionParts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question string
		parts    int
	}{
		{"How do I exclude files from a sync?", 1},
		{"Which folder holds the glossary, and does it read our TERMS.md?", 2},
		{"Our repo is on GitLab. How do I connect it?", 2},
		{"Can I sync photos and videos?", 1},
	}
	for _, tc := range tests {
		if got := questionParts(tc.question); len(got) != tc.parts {
			t.Errorf("parts of %q = %q, want %d", tc.question, got, tc.parts)
		}
	}
}

// TestDecide weighs questions against passages of docs written for it, with
// what an index of 1000 pages would say of their words.
func TestDecide(t *testing.T) {
	t.Parallel()
	words := map[string]int{
		"webhook": 2, "secret": 40, "rotate": 12, "bread": 1, "frame": 60, "canvas": 2, "gallery": 4,
		"version": 80, "changelog": 30, "pilot": 700, "windows": 0, "datadog": 0, "export": 50, "log": 90,
		"sync": 100, "exclude": 20, "file": 300, "entire": 15, "sign": 30, "request": 90, "send": 60,
	}
	df := map[string]int{}
	for w, n := range words {
		engine.Words(w, func(_, stem string) { df[stem] = n })
	}
	ps := []passage{
		{title: "Webhooks", text: "Each webhook is signed with a secret. Rotate the secret from the settings page."},
		{title: "Navigation", text: "Breadcrumbs (bread-crumbs) show the page's place above its title."},
		{title: "Frames", text: "Wrap an image in a frame to give it a border."},
		{title: "Changelog", text: "Every version of Pilot is listed in the changelog."},
		{title: "Logs", text: "Export the request log as CSV from the logs page."},
		{title: "Sync", text: "Exclude files from a sync with an ignore file; the entire folder is read otherwise."},
	}
	tests := []struct {
		question string
		status   string
		missing  []string
		first    string // the first passage kept
	}{
		{"How do I rotate webhook secrets?", TurnAnswered, nil, "Webhooks"},
		// One rare word in common is evidence enough.
		{"Are webhooks signed?", TurnAnswered, nil, "Webhooks"},
		// A page mentioning bread-crumbs says nothing about a recipe.
		{"What's a good recipe for banana bread?", TurnNotCovered, []string{"recipe", "banana"}, ""},
		// One ordinary word in common with a longer question is chance.
		{"How do I hang a canvas frame on a gallery hook?", TurnNotCovered, []string{"hang", "hook"}, ""},
		// One odd word does not decide alone.
		{"How do I tell Pilot versions apart in the changelog?", TurnAnswered, nil, "Changelog"},
		// Whole words only: "tire" is not in "entire".
		{"Which tire pressure does Pilot recommend?", TurnNotCovered, []string{"tire", "pressure", "recommend"}, ""},
		{"Does Pilot run on Windows?", TurnNotCovered, []string{"Windows"}, ""},
		{"Can I export my request logs to Datadog?", TurnNotCovered, []string{"Datadog"}, ""},
		{"How do I export my request logs, and can I send them to Datadog?", TurnPartial, []string{"Datadog"}, "Logs"},
		// Only words on most pages: the passages holding them stand.
		{"What is Pilot?", TurnAnswered, nil, "Changelog"},
	}
	for _, tc := range tests {
		qt := questionWords(tc.question, nil)
		f := indexFacts{pages: 1000, common: 200, df: map[string]int{}, known: make([]bool, len(qt.names))}
		for _, w := range qt.words {
			f.df[w.stem] = df[w.stem]
		}
		for i, n := range qt.names {
			f.known[i] = true
			for _, w := range n.words {
				engine.Words(w, func(_, stem string) { f.known[i] = f.known[i] && df[stem] > 0 })
			}
		}
		v := decide(qt, f, slices.Clone(ps))
		if v.status != tc.status || !slices.Equal(v.missing, tc.missing) {
			t.Errorf("%q: status %s, missing %q (note %q), want %s, %q", tc.question, v.status, v.missing, v.note, tc.status, tc.missing)
			continue
		}
		if tc.first != "" && (len(v.kept) == 0 || v.kept[0].title != tc.first || v.kept[0].n != 1) {
			t.Errorf("%q: kept %+v, want %q first", tc.question, v.kept, tc.first)
		}
		if tc.status == TurnNotCovered && len(v.kept) != 0 {
			t.Errorf("%q: not covered, yet keeps %d passages", tc.question, len(v.kept))
		}
	}
}

func TestDecideNotes(t *testing.T) {
	t.Parallel()
	if got := orList([]string{"A", "B", "C"}); got != "A, B or C" {
		t.Errorf("orList = %q", got)
	}
	qt := questionWords("Can I send logs to Datadog?", nil)
	f := indexFacts{pages: 10, common: 6, df: map[string]int{"send": 3, "log": 4}, known: []bool{false}}
	v := decide(qt, f, []passage{{title: "Logs", text: "Send logs anywhere."}})
	if v.note != "The docs don't mention Datadog." {
		t.Errorf("note = %q", v.note)
	}
}

// TestDecideKeepsWhatOutranksEvidence: a passage sharing one ordinary word
// with the question is chance below the evidence, not above it.
func TestDecideKeepsWhatOutranksEvidence(t *testing.T) {
	t.Parallel()
	requests := passage{title: "Requests", text: "Each request is listed with its status and duration."}
	logs := passage{title: "Logs", text: "Export the request log as CSV from the logs page."}
	frames := passage{title: "Frames", text: "Wrap an image in a frame to give it a border."}
	tests := []struct {
		name string
		ps   []passage
		kept []string
	}{
		{"ranked above the evidence", []passage{requests, logs, frames}, []string{"Requests", "Logs"}},
		{"ranked below the evidence", []passage{logs, requests, frames}, []string{"Logs"}},
		{"sharing no word", []passage{frames, logs, requests}, []string{"Logs"}},
	}
	for _, tc := range tests {
		qt := questionWords("Where can I download the request log as a spreadsheet?", nil)
		f := indexFacts{pages: 1000, common: 200, df: map[string]int{}}
		for _, w := range qt.words {
			f.df[w.stem] = 60
		}
		v := decide(qt, f, tc.ps)
		var kept []string
		for i, p := range v.kept {
			kept = append(kept, p.title)
			if p.n != i+1 {
				t.Errorf("%s: passage %q numbered %d, want %d", tc.name, p.title, p.n, i+1)
			}
		}
		if v.status != TurnAnswered || !slices.Equal(kept, tc.kept) {
			t.Errorf("%s: status %s, kept %q; want answered, %q", tc.name, v.status, kept, tc.kept)
		}
	}
}
