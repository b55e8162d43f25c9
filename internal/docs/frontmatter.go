package docs

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FrontMatterError is a problem with a page's front matter. Line is the line
// of the file (1-based) where the problem is.
type FrontMatterError struct {
	Line    int
	Message string
}

func (e *FrontMatterError) Error() string {
	return fmt.Sprintf("front matter line %d: %s", e.Line, e.Message)
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// maxPrefixScan bounds the number of re-parses used to find the line of a YAML
// syntax error; longer front matter falls back to the line yaml reports.
const maxPrefixScan = 400

// ParseFrontMatter splits a page into its YAML front matter and its body.
//
// Front matter is a block that starts on the first line of the file with
// "---" and ends at the next line that is "---" (trailing spaces and CR are
// ignored, and a UTF-8 byte order mark before the first fence is skipped). A
// file without that block has no front matter: fm is an empty map, body is the
// whole file and bodyLine is 1. The body keeps everything after the closing
// fence, including later "---" lines (horizontal rules), and bodyLine is the
// line of the file on which the body starts.
//
// When the block is not closed, or is not a YAML mapping, err is a
// *FrontMatterError naming the line and what to fix; fm is then empty, and
// body and bodyLine still describe the text after the block when the block was
// closed (so the body can be checked anyway).
func ParseFrontMatter(src []byte) (fm map[string]any, body []byte, bodyLine int, err error) {
	fm = map[string]any{}
	src = bytes.TrimPrefix(src, utf8BOM)

	first, rest, _ := cutLine(src)
	if !isFence(first) {
		return fm, src, 1, nil
	}
	// Find the closing fence.
	yamlStart := len(src) - len(rest)
	pos := yamlStart
	line := 2
	for {
		l, r, more := cutLine(src[pos:])
		if isFence(l) {
			yamlText := src[yamlStart:pos]
			body = src[len(src)-len(r):]
			bodyLine = line + 1
			m, perr := parseYAMLMapping(yamlText, 2)
			if perr != nil {
				return map[string]any{}, body, bodyLine, perr
			}
			return m, body, bodyLine, nil
		}
		if !more {
			break
		}
		pos = len(src) - len(r)
		line++
	}
	return fm, nil, 0, &FrontMatterError{Line: 1, Message: `the front matter block opened by "---" is never closed; add a line "---" after the last front matter field`}
}

// cutLine returns the first line of b without its line ending, the rest after
// the line ending, and whether there was a line ending.
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): `)

// parseYAMLMapping parses front matter YAML. firstLine is the file line of
// the first YAML line, so errors name lines of the file.
func parseYAMLMapping(text []byte, firstLine int) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		line, msg := yamlErrorLine(err)
		if l := syntaxErrorLine(text); l > 0 {
			line = l
		}
		if line < 1 {
			line = 1
		}
		return nil, &FrontMatterError{Line: firstLine + line - 1, Message: yamlHint(msg)}
	}
	if len(doc.Content) == 0 {
		return map[string]any{}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &FrontMatterError{
			Line:    firstLine + root.Line - 1,
			Message: fmt.Sprintf("it must be YAML \"key: value\" fields, but it is %s", nodeKindName(root)),
		}
	}
	var v any
	if err := root.Decode(&v); err != nil {
		line, msg := yamlErrorLine(err)
		if line < 1 {
			line = root.Line
		}
		return nil, &FrontMatterError{Line: firstLine + line - 1, Message: yamlHint(msg)}
	}
	m, ok := normalizeYAML(v, 0).(map[string]any)
	if !ok {
		return map[string]any{}, nil
	}
	return m, nil
}

// yamlErrorLine extracts the YAML line and the bare message from a yaml.v3
// error ("yaml: line 3: …" or "yaml: unmarshal errors:\n  line 3: …").
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:")
	msg = strings.TrimSpace(msg)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, msg[len(m[0]):]
	}
	return 0, msg
}

// syntaxErrorLine finds the line of a YAML syntax error more precisely than
// yaml.v3 reports it: the error is on the line after the longest prefix of
// whole lines that still parses. It returns 0 when the text is too long to
// scan.
func syntaxErrorLine(text []byte) int {
	lines := bytes.SplitAfter(text, []byte("\n"))
	if len(lines) > maxPrefixScan {
		return 0
	}
	lastGood := 0
	end := 0
	for i, l := range lines {
		end += len(l)
		var n yaml.Node
		if yaml.Unmarshal(text[:end], &n) == nil {
			lastGood = i + 1
		}
	}
	if lastGood >= len(lines) {
		return 0
	}
	return lastGood + 1
}

func yamlHint(msg string) string {
	switch {
	case strings.Contains(msg, "mapping values are not allowed"):
		return "invalid YAML (" + msg + "); put quotes around a value that contains \": \""
	case strings.Contains(msg, "cannot start any token"):
		return "invalid YAML (" + msg + "); indent with spaces, not tabs, and quote values that start with @ or `"
	case strings.Contains(msg, "already defined"):
		return "invalid YAML (" + msg + "); remove the duplicate field"
	default:
		return "invalid YAML (" + msg + "); check the quoting and indentation of this line"
	}
}

func nodeKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a single value"
	case yaml.AliasNode:
		return "an alias"
	default:
		return "not a mapping"
	}
}

// maxNormalizeDepth stops normalizeYAML on pathological nesting.
const maxNormalizeDepth = 100

// normalizeYAML turns map[any]any (which yaml.v3 produces for maps with
// non-string keys) into map[string]any, so front matter can be handled like
// JSON.
func normalizeYAML(v any, depth int) any {
	if depth > maxNormalizeDepth {
		return nil
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeYAML(e, depth+1)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = normalizeYAML(e, depth+1)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = normalizeYAML(e, depth+1)
		}
		return t
	default:
		return v
	}
}

// fmString returns a front matter field as text: strings as they are, numbers
// and booleans formatted, anything else empty.
func fmString(fm map[string]any, key string) string {
	switch v := fm[key].(type) {
	case string:
		return v
	case int, int64, uint64, float64, bool:
		return fmt.Sprint(v)
	default:
		return ""
	}
}

// fmBool reports whether a front matter field is true (true or "true").
func fmBool(fm map[string]any, key string) bool {
	switch v := fm[key].(type) {
	case bool:
		return v
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		return err == nil && b
	default:
		return false
	}
}

// fmFalse reports whether a front matter field is explicitly false.
func fmFalse(fm map[string]any, key string) bool {
	switch v := fm[key].(type) {
	case bool:
		return !v
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		return err == nil && !b
	default:
		return false
	}
}
