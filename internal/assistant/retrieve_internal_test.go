package assistant

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWordFinderCountsAsContains: a wordFinder counts what a strings.Contains
// of each word counts, for words that repeat, overlap, share a first byte,
// are empty or not ASCII, and for more words than its one-pass search holds.
func TestWordFinderCountsAsContains(t *testing.T) {
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
	alphabet := []string{"a", "b", "ab", "ba", "c", "é", "ü", " ", "-", "instal", "insta", "x"}
	rng := rand.New(rand.NewPCG(7, 11))
	phrase := func(parts int) string {
		var b strings.Builder
		for range parts {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 3000 {
		var words []string
		for range rng.IntN(8) {
			words = append(words, phrase(rng.IntN(3)))
		}
		if rng.IntN(50) == 0 {
			for range 70 {
				words = append(words, phrase(1+rng.IntN(3)))
			}
		}
		line := phrase(rng.IntN(30))
		if got, want := newWordFinder(words).count(line), contains(line, words); got != want {
			t.Fatalf("line %q, words %q: count %d, want %d", line, words, got, want)
		}
	}
}
