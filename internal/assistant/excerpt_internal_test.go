package assistant

import (
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search"
)

// markdownSection is a long section of Markdown: prose, an indented YAML
// block, a table and a long shell block.
var markdownSection = strings.Join([]string{
	"## Configure the kettle",
	"",
	strings.Repeat("The kettle reads its settings when it starts. ", 6),
	"",
	"```yaml title=\"kettle.yaml\"",
	"kettle:",
	"  water:",
	"    hardness: soft",
	"  steps:",
	"    - boil",
	"```",
	"",
	strings.Repeat("Each tea wants its own time. ", 6),
	"",
	"| Tea | Minutes | Temperature |",
	"| --- | ---: | --- |",
	"| Green | 2 | 80 °C |",
	"| Black | 4 | 95 °C |",
	"| Oolong | 3 | 90 °C |",
	"| White | 5 | 75 °C |",
	"",
	strings.Repeat("Descale the kettle every month. ", 6),
	"",
	"```sh",
	strings.Repeat("kettle descale --strength mild --rinse 3\n", 20) + "```",
	"",
	"Done.",
}, "\n")

// quoted writes q and removes the block quote's markers, giving back the
// Markdown a reader's renderer sees inside the quote.
func quoted(q quote) string {
	var b strings.Builder
	q.write(&b)
	var out []string
	for line := range strings.SplitSeq(strings.TrimSuffix(b.String(), "\n"), "\n") {
		out = append(out, strings.TrimPrefix(strings.TrimPrefix(line, ">"), " "))
	}
	return strings.Join(out, "\n")
}

func TestExcerptKeepsBlocksWhole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		question string
		// want are the lines the quote must hold, in order, each whole.
		want []string
	}{
		{"code block", "where is the water hardness set", []string{"```yaml title=\"kettle.yaml\"", "kettle:", "  water:", "    hardness: soft", "  steps:", "    - boil", "```"}},
		{"table row", "how many minutes for oolong", []string{"| Tea | Minutes | Temperature |", "| --- | ---: | --- |", "| Oolong | 3 | 90 °C |"}},
		{"long code block", "descale strength rinse", []string{"```sh", "kettle descale --strength mild --rinse 3", "```"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := excerpt(markdownSection, newTermSet(tt.question), maxExtractiveChars)
			got := quoted(q)
			lines := strings.Split(got, "\n")
			at := 0
			for _, w := range tt.want {
				i := indexFrom(lines, at, w)
				if i < 0 {
					t.Fatalf("quote lacks the line %q after line %d:\n%s", w, at, got)
				}
				at = i + 1
			}
			// Every code block the quote opens it closes, and "…" stays
			// out of code and tables.
			spans := mdblock.Spans(lines)
			for _, s := range spans {
				if s.Kind == mdblock.Fence && !s.Closed {
					t.Errorf("the quote leaves a code block open:\n%s", got)
				}
				for _, l := range lines[s.From : s.To+1] {
					if l == ellipsis {
						t.Errorf("an ellipsis inside a block:\n%s", got)
					}
				}
			}
			if len(got) > 2*maxExtractiveChars {
				t.Errorf("a quote of %d bytes", len(got))
			}
		})
	}
}

func indexFrom(lines []string, from int, want string) int {
	for i := from; i < len(lines); i++ {
		if lines[i] == want {
			return i
		}
	}
	return -1
}

func TestChunkTextKeepsIndentation(t *testing.T) {
	t.Parallel()
	h := search.Hit{Chunk: search.Chunk{Text: "flat", Markdown: "prev\n\n    indented code\n\n", MarkdownOverlap: len("prev\n")}}
	if got := chunkText(h); got != "    indented code" {
		t.Errorf("chunkText = %q", got)
	}
	if got := chunkText(search.Hit{Chunk: search.Chunk{Text: "  plain text  "}}); got != "  plain text" {
		t.Errorf("chunkText of a chunk without Markdown = %q", got)
	}
	// The parts of a section are joined inside an open code block on the
	// next line, Markdown blocks apart.
	if got := joinParts("Intro\n\n```sh\nstep one", "step two\n```"); got != "Intro\n\n```sh\nstep one\nstep two\n```" {
		t.Errorf("joinParts in a code block = %q", got)
	}
	if got := joinParts("Intro\n\nMore", "Next"); got != "Intro\n\nMore\n\nNext" {
		t.Errorf("joinParts of blocks = %q", got)
	}
}
