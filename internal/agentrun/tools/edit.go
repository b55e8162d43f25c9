package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// stepKind is one disk operation of a tool call.
type stepKind int

const (
	stepWrite stepKind = iota
	stepCreate
	stepRemove
	stepMove
)

// step is one disk operation with what the ledger needs to know about it. orig is the content
// of path before the call, for the ledger's first touch of it.
type step struct {
	kind    stepKind
	path    string
	to      string // stepMove
	content string // stepWrite, stepCreate
	perm    fs.FileMode
	orig    string
}

func (s step) record(l *ledger) {
	switch s.kind {
	case stepWrite:
		l.touch(s.path, true, s.orig)
		l.write(s.path, s.content)
	case stepCreate:
		l.touch(s.path, false, "")
		l.write(s.path, s.content)
	case stepRemove:
		l.touch(s.path, true, s.orig)
		l.remove(s.path)
	case stepMove:
		l.touch(s.path, true, s.orig)
		l.touch(s.to, false, "")
		l.move(s.path, s.to)
	}
}

// apply checks the budgets against the state after all steps, then runs the steps in order,
// recording each in the ledger as soon as it is on disk so that the ledger never disagrees with
// the disk, even when a later step fails.
func (w *Workspace) apply(steps ...step) error {
	if w.readOnly {
		return errors.New("tools: a read-only workspace cannot be changed")
	}
	next := w.ledger.clone()
	for _, s := range steps {
		s.record(next)
	}
	if err := w.checkBudgets(next); err != nil {
		return err
	}
	for _, s := range steps {
		if err := w.do(s); err != nil {
			return err
		}
		s.record(w.ledger)
	}
	return nil
}

func (w *Workspace) do(s step) error {
	switch s.kind {
	case stepWrite:
		return w.writeAtomic(s.path, []byte(s.content), s.perm)
	case stepCreate:
		if err := w.root.MkdirAll(path.Dir(s.path), 0o755); err != nil {
			return fsError(path.Dir(s.path), err)
		}
		return w.writeAtomic(s.path, []byte(s.content), s.perm)
	case stepRemove:
		if err := w.root.Remove(s.path); err != nil {
			return fsError(s.path, err)
		}
		return nil
	case stepMove:
		if err := w.root.MkdirAll(path.Dir(s.to), 0o755); err != nil {
			return fsError(path.Dir(s.to), err)
		}
		if err := w.root.Rename(s.path, s.to); err != nil {
			return fsError(s.path, err)
		}
		return nil
	}
	return fmt.Errorf("tools: unknown step kind %d", s.kind)
}

func (w *Workspace) checkBudgets(next *ledger) error {
	oldChanges, oldLines := w.ledger.summary()
	newChanges, newLines := next.summary()
	if m := w.limits.MaxFilesChanged; m > 0 && len(newChanges) > m && len(newChanges) > len(oldChanges) {
		return toolErrorf("not applied: this call would bring the files changed in this turn to %d, over the budget of %d files (MaxFilesChanged); "+
			"%d files are changed so far. Keep to those files, or finish and say what is left to do", len(newChanges), m, len(oldChanges))
	}
	if m := w.limits.MaxLinesChanged; m > 0 && newLines > m && newLines > oldLines {
		return toolErrorf("not applied: this call would bring the lines changed in this turn to %d, over the budget of %d lines (MaxLinesChanged); "+
			"%d lines are changed so far. Make a smaller change, or finish and say what is left to do", newLines, m, oldLines)
	}
	return nil
}

// checkResult refuses new content that the tools could not read back, and edits that would
// break a valid docs.json or mint.json.
func (w *Workspace) checkResult(p, before, after string) error {
	if int64(len(after)) > w.limits.MaxFileBytes {
		return toolErrorf("not applied: %s would be %d bytes, over the limit of %d bytes per file (MaxFileBytes)", p, len(after), w.limits.MaxFileBytes)
	}
	if strings.IndexByte(after, 0) >= 0 {
		return toolErrorf("not applied: the new text contains a NUL byte; files must stay plain text")
	}
	if isConfig(p) && (before == "" || json.Valid([]byte(before))) && !json.Valid([]byte(after)) {
		return toolErrorf("not applied: %s would no longer be valid JSON (%s); change it so that it stays valid JSON", p, jsonProblem(after))
	}
	return nil
}

func isConfig(p string) bool { return p == "docs.json" || p == "mint.json" }

// jsonProblem describes the first syntax error of text, with its line and column.
func jsonProblem(text string) string {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if err == nil {
			return "no error"
		}
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	off := min(int(se.Offset), len(text))
	line := strings.Count(text[:off], "\n") + 1
	col := off - strings.LastIndexByte(text[:off], '\n')
	return fmt.Sprintf("%s at line %d, column %d", strings.TrimPrefix(se.Error(), "json: "), line, col)
}

// variant is one way of reading the model's old_str/new_str against the file.
type variant struct {
	old, new string
	note     string
}

// replaceVariants lists, in order of preference, the readings of old_str to try: as sent; with
// CRLF line breaks when the file uses them (read_file shows lines without "\r"); and without
// read_file's line-number prefixes when every line of old_str carries one.
func replaceVariants(content, old, new string) []variant {
	crlf := strings.Contains(content, "\r\n")
	vs := []variant{{old: old, new: new}}
	add := func(v variant) {
		vs = append(vs, v)
		if crlf && strings.Contains(v.old, "\n") && !strings.Contains(v.old, "\r\n") {
			vs = append(vs, variant{old: toCRLF(v.old), new: toCRLF(v.new), note: v.note})
		}
	}
	if crlf && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		vs = append(vs, variant{old: toCRLF(old), new: toCRLF(new)})
	}
	if o, ok := stripLineNumbers(old); ok {
		n := new
		if s, ok := stripLineNumbers(new); ok {
			n = s
		}
		add(variant{old: o, new: n, note: "removed the read_file line-number prefixes from old_str"})
	}
	return vs
}

func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// stripLineNumbers removes read_file prefixes ("  12| ") from every line of s, and reports
// false unless every line (a final empty one aside) has one.
func stripLineNumbers(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if i == len(lines)-1 && line == "" {
			break
		}
		rest, ok := cutLineNumber(line)
		if !ok {
			return "", false
		}
		lines[i] = rest
	}
	return strings.Join(lines, "\n"), true
}

func cutLineNumber(line string) (string, bool) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	digits := i
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == digits || i-digits > 9 || i >= len(line) {
		return "", false
	}
	switch line[i] {
	case '|':
		rest := line[i+1:]
		return strings.TrimPrefix(rest, " "), true
	case '\t':
		return line[i+1:], true
	}
	return "", false
}

func (w *Workspace) strReplace(ctx context.Context, a args) (string, error) {
	p, err := cleanPath("path", a.str("path"), false)
	if err != nil {
		return "", err
	}
	if err := checkWritable("path", p); err != nil {
		return "", err
	}
	old, new, all := a.str("old_str"), a.str("new_str"), a.boolean("replace_all")
	if old == "" {
		return "", toolErrorf("old_str is empty; give the exact text to replace (to add text use insert, to write a new file use create_file)")
	}
	if old == new {
		return "", toolErrorf("old_str and new_str are the same, so nothing would change; put the new text in new_str")
	}
	content, fi, err := w.loadText(ctx, p)
	if err != nil {
		return "", err
	}
	var chosen variant
	count := 0
	for _, v := range replaceVariants(content, old, new) {
		if n := strings.Count(content, v.old); n > 0 {
			chosen, count = v, n
			break
		}
	}
	if count == 0 {
		msg := fmt.Sprintf("old_str was not found in %s; read_file it and copy the text exactly (whitespace matters)", p)
		if line := looseMatch(content, old); line > 0 {
			msg += fmt.Sprintf(". Text that differs only in whitespace or line-number prefixes starts at line %d", line)
		}
		return "", &ToolError{Message: msg}
	}
	if count > 1 && !all {
		how := ""
		if chosen.note != "" {
			how = "after removing the read_file line-number prefixes, "
		}
		return "", toolErrorf("%sold_str matches %d times in %s (lines %s); add surrounding lines to make it unique or set replace_all",
			how, count, p, matchLines(content, chosen.old))
	}
	if chosen.old == chosen.new {
		return "", toolErrorf("old_str and new_str are the same once read against the file, so nothing would change; put the new text in new_str")
	}
	first := strings.Index(content, chosen.old)
	result := strings.ReplaceAll(content, chosen.old, chosen.new)
	if err := w.checkResult(p, content, result); err != nil {
		return "", err
	}
	if err := w.apply(step{kind: stepWrite, path: p, content: result, perm: fi.Mode().Perm(), orig: content}); err != nil {
		return "", err
	}
	var b strings.Builder
	if count == 1 {
		fmt.Fprintf(&b, "Replaced 1 occurrence in %s", p)
	} else {
		fmt.Fprintf(&b, "Replaced %d occurrences in %s", count, p)
	}
	if chosen.note != "" {
		fmt.Fprintf(&b, " (%s)", chosen.note)
	}
	b.WriteString(".\n")
	b.WriteString(snippet(p, result, first, len(chosen.new), count > 1))
	return b.String(), nil
}

// matchLines lists the line numbers where old starts in content, at most ten.
func matchLines(content, old string) string {
	var nums []string
	line, pos := 1, 0
	for {
		i := strings.Index(content[pos:], old)
		if i < 0 {
			break
		}
		line += strings.Count(content[pos:pos+i], "\n")
		if len(nums) == 10 {
			nums = append(nums, "…")
			break
		}
		nums = append(nums, fmt.Sprint(line))
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
	return strings.Join(nums, ", ")
}

// looseMatch returns the line where old would match if whitespace at the ends of lines and
// read_file prefixes were ignored, or 0.
func looseMatch(content, old string) int {
	if o, ok := stripLineNumbers(old); ok {
		old = o
	}
	var want []string
	for _, l := range splitLines(old) {
		want = append(want, strings.Join(strings.Fields(l), " "))
	}
	for len(want) > 0 && want[0] == "" {
		want = want[1:]
	}
	for len(want) > 0 && want[len(want)-1] == "" {
		want = want[:len(want)-1]
	}
	if len(want) == 0 {
		return 0
	}
	lines := splitLines(content)
	norm := make([]string, len(lines))
	for i, l := range lines {
		norm[i] = strings.Join(strings.Fields(l), " ")
	}
outer:
	for i := 0; i+len(want) <= len(norm); i++ {
		for j, wl := range want {
			if j == 0 || j == len(want)-1 {
				// The first and last lines of old_str may be parts of lines.
				if !strings.Contains(norm[i+j], wl) {
					continue outer
				}
			} else if norm[i+j] != wl {
				continue outer
			}
		}
		return i + 1
	}
	return 0
}

// snippet shows the lines around an edit: the text of length n at byte offset at of content.
func snippet(p, content string, at, n int, more bool) string {
	const context, maxLines = 3, 40
	lines := splitLines(content)
	if len(lines) == 0 {
		return fmt.Sprintf("%s is now empty.", p)
	}
	start := strings.Count(content[:at], "\n") + 1
	end := start
	if n > 0 {
		end = strings.Count(content[:at+n], "\n") + 1
		if content[at+n-1] == '\n' {
			end--
		}
	}
	from := max(1, start-context)
	to := min(len(lines), max(end, start)+context)
	cut := false
	if to-from+1 > maxLines {
		to, cut = from+maxLines-1, true
	}
	var b strings.Builder
	label := "the edit"
	if more {
		label = "the first edit"
	}
	fmt.Fprintf(&b, "Lines %d-%d of %s after %s:\n", from, to, p, label)
	b.WriteString(numbered(lines, from, to, len(lines)))
	if cut {
		b.WriteString("\n[…; read_file to see the rest]")
	}
	return b.String()
}

func (w *Workspace) insert(ctx context.Context, a args) (string, error) {
	p, err := cleanPath("path", a.str("path"), false)
	if err != nil {
		return "", err
	}
	if err := checkWritable("path", p); err != nil {
		return "", err
	}
	text := a.str("text")
	if text == "" {
		return "", toolErrorf("text is empty; give the lines to insert")
	}
	n := a.integer("insert_line")
	content, fi, err := w.loadText(ctx, p)
	if err != nil {
		return "", err
	}
	total := len(splitLines(content))
	if n < 0 {
		return "", toolErrorf("insert_line must be 0 (the top of the file) or a line number, not %d", n)
	}
	if n > total {
		return "", toolErrorf("insert_line %d is past the end of %s, which has %d lines; use %d to add at the end", n, p, total, total)
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	lineBreak := "\n"
	if strings.Contains(content, "\r\n") {
		text, lineBreak = toCRLF(text), "\r\n"
	}
	at, prefix := 0, ""
	for i := 0; i < n; i++ {
		j := strings.IndexByte(content[at:], '\n')
		if j < 0 { // line n is the last one and has no line break
			at, prefix = len(content), lineBreak
			break
		}
		at += j + 1
	}
	result := content[:at] + prefix + text + content[at:]
	if err := w.checkResult(p, content, result); err != nil {
		return "", err
	}
	if err := w.apply(step{kind: stepWrite, path: p, content: result, perm: fi.Mode().Perm(), orig: content}); err != nil {
		return "", err
	}
	added := len(splitLines(text))
	noun := "lines"
	if added == 1 {
		noun = "line"
	}
	return fmt.Sprintf("Inserted %d %s after line %d of %s.\n%s", added, noun, n, p,
		snippet(p, result, at+len(prefix), len(text), false)), nil
}

func (w *Workspace) createFile(ctx context.Context, a args) (string, error) {
	p, err := cleanPath("path", a.str("path"), false)
	if err != nil {
		return "", err
	}
	if err := checkWritable("path", p); err != nil {
		return "", err
	}
	content := a.str("content")
	fi, err := w.inspect(p)
	if err != nil {
		return "", err
	}
	if fi != nil {
		if fi.IsDir() {
			return "", toolErrorf("%s is an existing directory; give the path of a new file inside it, e.g. %s/new-page.mdx", p, p)
		}
		return "", toolErrorf("%s already exists; read_file it and edit it with str_replace or insert, or choose another path", p)
	}
	if err := w.checkResult(p, "", content); err != nil {
		return "", err
	}
	if err := w.apply(step{kind: stepCreate, path: p, content: content, perm: 0o644}); err != nil {
		return "", err
	}
	return fmt.Sprintf("Created %s (%d lines).", p, len(splitLines(content))), nil
}

func (w *Workspace) deleteFile(ctx context.Context, a args) (string, error) {
	p, err := cleanPath("path", a.str("path"), false)
	if err != nil {
		return "", err
	}
	if err := checkWritable("path", p); err != nil {
		return "", err
	}
	data, _, err := w.loadFile(ctx, p)
	if err != nil {
		return "", err
	}
	if err := w.apply(step{kind: stepRemove, path: p, orig: string(data)}); err != nil {
		return "", err
	}
	refs, err := w.scanRefs(ctx, newRefRewriter(p, p), false)
	if err != nil {
		return "", err
	}
	if len(refs.updated) == 0 {
		return fmt.Sprintf("Deleted %s. No page or navigation entry refers to it.", p), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Deleted %s. These files still refer to it; update or remove those references:\n", p)
	b.WriteString(refs.describe())
	return b.String(), nil
}
