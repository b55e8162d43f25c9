package assistant

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// A model's sentence is grounded when what it states is in the passages it
// cites. What must be there:
//
//   - hard terms, each of them: numbers ("8080", "1.5", "6"), identifiers
//     (flags, paths, file and package names, words with digits, inner
//     capitals or underscores, acronyms), names (a capitalised word after
//     the first), and inline code; a number or identifier is looked for as
//     written (any case), between word boundaries;
//   - soft terms, most of them: the other words, as the index analyses them
//     (engine.Words: folded, stemmed), less the function words; a model
//     paraphrases, so about one in three may be missing.
//
// A sentence with nothing to check (a greeting, "Here is how:") is
// supported. Markers, link targets and Markdown syntax are not terms.

// groundedPassage is a passage as grounding reads it: its words and its
// text, folded.
type groundedPassage struct {
	words map[string]bool
	lower string
}

func newGroundedPassage(title, text string) groundedPassage {
	g := groundedPassage{words: map[string]bool{}, lower: strings.ToLower(title + "\n" + text)}
	engine.Words(title+"\n"+text, func(_, w string) { g.words[w] = true })
	return g
}

// maxMissing bounds the terms a verdict names: enough to show why.
const maxMissing = 8

// maxTermLen bounds a term named in a verdict.
const maxTermLen = 60

// groundVerdict is the judgement of one segment.
type groundVerdict struct {
	supported bool
	missing   []string
}

// judge checks a segment's text against the passages it cites (none: every
// term it has is missing).
func judge(text string, kind segmentKind, cited []groundedPassage) groundVerdict {
	var ts claimTerms
	if kind == segCode {
		ts = codeTerms(text)
	} else {
		ts = sentenceTerms(text)
	}
	var missing []string
	for _, h := range ts.hard {
		if !anyPassage(cited, func(p groundedPassage) bool { return p.hasToken(h) }) {
			missing = appendMissing(missing, h)
		}
	}
	for _, n := range ts.names {
		if !anyPassage(cited, func(p groundedPassage) bool { return p.words[n.word] }) {
			missing = appendMissing(missing, n.raw)
		}
	}
	var softMissing []string
	for _, s := range ts.soft {
		if !anyPassage(cited, func(p groundedPassage) bool { return p.words[s.word] }) {
			softMissing = append(softMissing, s.raw)
		}
	}
	if allowed := (len(ts.soft) + 1) / 3; len(softMissing) > allowed {
		for _, s := range softMissing {
			missing = appendMissing(missing, s)
		}
	}
	return groundVerdict{supported: len(missing) == 0, missing: missing}
}

func anyPassage(ps []groundedPassage, f func(groundedPassage) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}

func appendMissing(missing []string, term string) []string {
	if len(missing) >= maxMissing || containsString(missing, term) {
		return missing
	}
	return append(missing, clip(term, maxTermLen))
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// hasToken reports whether the passage holds tok (folded) between word
// boundaries: "8080" is in "port 8080." but not in "18080".
func (p groundedPassage) hasToken(tok string) bool {
	tok = strings.ToLower(strings.Join(strings.Fields(tok), " "))
	if tok == "" {
		return true
	}
	text := p.lower
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], tok)
		if i < 0 {
			break
		}
		i += from
		end := i + len(tok)
		if !wordRuneBefore(text, i) && !wordRuneAt(text, end) {
			return true
		}
		from = i + 1
	}
	// Spaces in code are not always written alike: "a=b" and "a = b".
	if strings.Contains(tok, " ") {
		return strings.Contains(collapseSpaces(text), strings.ReplaceAll(tok, " ", ""))
	}
	return false
}

func collapseSpaces(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func wordRuneBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return isTermRune(r)
}

func wordRuneAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return isTermRune(r)
}

func isTermRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// claimTerms are what a segment states, to look for in its passages.
type claimTerms struct {
	hard  []string   // inline code, numbers, identifiers: as written
	names []termWord // capitalised words after the first
	soft  []termWord // the other words that carry meaning
}

type termWord struct{ raw, word string }

var (
	linkTarget = regexp.MustCompile(`\]\([^)\s]*(?:\s+"[^"]*")?\)`)
	htmlTag    = regexp.MustCompile(`</?[A-Za-z][^<>]*>`)
	// numberPattern finds numbers: "8080", "1.5", "10,000", "v2" is an
	// identifier.
	numberPattern = regexp.MustCompile(`\d+(?:[.,:]\d+)*`)
	// tokenPattern finds runs of word runes joined by the punctuation of
	// identifiers: "app.config.ts", "--max-retries", "snake_case", "a/b".
	tokenPattern = regexp.MustCompile(`-{0,2}[\p{L}\p{N}_]+(?:(?:[-./:@]|::)[\p{L}\p{N}_]+)*`)
)

// sentenceTerms reads a sentence's terms.
func sentenceTerms(text string) claimTerms {
	var ts claimTerms
	plain := markerPattern.ReplaceAllString(text, " ")
	plain = linkTarget.ReplaceAllString(plain, "] ")
	plain = htmlTag.ReplaceAllString(plain, " ")
	// Inline code is a hard term, whole; the rest is read around it.
	var rest strings.Builder
	last := 0
	for _, sp := range codeSpans(plain) {
		if code := strings.TrimSpace(plain[sp[0]:sp[1]]); code != "" {
			ts.hard = append(ts.hard, code)
		}
		rest.WriteString(plain[last:sp[0]])
		rest.WriteByte(' ')
		last = sp[1]
	}
	rest.WriteString(plain[last:])
	plain = strings.NewReplacer("`", " ", "**", " ", "__", " ", "~~", " ").Replace(rest.String())

	first := true
	for _, loc := range tokenPattern.FindAllStringIndex(plain, -1) {
		tok := plain[loc[0]:loc[1]]
		atStart := first
		first = false
		switch {
		case isIdentifier(tok):
			ts.hard = append(ts.hard, strings.TrimRight(tok, ".:"))
			continue
		case isNumeral(tok):
			ts.hard = append(ts.hard, tok)
			continue
		}
		// A plain word, or words joined by hyphens ("built-in"): each
		// word as the index reads it.
		engine.Words(tok, func(raw, w string) {
			switch {
			case functionWords[strings.ToLower(raw)] || utf8.RuneCountInString(raw) < 3 && !isAcronym(raw):
			case isAcronym(raw):
				ts.names = append(ts.names, termWord{raw, w})
			case !atStart && capitalised(raw) && !functionWords[w]:
				ts.names = append(ts.names, termWord{raw, w})
			default:
				ts.soft = append(ts.soft, termWord{raw, w})
			}
		})
	}
	return ts
}

// codeTerms are a code block's terms: its identifiers and numbers, each
// of which must be in the passages, and its words, most of which must.
func codeTerms(block string) claimTerms {
	lines := strings.Split(block, "\n")
	if len(lines) > 0 {
		lines = lines[1:] // the opening fence and its language
	}
	if n := len(lines); n > 0 && fenceOf(strings.TrimSpace(lines[n-1])) != "" {
		lines = lines[:n-1]
	}
	var ts claimTerms
	for _, tok := range tokenPattern.FindAllString(strings.Join(lines, "\n"), -1) {
		switch {
		case isIdentifier(tok) || isNumeral(tok):
			ts.hard = append(ts.hard, strings.TrimRight(tok, ".:"))
		default:
			engine.Words(tok, func(raw, w string) {
				if !functionWords[strings.ToLower(raw)] && utf8.RuneCountInString(raw) >= 3 {
					ts.soft = append(ts.soft, termWord{raw, w})
				}
			})
		}
	}
	return ts
}

func isNumeral(tok string) bool { return numberPattern.FindString(tok) == tok }

// isIdentifier reports whether a token is written as code or a name of a
// thing is: a flag ("--force"), a dotted, slashed or underscored name, a
// word mixing letters and digits ("v2", "ES2020"), inner capitals
// ("useChat"), or an acronym of several letters ("SSO"). Hyphenated words
// of lower-case letters ("built-in") and abbreviations of single letters
// ("e.g") are words.
func isIdentifier(tok string) bool {
	tok = strings.TrimRight(tok, ".:")
	switch {
	case tok == "":
		return false
	case strings.HasPrefix(tok, "-"):
		return len(strings.TrimLeft(tok, "-")) > 0
	case strings.ContainsAny(tok, "_/@") || strings.Contains(tok, "::"):
		return true
	case strings.Contains(tok, "."):
		for _, part := range strings.Split(tok, ".") {
			if utf8.RuneCountInString(part) > 1 {
				return !isNumeral(tok)
			}
		}
		return false
	}
	letters, digits, innerUpper := 0, 0, false
	for k, r := range tok {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
			if k > 0 && unicode.IsUpper(r) {
				innerUpper = true
			}
		}
	}
	if strings.Contains(tok, "-") {
		return digits > 0 || innerUpper
	}
	return letters > 0 && digits > 0 || innerUpper && !isAcronym(tok)
}

// isAcronym reports whether a word is two or more capitals (and digits):
// "SSO", "API", "S3".
func isAcronym(w string) bool {
	caps := 0
	for _, r := range w {
		switch {
		case unicode.IsUpper(r):
			caps++
		case unicode.IsDigit(r):
		default:
			return false
		}
	}
	return caps >= 2 || caps == 1 && utf8.RuneCountInString(w) >= 2
}

func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// functionWords carry no claim of their own: English function words, and
// the words an answer uses to speak of the docs themselves. Keys are lower
// case, both as written and as stemmed.
var functionWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a an the and or but nor so yet if then else when while as at by for from in into of on onto to
		with without within about above below over under after before between through during until upon
		across along around against among via per
		is are was were be been being am do does did done doing have has had having will would shall
		should can could may might must need needs not no yes also too very just only even still
		this that these those it its it's they them their there here he she his her we our us you your
		i me my mine what which who whom whose where why how all any both each every few more most other
		some such than own same another much many either neither
		there's that's you're you'll you've let lets let's
		instead however therefore thus otherwise example instance e.g i.e etc
		one ones first next following below above way ways
		documentation docs doc passage passages section sections page pages according mention mentions
		mentioned describe describes described explain explains explained says say said note notes
		see shown show shows provide provides provided available option options step steps
		use uses used using can't don't doesn't isn't aren't won't
	`) {
		m[w] = true
	}
	// The stems too: engine.Words gives words stemmed.
	for w := range m {
		engine.Words(w, func(_, s string) { m[s] = true })
	}
	return m
}()
