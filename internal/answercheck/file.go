package answercheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FilePath is where a docs repository keeps its checks: at the root of the
// repository, whatever its docs root.
const FilePath = ".docsmith/checks.yaml"

// Bounds of a checks file. Anyone who can push to the docs repository (or
// open a pull request on it) writes the file, so each is enforced.
const (
	// MaxFileBytes is the largest checks file read.
	MaxFileBytes = 256 << 10
	// MaxChecks is the most checks a file may hold; the ones past it are
	// left out, with a problem.
	MaxChecks = 500
	// MaxQuestionRunes bounds a question.
	MaxQuestionRunes = 1000
	// MaxNameRunes bounds a check's name.
	MaxNameRunes = 100
	// MaxListItems bounds a check's cite and contains lists.
	MaxListItems = 20
	// maxItemBytes bounds one page path or word of those lists.
	maxItemBytes = 300
	// slugRunes bounds the name made from a question.
	slugRunes = 60
)

// Problem is one thing wrong with a checks file: the check it concerns is
// left out, the others run.
type Problem struct {
	File string // the file's path in the repository
	Line int    // 1-based; 0 when the problem is the whole file
	Key  string // dotted key path such as "checks[2].cite", or ""
	Msg  string
}

func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, ": %s", p.Key)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// ParseFile reads a checks file named name (its path, for the problems):
//
//	checks:
//	  - name: restore-snapshot        # optional; a slug of the question
//	    question: How do I restore a snapshot?
//	    cite: [guides/backups]        # one of these pages is cited
//	    contains: ["restore"]         # and the answer holds these words
//	  - question: Is there a Helm chart?
//	    not_covered: true             # the answer says the docs do not cover it
//
// It returns the valid checks, in the file's order, with Origin OriginFile,
// and a Problem for everything wrong, each naming the line and key. A
// check with a problem is left out and the others are kept; a file that
// is not YAML, not a mapping with a "checks" list, or too large, gives no
// check at all.
func ParseFile(name string, data []byte) ([]Check, []Problem) {
	whole := func(format string, args ...any) []Problem {
		return []Problem{{File: name, Msg: fmt.Sprintf(format, args...)}}
	}
	if len(data) > MaxFileBytes {
		return nil, whole("is %d bytes; the limit is %d", len(data), MaxFileBytes)
	}
	if !utf8.Valid(data) {
		return nil, whole("is not UTF-8 text")
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, whole(`is empty; it needs a "checks" list`)
		}
		return nil, whole("is not valid YAML: %s", yamlMessage(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, whole("holds more than one YAML document; keep one")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, []Problem{{File: name, Line: root.Line, Msg: `must be a mapping with a "checks" list`}}
	}
	p := &fileParser{file: name}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "checks" {
			p.add(k.Line, k.Value, `is not a known key; the file holds "checks" only`)
			continue
		}
		list = v
	}
	if list == nil {
		p.add(root.Line, "", `has no "checks" list`)
		return nil, p.problems
	}
	if list.Kind != yaml.SequenceNode {
		p.add(list.Line, "checks", "must be a list of checks")
		return nil, p.problems
	}
	type entry struct {
		c    Check
		line int
		key  string
	}
	var entries []entry
	for i, item := range list.Content {
		if i == MaxChecks {
			p.add(item.Line, fmt.Sprintf("checks[%d]", i), fmt.Sprintf("is past the %d checks a file may hold; it and the %d after it are left out", MaxChecks, len(list.Content)-i-1))
			break
		}
		if c, line, ok := p.check(i, item); ok {
			entries = append(entries, entry{c, line, fmt.Sprintf("checks[%d].name", i)})
		}
	}
	// The names given first, then a slug of the question for the checks
	// without one, which takes no name given.
	owner := map[string]int{} // name → index of the entry that has it
	for i, e := range entries {
		if e.c.Name == "" {
			continue
		}
		if first, taken := owner[e.c.Name]; taken {
			p.add(e.line, e.key, fmt.Sprintf("%q is the name of the check on line %d too; names must differ", e.c.Name, entries[first].line))
			continue
		}
		owner[e.c.Name] = i
	}
	var checks []Check
	for i, e := range entries {
		switch {
		case e.c.Name == "":
			e.c.Name = UniqueName(Slug(e.c.Question), func(s string) bool { _, taken := owner[s]; return taken })
			owner[e.c.Name] = i
		case owner[e.c.Name] != i:
			continue // a name given twice
		}
		checks = append(checks, e.c)
	}
	return checks, p.problems
}

// yamlMessage is the YAML library's error without its "yaml: " prefix.
func yamlMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

type fileParser struct {
	file     string
	problems []Problem
}

func (p *fileParser) add(line int, key, msg string) {
	p.problems = append(p.problems, Problem{File: p.file, Line: line, Key: key, Msg: msg})
}

// check reads the i-th entry of the list, and returns the line of its
// name (of the entry, with none); ok is false when it has a problem
// (recorded).
func (p *fileParser) check(i int, n *yaml.Node) (c Check, line int, ok bool) {
	at := fmt.Sprintf("checks[%d]", i)
	if n.Kind != yaml.MappingNode {
		p.add(n.Line, at, "must be a mapping with a question")
		return Check{}, 0, false
	}
	before := len(p.problems)
	c = Check{Origin: OriginFile}
	var nameNode *yaml.Node
	seen := map[string]bool{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		key := at + "." + k.Value
		if seen[k.Value] {
			p.add(k.Line, key, "is given twice")
			continue
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			if s, ok := p.text(v, key, MaxNameRunes); ok {
				if why := nameProblem(s); why != "" {
					p.add(v.Line, key, why)
				} else {
					c.Name, nameNode = s, v
				}
			}
		case "question":
			if s, ok := p.text(v, key, MaxQuestionRunes); ok {
				c.Question = s
			}
		case "cite":
			c.Cite = p.list(v, key, pageProblem)
		case "contains":
			c.Contains = p.list(v, key, wordProblem)
		case "not_covered":
			var b bool
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
				p.add(v.Line, key, "must be true or false")
				continue
			}
			c.NotCovered = b
		default:
			p.add(k.Line, key, "is not a known key; a check has name, question, cite, contains and not_covered")
		}
	}
	if !seen["question"] {
		p.add(n.Line, at, "has no question")
	}
	if c.NotCovered && (len(c.Cite) > 0 || len(c.Contains) > 0) {
		p.add(n.Line, at, "not_covered cannot go with cite or contains: an answer that says the docs do not cover a question cites nothing")
	}
	if len(p.problems) > before {
		return Check{}, 0, false
	}
	line = n.Line
	if nameNode != nil {
		line = nameNode.Line
	}
	return c, line, true
}

// text reads a non-empty string of at most maxRunes.
func (p *fileParser) text(v *yaml.Node, key string, maxRunes int) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" && v.Tag != "!!int" && v.Tag != "!!float" {
		p.add(v.Line, key, "must be text")
		return "", false
	}
	s := strings.TrimSpace(v.Value)
	switch n := utf8.RuneCountInString(s); {
	case n == 0:
		p.add(v.Line, key, "is empty")
		return "", false
	case n > maxRunes:
		p.add(v.Line, key, fmt.Sprintf("is %d characters long; the limit is %d", n, maxRunes))
		return "", false
	}
	return s, true
}

// list reads a list of strings (or one string, as a list of one), each
// checked by problem.
func (p *fileParser) list(v *yaml.Node, key string, problem func(string) string) []string {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	if len(items) == 0 {
		p.add(v.Line, key, "is an empty list; leave the key out instead")
		return nil
	}
	if len(items) > MaxListItems {
		p.add(v.Line, key, fmt.Sprintf("has %d items; the limit is %d", len(items), MaxListItems))
		return nil
	}
	var out []string
	for i, it := range items {
		at := key
		if v.Kind == yaml.SequenceNode {
			at = fmt.Sprintf("%s[%d]", key, i)
		}
		s, ok := p.text(it, at, maxItemBytes)
		if !ok {
			continue
		}
		if why := problem(s); why != "" {
			p.add(it.Line, at, why)
			continue
		}
		out = append(out, s)
	}
	return out
}

func pageProblem(s string) string {
	switch {
	case strings.Contains(s, "://"):
		return "must be a page's path, such as guides/backups, not a URL"
	case strings.ContainsAny(s, " \t\n\\?"):
		return "must be a page's path, such as guides/backups"
	case strings.Contains(s, ".."):
		return `must not hold ".."`
	case PagePath(s) == "":
		return "names no page"
	}
	return ""
}

func wordProblem(s string) string {
	if strings.ContainsAny(s, "\n\r") {
		return "must be on one line"
	}
	return ""
}

// nameProblem says what is wrong with a check's name, "" when nothing.
func nameProblem(s string) string {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_./", r) {
			return fmt.Sprintf("may hold letters, digits and - _ . / only, not %q", r)
		}
	}
	return ""
}

// Slug is the name a check takes from its question: its letters and
// digits, lower case, words joined by '-', cut after a whole word to at
// most 60 characters.
func Slug(question string) string {
	var words []string
	for w := range strings.FieldsFuncSeq(question, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		words = append(words, strings.ToLower(w))
	}
	slug := strings.Join(words, "-")
	if utf8.RuneCountInString(slug) > slugRunes {
		runes := []rune(slug)[:slugRunes+1]
		cut := string(runes[:slugRunes])
		if runes[slugRunes] != '-' {
			if i := strings.LastIndexByte(cut, '-'); i > 0 {
				cut = cut[:i]
			}
		}
		slug = strings.TrimSuffix(cut, "-")
	}
	if slug == "" {
		return "check"
	}
	return slug
}

// UniqueName is name, or name-2, name-3, … the first that taken says is
// free.
func UniqueName(name string, taken func(string) bool) string {
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		if s := fmt.Sprintf("%s-%d", name, i); !taken(s) {
			return s
		}
	}
}
