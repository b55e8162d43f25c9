package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"golang.org/x/text/unicode/norm"
)

// The in-memory index's tokenizer, applied to analyzed text (see Analyze)
// and to query words alike: runs of letters, digits and private-use
// characters are tokens; case and accents are folded; English words are
// reduced to their Porter stems ("configuring" → "configur"). It is the
// tokenization SQLite FTS5 applies with "porter unicode61 remove_diacritics
// 2", which the ranking was tuned on.

// maxStemBytes leaves longer tokens as they are, as FTS5's porter does.
const maxStemBytes = 64

// tokens calls fn with each token of text, stemmed, in order.
func tokens(text string, fn func(tok string)) {
	rawTokens(text, func(raw string) { fn(stemToken(raw)) })
}

// analyzedTokens calls fn with the tokens of Analyze(text) as written, in
// order, each a substring of text, without building the analyzed string.
// Plain ASCII text, the usual case, is tokenized as it stands, each
// camel-case word followed by its parts.
func analyzedTokens(text string, fn func(raw string)) {
	analyzedSpans(text, func(start, end int) { fn(text[start:end]) })
}

// analyzedSpans is analyzedTokens giving each token as its place in text:
// fn(start, end) for text[start:end].
func analyzedSpans(text string, fn func(start, end int)) {
	if !isPlainASCII(text) {
		// Analyze's pieces, tokenized as rawTokens would tokenize their
		// concatenation: a token runs on across pieces only where they
		// are next to each other in text (analyze puts a space wherever
		// they are not), so it is text[start:end].
		start, end := -1, -1
		flush := func() {
			if start >= 0 {
				fn(start, end)
				start = -1
			}
		}
		analyze(text, func(from, to int, word bool) {
			if from < 0 {
				flush()
				return
			}
			if from != end {
				flush()
			}
			if word {
				if start < 0 {
					start = from
				}
				end = to
				return
			}
			for i := from; i < to; {
				if text[i] < utf8.RuneSelf {
					// Not a word rune, so not a token rune either.
					flush()
					i++
					continue
				}
				r, size := utf8.DecodeRuneInString(text[i:to])
				if isTokenRune(r) {
					if start < 0 {
						start = i
					}
					end = i + size
				} else {
					flush()
				}
				i += size
			}
		})
		flush()
		return
	}
	camel := hasCamel(text)
	var cutBuf [8]int
	cuts := cutBuf[:0]
	rawTokenSpans(text, func(i, j int) {
		fn(i, j)
		if w := text[i:j]; camel && hasInnerUpper(w) {
			if cuts = camelCuts(w, cuts); len(cuts) > 0 {
				p := 0
				for _, c := range cuts {
					fn(i+p, i+c)
					p = c
				}
				fn(i+p, j)
			}
		}
	})
}

// hasInnerUpper reports whether an ASCII word has an upper-case letter after
// its first: camelParts splits only there.
func hasInnerUpper(w string) bool {
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' {
			return true
		}
	}
	return false
}

// rawTokens calls fn with each token of text as written, in order.
func rawTokens(text string, fn func(raw string)) {
	rawTokenSpans(text, func(i, j int) { fn(text[i:j]) })
}

// rawTokenSpans is rawTokens giving each token as its place in text.
func rawTokenSpans(text string, fn func(i, j int)) {
	i := 0
	for i < len(text) {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
			if !isTokenRune(r) {
				i += size
				continue
			}
		} else if !isAlnumASCII(byte(r)) {
			i++
			continue
		}
		j := i + size
		for j < len(text) {
			if c := text[j]; c < utf8.RuneSelf {
				if !isAlnumASCII(c) {
					break
				}
				j++
				continue
			}
			r2, s2 := utf8.DecodeRuneInString(text[j:])
			if !isTokenRune(r2) {
				break
			}
			j += s2
		}
		fn(i, j)
		i = j
	}
}

// stemToken folds and stems one raw token.
func stemToken(raw string) string {
	st := fold(raw)
	if len(st) > 2 && len(st) <= maxStemBytes && isASCIILetters(st) {
		st = stemASCII(st)
	}
	return st
}

// stemASCII is porterstemmer.StemString for a word of at most maxStemBytes
// ASCII letters: it is stemmed in an array on the stack (a stem is never
// longer than its word), and the start of w itself is returned when the
// stem is w or w cut short, as most stems are, rather than a copy.
func stemASCII(w string) string {
	var word [maxStemBytes]rune
	stem := porterStem(&word, w)
	if sameASCII(stem, w) {
		return w[:len(stem)]
	}
	return string(stem)
}

// porterStem stems a word of at most maxStemBytes ASCII letters in word.
func porterStem(word *[maxStemBytes]rune, w string) []rune {
	runes := word[:0]
	for i := 0; i < len(w); i++ {
		runes = append(runes, rune(w[i]))
	}
	return porterstemmer.Stem(runes)
}

// sameASCII reports whether runes spell the ASCII string s.
func sameASCII(runes []rune, s string) bool {
	for i, r := range runes {
		if r != rune(s[i]) {
			return false
		}
	}
	return true
}

// fold lower-cases a token and strips its accents.
func fold(tok string) string {
	ascii := true
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c >= utf8.RuneSelf {
			ascii = false
			break
		} else if c >= 'A' && c <= 'Z' {
			return fold(strings.ToLower(tok))
		}
	}
	if ascii {
		return tok
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(tok) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	if b.Len() == 0 {
		return strings.ToLower(tok)
	}
	return norm.NFC.String(b.String())
}

func isTokenRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	if r >= 0x4e00 && r <= 0x9fff || r >= 0xac00 && r <= 0xd7a3 {
		return true // CJK Unified Ideographs and Hangul syllables: letters all
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r) ||
		(r >= 0x300 && unicode.Is(unicode.Mn, r))
}

func isASCIILetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
