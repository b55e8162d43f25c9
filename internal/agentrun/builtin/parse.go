// Package builtin is the agent model that needs no LLM: a small command
// language, run through the same file tools, validation, commit and pull
// request as a model's edits. It is what a fresh install uses.
package builtin

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Usage lists the command forms, for the error on an instruction that is not
// understood and for the models page (docs/agent/models.mdx).
const Usage = `The builtin model understands one command per line (or separated by ';'):
  replace "OLD" with "NEW" in PATH          replace text in one page
  replace "OLD" with "NEW" everywhere       replace text in every page
  set FIELD to "VALUE" in PATH              set a front-matter field of a page
  add page PATH titled "TITLE" to group "GROUP"   create a page and list it in a navigation group
  move PATH to PATH                         move a page; navigation and links follow
  delete PATH                               delete a page and its navigation entry
  fix link "OLD" to "NEW" in PATH           point links at OLD to NEW in one page
  fix link "OLD" to "NEW" everywhere        ... in every page
  fix broken links everywhere               fix internal links that lead nowhere, where exactly one page or heading matches
  check the navigation                      report navigation problems; changes no file
PATH is a page's path in the docs, with or without .mdx; text goes in double quotes (\" for a quote, \n for a new line).
Blank lines and Markdown comments (<!-- … --> on lines of their own) are skipped.`

// Kind is a command form.
type Kind string

const (
	Replace  Kind = "replace"
	SetField Kind = "set"
	AddPage  Kind = "add-page"
	Move     Kind = "move"
	Delete   Kind = "delete"
	FixLink  Kind = "fix-link"
	// FixBrokenLinks repairs the internal links of every page that lead
	// nowhere, where the repair is unambiguous.
	FixBrokenLinks Kind = "fix-broken-links"
	// CheckNavigation reports what is wrong with the navigation and changes
	// nothing.
	CheckNavigation Kind = "check-navigation"
)

// Command is one parsed command. Path is empty for "everywhere".
type Command struct {
	Kind  Kind
	Path  string
	Old   string // replace, fix link
	New   string // replace, fix link
	Field string // set
	Value string // set
	Title string // add page
	Group string // add page
	To    string // move
}

// Parse reads an instruction into commands. Anything it does not understand
// is an error that quotes the line and lists the forms.
func Parse(instruction string) ([]Command, error) {
	lines, err := splitCommands(instruction)
	if err != nil {
		return nil, err
	}
	var cmds []Command
	for _, line := range lines {
		toks, err := tokenize(line)
		if err != nil {
			return nil, fmt.Errorf("%q: %w\n\n%s", line, err, Usage)
		}
		cmd, ok := match(toks)
		if !ok {
			return nil, fmt.Errorf("the builtin model does not understand %q\n\n%s", line, Usage)
		}
		cmds = append(cmds, cmd)
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("the instruction has no command\n\n%s", Usage)
	}
	return cmds, nil
}

// token is a word or a quoted string.
type token struct {
	text   string
	quoted bool
}

func (t token) is(word string) bool { return !t.quoted && strings.EqualFold(t.text, word) }

// splitCommands splits at newlines and semicolons outside quotes.
//
// A Markdown comment that fills the rest of its line where a command could
// start is skipped: a workflow file's body may carry one beside its
// command, and a comment is plainly not an instruction, so skipping it
// cannot carry out something that was not asked. Any other text stays a
// command, and is an error when it is not one.
func splitCommands(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inQuote, escaped := false, false
	blank := true // cur holds only blanks: a command could start here
	flush := func() {
		if line := strings.TrimSpace(cur.String()); line != "" {
			out = append(out, line)
		}
		cur.Reset()
		blank = true
	}
	for i := 0; i < len(s); {
		if blank {
			n, err := commentLength(s[i:])
			if err != nil {
				return nil, err
			}
			if n > 0 {
				i += n
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !unicode.IsSpace(r) {
			blank = false
		}
		switch {
		case escaped:
			escaped = false
		case inQuote && r == '\\':
			escaped = true
		case r == '"':
			inQuote = !inQuote
		case !inQuote && (r == '\n' || r == ';'):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	if inQuote {
		return nil, fmt.Errorf("a quoted text is not closed (a \" is missing)\n\n%s", Usage)
	}
	flush()
	return out, nil
}

// commentLength returns how many bytes at the start of s are blanks, a
// Markdown comment ("<!-- … -->", which may span lines) and blanks up to
// the end of its last line, or 0 when s does not start so. A comment with
// other text after it on its line is not skipped.
func commentLength(s string) (int, error) {
	rest := strings.TrimLeft(s, " \t")
	if !strings.HasPrefix(rest, "<!--") {
		return 0, nil
	}
	end := strings.Index(rest[len("<!--"):], "-->")
	if end < 0 {
		return 0, fmt.Errorf("a Markdown comment is not closed (a --> is missing)\n\n%s", Usage)
	}
	after := len(s) - len(rest) + len("<!--") + end + len("-->")
	line, _, _ := strings.Cut(s[after:], "\n")
	if strings.TrimSpace(line) != "" {
		return 0, nil
	}
	return after + len(line), nil
}

func tokenize(line string) ([]token, error) {
	var toks []token
	rs := []rune(line)
	for i := 0; i < len(rs); {
		switch {
		case unicode.IsSpace(rs[i]):
			i++
		case rs[i] == '"':
			var b strings.Builder
			i++
			for ; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) {
					i++
					switch rs[i] {
					case 'n':
						b.WriteRune('\n')
					case 't':
						b.WriteRune('\t')
					default:
						b.WriteRune(rs[i])
					}
					continue
				}
				b.WriteRune(rs[i])
			}
			if i >= len(rs) {
				return nil, fmt.Errorf("a quoted text is not closed")
			}
			i++ // closing quote
			toks = append(toks, token{text: b.String(), quoted: true})
		default:
			start := i
			for i < len(rs) && !unicode.IsSpace(rs[i]) && rs[i] != '"' {
				i++
			}
			toks = append(toks, token{text: string(rs[start:i])})
		}
	}
	return toks, nil
}

// match recognises one command form.
func match(t []token) (Command, bool) {
	word := func(i int, w string) bool { return i < len(t) && t[i].is(w) }
	quoted := func(i int) bool { return i < len(t) && t[i].quoted }
	bare := func(i int) bool { return i < len(t) && !t[i].quoted && t[i].text != "" }
	switch {
	// replace "A" with "B" in PATH | everywhere
	case len(t) == 6 && word(0, "replace") && quoted(1) && word(2, "with") && quoted(3) && word(4, "in") && bare(5):
		return Command{Kind: Replace, Old: t[1].text, New: t[3].text, Path: t[5].text}, t[1].text != ""
	case len(t) == 5 && word(0, "replace") && quoted(1) && word(2, "with") && quoted(3) && word(4, "everywhere"):
		return Command{Kind: Replace, Old: t[1].text, New: t[3].text}, t[1].text != ""
	// set FIELD to "VALUE" in PATH
	case len(t) == 6 && word(0, "set") && bare(1) && word(2, "to") && quoted(3) && word(4, "in") && bare(5):
		return Command{Kind: SetField, Field: t[1].text, Value: t[3].text, Path: t[5].text}, validField(t[1].text)
	// add page PATH titled "TITLE" to group "GROUP"
	case len(t) == 8 && word(0, "add") && word(1, "page") && bare(2) && word(3, "titled") && quoted(4) && word(5, "to") && word(6, "group") && quoted(7):
		return Command{Kind: AddPage, Path: t[2].text, Title: t[4].text, Group: t[7].text}, t[4].text != "" && t[7].text != ""
	// move PATH to PATH
	case len(t) == 4 && word(0, "move") && bare(1) && word(2, "to") && bare(3):
		return Command{Kind: Move, Path: t[1].text, To: t[3].text}, true
	// delete PATH
	case len(t) == 2 && word(0, "delete") && bare(1):
		return Command{Kind: Delete, Path: t[1].text}, true
	case len(t) == 3 && word(0, "delete") && word(1, "page") && bare(2):
		return Command{Kind: Delete, Path: t[2].text}, true
	// fix link "OLD" to "NEW" in PATH | everywhere
	case len(t) == 7 && word(0, "fix") && word(1, "link") && quoted(2) && word(3, "to") && quoted(4) && word(5, "in") && bare(6):
		return Command{Kind: FixLink, Old: t[2].text, New: t[4].text, Path: t[6].text}, t[2].text != "" && t[4].text != ""
	case len(t) == 6 && word(0, "fix") && word(1, "link") && quoted(2) && word(3, "to") && quoted(4) && word(5, "everywhere"):
		return Command{Kind: FixLink, Old: t[2].text, New: t[4].text}, t[2].text != "" && t[4].text != ""
	// fix broken links everywhere
	case len(t) == 4 && word(0, "fix") && word(1, "broken") && word(2, "links") && word(3, "everywhere"):
		return Command{Kind: FixBrokenLinks}, true
	// check the navigation
	case len(t) == 3 && word(0, "check") && word(1, "the") && word(2, "navigation"):
		return Command{Kind: CheckNavigation}, true
	}
	return Command{}, false
}

func validField(f string) bool {
	for _, r := range f {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' {
			return false
		}
	}
	return f != ""
}
