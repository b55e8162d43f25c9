package assistant

import (
	"bytes"
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// maxTermBits is how many distinct question words an extractive answer
// matches: one bit each in a mask.
const maxTermBits = 64

// termSet is the question's words as the index analyses them (engine.Words:
// whole words, folded, stemmed), stop words left out, each with a weight:
// a word that few of the sections read holds says more than one most of
// them hold. Matching compares whole words, never parts of words.
type termSet struct {
	ids    map[string]int
	weight []float64
	// prefixes are the first letters of each word, lower-case ASCII, that
	// any text holding it holds: a stem keeps the start of its word. A
	// line of ASCII without one of them holds no question word, and is not
	// analysed. anyText is set when a word is not ASCII.
	prefixes []string
	anyText  bool
	lower    []byte // mayHold's buffer: a termSet serves one answer
}

// newTermSet takes the words of the question that engine.ParseQuery keeps
// (it drops stop words and one-letter words), analysed as the index
// analyses text, all weighing 1 until weigh.
func newTermSet(question string) *termSet {
	ts := &termSet{ids: map[string]int{}}
	add := func(text string) {
		engine.Words(text, func(_, w string) {
			if _, ok := ts.ids[w]; ok || len(ts.ids) == maxTermBits {
				return
			}
			ts.ids[w] = len(ts.weight)
			ts.weight = append(ts.weight, 1)
			if !isASCII(w) {
				ts.anyText = true
			}
			ts.prefixes = append(ts.prefixes, w[:max(1, min(4, len(w)-1))])
		})
	}
	for _, t := range engine.ParseQuery(question, engine.DetectLanguage(question)) {
		// A phrase holds its stop words; a single word never is one. A
		// term the analysis added (a synonym, a joined form) is no word
		// the reader asked about.
		if !t.Expansion() && (len(t.Words) == 1 || t.Required) {
			for _, w := range t.Words {
				add(w)
			}
		}
	}
	return ts
}

// empty reports whether the question has no word to match.
func (ts *termSet) empty() bool { return len(ts.weight) == 0 }

// mask has bit k set when text holds the question's word k.
func (ts *termSet) mask(text string) uint64 {
	var m uint64
	if ts.empty() || !ts.mayHold(text) {
		return 0
	}
	engine.Tokens(text, func(raw string) {
		if !ts.mayBe(raw) {
			return
		}
		if k, ok := ts.ids[engine.Stem(raw)]; ok {
			m |= 1 << k
		}
	})
	return m
}

// mayBe reports whether a token of text may be a question word once
// folded and stemmed: it is not ASCII, or it starts with the first letters
// of one, in any case. It spares stemming the tokens that cannot be one.
func (ts *termSet) mayBe(raw string) bool {
	if ts.anyText || !isASCII(raw) {
		return true
	}
	for _, p := range ts.prefixes {
		if len(raw) >= len(p) && strings.EqualFold(raw[:len(p)], p) {
			return true
		}
	}
	return false
}

// score is the weight of the words of a mask.
func (ts *termSet) score(m uint64) float64 {
	s := 0.0
	for ; m != 0; m &= m - 1 {
		s += ts.weight[bits.TrailingZeros64(m)]
	}
	return s
}

// weigh sets each word's weight from the masks of n texts (sections): the
// fewer hold it, the more it weighs (an inverse document frequency). A
// word none holds keeps weight 1; it matches nothing anyway.
func (ts *termSet) weigh(masks []uint64) {
	n := float64(len(masks))
	for k := range ts.weight {
		df := 0
		for _, m := range masks {
			if m&(1<<k) != 0 {
				df++
			}
		}
		if df > 0 {
			ts.weight[k] = math.Log(1 + n/float64(df))
		}
	}
}

// mayHold reports whether text may hold a question word: it is not ASCII,
// or a word of it starts with the first letters of one, in any case.
// Analysing text costs far more than this look; whether a word is there
// is for mask to say.
func (ts *termSet) mayHold(text string) bool {
	if ts.anyText || !isASCII(text) {
		return true
	}
	ts.lower = ts.lower[:0]
	for i := 0; i < len(text); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		ts.lower = append(ts.lower, c)
	}
	for _, p := range ts.prefixes {
		for from := 0; ; {
			i := bytes.Index(ts.lower[from:], []byte(p))
			if i < 0 {
				break
			}
			if i += from; wordStart(text, i) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// wordStart reports whether a word of ASCII text may start at byte i: the
// text's start, after a byte that is no letter or digit, or at a capital
// (a camel-case part, "Config" in "maxConfig").
func wordStart(text string, i int) bool {
	return i == 0 || !isAlnum(text[i-1]) || 'A' <= text[i] && text[i] <= 'Z'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
