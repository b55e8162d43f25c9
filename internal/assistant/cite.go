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
	partial string // an unfinished UTF-8 sequence ending the last delta
	spaces  int    // spaces not yet emitted
	pending []byte // a possible marker, from its "["
	out     []byte // what one Write emits; reused, as the filter runs once per delta
	ticks   int    // backticks in the current run
	code    int    // length of the backtick run that opened code, 0 outside
	cited   map[int]bool
	dropped int // numbers removed
}

func newCiteFilter(n int, emit func(string) error) *citeFilter {
	return &citeFilter{n: n, emit: emit, cited: map[int]bool{}}
}

// Write filters one delta and emits what is settled.
func (f *citeFilter) Write(delta string) error {
	f.out = f.out[:0]
	if f.partial != "" {
		delta = f.partial + delta
		f.partial = ""
	}
	// A delta may end inside a UTF-8 sequence; keep its start for the next.
	if i := incompleteTail(delta); i < len(delta) {
		delta, f.partial = delta[:i], delta[i:]
	}
	for _, r := range delta {
		f.feed(r)
	}
	// A model's tokens mostly carry their leading space, so what a delta
	// lets through is most often the delta itself, which needs no copy.
	if string(f.out) == delta {
		f.out = f.out[:0]
		if delta == "" {
			return nil
		}
		return f.emit(delta)
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
	f.out = f.out[:0]
	f.writeSpaces()
	f.out = append(f.out, f.pending...)
	f.out = append(f.out, f.partial...)
	f.partial = ""
	f.pending = f.pending[:0]
	return f.flushOut()
}

func (f *citeFilter) flushOut() error {
	if len(f.out) == 0 {
		return nil
	}
	return f.emit(string(f.out))
}

// writeSpaces emits the spaces held back.
func (f *citeFilter) writeSpaces() {
	for ; f.spaces > 0; f.spaces-- {
		f.out = append(f.out, ' ')
	}
}

func (f *citeFilter) feed(r rune) {
	if len(f.pending) > 0 {
		switch {
		case r == ']':
			f.pending = append(f.pending, ']')
			if m := f.marker(string(f.pending)); m != "" {
				f.writeSpaces()
				f.out = append(f.out, m...)
			}
			f.spaces = 0
			f.pending = f.pending[:0]
		case r >= '0' && r <= '9', r == ',', r == ' ', r == '^' && len(f.pending) == 1:
			f.pending = append(f.pending, byte(r))
			if len(f.pending) > maxMarker {
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
		f.writeSpaces()
		f.ticks++
		f.out = append(f.out, '`')
		return
	}
	if f.ticks > 0 {
		f.endTicks()
	}
	if f.code > 0 {
		f.out = utf8.AppendRune(f.out, r) // arr[0] in code is not a citation
		return
	}
	switch r {
	case ' ':
		f.spaces++
	case '[':
		f.pending = append(f.pending, '[')
	default:
		f.writeSpaces()
		f.out = utf8.AppendRune(f.out, r)
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
	f.writeSpaces()
	f.out = append(f.out, f.pending...)
	f.pending = f.pending[:0]
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
