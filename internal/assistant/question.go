package assistant

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// A question's words and names, as the answer's status weighs them against
// the index. Words are compared as the index analyses them (engine.Words):
// whole words, folded and stemmed, so that "tire" never meets "entire".

// qword is a word of substance of the question: not a function word nor a
// word docs use on every page.
type qword struct {
	raw  string // as the reader wrote it
	stem string // as the index holds it
	// part is the part of the question it is in (see questionParts); -1
	// for a word of the text the reader pointed at.
	part int
	// name is set for a word written as a name (see qname).
	name bool
	// field numbers the words as written: the parts of a camel-case word
	// ("OpenAI": open, AI) share their word's.
	field int
}

// qname is a name the reader wrote: capitalised words that do not start a
// sentence ("Azure Key Vault"), an acronym, a camel-case word, or an
// identifier (`--dry-run`, `pkg-name`, `snake_case`, `dotted.name`,
// "arm64"). The docs either mention it or they do not.
type qname struct {
	text  string   // as written
	words []string // its words as written, for asking the index
	part  int
	// loose marks a lower-case word joined by hyphens ("built-in"): a
	// name only when the index knows neither it nor one of its parts.
	loose bool
}

// questionTerms is what a question asks about.
type questionTerms struct {
	words []qword
	names []qname
	parts int
}

// maxContextWords bounds the words taken from the text a reader pointed at:
// a pasted page must not become hundreds of index look-ups.
const maxContextWords = 16

// questionWords analyses a question and the texts the reader pointed at.
func questionWords(question string, context []string) questionTerms {
	lang := engine.DetectLanguage(question)
	var qt questionTerms
	seen := map[string]bool{}
	field := 0
	add := func(raw string, part int, name bool) {
		field++
		if utf8.RuneCountInString(raw) < 2 || engine.StopWord(lang, raw) || genericWord(raw) {
			return
		}
		engine.Words(raw, func(r, stem string) {
			if utf8.RuneCountInString(r) < 2 || seen[stem] || engine.StopWord(lang, r) || genericWord(r) {
				return
			}
			seen[stem] = true
			qt.words = append(qt.words, qword{raw: r, stem: stem, part: part, name: name, field: field})
		})
	}
	parts := questionParts(question)
	qt.parts = len(parts)
	for i, p := range parts {
		fields := questionFields(p)
		var run []questionField // capitalised words in a row
		flush := func() {
			if len(run) == 0 {
				return
			}
			n := qname{part: i}
			texts := make([]string, len(run))
			for k, f := range run {
				texts[k] = f.text
				n.words = append(n.words, f.text)
			}
			n.text = strings.Join(texts, " ")
			qt.names = append(qt.names, n)
			run = run[:0]
		}
		for _, f := range fields {
			kind := nameKind(f)
			switch {
			case kind == nameWord, len(run) > 0 && isNumber(f.text):
				// "Windows 11": a number goes with the name before it.
				run = append(run, f)
			case kind == nameIdentifier, kind == nameCompound:
				flush()
				qt.names = append(qt.names, qname{text: f.text, words: identifierWords(f.text), part: i, loose: kind == nameCompound})
			default:
				flush()
			}
			add(f.text, i, kind == nameWord || kind == nameIdentifier)
			if f.endsClause {
				flush()
			}
		}
		flush()
	}
	n := 0
	for _, c := range context {
		for _, f := range strings.Fields(c) {
			if n >= maxContextWords {
				return qt
			}
			before := len(qt.words)
			add(trimField(f), -1, false)
			n += len(qt.words) - before
		}
	}
	return qt
}

// questionField is a whitespace-separated word of a question, without the
// punctuation around it.
type questionField struct {
	text string
	// first is set for the first word of a sentence, which a capital
	// letter does not make a name.
	first bool
	// code is set for a word in backticks.
	code bool
	// endsClause is set when punctuation follows the word: a name does not
	// run on past it.
	endsClause bool
}

func questionFields(text string) []questionField {
	var out []questionField
	first := true
	for _, f := range strings.Fields(text) {
		t := trimField(f)
		last, _ := utf8.DecodeLastRuneInString(f)
		qf := questionField{text: t, first: first, code: strings.Contains(f, "`"), endsClause: !isWordRune(last)}
		first = strings.ContainsAny(string(last), ".!?:") && !strings.HasSuffix(f, "..")
		if t == "" {
			continue
		}
		out = append(out, qf)
	}
	return out
}

// trimField takes the punctuation around a word off (a flag keeps its
// leading dashes) and a possessive "'s".
func trimField(f string) string {
	t := strings.TrimFunc(f, func(r rune) bool { return !isWordRune(r) && r != '-' })
	t = strings.TrimRight(t, "-")
	if !strings.HasPrefix(t, "-") {
		t = strings.TrimLeft(t, "-")
	}
	// "site's", "I'm", "don't": the word before the apostrophe.
	if i := strings.IndexAny(t, "'’"); i > 0 {
		switch strings.ToLower(strings.TrimLeft(t[i:], "'’")) {
		case "s", "m", "re", "ll", "ve", "d", "t":
			t = t[:i]
		}
	}
	return t
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Kinds of word as names go.
const (
	nameNone       = iota
	nameWord       // capitalised, an acronym or camel case: may run on with the next
	nameIdentifier // a flag, or words joined by _ . / @ or with digits
	nameCompound   // lower-case words joined by hyphens
)

// nameKind tells whether a word of a question is written as a name.
func nameKind(f questionField) int {
	t := f.text
	if f.code || strings.HasPrefix(t, "-") {
		return nameIdentifier
	}
	letters, uppers, digits, inner := 0, 0, 0, false
	for i, r := range t {
		switch {
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				uppers++
				inner = inner || i > 0
			}
		case unicode.IsDigit(r):
			digits++
		case r == '-' || r == '\'' || r == '’':
		default:
			// _ . / @ : and the like join the parts of an identifier.
			return nameIdentifier
		}
	}
	switch {
	case letters > 0 && digits > 0:
		return nameIdentifier
	case letters < 2 && uppers == letters:
		return nameNone // "I", "a", a number
	case uppers == letters, inner:
		// An acronym, or camel case ("GitLab"), wherever it stands.
		return nameWord
	case uppers > 0 && !f.first:
		return nameWord
	case strings.Contains(t, "-"):
		return nameCompound
	}
	return nameNone
}

func isNumber(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// identifierWords are an identifier's words as written, for a phrase query.
func identifierWords(t string) []string {
	var out []string
	engine.Words(t, func(raw, _ string) { out = append(out, raw) })
	return out
}

// questionParts cuts a question that asks several things into its parts:
// at the end of a sentence, and at "and", "but" or "or" that start a new
// question ("…, and does it …"). A part that the docs cover makes an
// answer partial when another names what they do not mention.
func questionParts(q string) []string {
	var parts []string
	start := 0
	fields := strings.Fields(q)
	for i, f := range fields {
		last, _ := utf8.DecodeLastRuneInString(f)
		switch {
		case strings.ContainsRune("?!;", last) || last == '.' && i+1 < len(fields) && startsUpper(fields[i+1]):
			parts = append(parts, strings.Join(fields[start:i+1], " "))
			start = i + 1
		case i > start && i+1 < len(fields) && conjunctions[strings.ToLower(f)] && questionStarts[strings.ToLower(trimField(fields[i+1]))]:
			parts = append(parts, strings.Join(fields[start:i], " "))
			start = i + 1
		}
	}
	if start < len(fields) {
		parts = append(parts, strings.Join(fields[start:], " "))
	}
	// A part of nothing but a greeting or a word or two of function words
	// still counts: the status only asks whether it names something.
	return parts
}

func startsUpper(f string) bool {
	r, _ := utf8.DecodeRuneInString(f)
	return unicode.IsUpper(r)
}

var conjunctions = map[string]bool{"and": true, "but": true, "or": true, "also": true}

// questionStarts are the words that start a question of its own after a
// conjunction.
var questionStarts = map[string]bool{
	"how": true, "what": true, "what's": true, "whats": true, "where": true, "which": true, "why": true, "when": true, "who": true,
	"does": true, "do": true, "did": true, "can": true, "could": true, "is": true, "are": true, "will": true, "would": true,
	"should": true, "may": true, "has": true, "have": true,
}
