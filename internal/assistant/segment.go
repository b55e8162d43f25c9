package assistant

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// segmentKind says what a piece of a model's answer is, and so how its
// grounding is judged.
type segmentKind int

const (
	// segProse is a sentence: of a paragraph, a list item, a quote or a
	// table row. Its words must be in the passages it cites.
	segProse segmentKind = iota
	// segCode is a whole fenced code block, judged like a sentence.
	segCode
	// segLayout is a heading, a table's delimiter row or a rule: no claim
	// to judge, always kept.
	segLayout
)

// segment is a settled piece of an answer's text block. [start, end) is the
// piece itself in the block (no list marker, no spaces around it); gap is
// where the text between it and the piece before it starts (spaces, line
// breaks and the line's Markdown prefix).
type segment struct {
	gap, start, end int
	kind            segmentKind
	// cites are the passage numbers of the markers in the piece, in order,
	// without repeats.
	cites []int
	// newLine is set when the gap holds a line break: the piece starts a
	// line of its own.
	newLine bool
}

// nextSegment finds the segment of text that starts at or after from (a
// segment boundary of an earlier call, or 0). ok is false when the text
// does not settle one yet: more may follow (final false), or nothing but
// spaces is left. next is where the following call starts.
//
// Sentences end after ".", "!" or "?" (and closing quotes, brackets or
// emphasis) followed by a space or a line end, taking the citation markers
// that follow them ("It does. [1]"). They do not end inside inline code,
// after a common abbreviation ("e.g.", "etc."), after a single letter
// ("J. Smith"), or at a dot inside a word or a number ("1.5", "app.json").
// A line break ends a sentence too: a model writes one Markdown block a
// line, and a line that wraps a sentence is judged in parts, each under the
// rule for sentences without a marker. A fenced code block is one segment.
func nextSegment(text string, from int, final bool) (seg segment, next int, ok bool) {
	i := from
	newLine := from == 0 || text[from-1] == '\n'
	for i < len(text) && isSpaceByte(text[i]) {
		if text[i] == '\n' {
			newLine = true
		}
		i++
	}
	if i == len(text) {
		return segment{}, from, false
	}
	seg = segment{gap: from, newLine: newLine}
	lineStart := i == 0 || text[i-1] == '\n'
	if lineStart {
		line, complete := lineAt(text, i)
		if !complete && !final && len(line) < 4 {
			// "``" or "#": what the line is shows in its next bytes.
			return segment{}, from, false
		}
		trimmed := strings.TrimLeft(line, " \t")
		if fence := fenceOf(trimmed); fence != "" {
			end, closed := codeBlockEnd(text, i, fence)
			if !closed && !final {
				return segment{}, from, false
			}
			seg.start, seg.end, seg.kind = i, end, segCode
			return seg, end, true
		}
		if isLayoutLine(trimmed) {
			if !complete && !final {
				return segment{}, from, false
			}
			seg.start, seg.end, seg.kind = i, i+len(strings.TrimRight(line, " \t\r")), segLayout
			return seg, i + len(line), true
		}
		i += blockPrefix(line)
	}
	end, after, ok := sentenceEnd(text, i, final)
	if !ok {
		return segment{}, from, false
	}
	seg.start, seg.end, seg.kind = i, end, segProse
	seg.cites = markerNumbers(text[i:end])
	return seg, after, true
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// lineAt is the line of text starting at i, without its line break, and
// whether the line break (or more text after it) has come.
func lineAt(text string, i int) (string, bool) {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return text[i : i+j], true
	}
	return text[i:], false
}

// fenceOf is the fence a line opens a code block with ("```", "~~~~"), or
// "".
func fenceOf(trimmed string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == c {
			n++
		}
		if n >= 3 {
			return trimmed[:n]
		}
	}
	return ""
}

// codeBlockEnd is where the code block opened by fence on the line at i
// ends (after its closing fence line's text), and whether it is closed.
// An unclosed block runs to the end of text.
func codeBlockEnd(text string, i int, fence string) (int, bool) {
	j := strings.IndexByte(text[i:], '\n')
	if j < 0 {
		return len(text), false
	}
	at := i + j + 1
	for at < len(text) {
		line, complete := lineAt(text, at)
		t := strings.TrimSpace(line)
		if complete && strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
			return at + len(strings.TrimRight(line, " \t\r")), true
		}
		if !complete {
			break
		}
		at += len(line) + 1
	}
	return len(text), false
}

// isLayoutLine reports whether a line carries no claim: a heading, a
// table's delimiter row, a thematic break.
func isLayoutLine(trimmed string) bool {
	switch {
	case strings.HasPrefix(trimmed, "#"):
		return true
	case strings.HasPrefix(trimmed, "|") && strings.Trim(trimmed, "|-: \t") == "":
		return true
	case len(trimmed) >= 3 && (strings.Trim(trimmed, "- ") == "" || strings.Trim(trimmed, "* ") == "" || strings.Trim(trimmed, "_ ") == ""):
		return true
	}
	return false
}

var listMarker = regexp.MustCompile(`^[ \t]*(?:>[ \t]?)*[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+`)
var quoteMarker = regexp.MustCompile(`^[ \t]*(?:>[ \t]?)+`)

// blockPrefix is the length of a line's Markdown prefix: a list item's
// marker, a block quote's ">"s.
func blockPrefix(line string) int {
	if m := listMarker.FindString(line); m != "" {
		return len(m)
	}
	return len(quoteMarker.FindString(line))
}

// sentenceEnd finds the end of the sentence starting at i: end is after its
// last rune or marker, after where the next segment may start. ok is false
// when the end is not known yet.
func sentenceEnd(text string, i int, final bool) (end, after int, ok bool) {
	ticks, code := 0, 0 // the backtick run being read; the run that opened inline code
	for j := i; j < len(text); {
		r, size := utf8.DecodeRuneInString(text[j:])
		if r == '`' {
			ticks++
			j += size
			continue
		}
		if ticks > 0 {
			switch {
			case code == 0:
				code = ticks
			case ticks == code:
				code = 0
			}
			ticks = 0
		}
		switch {
		case r == '\n':
			return trimEnd(text, i, j), j, true
		case code > 0:
		case r == '.' || r == '!' || r == '?':
			if r == '.' && !periodEnds(text, i, j) {
				break
			}
			k := j + size
			for k < len(text) && strings.IndexByte(`)"'*_`, text[k]) >= 0 {
				k++
			}
			k = skipClosingQuotes(text, k)
			if k == len(text) {
				if !final {
					return 0, 0, false
				}
				return k, k, true
			}
			if text[k] != ' ' && text[k] != '\t' && text[k] != '\n' && !startsMarker(text, k) {
				break
			}
			end, complete := trailingMarkers(text, k)
			if !complete && !final {
				return 0, 0, false
			}
			return trimEnd(text, i, end), end, true
		case r == '。' || r == '！' || r == '？':
			end, complete := trailingMarkers(text, j+size)
			if !complete && !final {
				return 0, 0, false
			}
			return end, end, true
		}
		j += size
	}
	if !final {
		return 0, 0, false
	}
	return trimEnd(text, i, len(text)), len(text), true
}

// skipClosingQuotes skips typographic closing quotes at k.
func skipClosingQuotes(text string, k int) int {
	for {
		switch {
		case strings.HasPrefix(text[k:], "”"):
			k += len("”")
		case strings.HasPrefix(text[k:], "’"):
			k += len("’")
		default:
			return k
		}
	}
}

// startsMarker reports whether a citation marker starts at k.
func startsMarker(text string, k int) bool {
	return k < len(text) && text[k] == '['
}

// trailingMarkers skips the spaces and citation markers ("[1]", "[2, 3]",
// "[^4]") at k: end is after the last marker (or k when none follows), and
// complete is false when text ends before it is known whether one does.
func trailingMarkers(text string, k int) (end int, complete bool) {
	end = k
	j := k
	for {
		for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
			j++
		}
		if j == len(text) {
			return end, false
		}
		if text[j] != '[' {
			return end, true
		}
		m := j + 1
		if m < len(text) && text[m] == '^' {
			m++
		}
		digits := 0
		for m < len(text) && (text[m] >= '0' && text[m] <= '9' || text[m] == ',' || text[m] == ' ') {
			if text[m] >= '0' && text[m] <= '9' {
				digits++
			}
			m++
		}
		if m == len(text) {
			return end, false
		}
		if text[m] != ']' || digits == 0 {
			return end, true
		}
		j = m + 1
		end = j
	}
}

// trimEnd is end moved back over spaces, not before start.
func trimEnd(text string, start, end int) int {
	for end > start && isSpaceByte(text[end-1]) {
		end--
	}
	return end
}

// abbreviations end in a dot that does not end a sentence (lower case,
// without the dot).
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "eg": true, "ie": true, "etc": true, "vs": true, "cf": true, "approx": true,
	"incl": true, "excl": true, "esp": true, "resp": true, "no": true, "nos": true, "fig": true, "ref": true,
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "st": true, "jr": true, "sr": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true, "aug": true, "sep": true,
	"sept": true, "oct": true, "nov": true, "dec": true, "min": true, "max": true, "sec": true, "ver": true,
}

// periodEnds reports whether the dot at j may end the sentence that starts
// at i: not after an abbreviation, an initial, or inside a number.
func periodEnds(text string, i, j int) bool {
	w := j
	for w > i {
		r, size := utf8.DecodeLastRuneInString(text[i:w])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' {
			break
		}
		w -= size
	}
	word := strings.ToLower(text[w:j])
	if word == "" {
		return true
	}
	if abbreviations[word] {
		return false
	}
	if n := utf8.RuneCountInString(word); n == 1 {
		r, _ := utf8.DecodeRuneInString(text[w:j])
		return unicode.IsDigit(r) // "step 1." ends; "J." does not
	}
	// "e.g", "i.e", "U.S": letters and dots, one letter between dots.
	if strings.Contains(word, ".") {
		short := true
		for _, part := range strings.Split(word, ".") {
			if utf8.RuneCountInString(part) > 1 {
				short = false
			}
		}
		return !short
	}
	return true
}

var markerPattern = regexp.MustCompile(`\[\^?(\d+(?:\s*,\s*\d+)*)\]`)

// markerNumbers are the passage numbers of the citation markers in s, in
// order, without repeats. Markers inside inline code do not count.
func markerNumbers(s string) []int {
	var out []int
	for _, m := range markerPattern.FindAllStringSubmatchIndex(withoutCode(s), -1) {
		for _, d := range strings.Split(s[m[2]:m[3]], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(d))
			if err != nil || containsInt(out, n) {
				continue
			}
			out = append(out, n)
		}
	}
	return out
}

func containsInt(ns []int, n int) bool {
	for _, k := range ns {
		if k == n {
			return true
		}
	}
	return false
}

// withoutCode is s with the contents of its inline code spans blanked
// (same length), so that what they hold is not read as Markdown.
func withoutCode(s string) string {
	if !strings.Contains(s, "`") {
		return s
	}
	b := []byte(s)
	for _, sp := range codeSpans(s) {
		for k := sp[0]; k < sp[1]; k++ {
			b[k] = ' '
		}
	}
	return string(b)
}

// codeSpans are the [start, end) byte ranges of the contents of s's inline
// code spans.
func codeSpans(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		open := s[i : i+n]
		start := i + n
		closeAt := -1
		for k := start; k < len(s); {
			j := strings.Index(s[k:], open)
			if j < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(s) && s[k+m] == '`' {
				m++
			}
			if m == n {
				closeAt = k
				break
			}
			k += m
		}
		if closeAt < 0 {
			i = start
			continue
		}
		out = append(out, [2]int{start, closeAt})
		i = closeAt + n
	}
	return out
}
