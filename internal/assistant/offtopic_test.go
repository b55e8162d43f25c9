package assistant_test

import (
	"os"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// TestExtractiveOffTopic asks the extractive assistant about a fixture site
// that says "support" on every page and never mentions Windows: a question
// whose key terms no passage shares is not covered, however well its
// generic words match; a question whose key terms are there is answered
// from the passages that hold them.
func TestExtractiveOffTopic(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	_, err := e.tenants.CreateProject(t.Context(), tenant.Project{ID: "pilot", OrgID: "acme", RepoURL: "testdata/offtopic"})
	must(t, err)
	d, err := e.tenants.CreateDomain(t.Context(), tenant.Domain{ID: "pilot", OrgID: "acme", ProjectID: "pilot", SiteURL: "https://pilot.example"})
	must(t, err)
	site, err := docs.Load(os.DirFS("testdata/offtopic"))
	must(t, err)
	if _, err := search.Build(t.Context(), e.index, d.ID, site, d.SiteURL); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		question  string
		selection string // text the reader selected on the page, if any
		covered   bool
		source    string // the first source's URL (its section) when covered
		missing   string // the name the answer says the docs do not mention
	}{
		{"Does it support Windows?", "", false, "", "Windows"},
		{"Is Windows supported?", "", false, "", "Windows"},
		// "Pilot" is on every page: it does not make the pages about Windows.
		{"Does Pilot work on Windows 11?", "", false, "", "Windows 11"},
		{"Does Pilot run on Windows?", "", false, "", "Windows"},
		{"Does it support Linux?", "", true, "https://pilot.example/guides/platforms#supported-platforms", ""},
		{"How do I open a support ticket?", "", true, "https://pilot.example/guides/help#support-tickets", ""},
		{"Can I log gliders?", "", true, "https://pilot.example/", ""},
		{"Which Pilot platforms run on arm64?", "", true, "https://pilot.example/guides/platforms#supported-platforms", ""},
		// A question about a selection is about the selection's words.
		{"What does this mean?", "Pilot runs on Linux (x86-64 and arm64)", true, "https://pilot.example/guides/platforms", ""},
	}
	for _, tc := range tests {
		t.Run(tc.question, func(t *testing.T) {
			t.Parallel()
			req := ask(tc.question)
			if tc.selection != "" {
				req.Context = []assistant.ContextItem{{Type: assistant.ContextTextSelection, Value: tc.selection, Path: "/guides/platforms"}}
			}
			a, r := e.answer(t.Context(), d, req)
			turns := e.turns(a.Thread.ID)
			if !tc.covered {
				said := "documentation does not cover this"
				if tc.missing != "" {
					said = "The docs don't mention " + tc.missing + "."
				}
				if len(r.sources) != 0 || !strings.Contains(r.text, said) || !r.finished {
					t.Fatalf("off-topic question answered with %d sources:\n%s", len(r.sources), r.text)
				}
				if turns[0].Status != assistant.TurnNotCovered {
					t.Fatalf("status %q, want %q", turns[0].Status, assistant.TurnNotCovered)
				}
				return
			}
			if len(r.sources) == 0 || turns[0].Status != assistant.TurnAnswered {
				t.Fatalf("not answered (status %q):\n%s", turns[0].Status, r.text)
			}
			if r.sources[0].URL != tc.source || r.sources[0].ID != "src_1" {
				t.Fatalf("sources = %+v, want %s first", r.sources, tc.source)
			}
			for _, n := range citedNumbers(r.text) {
				if n < 1 || n > len(r.sources) {
					t.Errorf("marker [%d] points at no source of %d", n, len(r.sources))
				}
			}
		})
	}
}

// TestNotIndexedSaysHowToBuild asks a domain whose index was never built:
// the answer says there is no index yet and how to build it, rather than
// that the documentation does not cover the question.
func TestNotIndexedSaysHowToBuild(t *testing.T) {
	t.Parallel()
	e := setup(t, nil)
	d, err := e.tenants.CreateDomain(t.Context(), tenant.Domain{ID: "fresh", OrgID: "acme", ProjectID: "acme-docs", SiteURL: siteURL})
	must(t, err)
	a, r := e.answer(t.Context(), d, ask("How do I exclude files from a sync?"))
	if len(r.sources) != 0 || !r.finished || !strings.Contains(r.text, "no index of the documentation yet") ||
		!strings.Contains(r.text, "docsmith index fresh") || strings.Contains(r.text, "does not cover") {
		t.Fatalf("reply of an unindexed domain = %+v", r)
	}
	if turns := e.turns(a.Thread.ID); turns[0].Status != assistant.TurnNotIndexed {
		t.Fatalf("status %q, want %q", turns[0].Status, assistant.TurnNotIndexed)
	}
	// An indexed domain that finds nothing still says the docs do not cover it.
	_, r = e.answer(t.Context(), e.domain, ask("What is the capital of France?"))
	if !strings.Contains(r.text, "The docs don't mention France.") {
		t.Fatalf("reply of an indexed domain = %+v", r)
	}
}
