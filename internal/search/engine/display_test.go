package engine

import "testing"

func TestChunkDisplay(t *testing.T) {
	t.Parallel()
	md := Chunk{Text: "kettle: on", Overlap: 1, Markdown: "```yaml\nkettle: on\n```\n", MarkdownOverlap: 2}
	if text, overlap := md.Display(); text != md.Markdown || overlap != 2 {
		t.Errorf("Display() = %q, %d; want the Markdown and its overlap", text, overlap)
	}
	// A chunk indexed before chunks kept their Markdown shows its text.
	old := Chunk{Text: "kettle: on", Overlap: 1}
	if text, overlap := old.Display(); text != old.Text || overlap != 1 {
		t.Errorf("Display() = %q, %d; want the text and its overlap", text, overlap)
	}
}
