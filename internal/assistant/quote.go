package assistant

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search/engine"
)

// maxQuote bounds a citation's quote.
const maxQuote = 200

// A citation's quote is a short piece of its passage as the page shows it:
// plain text, no Markdown syntax, so that a link can carry it as a URL text
// fragment (#:~:text=…) and the browser highlights it on the page. It is
// the sentence of the passage's prose that holds most of the question's
// words (the first sentence when none does), cut at a word to maxQuote
// bytes. A sentence counts the words of the heading it is under too (less
// than its own), so that of equals the one in the section the question
// asks about wins.
// Code blocks, tables and headings are passed over while the passage has
// prose: a text fragment matches text within one block best.

// quoteWords are the words of a question as the index analyses them,
// without function words: what a quote is chosen by.
func quoteWords(question string) map[string]bool {
	out := map[string]bool{}
	engine.Words(question, func(raw, w string) {
		if !functionWords[strings.ToLower(raw)] && !functionWords[w] && utf8.RuneCountInString(raw) >= 2 {
			out[w] = true
		}
	})
	return out
}

// passageQuote is the quote of a passage's Markdown text for a question's
// words.
func passageQuote(text string, words map[string]bool) string {
	var best string
	bestScore := -1
	for _, c := range quoteCandidates(text) {
		score := 0
		count := func(text string, weight int) {
			seen := map[string]bool{}
			engine.Words(text, func(_, w string) {
				if words[w] && !seen[w] {
					seen[w] = true
					score += weight
				}
			})
		}
		// A word of the question counts once in the sentence and once in
		// its heading, more in the sentence.
		count(c.text, 3)
		count(c.heading, 2)
		if score > bestScore {
			best, bestScore = c.text, score
		}
	}
	return clipWords(best, maxQuote)
}

// quoteCandidate is a piece of a passage a quote may be, as plain text,
// and the heading it is under.
type quoteCandidate struct{ text, heading string }

// quoteCandidates are the sentences of a passage's prose, as plain text;
// the cells of its tables and its headings when it has no prose.
func quoteCandidates(text string) []quoteCandidate {
	lines := strings.Split(text, "\n")
	spans := mdblock.Spans(lines)
	var prose, other []quoteCandidate
	var para []string
	heading := ""
	flush := func() {
		if len(para) > 0 {
			for _, s := range plainSentences(strings.Join(para, " ")) {
				prose = append(prose, quoteCandidate{s, heading})
			}
			para = para[:0]
		}
	}
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if s, ok := mdblock.At(spans, i); ok {
			flush()
			if s.Kind == mdblock.Table && !isLayoutLine(t) {
				for _, cell := range strings.Split(strings.Trim(t, "|"), "|") {
					if c := plainText(cell); c != "" {
						other = append(other, quoteCandidate{c, heading})
					}
				}
			}
			continue
		}
		switch {
		case t == "" || fenceOf(t) != "":
			flush()
		case strings.HasPrefix(t, "#"):
			flush()
			if h := plainText(strings.TrimLeft(t, "#")); h != "" {
				heading = h
				other = append(other, quoteCandidate{h, ""})
			}
		case listMarker.MatchString(line):
			// A list item is a block of its own on the page.
			flush()
			para = append(para, t[blockPrefix(t):])
			flush()
		case strings.HasPrefix(t, "<") && htmlTag.FindString(t) == t:
			// A component's tag alone on its line shows nothing.
			flush()
		default:
			para = append(para, t)
		}
	}
	flush()
	if len(prose) > 0 {
		return prose
	}
	return other
}

// plainSentences splits a paragraph's Markdown into sentences of plain
// text.
func plainSentences(md string) []string {
	var out []string
	for from := 0; ; {
		seg, next, ok := nextSegment(md, from, true)
		if !ok {
			break
		}
		from = next
		if s := plainText(md[seg.start:seg.end]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var (
	imagePattern    = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)
	linkPattern     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	emphasisPattern = regexp.MustCompile(`(\*\*|__|\*|~~)`)
	underscoreEmph  = regexp.MustCompile(`(^|[\s(])_([^_]+)_`)
	spacedMarker    = regexp.MustCompile(`[ \t]*\[\^?\d+(?:\s*,\s*\d+)*\]`)
)

// plainText is a line of Markdown as the page shows it: without its block
// markers, emphasis, link targets, images, tags, code backticks or
// citation markers, its spaces collapsed.
func plainText(md string) string {
	s := strings.TrimSpace(md)
	s = strings.TrimSpace(s[blockPrefix(s):])
	s = strings.TrimLeft(s, "#")
	// Each pattern runs only on a line holding a character it needs:
	// most lines hold none, and the patterns cost far more than the look.
	if strings.Contains(s, "](") {
		s = imagePattern.ReplaceAllString(s, "")
		s = linkPattern.ReplaceAllString(s, "$1")
	}
	if strings.IndexByte(s, '<') >= 0 {
		s = htmlTag.ReplaceAllString(s, "")
	}
	s = strings.ReplaceAll(s, "`", "")
	if strings.ContainsAny(s, "*_~") {
		s = emphasisPattern.ReplaceAllString(s, "")
		s = underscoreEmph.ReplaceAllString(s, "$1$2")
	}
	if strings.IndexByte(s, '[') >= 0 {
		s = spacedMarker.ReplaceAllString(s, "")
	}
	return strings.Join(strings.Fields(s), " ")
}

// clipWords cuts s to at most max bytes at a word boundary, with no
// ellipsis: the quote must stay text the page holds.
func clipWords(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := s[:max]
	for len(cut) > 0 && !utf8.RuneStart(s[len(cut)]) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimRightFunc(cut, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) && r != ')' })
}
