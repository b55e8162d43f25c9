package tools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
)

func (w *Workspace) moveFile(ctx context.Context, a args) (string, error) {
	from, err := cleanPath("from", a.str("from"), false)
	if err != nil {
		return "", err
	}
	to, err := cleanPath("to", a.str("to"), false)
	if err != nil {
		return "", err
	}
	if err := checkWritable("from", from); err != nil {
		return "", err
	}
	if err := checkWritable("to", to); err != nil {
		return "", err
	}
	if from == to {
		return "", toolErrorf("from and to are the same path (%s); give the new path in to", from)
	}
	data, _, err := w.loadFile(ctx, from)
	if err != nil {
		return "", err
	}
	target, err := w.inspect(to)
	if err != nil {
		return "", err
	}
	if target != nil {
		if target.IsDir() {
			return "", toolErrorf("to %s is an existing directory; give the full new file path, e.g. %s/%s", to, to, path.Base(from))
		}
		return "", toolErrorf("to %s already exists; choose another path, or delete_file it first if it should be replaced", to)
	}
	if path.Ext(from) != "" && path.Ext(to) == "" {
		return "", toolErrorf("to %s has no extension; give the full file name, e.g. %s%s", quoteShort(to), to, path.Ext(from))
	}

	rw := newRefRewriter(from, to)
	refs, err := w.scanRefs(ctx, rw, true)
	if err != nil {
		return "", err
	}
	steps := []step{{kind: stepMove, path: from, to: to, orig: string(data)}}
	for i, f := range refs.updated {
		dst := f.path
		if dst == from {
			dst = to // the moved page links to itself
			refs.updated[i].path = to + " (the moved file)"
		}
		if err := w.checkResult(dst, f.orig, f.content); err != nil {
			return "", err
		}
		steps = append(steps, step{kind: stepWrite, path: dst, content: f.content, perm: f.perm, orig: f.orig})
	}
	if err := w.apply(steps...); err != nil {
		return "", err
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Moved %s to %s.", from, to)
	if len(refs.updated) == 0 {
		fmt.Fprintf(&b, " No navigation entry or page link referred to %s.", from)
	} else {
		fmt.Fprintf(&b, " Updated the references in %d files:\n", len(refs.updated))
		b.WriteString(refs.describe())
	}
	if len(refs.skipped) > 0 {
		fmt.Fprintf(&b, "\nNot checked (binary, too large or unreadable): %s", strings.Join(refs.skipped, ", "))
	}
	if isPage(from) {
		b.WriteString("\nRelative links (\"../x\") and links from outside the docs were not changed.")
	}
	return b.String(), nil
}

func isPage(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".mdx" || ext == ".md"
}

// navPath is how docs.json and links name a page: its path without the extension.
func navPath(p string) string {
	if isPage(p) {
		return strings.TrimSuffix(p, path.Ext(p))
	}
	return p
}

// refRewriter finds and rewrites the references to one file: string values in docs.json or
// mint.json equal to its path (with or without extension and leading "/"), and root-relative
// links to it in pages.
type refRewriter struct {
	jsonRepl map[string]string // JSON string value → replacement
	linkRepl map[string]string // URL in a page → replacement
	linkRe   *regexp.Regexp
}

func newRefRewriter(from, to string) *refRewriter {
	r := &refRewriter{jsonRepl: map[string]string{}, linkRepl: map[string]string{}}
	add := func(o, n string) {
		r.jsonRepl[o] = n
		r.jsonRepl["/"+o] = "/" + n
		r.linkRepl["/"+o] = "/" + n
	}
	add(from, to)
	if isPage(from) {
		add(navPath(from), navPath(to))
	}
	urls := slices.SortedFunc(maps.Keys(r.linkRepl), func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for i, u := range urls {
		urls[i] = regexp.QuoteMeta(u)
	}
	// The prefix is a link context (markdown link or reference definition, an href or src
	// attribute of a component, an MDX import); the suffix ends the path so that "/guides/old"
	// does not match "/guides/older".
	const prefix = "(\\]\\([ \\t]*<?|\\]:[ \\t]+<?|\\b(?:href|src)=\\{?[\"'`]|\\bfrom[ \\t]+[\"']|\\bimport[ \\t]+[\"'])"
	const suffix = "([)#?\"'`>\\s]|$)"
	r.linkRe = regexp.MustCompile(prefix + "(" + strings.Join(urls, "|") + ")" + suffix)
	return r
}

// page rewrites the links of a page and returns the new text and how many links changed.
func (r *refRewriter) page(text string) (string, int) {
	matches := r.linkRe.FindAllStringSubmatchIndex(text, -1)
	if len(matches) == 0 {
		return text, 0
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		urlStart, urlEnd := m[4], m[5]
		b.WriteString(text[last:urlStart])
		b.WriteString(r.linkRepl[text[urlStart:urlEnd]])
		last = urlEnd
	}
	b.WriteString(text[last:])
	return b.String(), len(matches)
}

// config rewrites the string values (never the keys) of a JSON document that equal a path of
// the file, keeping everything else byte for byte.
func (r *refRewriter) config(text string) (string, int, error) {
	out, n, err := rewriteJSONStrings([]byte(text), r.jsonRepl)
	return string(out), n, err
}

// rewriteJSONStrings replaces string values of data found in repl, walking the document's
// tokens so that formatting, key order and other values stay as they were.
func rewriteJSONStrings(data []byte, repl map[string]string) ([]byte, int, error) {
	if !json.Valid(data) {
		return nil, 0, errors.New("tools: not valid JSON")
	}
	type frame struct{ object, wantKey bool }
	var stack []frame
	valueSeen := func() {
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out bytes.Buffer
	last, n := 0, 0
	for {
		start := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		end := int(dec.InputOffset())
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				valueSeen()
				stack = append(stack, frame{object: t == '{', wantKey: t == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
				stack[len(stack)-1].wantKey = false
				continue
			}
			valueSeen()
			newValue, ok := repl[t]
			if !ok {
				continue
			}
			q := bytes.IndexByte(data[start:end], '"')
			if q < 0 {
				return nil, 0, fmt.Errorf("tools: string token without a quote at byte %d", start)
			}
			out.Write(data[last : start+q])
			var enc bytes.Buffer
			e := json.NewEncoder(&enc)
			e.SetEscapeHTML(false)
			if err := e.Encode(newValue); err != nil {
				return nil, 0, err
			}
			out.Write(bytes.TrimRight(enc.Bytes(), "\n"))
			last = end
			n++
		default:
			valueSeen()
		}
	}
	out.Write(data[last:])
	return out.Bytes(), n, nil
}

// refFile is one file whose references to the moved or deleted file were found.
type refFile struct {
	path    string
	config  bool
	count   int
	orig    string
	content string
	perm    fs.FileMode
}

type refScan struct {
	updated []refFile
	skipped []string
}

func (s refScan) describe() string {
	var b strings.Builder
	for i, f := range s.updated {
		if i > 0 {
			b.WriteByte('\n')
		}
		what := "links"
		switch {
		case f.config && f.count == 1:
			what = "navigation entry or setting"
		case f.config:
			what = "navigation entries or settings"
		case f.count == 1:
			what = "link"
		}
		fmt.Fprintf(&b, "  %s: %d %s", f.path, f.count, what)
	}
	return b.String()
}

// scanRefs finds the references r knows in docs.json, mint.json and every page. With rewrite,
// each refFile carries the rewritten content; without, only the counts matter.
func (w *Workspace) scanRefs(ctx context.Context, r *refRewriter, rewrite bool) (refScan, error) {
	var s refScan
	visit := func(rel string) error {
		text, fi, err := w.loadText(ctx, rel)
		if err != nil {
			var te *ToolError
			if errors.As(err, &te) {
				s.skipped = append(s.skipped, rel)
				return nil
			}
			return err
		}
		f := refFile{path: rel, config: isConfig(rel), orig: text, perm: fi.Mode().Perm()}
		if f.config {
			out, n, err := r.config(text)
			if err != nil {
				return nil //nolint:nilerr // invalid JSON is left alone: there is nothing to walk
			}
			f.content, f.count = out, n
		} else {
			f.content, f.count = r.page(text)
		}
		if f.count > 0 {
			if !rewrite {
				f.content = ""
			}
			s.updated = append(s.updated, f)
		}
		return nil
	}
	err := w.walk(ctx, ".", func(rel string, _ fs.DirEntry) error {
		if isConfig(rel) || isPage(rel) {
			return visit(rel)
		}
		return nil
	})
	return s, err
}
