// Package mdblock finds the blocks of a Markdown text that must not be cut
// in half, fenced code and tables, so that whatever quotes or shortens the
// docs' Markdown (the assistant's extractive answer, MCP's size limits)
// keeps them whole or closes what it opens. It reads lines only: a
// blockquote's ">" markers and any indentation before a fence or a table
// row are allowed, as Mintlify components turned into quotes and lists put
// them there.
package mdblock

import (
	"strings"
	"unicode/utf8"
)

// Kind is what a Span holds.
type Kind int

// The kinds of span.
const (
	Fence Kind = iota + 1
	Table
)

// Span is a block of lines From to To (inclusive) that is read as one.
type Span struct {
	From, To int
	Kind     Kind
	// Close is the line that closes a fence opened at From, with the
	// opening line's indentation and quote markers: what to add after a
	// fence cut before its end. It is "" for a table.
	Close string
	// Closed reports whether a fence ends with its closing line (To); a
	// fence left open runs to the last line.
	Closed bool
}

// Spans finds the fences and tables of lines, in order. A fence runs from
// its opening line to the closing one, or to the last line when it is
// never closed; a table from its header row, followed by a delimiter row
// ("| --- | :-: |"), to the last row before a line without a "|".
func Spans(lines []string) []Span {
	var out []Span
	for i := 0; i < len(lines); i++ {
		if prefix, marker, ok := fenceOpen(lines[i]); ok {
			s := Span{From: i, To: len(lines) - 1, Kind: Fence, Close: prefix + marker}
			for j := i + 1; j < len(lines); j++ {
				if fenceCloses(lines[j], marker) {
					s.To, s.Closed = j, true
					break
				}
			}
			out = append(out, s)
			i = s.To
			continue
		}
		if i+1 < len(lines) && isRow(lines[i]) && isDelimiterRow(lines[i+1]) {
			s := Span{From: i, To: i + 1, Kind: Table}
			for s.To+1 < len(lines) && isRow(lines[s.To+1]) {
				s.To++
			}
			out = append(out, s)
			i = s.To
		}
	}
	return out
}

// At returns the span holding line i, if any.
func At(spans []Span, i int) (Span, bool) {
	for _, s := range spans {
		if s.From <= i && i <= s.To {
			return s, true
		}
	}
	return Span{}, false
}

// OpenFence reports whether md ends inside a fence, and the line that
// would close it.
func OpenFence(md string) (closeLine string, open bool) {
	spans := Spans(strings.Split(md, "\n"))
	if len(spans) == 0 {
		return "", false
	}
	last := spans[len(spans)-1]
	if last.Kind != Fence || last.Closed {
		return "", false
	}
	return last.Close, true
}

// Cut returns md if it is at most limit bytes long, and otherwise its first
// whole lines that fit in limit bytes (the first line's first characters
// when even it does not fit), followed by the closing line of a fence the
// cut leaves open, then marker. A table cut between rows stays a table. The
// closing line and the marker may go over limit.
func Cut(md string, limit int, marker string) string {
	if len(md) <= limit {
		return md
	}
	cut := strings.LastIndexByte(md[:limit+1], '\n')
	if cut <= 0 {
		cut = limit
		for cut > 0 && !utf8.RuneStart(md[cut]) {
			cut--
		}
	}
	kept := md[:cut]
	if closeLine, open := OpenFence(kept); open {
		kept = strings.TrimRight(kept, "\n") + "\n" + closeLine
	}
	return kept + marker
}

// quotePrefix splits a line into its indentation and blockquote markers,
// and the rest.
func quotePrefix(line string) (prefix, rest string) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '>') {
		i++
	}
	return line[:i], line[i:]
}

// fenceOpen reports whether line opens a fence: three or more backticks
// or tildes, a backtick fence's info string holding no backtick. marker is
// the run of fence characters.
func fenceOpen(line string) (prefix, marker string, ok bool) {
	prefix, rest := quotePrefix(line)
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return "", "", false
	}
	n := 0
	for n < len(rest) && rest[n] == rest[0] {
		n++
	}
	if n < 3 || rest[0] == '`' && strings.ContainsRune(rest[n:], '`') {
		return "", "", false
	}
	return prefix, rest[:n], true
}

// fenceCloses reports whether line closes a fence opened with marker: a
// run of the same character at least as long, and nothing after it.
func fenceCloses(line, marker string) bool {
	_, rest := quotePrefix(line)
	rest = strings.TrimRight(rest, " \t")
	if len(rest) < len(marker) || rest[0] != marker[0] {
		return false
	}
	return strings.Trim(rest, rest[:1]) == ""
}

// isRow reports whether line can be a table row: it holds a "|" outside
// its quote markers.
func isRow(line string) bool {
	_, rest := quotePrefix(line)
	return strings.Contains(rest, "|")
}

// isDelimiterRow reports whether line is a table's delimiter row: cells of
// dashes with optional colons, between pipes.
func isDelimiterRow(line string) bool {
	_, rest := quotePrefix(line)
	rest = strings.TrimSpace(rest)
	if !strings.Contains(rest, "|") {
		return false // "---" alone underlines a heading or is a rule
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "|"), "|")
	cells := strings.Split(rest, "|")
	for _, c := range cells {
		c = strings.TrimSpace(c)
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return len(cells) > 0
}

// InsideFence reports whether Markdown ends inside a fenced code block (or
// $$ math block), with any quote markers and indentation before the fences.
func InsideFence(md string) bool {
	var open string
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimLeft(line, " \t>")
		run := FenceRun(line)
		switch {
		case open == "" && run != "":
			open = run
		case open != "" && run != "" && run[0] == open[0] && len(run) >= len(open) && strings.TrimSpace(line[len(run):]) == "":
			open = ""
		}
	}
	return open != ""
}

// FenceRun returns the run of ```, ~~~ or $$ that starts line, or "".
func FenceRun(line string) string {
	if line == "" || (line[0] != '`' && line[0] != '~' && line[0] != '$') {
		return ""
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	if n < 3 && (line[0] != '$' || n < 2) {
		return ""
	}
	return line[:n]
}
