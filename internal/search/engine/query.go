package engine

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTerms bounds the clauses of one query: a pasted page of text should not
// become a thousand-way OR.
const MaxTerms = 48

// ParseQuery turns a reader's text into query terms:
//
//   - "quoted phrases" become required phrases;
//   - other words are optional alternatives, ranked by relevance; stop words
//     of English and of lang (see DetectLanguage) are dropped, and so are
//     one-letter words;
//   - a compound written without spaces ("CLAUDE.md", "data/prices.json",
//     "MY_ENV_VAR") is searched as the phrase of its parts and as each part;
//   - a camel-case word is searched whole and as its parts;
//   - a CJK run is searched as its character bigrams;
//   - the last word, when the text does not end in a space or punctuation
//     (someone still typing), also matches as a prefix.
//
// Stemming is left to the index's tokenizer.
func ParseQuery(text, lang string) []Term {
	// Room for the terms of text's words: about two a word (the word, and
	// it with its neighbour), so that they are not copied as they come.
	fields := min(strings.Count(text, " ")+1, MaxTerms)
	p := queryParser{lang: lang, terms: make([]Term, 0, 2*fields), words: make([]string, 0, 3*fields)}
	text = normalizeQuotes(text)
	typingAtEnd := endsInWord(text)
	free := func(s string, last bool) {
		// A word is parsed once the next is seen, so that the last one is
		// known.
		held := ""
		for w := range strings.FieldsSeq(s) {
			if held != "" {
				p.word(held, false)
			}
			held = w
		}
		if held != "" {
			p.word(held, last && typingAtEnd)
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
	// words holds the words of the terms: each term's Words is a slice of
	// it, so that a term costs no allocation of its own.
	words []string
	// segs are the segments of the word being parsed.
	segs []segment
	// prev is the last word kept, while no stop word or punctuation has
	// come after it: two such neighbours are also searched as a phrase.
	prev string
}

// add adds the term of words unless the query has it already. The words
// are copied, so the caller's slice is not kept.
func (p *queryParser) add(words []string, prefix, required bool) {
	if len(p.terms) >= MaxTerms || len(words) == 0 {
		return
	}
	for _, t := range p.terms {
		if t.Prefix == prefix && t.Required == required && slices.Equal(t.Words, words) {
			return
		}
	}
	start := len(p.words)
	p.words = append(p.words, words...)
	p.terms = append(p.terms, Term{Words: p.words[start:len(p.words):len(p.words)], Prefix: prefix, Required: required})
}

func (p *queryParser) stop(w string) bool {
	return utf8.RuneCountInString(w) < 2 || stopEN(w) || (p.lang != "en" && stopWord(p.lang, w))
}

// phrase adds a quoted phrase as a required term.
func (p *queryParser) phrase(s string) {
	p.prev = ""
	var words []string
	p.segs = appendSegments(p.segs[:0], s)
	for _, seg := range p.segs {
		if seg.cjk {
			words = append(words, bigrams([]rune(seg.text))...)
			continue
		}
		words = append(words, strings.ToLower(seg.text))
	}
	p.add(words, false, true)
}

// word adds the terms of one whitespace-separated word.
func (p *queryParser) word(raw string, typing bool) {
	p.segs = appendSegments(p.segs[:0], raw)
	segs := p.segs
	// A compound is a run of word segments joined by punctuation other
	// than an apostrophe, with no CJK inside: segs[runStart:i] is the one
	// being read.
	runStart := 0
	for i, s := range segs {
		switch {
		case s.cjk:
			p.compound(segs[runStart:i], false, typing)
			runStart = i + 1
			p.prev = ""
			for _, bg := range bigrams([]rune(s.text)) {
				p.add([]string{bg}, false, false)
			}
		case s.apostrophe:
			// "can't", "l'API": the apostrophe separates words, it does
			// not join a compound.
			p.compound(segs[runStart:i], false, typing)
			runStart = i
		}
	}
	p.compound(segs[runStart:], true, typing)
	if r, _ := utf8.DecodeLastRuneInString(raw); !isWordRune(r) || len(segs) == 0 || segs[len(segs)-1].cjk {
		p.prev = ""
	}
}

// compound adds the terms of the compound run, the last of the word when
// last is true.
func (p *queryParser) compound(run []segment, last, typing bool) {
	if len(run) == 0 {
		return
	}
	if len(run) > 1 {
		var words []string
		for _, s := range run {
			words = append(words, strings.ToLower(s.text))
		}
		p.add(words, false, false)
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
			p.add([]string{p.prev, lw}, prefix, false)
		}
		p.prev = lw
		p.add([]string{lw}, prefix, false)
		if !upperAfterFirst(s.text) {
			continue // camelParts would keep it whole
		}
		if parts := camelParts(s.text); len(parts) > 1 {
			for _, part := range parts {
				if lp := strings.ToLower(part); !p.stop(lp) {
					p.add([]string{lp}, false, false)
				}
			}
		}
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

// appendSegments appends to out the runs of word characters of s, CJK runs
// apart.
func appendSegments(out []segment, s string) []segment {
	first := len(out)
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
		out = append(out, segment{text: s[i:j], cjk: cjk, apostrophe: apos && len(out) > first})
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
