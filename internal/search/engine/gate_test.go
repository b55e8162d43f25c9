package engine

import (
	"slices"
	"testing"
)

func TestGatedWeight(t *testing.T) {
	t.Parallel()
	docs := func(n int) []int32 { return make([]int32, n) }
	tests := []struct {
		name      string
		readers   []int32
		expansion int
		want      float64
	}{
		{"the docs never use the reader's word", nil, 10, 0.4},
		{"the docs use it a little", docs(2), 10, 0.4 * 0.8},
		{"as often as the expansion", docs(10), 10, 0},
		{"more often than the expansion", docs(30), 10, 0},
		{"nearly as often: below the least share", docs(97), 100, 0},
		{"the expansion is nowhere", nil, 0, 0},
	}
	for _, tt := range tests {
		if got := gatedWeight(0.4, tt.readers, tt.expansion); got < tt.want-1e-12 || got > tt.want+1e-12 {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A synonym helps a reader whose word the docs do not use, and leaves alone
// a question in the docs' own words: on a site that says "install" on many
// pages, a question about installing ranks as it would with no synonyms.
func TestSynonymsGatedByTheDocsOwnWords(t *testing.T) {
	t.Parallel()
	page := func(path, title, text string) Chunk {
		return Chunk{ID: path, PagePath: path, PageTitle: title, Text: text}
	}
	di := Build([]Chunk{
		page("start/install", "Install the beacon agent", "Install the agent with the package manager, then install the probes."),
		page("start/probes", "Probes", "Install a probe on each host. Installing takes a minute."),
		page("start/upgrade", "Upgrading", "Install the newer agent over the old one."),
		page("account/setup", "Set up your account", "Set up the account owner and set up billing."),
		page("account/signin", "Sign in", "Sign in with your email. Sign in again after a week."),
	}, 1)
	ask := func(q string) []Hit {
		terms := ParseQuery(q, "en")
		return di.Search(Query{Terms: ExpandSynonyms(q, terms, BuiltinSynonyms()), Limit: 5})
	}
	plain := func(q string) []Hit { return di.Search(Query{Terms: ParseQuery(q, "en"), Limit: 5}) }
	// The docs say "install" more than "set up": the synonym is left out.
	q := "how do I install the beacon agent"
	if got, want := scoredPaths(ask(q)), scoredPaths(plain(q)); !slices.Equal(got, want) {
		t.Errorf("%q: %s, want the ranking without synonyms, %s", q, got, want)
	}
	// The docs never say "log in": the synonym finds the page.
	if hits := ask("where do I log in"); len(hits) == 0 || hits[0].PagePath != "account/signin" {
		t.Errorf("log in: %s, want account/signin first", scoredPaths(hits))
	}
}
