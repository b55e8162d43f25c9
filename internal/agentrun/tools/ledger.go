package tools

import (
	"maps"
	"slices"
	"strings"
)

// fileState is what the ledger knows of one path it has touched: how it was when the
// workspace opened and how it is now.
type fileState struct {
	origExists bool
	orig       string
	exists     bool
	cur        string
}

// ledger records every path the tools have written, so that the turn's changes and their size
// can be computed against the original checkout (a file edited back to its original text is no
// change at all, and five edits of the same line are one changed line).
type ledger struct {
	files map[string]fileState
	src   map[string]string // current path → original path, for files that were moved
}

func newLedger() *ledger {
	return &ledger{files: map[string]fileState{}, src: map[string]string{}}
}

func (l *ledger) clone() *ledger {
	return &ledger{files: maps.Clone(l.files), src: maps.Clone(l.src)}
}

// touch records p's original state the first time p is written.
func (l *ledger) touch(p string, exists bool, content string) {
	if _, ok := l.files[p]; !ok {
		l.files[p] = fileState{origExists: exists, orig: content, exists: exists, cur: content}
	}
}

func (l *ledger) write(p, content string) {
	st := l.files[p]
	st.exists, st.cur = true, content
	l.files[p] = st
}

func (l *ledger) remove(p string) {
	st := l.files[p]
	st.exists, st.cur = false, ""
	l.files[p] = st
	delete(l.src, p)
}

// move records that the file at from (touched) is now at to (touched, absent before).
func (l *ledger) move(from, to string) {
	content := l.files[from].cur
	origin, ok := l.src[from]
	if !ok {
		origin = from
	}
	l.remove(from)
	l.write(to, content)
	if origin != to {
		l.src[to] = origin
	} else {
		delete(l.src, to)
	}
}

// summary returns the changes against the original checkout, sorted by path, and the lines
// added plus removed.
func (l *ledger) summary() ([]Change, int) {
	var changes []Change
	lines := 0
	consumed := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(l.files)) {
		st := l.files[p]
		if !st.exists {
			continue
		}
		if origin, ok := l.src[p]; ok {
			ost := l.files[origin]
			if !ost.exists && ost.origExists && !st.origExists {
				changes = append(changes, Change{Path: p, Kind: ChangeMoved, From: origin})
				lines += diffLines(ost.orig, st.cur)
				consumed[origin] = true
				continue
			}
		}
		switch {
		case !st.origExists:
			changes = append(changes, Change{Path: p, Kind: ChangeCreated})
			lines += countLines(st.cur)
		case st.cur != st.orig:
			changes = append(changes, Change{Path: p, Kind: ChangeModified})
			lines += diffLines(st.orig, st.cur)
		}
	}
	for p, st := range l.files {
		if !st.exists && st.origExists && !consumed[p] {
			changes = append(changes, Change{Path: p, Kind: ChangeDeleted})
			lines += countLines(st.orig)
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return changes, lines
}

// countLines counts the lines of a text file; binary content counts as none.
func countLines(s string) int {
	if binaryReason([]byte(s)) != "" {
		return 0
	}
	return len(splitLines(s))
}

// maxDiffEdits bounds the work of diffLines; past it, the common prefix and suffix are trimmed
// and the rest is counted as removed and added, which can only overstate the change.
const maxDiffEdits = 2000

// diffLines returns the lines added plus the lines removed between a and b, as a line diff
// would count them (Myers' algorithm, edit distance without substitutions).
func diffLines(a, b string) int {
	if a == b || binaryReason([]byte(a)) != "" || binaryReason([]byte(b)) != "" {
		return 0
	}
	x, y := splitLines(a), splitLines(b)
	for len(x) > 0 && len(y) > 0 && x[0] == y[0] {
		x, y = x[1:], y[1:]
	}
	for len(x) > 0 && len(y) > 0 && x[len(x)-1] == y[len(y)-1] {
		x, y = x[:len(x)-1], y[:len(y)-1]
	}
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return n + m
	}
	limit := min(n+m, maxDiffEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	for d := 0; d <= limit; d++ {
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				i = v[off+k+1]
			} else {
				i = v[off+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i, j = i+1, j+1
			}
			v[off+k] = i
			if i >= n && j >= m {
				return d
			}
		}
	}
	return n + m
}
