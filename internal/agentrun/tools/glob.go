package tools

import (
	"path"
	"strings"
)

const (
	maxGlobLen        = 256
	maxGlobDoubleStar = 4
)

// glob is a compiled file pattern. Without a "/" it matches a file's base name; with one it
// matches the path from the docs root, segment by segment, and "**" matches any number of
// directories.
type glob struct {
	segs     []string
	baseOnly bool
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

func compileGlob(field, pattern string) (*glob, error) {
	return docsVocabulary.compileGlob(field, pattern)
}

func (v vocabulary) compileGlob(field, pattern string) (*glob, error) {
	pattern = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(pattern), "./"), "/")
	if pattern == "" {
		return nil, toolErrorf("%s is empty; give a pattern such as \"*.mdx\" or \"guides/**/*.md\"", field)
	}
	if len(pattern) > maxGlobLen {
		return nil, toolErrorf("%s is %d bytes; patterns are at most %d bytes", field, len(pattern), maxGlobLen)
	}
	if strings.ContainsRune(pattern, '\\') {
		return nil, toolErrorf("%s %s contains a backslash; use forward slashes, and no escapes", field, quoteShort(pattern))
	}
	g := &glob{segs: strings.Split(pattern, "/"), baseOnly: !strings.Contains(pattern, "/")}
	stars := 0
	for _, s := range g.segs {
		if s == "**" {
			stars++
			continue
		}
		if s == ".." {
			return nil, toolErrorf("%s %s contains \"..\"; patterns are matched against paths inside %s", field, quoteShort(pattern), v.root)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, toolErrorf("%s %s is not a valid pattern (%v); use *, ? and [abc], e.g. \"guides/**/*.mdx\"", field, quoteShort(pattern), err)
		}
	}
	if stars > maxGlobDoubleStar {
		return nil, toolErrorf("%s %s has more than %d \"**\"; simplify it", field, quoteShort(pattern), maxGlobDoubleStar)
	}
	return g, nil
}

func (g *glob) match(rel string) bool {
	if g.baseOnly {
		if g.segs[0] == "**" {
			return true
		}
		ok, _ := path.Match(g.segs[0], path.Base(rel))
		return ok
	}
	return matchSegs(g.segs, strings.Split(rel, "/"))
}

func matchSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], segs[0])
	return ok && matchSegs(pat[1:], segs[1:])
}
