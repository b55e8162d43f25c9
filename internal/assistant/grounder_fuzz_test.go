package assistant

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// FuzzGrounder feeds a model's answer, hostile or broken, to the grounder
// in pieces: mark mode must send the text unchanged, and every span of
// either mode must cover, in order, text that was sent.
func FuzzGrounder(f *testing.F) {
	for _, s := range []string{
		"The relay listens on port 8080 [1]. It speaks Gopher [2].",
		"- a [1]\n- b. c [9]\n\n```sh\nx\n```\n| a | b |\n|---|---|\n| 1 | 2 |",
		"e.g. `x. y` [1][2, 3] 1.5. ”Done.” [^1]\n# H\n***\n> quoted. [1]",
		"```\nunclosed [1",
		"这是一句。[1]😀 emoji. [1]",
	} {
		f.Add(s, 3, false)
	}
	passages := []groundedPassage{newGroundedPassage("Relay", testPassageText), newGroundedPassage("", "b c")}
	f.Fuzz(func(t *testing.T, answer string, piece int, strict bool) {
		if !utf8.ValidString(answer) || piece < 1 {
			return
		}
		var sent strings.Builder
		var spans []groundedSpan
		g := newGrounder(passages, strict, func(s string) error { sent.WriteString(s); return nil },
			func(s groundedSpan) error { spans = append(spans, s); return nil })
		for rest := answer; rest != ""; {
			n := min(piece, len(rest))
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++
			}
			if err := g.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		out := sent.String()
		if !strict && out != answer {
			t.Fatalf("mark mode sent %q of %q", out, answer)
		}
		units := utf16.Encode([]rune(out))
		last := 0
		for _, s := range spans {
			if s.start < last || s.end < s.start || s.end > len(units) {
				t.Fatalf("span %+v out of order or range (text of %d units, last end %d)", s, len(units), last)
			}
			if strict && !s.supported {
				t.Fatalf("strict mode sent an unsupported span %+v", s)
			}
			last = s.end
		}
	})
}
