package agentrun

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/docsmith/docsmith/internal/docs"
)

// maxListed bounds how many links or problems a builtin summary lists one
// by one; it says how many more there are.
const maxListed = 20

// fixBrokenLinks finds every internal link that leads nowhere, with the
// validator's check, and rewrites those whose fix is unambiguous; the
// others are left as they are and listed.
func (b *builtinRun) fixBrokenLinks(ctx context.Context) error {
	broken, pages := docs.BrokenLinks(b.fsys)
	if len(broken) == 0 {
		b.done = append(b.done, fmt.Sprintf("Nothing changed: no internal link of the %d %s checked is broken.", pages, plural(pages, "page")))
		b.done = append(b.done, b.navigationNote()...)
		return nil
	}
	var left []docs.BrokenLink
	byFile := map[string][]docs.BrokenLink{}
	var files []string
	for _, bl := range broken {
		if bl.Fix == "" {
			left = append(left, bl)
			continue
		}
		if byFile[bl.File] == nil {
			files = append(files, bl.File)
		}
		byFile[bl.File] = append(byFile[bl.File], bl)
	}
	var fixed []string
	changed := 0
	for _, f := range files {
		text, err := b.read(f)
		if err != nil {
			return err
		}
		updated, done, missed := rewriteLinks(text, byFile[f])
		for _, bl := range done {
			fixed = append(fixed, fmt.Sprintf("%s:%d %q → %q", bl.File, bl.Line, bl.Target, bl.Fix))
		}
		for _, bl := range missed {
			bl.Unfixed = fmt.Sprintf("link %q would become %q, but its text was not found where the link is (it may be written with escapes), so it was left as it is", bl.Target, bl.Fix)
			left = append(left, bl)
		}
		if updated == text {
			continue
		}
		// One edit per page, through the file tools like every builtin
		// change, so it is validated, counted and committed.
		if _, err := b.call(ctx, "str_replace", map[string]any{"path": f, "old_str": text, "new_str": updated}); err != nil {
			return err
		}
		changed++
	}
	slices.SortStableFunc(left, func(x, y docs.BrokenLink) int {
		return cmp.Or(cmp.Compare(x.File, y.File), cmp.Compare(x.Line, y.Line))
	})
	var unfixed []string
	for _, bl := range left {
		unfixed = append(unfixed, fmt.Sprintf("%s:%d: %s", bl.File, bl.Line, bl.Unfixed))
	}
	switch {
	case len(fixed) == 0:
		b.done = append(b.done, fmt.Sprintf("Nothing changed: %d broken %s found in the %d %s checked, and none can be fixed unambiguously: %s.",
			len(unfixed), plural(len(unfixed), "link"), pages, plural(pages, "page"), listed(unfixed)))
	default:
		b.done = append(b.done, fmt.Sprintf("Fixed %d broken %s in %d %s: %s.",
			len(fixed), plural(len(fixed), "link"), changed, plural(changed, "page"), listed(fixed)))
		if len(unfixed) > 0 {
			b.done = append(b.done, fmt.Sprintf("Left %d broken %s that cannot be fixed unambiguously: %s.",
				len(unfixed), plural(len(unfixed), "link"), listed(unfixed)))
		}
	}
	b.done = append(b.done, b.navigationNote()...)
	return nil
}

// navigationNote points at check the navigation when navigation entries
// name missing pages, which fix broken links does not change.
func (b *builtinRun) navigationNote() []string {
	site, err := docs.Load(b.fsys)
	if err != nil || len(site.Missing) == 0 {
		return nil
	}
	n := len(site.Missing)
	return []string{fmt.Sprintf("The navigation names %d missing %s, which this command does not change; \"check the navigation\" lists %s.",
		n, plural(n, "page"), plural(n, "it", "them"))}
}

// linkForms lists the ways a link target is written in a page, as the text
// before and after it: Markdown links (with or without a title, or in
// angle brackets), reference definitions, and href attributes.
func linkForms() [][2]string {
	return [][2]string{
		{"](", ")"}, {"](", " "}, {"](<", ">"},
		{"]: ", "\n"}, {"]: ", "\r"}, {"]: ", " "},
		{`href="`, `"`}, {"href='", "'"},
	}
}

// rewriteLinks points each link at its Fix. A link is looked for in the
// block that starts at its line (a component's href may sit on a later
// line than the tag that opens it) and after the link before it; the first
// place its target is written in one of the linkForms is rewritten. Links
// whose text is not found there (written with escapes, say) are returned
// in missed.
func rewriteLinks(text string, links []docs.BrokenLink) (updated string, done, missed []docs.BrokenLink) {
	links = slices.Clone(links)
	slices.SortStableFunc(links, func(x, y docs.BrokenLink) int { return cmp.Compare(x.Line, y.Line) })
	var out strings.Builder
	pos := 0
	for _, l := range links {
		start := lineStart(text, l.Line)
		from, end := max(start, pos), blockEnd(text, start)
		at, form := -1, [2]string{}
		if from < end {
			for _, f := range linkForms() {
				i := strings.Index(text[from:end], f[0]+l.Target+f[1])
				if i >= 0 && (at < 0 || i < at) {
					at, form = i, f
				}
			}
		}
		if at < 0 {
			missed = append(missed, l)
			continue
		}
		at += from
		out.WriteString(text[pos:at])
		out.WriteString(form[0] + l.Fix + form[1])
		pos = at + len(form[0]) + len(l.Target) + len(form[1])
		done = append(done, l)
	}
	out.WriteString(text[pos:])
	return out.String(), done, missed
}

// blockEnd is the offset of the first blank line after the line that
// starts at offset start, or the end of text.
func blockEnd(text string, start int) int {
	for off := start; off < len(text); {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			break
		}
		if off > start && strings.TrimSpace(text[off:off+i]) == "" {
			return off
		}
		off += i + 1
	}
	return len(text)
}

// lineStart is the offset of the start of 1-based line n of text.
func lineStart(text string, n int) int {
	off := 0
	for ; n > 1; n-- {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return off
}

// checkNavigation reports what is wrong with the navigation, and changes
// nothing.
func (b *builtinRun) checkNavigation() {
	r := docs.CheckNavigation(b.fsys)
	if r.Problems() == 0 {
		b.done = append(b.done, fmt.Sprintf("The navigation is fine: %s lists %d %s, each once and each with a file, and every page of the docs that is not marked hidden is listed. Nothing was changed.",
			r.ConfigFile, r.Listed, plural(r.Listed, "page")))
		return
	}
	var counts []string
	count := func(n int, one, many string) {
		if n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, plural(n, one, many)))
		}
	}
	count(len(r.Missing), "entry names a missing page", "entries name missing pages")
	count(len(r.Unlisted), "page is not listed", "pages are not listed")
	count(len(r.Duplicates), "page is listed more than once", "pages are listed more than once")
	count(len(r.Other), "other problem", "other problems")
	n := r.Problems()
	parts := []string{fmt.Sprintf("Checked the navigation in %s and changed nothing. Found %d %s: %s.",
		r.ConfigFile, n, plural(n, "problem"), strings.Join(counts, ", "))}
	section := func(title string, items []string) {
		if len(items) > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d): %s.", title, len(items), listed(items)))
		}
	}
	section("Entries naming missing pages", problemStrings(r.Missing))
	section("Pages not listed in the navigation", r.Unlisted)
	var dups []string
	for _, d := range r.Duplicates {
		dups = append(dups, duplicateString(d))
	}
	section("Pages listed more than once", dups)
	section("Other problems", problemStrings(r.Other))
	b.done = append(b.done, strings.Join(parts, " "))
}

func duplicateString(d docs.NavDuplicate) string {
	s := d.Page
	var scope []string
	if d.Version != "" {
		scope = append(scope, "version "+d.Version)
	}
	if d.Language != "" {
		scope = append(scope, "language "+d.Language)
	}
	if len(scope) > 0 {
		s += " (" + strings.Join(scope, ", ") + ")"
	}
	places := make([]string, len(d.Places))
	for i, p := range d.Places {
		if p == "" {
			places[i] = "at the top level"
		} else {
			places[i] = "under " + p
		}
	}
	return fmt.Sprintf("%s %d times, %s", s, len(d.Places), strings.Join(places, " and "))
}

func problemStrings(ps []docs.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// listed joins items with "; ", at most maxListed of them.
func listed(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxListed], "; ") + fmt.Sprintf("; and %d more", len(items)-maxListed)
}

// plural picks the word for n: one, or many (one+"s" when not given).
func plural(n int, one string, many ...string) string {
	if n == 1 {
		return one
	}
	if len(many) > 0 {
		return many[0]
	}
	return one + "s"
}
