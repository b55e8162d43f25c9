package search

import "strings"

// Compounds and their parts. Docs write one name several ways: "team space",
// "team-space" and "teamspace"; "dry run", "--dry-run", "dry_run" and
// "dryRun". The index holds a word joined by punctuation both as its pieces
// and as their joined form (indexTokens), as it holds a camel-case word
// whole and as its parts; at query time two neighbouring words also search
// their joined form, and a long word that the index's vocabulary splits in
// two known words also searches the phrase of them (see expandCompounds).

// Bounds of a joined form: a run of more pieces, or a longer one, is a path
// or a URL rather than a name someone would write without its punctuation.
const (
	maxJoinedPieces = 4
	maxJoinedBytes  = 40
)

// isJoiner reports whether c joins the pieces of one name: "team-space",
// "dry_run", "api/v1/users", "user.profile.name".
func isJoiner(c byte) bool {
	return c == '-' || c == '_' || c == '/' || c == '.'
}

// indexTokens is analyzedTokens for the index: a run of ASCII pieces joined
// each by one joiner ("team-space", "--dry-run", "api/v1/users") is first
// given as its joined form ("teamspace", "dryrun", "apiv1users"), then as
// the tokens analyzedTokens gives it, so that a query written with the
// pieces run together finds it, and the pieces still follow each other for
// phrases. A joined form is no substring of text: it is a new string.
func indexTokens(text string, fn func(raw string)) {
	j := runJoiner{text: text, fn: fn}
	analyzedSpans(text, j.span)
	j.flush()
}

// runJoiner gathers the tokens of one run of joined pieces, to give the
// run's joined form before them.
type runJoiner struct {
	text string
	fn   func(raw string)
	// held are the run's tokens so far: its pieces and, after each, the
	// parts analysis cut it in (camel case).
	held [2 * maxJoinedPieces]span
	n    int
	// pieces counts the run's pieces; pieceEnd is where the last ends.
	pieces   int
	pieceEnd int
	// joinable is false once the run has a piece or a token the joined
	// form may not hold (not ASCII, no letter) or too many.
	joinable bool
}

type span struct{ start, end int }

// span takes the next token, text[start:end].
func (j *runJoiner) span(start, end int) {
	switch {
	case j.n > 0 && start < j.pieceEnd:
		// A part of the last piece.
		j.hold(start, end)
	case j.n > 0 && start == j.pieceEnd+1 && isJoiner(j.text[j.pieceEnd]):
		j.pieces++
		j.pieceEnd = end
		j.joinable = j.joinable && j.pieces <= maxJoinedPieces && isJoinablePiece(j.text[start:end])
		j.hold(start, end)
	default:
		j.flush()
		j.pieces, j.pieceEnd = 1, end
		j.joinable = isJoinablePiece(j.text[start:end])
		j.hold(start, end)
	}
}

// hold keeps a token of the run, or gives the run's tokens up to now when
// there is no room left (the run is then not joined).
func (j *runJoiner) hold(start, end int) {
	if j.n == len(j.held) {
		j.joinable = false
		j.giveHeld()
	}
	j.held[j.n] = span{start, end}
	j.n++
}

// flush gives the run's joined form, when it has one, and its tokens.
func (j *runJoiner) flush() {
	if j.n == 0 {
		return
	}
	if j.joinable && j.pieces > 1 {
		if joined, ok := j.joined(); ok {
			j.fn(joined)
		}
	}
	j.giveHeld()
	j.pieces = 0
}

func (j *runJoiner) giveHeld() {
	for _, s := range j.held[:j.n] {
		j.fn(j.text[s.start:s.end])
	}
	j.n = 0
}

// joined is the run's pieces run together, when not too long.
func (j *runJoiner) joined() (string, bool) {
	first := j.held[0].start
	size := j.pieceEnd - first - (j.pieces - 1)
	if size > maxJoinedBytes {
		return "", false
	}
	var b strings.Builder
	b.Grow(size)
	for i := first; i < j.pieceEnd; i++ {
		if c := j.text[i]; !isJoiner(c) {
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// isJoinablePiece reports whether a piece may be part of a joined form:
// ASCII letters and digits with at least one letter, so that version
// numbers ("1.2.3") and dates are not run together.
func isJoinablePiece(w string) bool {
	letter := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !isAlnumASCII(c) {
			return false
		}
		letter = letter || c > '9'
	}
	return letter
}
