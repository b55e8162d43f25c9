package assistant

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestLineMatchesCountsAsContains: lineMatches counts, line by line, what a
// strings.Contains of each word in that line counts, for words that repeat,
// overlap, share their first bytes, are one byte, empty or not ASCII, or
// more than 64, on first and last lines and empty ones.
func TestLineMatchesCountsAsContains(t *testing.T) {
	t.Parallel()
	contains := func(line string, words []string) int {
		n := 0
		for _, w := range words {
			if strings.Contains(line, w) {
				n++
			}
		}
		return n
	}
	alphabet := []string{"a", "b", "ab", "ba", "c", "é", "ü", " ", "-", "instal", "insta", "x", "\n", "\n\n"}
	rng := rand.New(rand.NewPCG(7, 11))
	phrase := func(parts int, newlines bool) string {
		var b strings.Builder
		for range parts {
			p := alphabet[rng.IntN(len(alphabet))]
			if !newlines && strings.Contains(p, "\n") {
				continue
			}
			b.WriteString(p)
		}
		return b.String()
	}
	for range 5000 {
		var words []string
		for range rng.IntN(8) {
			words = append(words, phrase(rng.IntN(3), false))
		}
		if rng.IntN(50) == 0 { // past what one pass keeps track of
			for range 70 {
				words = append(words, phrase(1+rng.IntN(2), false))
			}
		}
		text := phrase(rng.IntN(60), true)
		lines := strings.Split(text, "\n")
		got := lineMatches(text, len(lines), words)
		for i, line := range lines {
			if want := contains(line, words); got[i] != want {
				t.Fatalf("text %q, words %q: line %d (%q) counts %d, want %d", text, words, i, line, got[i], want)
			}
		}
	}
}
