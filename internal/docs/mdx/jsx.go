package mdx

import (
	"html"
	"unicode"
	"unicode/utf8"
)

// attr is one attribute of a JSX tag.
type attr struct {
	name  string // "" for a spread {...props}
	value string // the decoded literal, or the source of an expression
	expr  bool   // value is a {…} expression
	set   bool   // the attribute has a value (name="…" rather than a bare name)
}

// tag is a parsed JSX tag: <Name attr="…">, </Name>, <Name />, <> or </>.
type tag struct {
	name    string
	closing bool
	self    bool
	attrs   []attr
	end     int // offset just after the closing '>'
}

// syntaxError says why what follows a '<' or '{' is not valid MDX.
type syntaxError struct {
	at  int // offset of the offending byte
	msg string
}

// maxNest bounds the recursion of template literals inside expressions, so
// hostile input cannot exhaust the stack.
const maxNest = 64

// parseTag parses the JSX tag that starts at src[p] == '<'. It follows the
// rules of micromark-extension-mdx-jsx: no whitespace right after '<', names
// made of JS identifier characters and '-', optional .member or :local parts,
// attribute values in quotes or braces. A blank line inside a tag ends it with
// an error, as MDX does not let a tag run across paragraphs.
func parseTag(src []byte, p int) (tag, *syntaxError) {
	var t tag
	i := p + 1
	if i < len(src) && src[i] == '/' {
		t.closing = true
		i = skipJSXSpace(src, i+1)
	}
	if i >= len(src) {
		return t, &syntaxError{i, "the tag is never finished (add >)"}
	}
	if src[i] == '>' {
		t.end = i + 1
		return t, nil // fragment <> or </>
	}
	name, j, err := parseName(src, i, "tag name")
	if err != nil {
		return t, err
	}
	t.name = name
	i = j
	for {
		i = skipJSXSpace(src, i)
		if i >= len(src) {
			return t, &syntaxError{i, "the tag <" + t.name + " is never finished (add > or />)"}
		}
		if blankLineAt(src, i) {
			return t, &syntaxError{i, "the tag <" + t.name + " is never finished before the blank line (add > or />)"}
		}
		c := src[i]
		switch {
		case c == '>':
			t.end = i + 1
			return t, nil
		case c == '/':
			k := skipJSXSpace(src, i+1)
			if k < len(src) && src[k] == '>' {
				t.self = true
				t.end = k + 1
				return t, nil
			}
			return t, &syntaxError{k, "expected > after / in <" + t.name + " />"}
		case c == '{':
			end, ok := exprEnd(src, i)
			if !ok {
				return t, &syntaxError{i, "the { in <" + t.name + "> is never closed (add })"}
			}
			t.attrs = append(t.attrs, attr{value: string(src[i+1 : end-1]), expr: true, set: true})
			i = end
		default:
			r, _ := utf8.DecodeRune(src[i:])
			if !idStart(r) {
				return t, &syntaxError{i, "unexpected " + quoteRune(r) + " in <" + t.name + "> where an attribute name or the end of the tag belongs"}
			}
			an, k, err := parseName(src, i, "attribute name")
			if err != nil {
				return t, err
			}
			a := attr{name: an}
			k2 := skipJSXSpace(src, k)
			if k2 < len(src) && src[k2] == '=' {
				v := skipJSXSpace(src, k2+1)
				if v >= len(src) {
					return t, &syntaxError{v, "attribute " + an + " of <" + t.name + "> has no value"}
				}
				switch src[v] {
				case '"', '\'':
					q := src[v]
					e := v + 1
					for e < len(src) && src[e] != q {
						if blankLineAt(src, e) {
							return t, &syntaxError{v, "the quote of attribute " + an + " in <" + t.name + "> is never closed"}
						}
						e++
					}
					if e >= len(src) {
						return t, &syntaxError{v, "the quote of attribute " + an + " in <" + t.name + "> is never closed"}
					}
					a.value = html.UnescapeString(string(src[v+1 : e]))
					a.set = true
					k = e + 1
				case '{':
					end, ok := exprEnd(src, v)
					if !ok {
						return t, &syntaxError{v, "the { of attribute " + an + " in <" + t.name + "> is never closed (add })"}
					}
					a.value = string(src[v+1 : end-1])
					a.expr = true
					a.set = true
					k = end
				default:
					r, _ := utf8.DecodeRune(src[v:])
					return t, &syntaxError{v, "the value of attribute " + an + " in <" + t.name + "> must be in quotes or braces, not start with " + quoteRune(r)}
				}
			}
			t.attrs = append(t.attrs, a)
			i = k
		}
	}
}

// parseName reads a JSX name at src[i]: an identifier (with '-'), then either
// .member parts (tag names only) or one :local part, with optional whitespace
// around the '.' or ':'.
func parseName(src []byte, i int, what string) (string, int, *syntaxError) {
	r, _ := utf8.DecodeRune(src[i:])
	if !idStart(r) {
		msg := "unexpected " + quoteRune(r) + " before the " + what
		switch {
		case r == '!':
			msg += " (HTML comments are not supported in MDX; use {/* … */})"
		case what == "tag name":
			msg += " (write \\< or &lt; for a literal <, or put it in backticks)"
		}
		return "", i, &syntaxError{i, msg}
	}
	j := identEnd(src, i)
	name := string(src[i:j])
	var sep byte
	for sep != ':' {
		k := skipJSXSpace(src, j)
		if k >= len(src) {
			break
		}
		s := src[k]
		if (s != '.' && s != ':') || (s == '.' && (what != "tag name" || sep == ':')) || (s == ':' && sep == '.') {
			break
		}
		m := skipJSXSpace(src, k+1)
		r, _ := utf8.DecodeRune(src[m:])
		if m >= len(src) || !idStart(r) {
			msg := "unexpected " + quoteRune(r) + " after " + string(s) + " in the " + what + " " + name
			if s == ':' && m < len(src) && src[m] == '/' {
				msg = "<" + name + ":…> looks like an autolink, which MDX does not support (write [text](url) instead)"
			}
			return "", m, &syntaxError{m, msg}
		}
		e := identEnd(src, m)
		name += string(s) + string(src[m:e])
		j = e
		sep = s
	}
	return name, j, nil
}

// identEnd returns the end of the identifier (JS identifier characters and
// '-') that starts at src[i].
func identEnd(src []byte, i int) int {
	for i < len(src) {
		r, n := utf8.DecodeRune(src[i:])
		if !idCont(r) {
			break
		}
		i += n
	}
	return i
}

func idStart(r rune) bool {
	return r == '$' || r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

func idCont(r rune) bool {
	return idStart(r) || r == '-' || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc) ||
		r == '\u200c' || r == '\u200d'
}

func quoteRune(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "end of input"
	case r == '\n':
		return "a line break"
	case r == '`':
		return "a backtick"
	}
	return "`" + string(r) + "`"
}

// skipJSXSpace skips whitespace, stopping at a blank line, which no tag may
// span.
func skipJSXSpace(src []byte, i int) int {
	for i < len(src) && isSpace(src[i]) {
		if src[i] == '\n' && blankLineAt(src, i) {
			break
		}
		i++
	}
	return i
}

// blankLineAt reports whether src[i] is a line break that ends a line with
// only whitespace after it before the next line break (a blank line follows).
func blankLineAt(src []byte, i int) bool {
	if src[i] != '\n' {
		return false
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case ' ', '\t':
			continue
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

// exprEnd returns the offset just after the '}' that closes the expression
// starting at src[p] == '{'. Like MDX with acorn, it reads the content as
// JavaScript, so braces inside strings, template literals and comments do not
// count. JSX text inside an expression can hold a lone apostrophe, which
// JavaScript would read as an unterminated string; in that case it falls back
// to counting braces, which is what MDX does without acorn.
func exprEnd(src []byte, p int) (int, bool) {
	if e := jsBlock(src, p+1, 0); e > 0 {
		return e, true
	}
	depth := 0
	for i := p; i < len(src); i++ {
		switch src[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// jsBlock scans JavaScript from src[i], inside an open '{', and returns the
// offset just after the '}' that closes it, or -1.
func jsBlock(src []byte, i, nest int) int {
	if nest > maxNest {
		return -1
	}
	depth := 0
	for i < len(src) {
		switch src[i] {
		case '{':
			depth++
			i++
		case '}':
			if depth == 0 {
				return i + 1
			}
			depth--
			i++
		case '\'', '"':
			i = jsString(src, i)
			if i < 0 {
				return -1
			}
		case '`':
			i = jsTemplate(src, i+1, nest+1)
			if i < 0 {
				return -1
			}
		case '/':
			i = jsComment(src, i)
			if i < 0 {
				return -1
			}
		default:
			i++
		}
	}
	return -1
}

// jsString returns the offset after the quoted string at src[i], or -1 if the
// line ends first.
func jsString(src []byte, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '\n':
			return -1
		case q:
			return j + 1
		}
	}
	return -1
}

// jsTemplate returns the offset after the template literal whose body starts
// at src[i], or -1.
func jsTemplate(src []byte, i, nest int) int {
	for i < len(src) {
		switch src[i] {
		case '\\':
			i += 2
		case '`':
			return i + 1
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				i = jsBlock(src, i+2, nest)
				if i < 0 {
					return -1
				}
			} else {
				i++
			}
		default:
			i++
		}
	}
	return -1
}

// jsComment skips a comment at src[i] == '/', or just the slash when no
// comment starts there. It returns -1 for a block comment that never ends.
func jsComment(src []byte, i int) int {
	if i+1 >= len(src) {
		return i + 1
	}
	switch src[i+1] {
	case '/':
		for j := i + 2; j < len(src); j++ {
			if src[j] == '\n' {
				return j
			}
		}
		return len(src)
	case '*':
		for j := i + 2; j+1 < len(src); j++ {
			if src[j] == '*' && src[j+1] == '/' {
				return j + 2
			}
		}
		return -1
	}
	return i + 1
}

// jsIncomplete reports whether the ESM source has open brackets, an
// unterminated template literal or an unterminated block comment, so that MDX
// would keep reading past a blank line. Quoted strings end at the end of their
// line, so that an apostrophe in JSX text cannot swallow the rest.
func jsIncomplete(src []byte) bool {
	depth := 0
	for i := 0; i < len(src); {
		switch src[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case '\'', '"':
			q := src[i]
			j := i + 1
			for j < len(src) && src[j] != q && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			continue
		case '`':
			j := jsTemplate(src, i+1, 0)
			if j < 0 {
				return true
			}
			i = j
			continue
		case '/':
			j := jsComment(src, i)
			if j < 0 {
				return true
			}
			i = j
			continue
		}
		i++
	}
	return depth > 0
}

// jsStringLiteral returns the value of an expression that is a single string
// literal ('…', "…" or a template literal without ${}), for {'<'} and the like.
func jsStringLiteral(src string) (string, bool) {
	s := trimSpace(src)
	if len(s) < 2 {
		return "", false
	}
	q := s[0]
	if (q != '\'' && q != '"' && q != '`') || s[len(s)-1] != q {
		return "", false
	}
	body := s[1 : len(s)-1]
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == q:
			return "", false
		case c == '$' && q == '`' && i+1 < len(body) && body[i+1] == '{':
			return "", false
		case c == '\\' && i+1 < len(body):
			i++
			switch body[i] {
			case 'n', 't', 'r':
				out = append(out, ' ')
			default:
				out = append(out, body[i])
			}
		default:
			out = append(out, c)
		}
	}
	return string(out), true
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
