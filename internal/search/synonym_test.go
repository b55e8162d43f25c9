package search

import (
	"fmt"
	"testing"
)

// lampDocs is a tiny docs site about a made-up photo archive whose pages
// use the docs' words, not the reader's.
func lampDocs() []Chunk {
	page := func(path, title, text string) Chunk {
		return Chunk{ID: path, PagePath: path, URL: "https://docs.example/" + path, PageTitle: title,
			Breadcrumb: []string{title}, Text: text}
	}
	return []Chunk{
		page("albums/photoshelf", "Grouping pictures", "Create a photoshelf to group the pictures of one trip."),
		page("viewer/dark", "Viewer colours", "Switch the viewer to night mode from its menu."),
		page("viewer/modes", "Viewer modes", "The viewer has a slideshow mode and a grid mode; at night it dims."),
		page("print/paper", "Printing", "Each photo prints on the paper you load."),
	}
}

func TestRetrieverSearchesSynonyms(t *testing.T) {
	t.Parallel()
	mem := NewMemory(newMemSource(), MemoryConfig{CheckEvery: 1 << 62})
	if err := mem.ReplacePages(t.Context(), "lamp", lampDocs(), nil); err != nil {
		t.Fatal(err)
	}
	r := NewRetriever(mem)
	tests := []struct {
		name, query string
		synonyms    [][]string
		want        string
	}{
		{"built-in synonym", "dark mode", nil, "viewer/dark"},
		{"domain synonym", "where is the snapshot rack", [][]string{{"snapshot rack", "photoshelf"}}, "albums/photoshelf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hits, err := r.Retrieve(t.Context(), "lamp", Request{Query: tt.query, Synonyms: tt.synonyms})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 || hits[0].PagePath != tt.want {
				var got []string
				for _, h := range hits {
					got = append(got, fmt.Sprintf("%s %.3f", h.PagePath, h.Score))
				}
				t.Errorf("%q: first hit %v, want %s", tt.query, got, tt.want)
			}
		})
	}
	// A Retriever not made by NewRetriever compiles a domain's table each
	// time.
	bare := &Retriever{idx: mem}
	hits, err := bare.Retrieve(t.Context(), "lamp", Request{Query: "snapshot rack", Synonyms: [][]string{{"snapshot rack", "photoshelf"}}})
	if err != nil || len(hits) == 0 || hits[0].PagePath != "albums/photoshelf" {
		t.Errorf("bare Retriever: %v, %v", hits, err)
	}
}
