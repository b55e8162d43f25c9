package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text analysis of the index and of queries. Tokens are runs of letters and
// digits, lower-cased and stemmed (English); before that:
//
//   - Chinese, Japanese and Korean text has no spaces between words, so a
//     run of such characters becomes its overlapping character bigrams
//     ("侧边栏" → "侧边 边栏"), a word-free way to match that works well for
//     short queries.
//   - Identifiers written in camel case ("randomUUID") are followed by their
//     parts ("random UUID"), so that the words a reader types find them.

// Fields is a chunk's text per ranked field.
type Fields struct {
	// Title is the page title.
	Title string
	// Headings are the navigation groups above the page and the headings
	// down to the chunk.
	Headings string
	// Keywords is the page-level text that is searched but not shown.
	Keywords string
	// Body is the chunk's text.
	Body string
}

// rawFields is a chunk's text per ranked field, before analysis.
func rawFields(c Chunk) Fields {
	var heads []string
	for _, b := range c.Breadcrumb {
		if b != c.PageTitle {
			heads = append(heads, b)
		}
	}
	return Fields{Title: c.PageTitle, Headings: strings.Join(heads, "\n"), Keywords: c.Keywords, Body: c.Text}
}

// Analyze rewrites text for indexing: CJK runs become bigrams and camel-case
// identifiers are followed by their parts. Other text is left for the
// tokenizer.
func Analyze(text string) string {
	if isPlainASCII(text) && !hasCamel(text) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/4)
	analyze(text, func(start, end int, _ bool) {
		if start < 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(text[start:end])
		}
	})
	return b.String()
}

// analyze writes Analyze(text) as a sequence of pieces: emit(start, end,
// word) for text[start:end], where word says the piece is a run of word
// runes (so of token runes), and emit(-1, -1, false) for a space put in.
// Every piece of the
// text starts and ends where a rune (or an invalid byte) of the text does,
// and two pieces written one after the other with no space between are next
// to each other in the text too, so a token of the result is always a
// substring of text (see analyzedTokens).
func analyze(text string, emit func(start, end int, word bool)) {
	i := 0
	var at []int
	var cutBuf [8]int
	cuts := cutBuf[:0]
	for i < len(text) {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch {
		case isCJK(r):
			// The run's rune offsets: bigram k is text[at[k]:at[k+2]].
			at = append(at[:0], i)
			j := i
			for j < len(text) {
				r2, s2 := decodeRune(text, j)
				if !isCJK(r2) {
					break
				}
				j += s2
				at = append(at, j)
			}
			emit(-1, -1, false)
			if len(at) == 2 {
				emit(at[0], at[1], false)
			}
			for k := 0; k+2 < len(at); k++ {
				if k > 0 {
					emit(-1, -1, false)
				}
				emit(at[k], at[k+2], false)
			}
			emit(-1, -1, false)
			i = j
		case r < utf8.RuneSelf && isAlnumASCII(byte(r)) || r >= utf8.RuneSelf && isWordRune(r):
			// upper: an upper-case letter after the word's first rune,
			// where alone camelParts splits it (see upperAfterFirst).
			j, upper := i+size, false
			for j < len(text) {
				if c := text[j]; c < utf8.RuneSelf {
					if !isAlnumASCII(c) {
						break
					}
					upper = upper || c >= 'A' && c <= 'Z'
					j++
					continue
				}
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isWordRune(r2) || isCJK(r2) {
					break
				}
				upper = upper || unicode.IsUpper(r2)
				j += s2
			}
			emit(i, j, true)
			if upper {
				if cuts = camelCuts(text[i:j], cuts); len(cuts) > 0 {
					p := i
					for _, c := range cuts {
						emit(-1, -1, false)
						emit(p, i+c, true)
						p = i + c
					}
					emit(-1, -1, false)
					emit(p, j, true)
				}
			}
			i = j
		default:
			// A run of other runes is one piece: Analyze writes them as
			// they are, one after the other.
			j := i + size
			for j < len(text) {
				if c := text[j]; c < utf8.RuneSelf {
					if isAlnumASCII(c) {
						break
					}
					j++
					continue
				}
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if isWordRune(r2) || isCJK(r2) {
					break
				}
				j += s2
			}
			emit(i, j, false)
			i = j
		}
	}
}

// isAlnumASCII reports whether c is an ASCII letter or digit: the word
// runes, and the token runes, of ASCII.
func isAlnumASCII(c byte) bool {
	return c-'a' < 26 || c-'A' < 26 || c-'0' < 10
}

// bigrams returns a CJK run's bigrams (or its single character).
func bigrams(run []rune) []string {
	if len(run) == 1 {
		return []string{string(run)}
	}
	out := make([]string, 0, len(run)-1)
	for k := 0; k+1 < len(run); k++ {
		out = append(out, string(run[k:k+2]))
	}
	return out
}

// decodeRune is utf8.DecodeRuneInString(text[i:]), quicker for ASCII.
func decodeRune(text string, i int) (rune, int) {
	if c := text[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(text[i:])
}

// isCJK reports whether r is written without spaces between words: Han,
// Hiragana, Katakana and Hangul.
func isCJK(r rune) bool {
	// Below U+1100, from U+1200 to U+2E7F (punctuation, symbols, arrows)
	// and from U+1F201 to U+1FFFF (emoji) none of the scripts has a rune.
	if r < 0x1100 || r >= 0x1200 && r < 0x2e80 || r > 0x1f200 && r < 0x20000 {
		return false
	}
	return isCJKScript(r)
}

func isCJKScript(r rune) bool {
	if r >= 0x4e00 && r <= 0x9fff {
		return true // CJK Unified Ideographs, most of Chinese and Japanese text
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// isWordRune is what a tokenizer keeps inside a word: letters, digits and
// combining marks.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// hasCamel reports whether s has a lower-case letter followed by an upper-case
// one (ASCII only; a quick test before the full pass).
func hasCamel(s string) bool {
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// camelParts splits a camel-case word: "randomUUID" → random, UUID;
// "HTTPServer" → HTTP, Server; "getID2" → get, ID2. A word without case
// changes is returned alone.
func camelParts(w string) []string {
	rs := []rune(w)
	var parts []string
	start := 0
	for k := 1; k < len(rs); k++ {
		prev, cur := rs[k-1], rs[k]
		split := false
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(cur):
			split = true
		case unicode.IsUpper(prev) && unicode.IsUpper(cur) && k+1 < len(rs) && unicode.IsLower(rs[k+1]):
			split = true
		}
		if split {
			parts = append(parts, string(rs[start:k]))
			start = k
		}
	}
	if start == 0 {
		return []string{w}
	}
	parts = append(parts, string(rs[start:]))
	// "JUnit", "iPhone": a one-letter part is a prefix, not a word.
	for _, p := range parts {
		if utf8.RuneCountInString(p) < 2 {
			return []string{w}
		}
	}
	return parts
}

// camelCuts is camelParts without allocating: it returns, appended to
// cuts[:0], the byte offsets in w where its parts after the first start,
// none when camelParts would keep w whole. Like camelParts it reads an
// invalid byte as one rune (U+FFFD).
func camelCuts(w string, cuts []int) []int {
	cuts = cuts[:0]
	if w == "" {
		return cuts
	}
	prev, size := decodeRune(w, 0)
	start := 0
	for k := size; k < len(w); k += size {
		var cur rune
		cur, size = decodeRune(w, k)
		split := false
		switch {
		case unicode.IsLower(prev) && unicode.IsUpper(cur):
			split = true
		case unicode.IsUpper(prev) && unicode.IsUpper(cur) && k+size < len(w):
			next, _ := decodeRune(w, k+size)
			split = unicode.IsLower(next)
		}
		if split {
			// "JUnit", "iPhone": a one-letter part is a prefix, not a word.
			if utf8.RuneCountInString(w[start:k]) < 2 {
				return cuts[:0]
			}
			cuts = append(cuts, k)
			start = k
		}
		prev = cur
	}
	if len(cuts) > 0 && utf8.RuneCountInString(w[start:]) < 2 {
		return cuts[:0]
	}
	return cuts
}

// Words calls fn with each word of text as the index holds it: analyzed
// (CJK bigrams, camel-case parts after the whole), folded to lower case and
// stemmed. raw is the word as written in text. A caller that asks whether
// a text holds a word of a question compares these, so that whole words
// meet and parts of words never do ("tire" is not in "entire").
func Words(text string, fn func(raw, word string)) {
	analyzedTokens(text, func(raw string) { fn(raw, stemToken(raw)) })
}

// Tokens calls fn with each word of text as written, as Words does before
// it folds and stems them: Words(text, fn) is Tokens(text, func(raw string)
// { fn(raw, Stem(raw)) }). A caller looking for a few words may stem only
// the tokens that can be one of them, stemming costing most.
func Tokens(text string, fn func(raw string)) { analyzedTokens(text, fn) }

// Stem folds and stems one token of Tokens into the word Words gives.
func Stem(raw string) string { return stemToken(raw) }

// PlainASCII reports whether text is ASCII only: a question in
// it is most likely English.
func PlainASCII(text string) bool { return isPlainASCII(text) }
