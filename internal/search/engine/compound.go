package engine

import (
	"strings"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

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

// Query-time compounds. Their matches count about as much as the reader's
// words they stand for: a reader who typed "team space" asked for
// "teamspace" as much as for the two words.
const (
	// joinedWeight weighs the joined form of a phrase's words: more than
	// one word, since a chunk holding the joined form holds what the
	// reader's words and their phrase would have found together, yet
	// less than all of them, since a rare token's idf is high already.
	joinedWeight = 1.5
	// splitWeight weighs the phrase of a word's two parts.
	splitWeight = 1.0
	// minSplitPart is the shortest part a word is split into: shorter
	// ones ("a", "in", "on") are everywhere and would split any word.
	minSplitPart = 3
	// minSplitPartChunks is how many chunks a part must be in to be taken
	// for a word of the docs rather than a chance string.
	minSplitPartChunks = 2
	// maxSplitWholeChunks: a word in more chunks than this is the docs'
	// own word, and is searched as it is, not also split.
	maxSplitWholeChunks = 2
)

// expandCompounds adds to s.matches the compounds of q's optional words:
// the joined form of each phrase of a few words ("team space" also matches
// "teamspace"), and the phrase of the two parts of a word the docs hardly
// hold but whose parts they do ("teamspace" also matches "team space" and
// "team-space"). A compound the query has as a term already is not added
// twice.
func (di *Index) expandCompounds(terms []Term, s *queryScratch) {
	for _, t := range terms {
		if t.Required || t.Prefix {
			continue
		}
		switch {
		case len(t.Words) >= 2 && len(t.Words) <= maxJoinedPieces:
			pl := di.joinedPostings(t.Words, s)
			if pl == nil || hasSingleWord(terms, s.stem) {
				continue
			}
			if m := di.withoutPhrase(pl, t, s); len(m.docs) > 0 {
				di.addMatch(m, t.weight()*joinedWeight, s)
			}
		case len(t.Words) == 1:
			left, right := di.splitPostings(t.Words[0], s)
			if left == nil {
				continue
			}
			s.pair[0], s.pair[1] = left, right
			if m := s.exactPhrase(s.pair[:]); len(m.docs) > 0 {
				di.addMatch(m, t.weight()*splitWeight, s)
			}
			s.pair[0], s.pair[1] = nil, nil
		}
	}
}

// withoutPhrase is the match of a joined form's postings in the chunks
// where the phrase t it joins is not found: a chunk that wrote the words
// with punctuation between ("socket.io") holds both the phrase and, from
// indexTokens, the joined form, and the phrase counts for it already. Only
// a chunk that wrote them run together is the joined form's to find.
func (di *Index) withoutPhrase(pl *postings, t Term, s *queryScratch) match {
	phrase := di.termMatches(t, s)
	if len(phrase.docs) == 0 {
		return postingsMatch(pl)
	}
	docsStart, wtfStart := len(s.matchDocs), len(s.matchWTF)
	at := 0
	for i, d := range pl.docs {
		if at = seek(phrase.docs, at, d); at < len(phrase.docs) && phrase.docs[at] == d {
			continue
		}
		s.matchDocs = append(s.matchDocs, d)
		s.matchWTF = append(s.matchWTF, pl.wtf[i])
	}
	return s.matchesFrom(docsStart, wtfStart)
}

// hasSingleWord reports whether terms have the one word whose stem is stem.
func hasSingleWord(terms []Term, stem []byte) bool {
	for _, t := range terms {
		if len(t.Words) == 1 && stemToken(t.Words[0]) == string(stem) {
			return true
		}
	}
	return false
}

// joinedPostings returns the postings of words run together ("team",
// "space": "teamspace"), nil when the index has no such token or the words
// are not plain ASCII names. The joined form and its stem are built in s.
func (di *Index) joinedPostings(words []string, s *queryScratch) *postings {
	s.joined = s.joined[:0]
	for _, w := range words {
		if !isJoinablePiece(w) {
			return nil
		}
		s.joined = append(s.joined, w...)
	}
	if len(s.joined) > maxJoinedBytes {
		return nil
	}
	s.stem = appendStem(s.stem[:0], s.joined, &s.stemRunes)
	return di.terms[string(s.stem)]
}

// splitPostings finds the best split of word in two parts the index holds,
// each at least minSplitPart letters and in minSplitPartChunks chunks, and
// returns their postings (nil, nil when there is none): the split whose
// rarer part is the most common. A word the docs hold in more than
// maxSplitWholeChunks chunks is not split.
func (di *Index) splitPostings(word string, s *queryScratch) (left, right *postings) {
	if len(word) < 2*minSplitPart || len(word) > maxStemBytes || !isASCIILetters(word) {
		return nil, nil
	}
	s.stem = appendStem(s.stem[:0], word, &s.stemRunes)
	if pl := di.terms[string(s.stem)]; pl != nil && len(pl.docs) > maxSplitWholeChunks {
		return nil, nil
	}
	best := 0
	for i := minSplitPart; i <= len(word)-minSplitPart; i++ {
		s.stem = appendStem(s.stem[:0], word[:i], &s.stemRunes)
		l := di.terms[string(s.stem)]
		if l == nil || len(l.docs) < minSplitPartChunks || len(l.docs) <= best {
			continue
		}
		s.stem = appendStem(s.stem[:0], word[i:], &s.stemRunes)
		r := di.terms[string(s.stem)]
		if r == nil || len(r.docs) < minSplitPartChunks || len(r.docs) <= best {
			continue
		}
		left, right, best = l, r, min(len(l.docs), len(r.docs))
	}
	return left, right
}

// appendStem appends to dst the stem stemToken gives a lower-case ASCII
// word, without making a string of it: the Porter stem of a word of
// letters, the word itself otherwise. runes is the stemmer's room.
func appendStem[W string | []byte](dst []byte, w W, runes *[maxStemBytes]rune) []byte {
	letters := len(w) > 2 && len(w) <= maxStemBytes
	for i := 0; i < len(w) && letters; i++ {
		letters = w[i] >= 'a' && w[i] <= 'z'
	}
	if !letters {
		return append(dst, w...)
	}
	word := runes[:0]
	for i := 0; i < len(w); i++ {
		word = append(word, rune(w[i]))
	}
	for _, r := range porterstemmer.Stem(word) {
		dst = append(dst, byte(r))
	}
	return dst
}
