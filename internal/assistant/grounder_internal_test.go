package assistant

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

// runGrounder feeds an answer to a grounder in pieces of the given size and
// returns the text it sent, its spans and its counts.
func runGrounder(t *testing.T, answer string, piece int, strict bool) (string, []groundedSpan, groundingStats) {
	t.Helper()
	passages := []groundedPassage{
		newGroundedPassage("Relay › Ports", testPassageText),
		newGroundedPassage("Relay › Logs", "Logs go to stderr. Set `RELAY_LOG=debug` for more detail."),
	}
	var sent strings.Builder
	var spans []groundedSpan
	g := newGrounder(passages, strict, func(s string) error { sent.WriteString(s); return nil },
		func(s groundedSpan) error { spans = append(spans, s); return nil })
	for rest := answer; rest != ""; {
		n := min(piece, len(rest))
		for n < len(rest) && rest[n]&0xC0 == 0x80 {
			n++ // whole runes, as the citation filter writes them
		}
		if err := g.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	return sent.String(), spans, g.stats
}

// spanText is the text a span covers, indexed as JavaScript indexes it.
func spanText(text string, s groundedSpan) string {
	u := utf16.Encode([]rune(text))
	return string(utf16.Decode(u[s.start:s.end]))
}

func TestGrounderMarksEachSentence(t *testing.T) {
	t.Parallel()
	const answer = "The relay listens on port 8080 [1]. It also speaks Gopher on port 70 [1].\n\n" +
		"- Logs go to stderr 🙂.\n- Set `RELAY_LOG=debug` for more [2].\n\n```sh\nrelay start --port 9090\n```"
	for _, piece := range []int{1, 3, 7, len(answer)} {
		sent, spans, stats := runGrounder(t, answer, piece, false)
		if sent != answer {
			t.Fatalf("piece %d: mark mode sent %q", piece, sent)
		}
		type got struct {
			text      string
			sources   []string
			supported bool
		}
		var gs []got
		for _, s := range spans {
			gs = append(gs, got{spanText(sent, s), s.sources, s.supported})
		}
		want := []got{
			{"The relay listens on port 8080 [1].", []string{"src_1"}, true},
			{"It also speaks Gopher on port 70 [1].", []string{"src_1"}, false},
			// No marker: the last citations before it, which do not hold it.
			{"Logs go to stderr 🙂.", []string{"src_1"}, false},
			{"Set `RELAY_LOG=debug` for more [2].", []string{"src_2"}, true},
			{"```sh\nrelay start --port 9090\n```", []string{"src_2"}, false},
		}
		if !reflect.DeepEqual(gs, want) {
			t.Fatalf("piece %d: spans\n got %+v\nwant %+v", piece, gs, want)
		}
		if stats.claims != 5 || stats.supported != 2 || stats.left != 0 {
			t.Errorf("piece %d: stats %+v", piece, stats)
		}
		if !reflect.DeepEqual(spans[1].missing, []string{"70", "Gopher"}) {
			t.Errorf("piece %d: missing %q", piece, spans[1].missing)
		}
	}
}

func TestGrounderUncitedSentences(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer string
		sources      [][]string
	}{
		{"the marker later on its line", "The relay listens on port 8080. Set RELAY_PORT to change it [1].",
			[][]string{{"src_1"}, {"src_1"}}},
		{"the last marker before it", "Logs go to stderr [2].\nSet RELAY_LOG=debug for more.",
			[][]string{{"src_2"}, {"src_2"}}},
		{"the first marker after it when none came before", "Logs go to stderr.\n\nSet RELAY_LOG=debug for more [2].",
			[][]string{{"src_2"}, {"src_2"}}},
		{"none at all", "Logs go to stderr.", [][]string{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, spans, _ := runGrounder(t, tc.answer, 2, false)
			var got [][]string
			for _, s := range spans {
				got = append(got, s.sources)
			}
			if !reflect.DeepEqual(got, tc.sources) {
				t.Errorf("sources %q, want %q", got, tc.sources)
			}
		})
	}
}

func TestGrounderStrictLeavesOutUnsupported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, answer, want string
		left               int
	}{
		{"mid paragraph", "The relay listens on port 8080 [1]. It speaks Gopher [1]. Logs go to stderr [2].",
			"The relay listens on port 8080 [1]. Logs go to stderr [2].", 1},
		{"first sentence", "It speaks Gopher [1]. Logs go to stderr [2].", "Logs go to stderr [2].", 1},
		{"list item", "Options:\n\n- Port 8080 is the default [1].\n- Gopher runs on port 70 [1].\n- Logs go to stderr [2].",
			"Options:\n\n- Port 8080 is the default [1].\n- Logs go to stderr [2].", 1},
		{"first sentence of an item", "- Gopher runs on port 70 [1]. Logs go to stderr [2].", "- Logs go to stderr [2].", 1},
		{"code block", "Start it [1]:\n\n```sh\nrelay start --tls\n```\n\nLogs go to stderr [2].", "Start it [1]:\n\nLogs go to stderr [2].", 1},
		{"decline kept", "The documentation does not cover Gopher. Logs go to stderr [2].",
			"The documentation does not cover Gopher. Logs go to stderr [2].", 0},
		{"all left out", "It speaks Gopher [1].", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, piece := range []int{1, 5, len(tc.answer)} {
				sent, spans, stats := runGrounder(t, tc.answer, piece, true)
				if sent != tc.want || stats.left != tc.left {
					t.Fatalf("piece %d: sent %q (left %d), want %q (left %d)", piece, sent, stats.left, tc.want, tc.left)
				}
				for _, s := range spans {
					if !s.supported {
						t.Errorf("strict mode sent an unsupported span %+v", s)
					}
					if txt := spanText(sent, s); !strings.Contains(tc.answer, txt) || txt == "" {
						t.Errorf("span %+v covers %q of %q", s, txt, sent)
					}
				}
			}
		})
	}
}
