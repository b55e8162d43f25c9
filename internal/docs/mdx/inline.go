package mdx

import (
	"bytes"
	"html"
	"regexp"
	"strings"
)

// special reports whether inline scanning has to look closer at c.
func special(c byte) bool {
	switch c {
	case '\n', '\\', '`', '<', '{', '[', '!', '*', '_', '~', '&', '|', '$':
		return true
	}
	return false
}

// inline reads inline content from s.pos up to limit. With stopAtEOL it stops
// at a line break that no construct spans; otherwise line breaks are spaces.
func (s *scanner) inline(limit int, stopAtEOL bool) {
	src := s.src[:limit]
	start := s.pos
	for s.pos < limit {
		i := s.pos
		j := i
		for j < limit && !special(src[j]) {
			j++
		}
		if j > i {
			s.addText(src[i:j])
			s.pos = j
			continue
		}
		c := src[i]
		switch c {
		case '\n':
			if stopAtEOL {
				return
			}
			s.addByte(' ')
			s.advance(i + 1)
		case '\\':
			switch {
			case i+1 < limit && isASCIIPunct(src[i+1]):
				s.addPlain(src[i+1 : i+2])
				s.addMD(src[i : i+2])
				s.pos = i + 2
			default:
				s.addByte('\\')
				s.pos = i + 1
			}
		case '`', '$':
			s.codeSpan(src, i)
		case '<':
			s.inlineTag(src, i)
		case '{':
			s.inlineExpr(src, i)
		case '[':
			if !s.link(src, i, false) {
				s.addByte('[')
				s.pos = i + 1
			}
		case '!':
			if i+1 < limit && src[i+1] == '[' && s.link(src, i+1, true) {
				break
			}
			s.addByte('!')
			s.pos = i + 1
		case '*', '_', '~':
			s.emphasis(src, i, start)
		case '&':
			s.entity(src, i)
		case '|':
			if s.tableRow {
				s.addPlain([]byte(" | "))
				s.addMD([]byte{'|'})
			} else {
				s.addByte('|')
			}
			s.pos = i + 1
		default:
			s.addByte(c)
			s.pos = i + 1
		}
	}
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// codeSpan reads inline code: a run of n backticks up to the next run of
// exactly n, within the paragraph; without one, the backticks are text. Math
// ($x$, $$x$$) is read the same way and kept with its dollar signs, since
// MDX with math support does not look for tags or expressions inside it.
func (s *scanner) codeSpan(src []byte, i int) {
	c := src[i]
	n := 0
	for i+n < len(src) && src[i+n] == c {
		n++
	}
	memo := &s.noCloser[0]
	if c == '$' {
		memo = &s.noCloser[1]
	}
	if n < len(memo) && i < memo[n] {
		s.addText(src[i : i+n]) // an earlier run of the same length found no closer up to memo[n]
		s.pos = i + n
		return
	}
	limit := min(len(src), i+32<<10)
	for j := i + n; j < limit; {
		switch src[j] {
		case '\n':
			if blankLineAt(src, j) || s.tableRow {
				limit = j
				continue
			}
			j++
		case c:
			m := 0
			for j+m < len(src) && src[j+m] == c {
				m++
			}
			if m != n {
				j += m
				continue
			}
			body := src[i+n : j]
			if c == '$' {
				body = src[i : j+m]
			} else if len(body) > 2 && body[0] == ' ' && body[len(body)-1] == ' ' {
				body = body[1 : len(body)-1]
			}
			s.addPlain(bytes.ReplaceAll(body, []byte{'\n'}, []byte{' '}))
			if s.markdown {
				s.addMD(bytes.ReplaceAll(src[i:j+m], []byte{'\n'}, []byte{' '}))
			}
			s.advance(j + m)
			return
		case '\\':
			if c == '$' {
				j++
			}
			j++
		default:
			j++
		}
	}
	if n < len(memo) {
		memo[n] = limit
	}
	s.addText(src[i : i+n])
	s.pos = i + n
}

// inlineTag reads a JSX tag (or what MDX would take for one) inside text.
func (s *scanner) inlineTag(src []byte, i int) {
	if i+1 >= len(src) || isSpace(src[i+1]) {
		s.addByte('<')
		s.pos = i + 1
		return
	}
	if bytes.HasPrefix(src[i:], []byte("<!--")) {
		s.htmlComment()
		return
	}
	if s.deadEnd {
		s.addByte('<')
		s.pos = i + 1
		return
	}
	t, err := parseTag(src, i)
	if err != nil {
		line := s.line + bytes.Count(src[i:min(err.at, len(src))], []byte{'\n'})
		s.problem(line, err.msg)
		if err.at >= len(src) && len(src) == len(s.src) {
			s.deadEnd = true
		}
		s.addByte('<')
		s.pos = i + 1
		return
	}
	s.tag(t, false)
	if t.name == "br" {
		s.addByte(' ')
	}
}

// inlineExpr reads a JSX expression inside text.
func (s *scanner) inlineExpr(src []byte, i int) {
	if s.deadEnd {
		s.addByte('{')
		s.pos = i + 1
		return
	}
	e, ok := exprEnd(src, i)
	if !ok {
		s.problem(s.line, "{ is never closed (add the matching }, or write \\{ for a literal brace)")
		s.deadEnd = len(src) == len(s.src)
		s.addByte('{')
		s.pos = i + 1
		return
	}
	s.emit(token{kind: tExpr, line: s.line, text: string(src[i+1 : e-1])})
	s.advance(e)
}

// link reads a Markdown link or image whose label starts at src[i] == '['.
// A link's label is read as inline content and its target recorded; an
// image is dropped whole. Shortcut references ([text] alone) are left as text.
func (s *scanner) link(src []byte, i int, image bool) bool {
	le := s.labelEnd(src, i)
	if le < 0 || le+1 >= len(src) {
		return false
	}
	var target string
	var end int
	switch src[le+1] {
	case '(':
		t, e, ok := destination(src, le+2)
		if !ok {
			return false
		}
		target, end = t, e
	case '[':
		re := s.labelEnd(src, le+1)
		if re < 0 {
			return false
		}
		end = re + 1
	default:
		return false
	}
	if image {
		if s.markdown {
			s.addMD([]byte(collapse(string(src[i+1 : le]))))
		}
		s.advance(end)
		return true
	}
	at := -1
	if end > 0 && src[le+1] == '(' {
		s.emit(token{kind: tLink, line: s.line, text: target})
		at = len(s.toks) - 1
	}
	s.advance(i + 1)
	first := len(s.toks)
	inline := at >= 0
	if inline {
		s.addMD([]byte{'['})
	}
	s.inline(le, false)
	if inline && s.markdown {
		s.addMD([]byte("](" + markdownTarget(target, s.linkTo) + ")"))
	}
	s.flush()
	if at >= 0 {
		var b strings.Builder
		for _, t := range s.toks[first:] {
			if t.kind == tText {
				b.WriteString(t.text)
			}
		}
		s.toks[at].extra = collapse(b.String())
	}
	s.advance(end)
	return true
}

// labelEnd returns the offset of the ']' that closes the label starting at
// src[i] == '[', or -1. Labels nest, skip code spans and escapes, and do not
// cross a blank line. The brackets of a whole paragraph are matched at once,
// with a stack, so that a run of '[' costs linear time.
func (s *scanner) labelEnd(src []byte, i int) int {
	if i < s.labelFrom || i >= s.labelTo {
		s.matchLabels(i)
	}
	e, ok := s.labels[i]
	if !ok || e < 0 || e >= len(src) {
		return -1
	}
	return e
}

func (s *scanner) matchLabels(i int) {
	src := s.src
	end := i
	for end < len(src) && !blankLineAt(src, end) {
		if k := bytes.IndexByte(src[end+1:], '\n'); k >= 0 {
			end += k + 1
		} else {
			end = len(src)
		}
	}
	if s.labels == nil {
		s.labels = map[int]int{}
	}
	clear(s.labels)
	var stack []int
	var noCloser [16]bool
	for j := i; j < end; j++ {
		switch src[j] {
		case '\\':
			j++
		case '[':
			stack = append(stack, j)
		case ']':
			if n := len(stack); n > 0 {
				s.labels[stack[n-1]] = j
				stack = stack[:n-1]
			}
		case '`':
			n := 0
			for j+n < end && src[j+n] == '`' {
				n++
			}
			if n < len(noCloser) && noCloser[n] {
				j += n - 1
				continue
			}
			if k := closingRun(src[:end], j+n, '`', n); k >= 0 {
				j = k + n - 1
			} else {
				if n < len(noCloser) {
					noCloser[n] = true
				}
				j += n - 1
			}
		}
	}
	for _, k := range stack {
		s.labels[k] = -1
	}
	s.labelFrom, s.labelTo = i, max(end, i+1)
}

// closingRun returns the offset of the next run of exactly n bytes c in src
// from j, or -1.
func closingRun(src []byte, j int, c byte, n int) int {
	for j < len(src) {
		k := bytes.IndexByte(src[j:], c)
		if k < 0 {
			return -1
		}
		j += k
		m := 0
		for j+m < len(src) && src[j+m] == c {
			m++
		}
		if m == n {
			return j
		}
		j += m
	}
	return -1
}

// destination reads "target" or "target "title"" up to ')' starting at src[i].
func destination(src []byte, i int) (string, int, bool) {
	i = skipJSXSpace(src, i)
	var target string
	if i < len(src) && src[i] == '<' {
		e := i + 1
		for e < len(src) && src[e] != '>' && src[e] != '\n' && src[e] != '<' {
			if src[e] == '\\' {
				e++
			}
			e++
		}
		if e >= len(src) || src[e] != '>' {
			return "", 0, false
		}
		target = string(src[i+1 : e])
		i = e + 1
	} else {
		depth := 0
		e := i
	loop:
		for ; e < len(src); e++ {
			switch c := src[e]; {
			case c == '\\':
				e++
			case c == '(':
				depth++
				if depth > 32 {
					return "", 0, false
				}
			case c == ')':
				if depth == 0 {
					break loop
				}
				depth--
			case c <= ' ' || e-i > 4096:
				break loop
			}
		}
		if e > len(src) {
			return "", 0, false
		}
		target = string(src[i:e])
		i = e
	}
	i = skipJSXSpace(src, i)
	if i < len(src) && (src[i] == '"' || src[i] == '\'' || src[i] == '(') {
		closer := src[i]
		if closer == '(' {
			closer = ')'
		}
		e := i + 1
		for e < len(src) && src[e] != closer {
			if src[e] == '\\' {
				e++
			} else if src[e] == '\n' && blankLineAt(src, e) || e-i > 4096 {
				return "", 0, false
			}
			e++
		}
		if e >= len(src) {
			return "", 0, false
		}
		i = skipJSXSpace(src, e+1)
	}
	if i >= len(src) || src[i] != ')' {
		return "", 0, false
	}
	return unescapeTarget(target), i + 1, true
}

// unescapeTarget removes backslash escapes and decodes character references
// in a link destination.
func unescapeTarget(t string) string {
	if strings.IndexByte(t, '\\') >= 0 {
		var b strings.Builder
		for i := 0; i < len(t); i++ {
			if t[i] == '\\' && i+1 < len(t) && isASCIIPunct(t[i+1]) {
				i++
			}
			b.WriteByte(t[i])
		}
		t = b.String()
	}
	if strings.IndexByte(t, '&') >= 0 {
		t = html.UnescapeString(t)
	}
	return t
}

// emphasis drops a run of *, _ or ~~ that opens or closes emphasis, and keeps
// one that is plainly text (between spaces, or inside a word for _).
func (s *scanner) emphasis(src []byte, i, start int) {
	c := src[i]
	n := 0
	for i+n < len(src) && src[i+n] == c {
		n++
	}
	prev, next := byte(' '), byte(' ')
	if i > start {
		prev = src[i-1]
	}
	if i+n < len(src) {
		next = src[i+n]
	}
	opens := !isSpace(next) && (isSpace(prev) || isASCIIPunct(prev))
	closes := !isSpace(prev) && (isSpace(next) || isASCIIPunct(next))
	if c == '~' && n < 2 || !opens && !closes {
		s.addPlain(src[i : i+n])
	}
	s.addMD(src[i : i+n])
	s.pos = i + n
}

// entityRE matches an HTML character reference.
var entityRE = regexp.MustCompile(`^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)

func (s *scanner) entity(src []byte, i int) {
	if m := entityRE.Find(src[i:min(len(src), i+40)]); m != nil {
		s.addPlain([]byte(html.UnescapeString(string(m))))
		s.addMD(m)
		s.pos = i + len(m)
		return
	}
	s.addByte('&')
	s.pos = i + 1
}
