package assistant

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxMarker bounds how much text the filter holds back while it decides
// whether a "[" starts a citation marker.
const maxMarker = 32

// citeFilter passes a model's streamed text through, checking its citation
// markers: "[2]", "[1, 3]", "[^2]". A marker keeps the numbers of passages
// retrieved in this turn (1..n) and loses the others; a marker left with no
// number is removed. Anything else in brackets ("[x]", "[link](…)") passes
// unchanged. Because a marker can be split across deltas, text from a "["
// on is held back until the marker is complete or cannot be one; so are
// spaces, until what follows them is known, so that a removed marker takes
// the space before it along ("see this [9]." becomes "see this.").
type citeFilter struct {
	n       int // passages of this turn, numbered 1..n
	emit    func(string) error
	partial string          // an unfinished UTF-8 sequence ending the last delta
	spaces  string          // spaces not yet emitted
	pending strings.Builder // a possible marker, from its "["
	out     strings.Builder // scratch for one Write
	ticks   int             // backticks in the current run
	code    int             // length of the backtick run that opened code, 0 outside
	cited   map[int]bool    // numbers kept
	dropped int             // numbers removed
}

func newCiteFilter(n int, emit func(string) error) *citeFilter {
	return &citeFilter{n: n, emit: emit, cited: map[int]bool{}}
}

// Write filters one delta and emits what is settled.
func (f *citeFilter) Write(delta string) error {
	f.out.Reset()
	delta = f.partial + delta
	f.partial = ""
	// A delta may end inside a UTF-8 sequence; keep its start for the next.
	if i := incompleteTail(delta); i < len(delta) {
		delta, f.partial = delta[:i], delta[i:]
	}
	for _, r := range delta {
		f.feed(r)
	}
	return f.flushOut()
}

// incompleteTail is where an unfinished UTF-8 sequence at the end of s
// starts, or len(s).
func incompleteTail(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if !utf8.RuneStart(s[i]) {
			continue
		}
		if !utf8.FullRuneInString(s[i:]) {
			return i
		}
		break
	}
	return len(s)
}

// Close emits text still held back.
func (f *citeFilter) Close() error {
	f.out.Reset()
	f.out.WriteString(f.spaces + f.pending.String() + f.partial)
	f.spaces, f.partial = "", ""
	f.pending.Reset()
	return f.flushOut()
}

func (f *citeFilter) flushOut() error {
	if f.out.Len() == 0 {
		return nil
	}
	return f.emit(f.out.String())
}

func (f *citeFilter) feed(r rune) {
	if f.pending.Len() > 0 {
		switch {
		case r == ']':
			f.pending.WriteRune(r)
			if m := f.marker(f.pending.String()); m != "" {
				f.out.WriteString(f.spaces + m)
			}
			f.spaces = ""
			f.pending.Reset()
		case r >= '0' && r <= '9', r == ',', r == ' ', r == '^' && f.pending.Len() == 1:
			f.pending.WriteRune(r)
			if f.pending.Len() > maxMarker {
				f.release()
			}
		default:
			// Not a marker after all: release it and look at r afresh
			// (it may be another "[").
			f.release()
			f.feed(r)
		}
		return
	}
	if r == '`' {
		f.out.WriteString(f.spaces)
		f.spaces = ""
		f.ticks++
		f.out.WriteRune(r)
		return
	}
	if f.ticks > 0 {
		f.endTicks()
	}
	if f.code > 0 {
		f.out.WriteRune(r) // arr[0] in code is not a citation
		return
	}
	switch r {
	case ' ':
		f.spaces += " "
	case '[':
		f.pending.WriteRune(r)
	default:
		f.out.WriteString(f.spaces)
		f.spaces = ""
		f.out.WriteRune(r)
	}
}

// endTicks handles a finished run of backticks: it opens code (inline or a
// fence) when outside, and closes it when the run matches the opening one.
func (f *citeFilter) endTicks() {
	switch {
	case f.code == 0:
		f.code = f.ticks
	case f.ticks == f.code:
		f.code = 0
	}
	f.ticks = 0
}

// release emits held-back text as it was.
func (f *citeFilter) release() {
	f.out.WriteString(f.spaces + f.pending.String())
	f.spaces = ""
	f.pending.Reset()
}

var markerNumber = regexp.MustCompile(`\d+`)

// marker rewrites a complete bracketed run of digits, commas and spaces.
func (f *citeFilter) marker(m string) string {
	nums := markerNumber.FindAllString(m, -1)
	if len(nums) == 0 {
		return m // "[ ]", "[,]": not a citation
	}
	var keep []string
	for _, s := range nums {
		k, err := strconv.Atoi(s)
		if err != nil || k < 1 || k > f.n {
			f.dropped++
			continue
		}
		f.cited[k] = true
		keep = append(keep, strconv.Itoa(k))
	}
	switch {
	case len(keep) == 0:
		return ""
	case len(keep) == len(nums):
		return m
	}
	prefix := "["
	if strings.HasPrefix(m, "[^") {
		prefix = "[^"
	}
	return prefix + strings.Join(keep, ", ") + "]"
}

// stripMarkers removes every citation marker from text: earlier answers in
// the history cite passages the model does not see in this turn.
func stripMarkers(text string) string {
	var b strings.Builder
	f := newCiteFilter(0, func(s string) error { b.WriteString(s); return nil })
	_ = f.Write(text)
	_ = f.Close()
	return b.String()
}
