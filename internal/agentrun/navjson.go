package agentrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The navigation edits below splice docs.json/mint.json text at offsets
// found with encoding/json's tokenizer, so the rest of the file keeps its
// formatting and key order (a decode/encode round trip would sort keys).

type navFrame struct {
	object bool
	key    string // object: the key whose value comes next
	group  string // object: its "group" value
	// object: where its "pages" array closes, and where its last element ends
	pagesClose, pagesLast int
	hasPages              bool
	// array: the object frame whose "pages" this array is, or -1
	pagesOf int
	lastEnd int
}

// appendToGroup adds page to the "pages" of the first navigation group
// titled group (compared without case), and lists the groups if none is.
func appendToGroup(config, group, page string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(config))
	var stack []*navFrame
	var groups []string
	insertAt, last := -1, -1
	for insertAt < 0 {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", failf("builtin: the navigation file is not valid JSON: %v", err)
		}
		end := int(dec.InputOffset())
		top := func() *navFrame {
			if len(stack) == 0 {
				return nil
			}
			return stack[len(stack)-1]
		}
		elementDone := func() {
			if f := top(); f != nil && !f.object {
				f.lastEnd = end
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &navFrame{object: true, pagesOf: -1, lastEnd: -1})
			case '[':
				pagesOf := -1
				if f := top(); f != nil && f.object && f.key == "pages" {
					pagesOf = len(stack) - 1
				}
				stack = append(stack, &navFrame{pagesOf: pagesOf, lastEnd: -1})
			case ']':
				f := top()
				stack = stack[:len(stack)-1]
				if f.pagesOf >= 0 {
					owner := stack[f.pagesOf]
					owner.hasPages, owner.pagesClose, owner.pagesLast = true, end-1, f.lastEnd
				}
				elementDone()
			case '}':
				f := top()
				stack = stack[:len(stack)-1]
				if f.group != "" {
					groups = append(groups, f.group)
					if f.hasPages && strings.EqualFold(strings.TrimSpace(f.group), strings.TrimSpace(group)) {
						insertAt, last = f.pagesClose, f.pagesLast
					}
				}
				elementDone()
			}
			if f := top(); f != nil && f.object && (t == '}' || t == ']') {
				f.key = ""
			}
		case string:
			f := top()
			if f != nil && f.object && f.key == "" {
				f.key = t
				continue
			}
			if f != nil && f.object && f.key == "group" {
				f.group = t
			}
			if f != nil && f.object {
				f.key = ""
			}
			elementDone()
		default:
			if f := top(); f != nil && f.object {
				f.key = ""
			}
			elementDone()
		}
	}
	if insertAt < 0 {
		return "", failf("builtin: there is no navigation group %q; the groups are: %s", group, strings.Join(quoteAll(groups), ", "))
	}
	quoted, _ := json.Marshal(page)
	if last < 0 {
		return config[:insertAt] + string(quoted) + config[insertAt:], nil
	}
	return config[:last] + ", " + string(quoted) + config[last:], nil
}

// removeNavEntry deletes every array element that is exactly the string
// page, with its separating comma, and says how many it removed.
func removeNavEntry(config, page string) (string, int) {
	type span struct{ start, end int }
	var cuts []span
	var inArray []bool // per open container: is it an array
	dec := json.NewDecoder(strings.NewReader(config))
	prevEnd := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		end := int(dec.InputOffset())
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				inArray = append(inArray, t == '[')
			} else {
				inArray = inArray[:len(inArray)-1]
			}
		case string:
			if len(inArray) == 0 || !inArray[len(inArray)-1] || t != page {
				break
			}
			between := config[prevEnd:end]
			start := end - len(strings.TrimLeft(between, " \t\r\n,"))
			if strings.Contains(between, ",") {
				cuts = append(cuts, span{prevEnd, end}) // `, "page"` after an earlier element
				break
			}
			// The first element: take the comma and space that follow it.
			rest := skipSpace(config, end)
			if rest < len(config) && config[rest] == ',' {
				cuts = append(cuts, span{start, skipSpace(config, rest+1)})
			} else {
				cuts = append(cuts, span{start, end})
			}
		}
		prevEnd = end
	}
	for i := len(cuts) - 1; i >= 0; i-- {
		config = config[:cuts[i].start] + config[cuts[i].end:]
	}
	return config, len(cuts)
}

func skipSpace(s string, i int) int {
	for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
		i++
	}
	return i
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
