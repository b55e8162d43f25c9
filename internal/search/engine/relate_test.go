package engine

import (
	"reflect"
	"slices"
	"testing"
)

// relateFixture is a small docs site of a made-up note-taking app whose
// pages call one thing by two names: the guides say "team space", the
// reference page is titled "Workspaces"; the sync page defines "mirroring"
// in passing; the glossary describes a "checkpoint".
func relateFixture() []Chunk {
	page := func(path, title, heading, text, markdown string) Chunk {
		if markdown == "" {
			markdown = text
		}
		c := Chunk{ID: path + "#" + heading, PagePath: path, URL: "https://docs.example/" + path, PageTitle: title,
			Heading: heading, Breadcrumb: []string{title}, Text: text, Markdown: markdown}
		if heading != "" {
			c.Breadcrumb = append(c.Breadcrumb, heading)
			c.URL += "#" + heading
		}
		return c
	}
	return []Chunk{
		page("workspaces", "Workspaces", "", "Every notebook lives in exactly one workspace. Owners decide who may read and edit it.", ""),
		page("workspaces", "Workspaces", "roles", "Owners, editors and readers: an owner grants roles from the members list.", ""),
		page("start", "Getting started", "",
			"Create your first notebook, then share it with colleagues through a team space.",
			"Create your first notebook, then share it with colleagues through a [team space](https://docs.example/workspaces)."),
		page("start", "Getting started", "shortcuts", "Press the slash key to open the command menu anywhere.", ""),
		page("sync", "Sync", "",
			"Quillpad copies each notebook to every device you use.\nDevice sync (also called mirroring) starts when you sign in.", ""),
		page("offline", "Offline edits", "", "Edits made without a connection wait on the device until the sync service is reachable.", ""),
		page("glossary", "Glossary", "",
			"Checkpoint: a saved revision of a notebook you can return to.\nTag: a label on a notebook.",
			"- **Checkpoint**: a saved revision of a notebook you can return to.\n- **Tag**: a label on a notebook."),
		page("history", "History", "", "Every revision of a notebook is kept for ninety days; restore any of them from the history panel.", ""),
		page("billing", "Billing", "", "Plans are billed monthly per member; invoices arrive by email.", ""),
		page("export", "Export", "", "Download a notebook as Markdown or PDF from its menu.", ""),
	}
}

// TestMineRelations: the pairs a link, a parenthesised other name and a
// glossary entry state are mined; words of the same statement that are the
// same on both sides are not paired.
func TestMineRelations(t *testing.T) {
	t.Parallel()
	di := Build(relateFixture(), 1)
	for _, pair := range [][2]string{
		{"team", "workspac"}, {"space", "workspac"}, // link text → page title
		{"mirror", "sync"},      // "(also called …)"
		{"checkpoint", "revis"}, // glossary entry
	} {
		if !relatedTo(di, pair[0], pair[1]) || !relatedTo(di, pair[1], pair[0]) {
			t.Errorf("%s ↔ %s not mined; related: %v", pair[0], pair[1], di.related)
		}
	}
	for w, rs := range di.related {
		if len(rs) > maxRelated {
			t.Errorf("%s has %d relations", w, len(rs))
		}
		for _, r := range rs {
			if r.token == w || r.strength <= 0 || r.strength > 1 {
				t.Errorf("%s: relation %+v", w, r)
			}
		}
	}
}

func relatedTo(di *Index, word, other string) bool {
	return slices.ContainsFunc(di.related[word], func(r relatedTerm) bool { return r.token == other })
}

// TestRelatedTermsFindPage: a reader's words that only the guides use find
// the page written in the reference's words, below a page that has them,
// and the related words leave the score's scale alone.
func TestRelatedTermsFindPage(t *testing.T) {
	t.Parallel()
	di := Build(relateFixture(), 1)
	q := Query{Terms: ParseQuery("roles in a team space", "en"), Limit: 10}
	pages := hitPages(di.Search(q))
	if !slices.Contains(pages, "workspaces") {
		t.Fatalf("the workspaces page not found through its related words: %q", pages)
	}

	plain := Build(relateFixture(), 1)
	plain.related = nil
	if got := hitPages(plain.Search(Query{Terms: ParseQuery("checkpoint", "en"), Limit: 10})); slices.Contains(got, "history") {
		t.Fatalf("without relations the history page matches: %q", got)
	}
	got := hitPages(di.Search(Query{Terms: ParseQuery("checkpoint", "en"), Limit: 10}))
	if len(got) < 2 || got[0] != "glossary" || !slices.Contains(got, "history") {
		t.Errorf("checkpoint: %q, want the glossary first and the history page through \"revision\"", got)
	}

	// The glossary's own score does not change with the words added.
	with := di.Search(Query{Terms: ParseQuery("checkpoint", "en"), Limit: 1})
	without := plain.Search(Query{Terms: ParseQuery("checkpoint", "en"), Limit: 1})
	if len(with) != 1 || len(without) != 1 || with[0].Score < without[0].Score {
		t.Errorf("scores with relations %v, without %v", with, without)
	}
}

func hitPages(hits []Hit) []string {
	var pages []string
	for _, h := range hits {
		if !slices.Contains(pages, h.PagePath) {
			pages = append(pages, h.PagePath)
		}
	}
	return pages
}

// TestRelatedSnapshot: the related words survive a snapshot.
func TestRelatedSnapshot(t *testing.T) {
	t.Parallel()
	di := Build(relateFixture(), 3)
	if len(di.related) == 0 {
		t.Fatal("no relations mined")
	}
	_, got, err := DecodeSnapshot(encodeSnapshot(t, di, AnalysisFingerprint()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.related, di.related) {
		t.Errorf("related read back %v, written %v", got.related, di.related)
	}
}

// TestHeadingPathMatches: a passage is found by the words of where it sits
// (navigation group, page title, parent headings) when its text has none
// of them.
func TestHeadingPathMatches(t *testing.T) {
	t.Parallel()
	chunks := relateFixture()
	chunks = append(chunks, Chunk{ID: "run/server#disk", PagePath: "run/server", URL: "https://docs.example/run/server#disk",
		PageTitle: "Running your own server", Heading: "Disk", Breadcrumb: []string{"Operate", "Running your own server", "Prerequisites", "Disk"},
		Text: "Reserve twenty gigabytes for attachments and the search index."})
	di := Build(chunks, 1)
	hits := di.Search(Query{Terms: ParseQuery("prerequisites to operate a server?", "en"), Limit: 3})
	if len(hits) == 0 || hits[0].ID != "run/server#disk" {
		t.Errorf("hits %v, want the disk section first", hitPages(hits))
	}
}
