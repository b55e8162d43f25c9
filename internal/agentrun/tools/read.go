package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

func (w *Workspace) listFiles(ctx context.Context, a args) (string, error) {
	dir, err := w.vocab.cleanPath("dir", a.str("dir"), true)
	if err != nil {
		return "", err
	}
	var g *glob
	if a.has("glob") && strings.TrimSpace(a.str("glob")) != "" {
		if g, err = w.vocab.compileGlob("glob", a.str("glob")); err != nil {
			return "", err
		}
	}
	fi, err := w.inspect(dir)
	if err != nil {
		return "", err
	}
	if fi == nil {
		return "", toolErrorf("directory %s does not exist; call %s without dir to see the whole tree", dir, w.vocab.list)
	}
	if !fi.IsDir() {
		return "", toolErrorf("%s is a file, not a directory; use %s to read it", dir, w.vocab.read)
	}
	var lines []string
	more := false
	err = w.walk(ctx, dir, func(rel string, d fs.DirEntry) error {
		if g != nil && !g.match(rel) {
			return nil
		}
		if !w.looksText(rel) {
			return nil
		}
		if len(lines) == maxListEntries {
			more = true
			return fs.SkipAll
		}
		line := rel
		if info, err := d.Info(); err == nil && info.Size() > w.limits.MaxFileBytes {
			line += fmt.Sprintf("  (%d bytes, too large to read)", info.Size())
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return "", err
	}
	where := w.vocab.root
	if dir != "." {
		where = dir + "/"
	}
	if g != nil {
		where += " matching " + quoteShort(a.str("glob"))
	}
	if len(lines) == 0 {
		return fmt.Sprintf("No text files under %s.", where), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d text files under %s:\n", len(lines), where)
	b.WriteString(strings.Join(lines, "\n"))
	if more {
		fmt.Fprintf(&b, "\n(listing stopped at %d files; give a dir or a glob to see the rest)", maxListEntries)
	}
	return b.String(), nil
}

func (w *Workspace) readFile(ctx context.Context, a args) (string, error) {
	p, err := w.vocab.cleanPath("path", a.str("path"), false)
	if err != nil {
		return "", err
	}
	content, _, err := w.loadText(ctx, p)
	if err != nil {
		return "", err
	}
	lines := splitLines(content)
	total := len(lines)
	if total == 0 {
		return fmt.Sprintf("%s is empty.", p), nil
	}
	start, end := 1, total
	if a.has("start_line") {
		start = a.integer("start_line")
	}
	if a.has("end_line") && a.integer("end_line") != -1 {
		end = a.integer("end_line")
	}
	switch {
	case start < 1:
		return "", toolErrorf("start_line must be 1 or more (lines are numbered from 1), not %d", start)
	case start > total:
		return "", toolErrorf("start_line %d is past the end of %s, which has %d lines", start, p, total)
	case end < start:
		return "", toolErrorf("end_line %d is before start_line %d; give end_line >= start_line, or -1 for the end of the file", end, start)
	}
	end = min(end, total)
	truncated := false
	if end-start+1 > w.limits.MaxReadLines {
		end = start + w.limits.MaxReadLines - 1
		truncated = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, lines %d-%d of %d:\n", p, start, end, total)
	b.WriteString(numbered(lines, start, end, total))
	if truncated {
		fmt.Fprintf(&b, "\n[showing at most %d lines per call; call %s with start_line=%d to read on]", w.limits.MaxReadLines, w.vocab.read, end+1)
	}
	return b.String(), nil
}

func (w *Workspace) search(ctx context.Context, a args) (string, error) {
	query := a.str("query")
	if strings.TrimSpace(query) == "" {
		return "", toolErrorf("query is empty; give the text to look for, e.g. {\"query\": \"--watch\"}")
	}
	if strings.ContainsAny(query, "\n\r") {
		return "", toolErrorf("query contains a line break; search matches within one line, so search for one line of the text")
	}
	var match func(string) bool
	if a.boolean("regex") {
		re, err := regexp.Compile(query)
		if err != nil {
			return "", toolErrorf("query is not a valid RE2 regular expression (%v); fix it, or set regex to false to search for the literal text", err)
		}
		match = re.MatchString
	} else {
		lq := strings.ToLower(query)
		match = func(line string) bool { return strings.Contains(strings.ToLower(line), lq) }
	}

	dir, scope := ".", w.vocab.scope
	var g *glob
	if ps := strings.TrimSpace(a.str("path")); ps != "" {
		if isGlob(ps) {
			var err error
			if g, err = w.vocab.compileGlob("path", ps); err != nil {
				return "", err
			}
			scope = "files matching " + quoteShort(ps)
		} else {
			var err error
			if dir, err = w.vocab.cleanPath("path", ps, true); err != nil {
				return "", err
			}
			fi, err := w.inspect(dir)
			if err != nil {
				return "", err
			}
			if fi == nil {
				return "", w.notFound(ctx, dir)
			}
			scope = dir
		}
	}

	var hits []string
	files, more := 0, false
	visit := func(rel string, strict bool) error {
		content, _, err := w.loadText(ctx, rel)
		if err != nil {
			var te *ToolError
			if !strict && errors.As(err, &te) {
				return nil // binary or too large: not searched
			}
			return err
		}
		files++
		for i, line := range splitLines(content) {
			if !match(line) {
				continue
			}
			if len(hits) == w.limits.MaxSearchHits {
				more = true
				return fs.SkipAll
			}
			hits = append(hits, fmt.Sprintf("%s:%d: %s", rel, i+1, shorten(strings.TrimSpace(line))))
		}
		return nil
	}
	if fi, _ := w.inspect(dir); fi != nil && !fi.IsDir() {
		if err := visit(dir, true); err != nil && !errors.Is(err, fs.SkipAll) {
			return "", err
		}
	} else {
		err := w.walk(ctx, dir, func(rel string, _ fs.DirEntry) error {
			if g != nil && !g.match(rel) {
				return nil
			}
			if !w.looksText(rel) {
				return nil
			}
			return visit(rel, false)
		})
		if err != nil {
			return "", err
		}
	}
	if len(hits) == 0 {
		return fmt.Sprintf("No matches for %s in %s (%d text files searched).", quoteShort(query), scope, files), nil
	}
	out := strings.Join(hits, "\n")
	if more {
		out += fmt.Sprintf("\n[stopped at %d hits; there are more. Narrow the query or give a path]", w.limits.MaxSearchHits)
	}
	return out, nil
}

// splitLines splits text into lines without their line breaks; a final line break does not
// start another line, and a "\r" before "\n" is dropped.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// numbered formats lines[start-1:end] as "  12| text"; total sets the width of the numbers.
func numbered(lines []string, start, end, total int) string {
	width := max(4, len(fmt.Sprint(total)))
	var b strings.Builder
	for n := start; n <= end; n++ {
		if n > start {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%*d| %s", width, n, shorten(lines[n-1]))
	}
	return b.String()
}

// shorten cuts a very long line for display and says so.
func shorten(line string) string {
	if len(line) <= maxShownLine {
		return line
	}
	cut := strings.ToValidUTF8(line[:maxShownLine], "")
	return fmt.Sprintf("%s… [line cut, %d more bytes]", cut, len(line)-len(cut))
}
