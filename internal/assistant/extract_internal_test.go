package assistant

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// pageIndex is an index that holds pages and nothing else: what an
// extractive answer reads after retrieval.
type pageIndex struct {
	search.Index
	pages map[string]string
}

func (x pageIndex) Page(_ context.Context, _, path string) (search.PageText, error) {
	content, ok := x.pages[path]
	if !ok {
		return search.PageText{}, fmt.Errorf("page %s: %w", path, search.ErrPageNotFound)
	}
	return search.PageText{Path: path, Content: content}, nil
}

// filler is prose that holds none of the test questions' words.
func filler(n int) string {
	return strings.TrimSpace(strings.Repeat("The gateway keeps working as it did before this release. ", n))
}

// gatewayPage is a page of a made-up product: sections about installing,
// the network, limits in a long table, the configuration file in a code
// block, and a long section with its one fact far from its start.
var gatewayPage = strings.Join([]string{
	"# Gateway",
	"",
	"Gateway forwards requests to your services.",
	"",
	"## Install",
	"",
	"Download the archive and unpack it. " + filler(3),
	"",
	"## Network",
	"",
	"Behind a corporate proxy, the gateway waits for the proxy for 45 seconds before it gives up (the proxy timeout).",
	"",
	"## Limits",
	"",
	"| Plan | Requests per minute | Burst |",
	"| --- | --- | --- |",
	rows(60),
	"| Quartz | 9100 | 300 |",
	"",
	"## Configuration file",
	"",
	filler(12),
	"",
	"```yaml title=\"gateway.yaml\"",
	"listen: 0.0.0.0:8080",
	"upstreams:",
	"  - name: billing",
	"    retries: 4",
	"```",
	"",
	filler(12),
	"",
	"## Upgrades",
	"",
	filler(20),
	"",
	"Before an upgrade, drain the gateway with `gateway drain --wait 30s` so that no request is lost.",
	"",
	filler(20),
	"",
	"## Logs",
	"",
	"Logs rotate daily and are kept for 14 days.",
	"",
	"## Metrics",
	"",
	"Metrics are exported on port 9464 for Prometheus.",
}, "\n")

// rows are n table rows of plans named after numbers.
func rows(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("| Plan %d | %d | %d |", i+1, 100*(i+1), 10*(i+1))
	}
	return strings.Join(out, "\n")
}

func TestSectionPassages(t *testing.T) {
	t.Parallel()
	const site = "https://gw.example"
	svc := New(Config{Index: pageIndex{pages: map[string]string{"gateway": gatewayPage}}})
	// Retrieval found the page by its install section only.
	retrieved := []passage{{n: 1, hit: search.Hit{Chunk: search.Chunk{PagePath: "gateway", PageTitle: "Gateway", Anchor: "install", Heading: "Install"}, Score: 1},
		url: site + "/gateway#install", title: "Gateway › Install", text: "## Install\n\nDownload the archive and unpack it."}}
	tests := []struct {
		name     string
		question string
		// anchors are the sections quoted, in order.
		anchors []string
		// want are lines the answer holds, in order; absent is text it
		// must not hold (the rest of a short page, a table's far rows).
		want   []string
		absent string
	}{
		{"a section retrieval did not return", "How long is the proxy timeout?", []string{"network"},
			[]string{"> Behind a corporate proxy, the gateway waits for the proxy for 45 seconds before it gives up (the proxy timeout)."}, "Download the archive"},
		{"a fact far into a long section", "How do I drain the gateway before an upgrade?", []string{"upgrades"},
			[]string{"> Before an upgrade, drain the gateway with `gateway drain --wait 30s` so that no request is lost."}, "Logs rotate"},
		{"a table row, under its header", "How many requests per minute does the Quartz plan allow?", []string{"limits"},
			[]string{"> | Plan | Requests per minute | Burst |", "> | --- | --- | --- |", "> | Quartz | 9100 | 300 |"}, "| Plan 1 |"},
		{"a whole code block", "How many retries for the billing upstream in gateway.yaml?", []string{"configuration-file"},
			[]string{"> ```yaml title=\"gateway.yaml\"", "> listen: 0.0.0.0:8080", ">     retries: 4", "> ```"}, "Quartz"},
		{"two strong sections of one page", "How long are logs kept, and which port serves metrics?", []string{"logs", "metrics"},
			[]string{"> Logs rotate daily and are kept for 14 days.", "> Metrics are exported on port 9464 for Prometheus."}, "45 seconds"},
		{"a section for each part of the question", "How long does the gateway wait behind a corporate proxy before the proxy timeout, and on which port for Prometheus?", []string{"network", "metrics"},
			[]string{"> Behind a corporate proxy, the gateway waits for the proxy for 45 seconds before it gives up (the proxy timeout).", "> Metrics are exported on port 9464 for Prometheus."}, "14 days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := &Answer{svc: svc, domain: tenant.Domain{ID: "gw", SiteURL: site},
				req: Request{Messages: []Message{{Role: "user", Text: tt.question}}}}
			ps, answer, _ := a.extractive(t.Context(), retrieved)
			var anchors []string
			for i, p := range ps {
				anchors = append(anchors, p.hit.Anchor)
				if p.n != i+1 || p.url != site+"/gateway#"+p.hit.Anchor {
					t.Errorf("passage %d: n %d, url %s", i, p.n, p.url)
				}
			}
			if strings.Join(anchors, " ") != strings.Join(tt.anchors, " ") {
				t.Fatalf("quoted sections %q, want %q:\n%s", anchors, tt.anchors, answer)
			}
			lines := strings.Split(answer, "\n")
			at := 0
			for _, w := range tt.want {
				i := indexFrom(lines, at, w)
				if i < 0 {
					t.Fatalf("answer lacks %q after line %d:\n%s", w, at, answer)
				}
				at = i + 1
			}
			if strings.Contains(answer, tt.absent) {
				t.Errorf("answer holds %q:\n%s", tt.absent, answer)
			}
			checkQuotes(t, answer)
		})
	}
}

// checkQuotes checks what every quote of an answer keeps: code blocks
// closed, no "…" inside a block, and about maxExtractiveChars at most.
func checkQuotes(t *testing.T, answer string) {
	t.Helper()
	for _, part := range strings.Split(answer, "\n**")[1:] {
		var lines []string
		for _, l := range strings.Split(part, "\n") {
			if strings.HasPrefix(l, ">") {
				lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, ">"), " "))
			}
		}
		for _, s := range mdblock.Spans(lines) {
			if s.Kind == mdblock.Fence && !s.Closed {
				t.Errorf("a quote leaves a code block open:\n%s", part)
			}
			for _, l := range lines[s.From : s.To+1] {
				if l == ellipsis {
					t.Errorf("an ellipsis inside a block:\n%s", part)
				}
			}
		}
		if n := len(strings.Join(lines, "\n")); n > maxExtractiveChars+maxExtractiveChars/2 {
			t.Errorf("a quote of %d bytes:\n%s", n, part)
		}
	}
}

func TestSectionPassagesFallBack(t *testing.T) {
	t.Parallel()
	svc := New(Config{Index: pageIndex{pages: map[string]string{}}})
	a := &Answer{svc: svc, domain: tenant.Domain{ID: "gw"}, req: Request{Messages: []Message{{Role: "user", Text: "Where are the logs?"}}}}
	// A page the index cannot read gives its retrieved passage, and one
	// page gives one passage.
	retrieved := []passage{
		{n: 1, hit: search.Hit{Chunk: search.Chunk{PagePath: "gone", Anchor: "logs"}, Score: 1}, url: "/gone#logs", text: "Logs are in /var/log."},
		{n: 2, hit: search.Hit{Chunk: search.Chunk{PagePath: "gone", Anchor: "more"}, Score: 0.9}, url: "/gone#more", text: "More about logs."},
		{n: 3, hit: search.Hit{Chunk: search.Chunk{PagePath: "other"}, Score: 0.2}, url: "/other", text: "Weak logs."},
	}
	ps, answer, _ := a.extractive(t.Context(), retrieved)
	if len(ps) != 1 || ps[0].url != "/gone#logs" || ps[0].n != 1 || !strings.Contains(answer, "Logs are in /var/log.") {
		t.Fatalf("passages %+v:\n%s", ps, answer)
	}
}

func TestSplitSectionsAnchors(t *testing.T) {
	t.Parallel()
	page := strings.Join([]string{
		"# Title",
		"Intro.",
		"## Overview",
		"One.",
		"```sh",
		"# not a heading",
		"```",
		"### Overview",
		"Two.",
		"## Set up",
		"Three.",
	}, "\n")
	p := splitSections(page, newTermSet("overview"))
	var got []string
	for _, s := range p.sections {
		got = append(got, fmt.Sprintf("%s|%s|%d|%d", s.heading, s.anchor, s.level, s.parent))
	}
	want := []string{"||0|-1", "Overview|overview|2|-1", "Overview|overview-2|3|1", "Set up|set-up|2|-1"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("sections %q, want %q", got, want)
	}
	// A heading with its own id keeps the anchor retrieval knows.
	p.useHitAnchors([]search.Hit{{Chunk: search.Chunk{Heading: "Set up", Anchor: "install"}}})
	if p.sections[3].anchor != "install" {
		t.Errorf("custom anchor: %q", p.sections[3].anchor)
	}
	if got := p.text(p.sections[1]); got != "One.\n```sh\n# not a heading\n```" {
		t.Errorf("section text %q", got)
	}
}

// TestTermSetWholeWords: a question's words match whole words as the index
// analyses them, never parts of words, and stop words match nothing.
func TestTermSetWholeWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		question, text string
		match          bool
	}{
		{"Which tire sizes?", "The entire fleet.", false},
		{"How do I exclude files?", "Excluding a file is easy.", true},
		{"Is there a world map?", `print("hello world")`, true},
		{"What is the limit?", "What is this?", false},
		{"Set MY_ENV_VAR", "export MY_ENV_VAR=1", true},
		{"Which companies use it?", "One COMPANY does.", true},
		{"Is it happy?", "Happiness.", true}, // one stem, as the index has it
		{"Does it relate?", "Relational data", true},
		{"Où est le café ?", "Le CAFÉ ferme tôt.", true},
	}
	for _, tt := range tests {
		ts := newTermSet(tt.question)
		if got := ts.mask(tt.text) != 0; got != tt.match {
			t.Errorf("%q in %q: %v, want %v", tt.question, tt.text, got, tt.match)
		}
	}
}

// TestSectionPassagesTitleQuestion: a question that asks what the page's
// title says ("How do I install Kettle?" of "Install Kettle") is answered
// by the page from its start, not by a later section that repeats the
// title's words ("Check the installation").
func TestSectionPassagesTitleQuestion(t *testing.T) {
	t.Parallel()
	page := strings.Join([]string{
		"# Install Kettle",
		"",
		"## With a package manager",
		"",
		"```bash",
		"apt install kettle",
		"```",
		"",
		"## Check the installation",
		"",
		"Run `kettle --version`. To upgrade Kettle, install it again.",
	}, "\n")
	svc := New(Config{Index: pageIndex{pages: map[string]string{"install": page}}})
	retrieved := []passage{{n: 1, hit: search.Hit{Chunk: search.Chunk{PagePath: "install", PageTitle: "Install Kettle", Anchor: "check-the-installation", Heading: "Check the installation"}, Score: 1},
		url: "/install#check-the-installation", title: "Install Kettle › Check the installation", text: "Run `kettle --version`."}}
	a := &Answer{svc: svc, domain: tenant.Domain{ID: "k"}, req: Request{Messages: []Message{{Role: "user", Text: "How do I install Kettle?"}}}}
	ps, answer, _ := a.extractive(t.Context(), retrieved)
	if len(ps) != 1 || ps[0].url != "/install" || !strings.Contains(answer, "apt install kettle") {
		t.Fatalf("passages %+v:\n%s", ps, answer)
	}
}
