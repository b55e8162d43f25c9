package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxTerms bounds the clauses of one query: a pasted page of text should not
// become a thousand-way OR.
const maxTerms = 48

// ParseQuery turns a reader's text into query terms:
//
//   - "quoted phrases" become required phrases;
//   - other words are optional alternatives, ranked by the engine; stop words
//     of English and of lang (see DetectLanguage) are dropped, and so are
//     one-letter words;
//   - a compound written without spaces ("CLAUDE.md", "data/prices.json",
//     "MY_ENV_VAR") is searched as the phrase of its parts and as each part;
//   - a camel-case word is searched whole and as its parts;
//   - a CJK run is searched as its character bigrams;
//   - the last word, when the text does not end in a space or punctuation
//     (someone still typing), also matches as a prefix.
//
// Stemming is left to the engine.
func ParseQuery(text, lang string) []Term {
	p := queryParser{lang: lang, seen: map[string]bool{}}
	text = normalizeQuotes(text)
	typingAtEnd := endsInWord(text)
	free := func(s string, last bool) {
		fields := strings.Fields(s)
		for n, raw := range fields {
			p.word(raw, last && typingAtEnd && n == len(fields)-1)
		}
	}
	rest := text
	for {
		i := strings.IndexByte(rest, '"')
		if i < 0 {
			free(rest, true)
			break
		}
		j := strings.IndexByte(rest[i+1:], '"')
		if j < 0 {
			free(rest[:i]+" "+rest[i+1:], true)
			break
		}
		free(rest[:i], false)
		p.phrase(rest[i+1 : i+1+j])
		rest = rest[i+1+j+1:]
	}
	return p.terms
}

type queryParser struct {
	lang  string
	terms []Term
	seen  map[string]bool
	// prev is the last word kept, while no stop word or punctuation has
	// come after it: two such neighbours are also searched as a phrase.
	prev string
}

func (p *queryParser) add(t Term) {
	if len(p.terms) >= maxTerms || len(t.Words) == 0 {
		return
	}
	key := strings.Join(t.Words, " ")
	if t.Prefix {
		key += "*"
	}
	if t.Required {
		key = "+" + key
	}
	if p.seen[key] {
		return
	}
	p.seen[key] = true
	p.terms = append(p.terms, t)
}

func (p *queryParser) stop(w string) bool {
	return utf8.RuneCountInString(w) < 2 || stopEN(w) || (p.lang != "en" && stopWord(p.lang, w))
}

// phrase adds a quoted phrase as a required term.
func (p *queryParser) phrase(s string) {
	p.prev = ""
	var words []string
	for _, seg := range segments(s) {
		if seg.cjk {
			words = append(words, bigrams([]rune(seg.text))...)
			continue
		}
		words = append(words, strings.ToLower(seg.text))
	}
	p.add(Term{Words: words, Required: true})
}

// word adds the terms of one whitespace-separated word.
func (p *queryParser) word(raw string, typing bool) {
	segs := segments(raw)
	// A compound is a run of word segments joined by punctuation other
	// than an apostrophe, with no CJK inside.
	var run []segment
	flush := func(last bool) {
		defer func() { run = run[:0] }()
		if len(run) == 0 {
			return
		}
		if len(run) > 1 {
			words := make([]string, len(run))
			for i, s := range run {
				words[i] = strings.ToLower(s.text)
			}
			p.add(Term{Words: words})
		}
		for i, s := range run {
			lw := strings.ToLower(s.text)
			if p.stop(lw) {
				p.prev = ""
				continue
			}
			prefix := typing && last && i == len(run)-1 && utf8.RuneCountInString(lw) >= 3
			if p.prev != "" && len(run) == 1 {
				// Neighbouring words ("audit trail", "cookie manager")
				// rank higher where they appear together.
				p.add(Term{Words: []string{p.prev, lw}, Prefix: prefix})
			}
			p.prev = lw
			p.add(Term{Words: []string{lw}, Prefix: prefix})
			if !upperAfterFirst(s.text) {
				continue // camelParts would keep it whole
			}
			if parts := camelParts(s.text); len(parts) > 1 {
				for _, part := range parts {
					if lp := strings.ToLower(part); !p.stop(lp) {
						p.add(Term{Words: []string{lp}})
					}
				}
			}
		}
	}
	for _, s := range segs {
		switch {
		case s.cjk:
			flush(false)
			p.prev = ""
			for _, bg := range bigrams([]rune(s.text)) {
				p.add(Term{Words: []string{bg}})
			}
		case s.apostrophe:
			// "can't", "l'API": the apostrophe separates words, it does
			// not join a compound.
			flush(false)
			run = append(run, s)
		default:
			run = append(run, s)
		}
	}
	flush(true)
	if r, _ := utf8.DecodeLastRuneInString(raw); !isWordRune(r) || len(segs) == 0 || segs[len(segs)-1].cjk {
		p.prev = ""
	}
}

// segment is a run of word characters in a raw word.
type segment struct {
	text string
	cjk  bool
	// apostrophe is true when an apostrophe separates it from the
	// previous segment.
	apostrophe bool
}

// segments splits s into runs of word characters, CJK runs apart.
func segments(s string) []segment {
	var out []segment
	i := 0
	apos := false
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			if r == '\'' || r == '’' {
				apos = true
			}
			i += size
			continue
		}
		cjk := isCJK(r)
		j := i + size
		for j < len(s) {
			r2, s2 := utf8.DecodeRuneInString(s[j:])
			if !isWordRune(r2) || isCJK(r2) != cjk {
				break
			}
			j += s2
		}
		out = append(out, segment{text: s[i:j], cjk: cjk, apostrophe: apos && len(out) > 0})
		apos = false
		i = j
	}
	return out
}

// endsInWord reports whether text ends in a letter or digit, as text still
// being typed does.
func endsInWord(text string) bool {
	r, _ := utf8.DecodeLastRuneInString(text)
	return r != utf8.RuneError && isWordRune(r) && !isCJK(r) && !unicode.IsSpace(r)
}

// normalizeQuotes turns typographic quotation marks into '"'. None of them
// is ASCII, so plain ASCII text is returned as it is.
func normalizeQuotes(s string) string {
	if isPlainASCII(s) {
		return s
	}
	return quoteMarks.Replace(s)
}

// quoteMarks is built once: a Replacer is safe for concurrent use, and
// building one costs a trie of allocations.
var quoteMarks = strings.NewReplacer("“", `"`, "”", `"`, "„", `"`, "«", `"`, "»", `"`, "「", `"`, "」", `"`)

// upperAfterFirst reports whether w has an upper-case letter after its first
// rune: only there does camelParts split a word.
func upperAfterFirst(w string) bool {
	_, size := utf8.DecodeRuneInString(w)
	for _, r := range w[size:] {
		if r < utf8.RuneSelf && r >= 'A' && r <= 'Z' || r >= utf8.RuneSelf && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}
