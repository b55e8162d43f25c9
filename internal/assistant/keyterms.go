package assistant

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/search"
)

// keyTerms are the question's words that say what it is about: its
// meaningful words (queryWords) without the generic ones that docs use on
// every page ("Does it support Windows?" is about Windows, not support).
// ok is false when the question has none, or has words of a script written
// without spaces, where words cannot be told apart this simply.
func keyTerms(question string) (terms []string, ok bool) {
	for _, w := range queryWords(question) {
		for _, r := range w {
			if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai) {
				return nil, false
			}
		}
		if !genericWords[w] {
			terms = append(terms, w)
		}
	}
	return terms, len(terms) > 0
}

// onTopic keeps the passages that contain at least one of the question's
// key terms, in their title or text, and numbers them from 1 again. The
// text the reader pointed at (a selection or a code block) counts as part
// of the question: "What does this option do?" is about the selection. Terms
// that most pages of the site contain (the product's name, say) do not
// count while the question has others. A question without key terms keeps
// every passage: there is nothing to check it against.
func (a *Answer) onTopic(ctx context.Context, ps []passage) []passage {
	terms, ok := keyTerms(strings.Join(append([]string{a.req.Question()}, a.req.contextValues()...), " "))
	if !ok || len(ps) == 0 {
		return ps
	}
	if len(terms) > 1 {
		common := a.svc.commonTerms(ctx, a.domain.ID, terms)
		if rest := slices.DeleteFunc(slices.Clone(terms), func(w string) bool { return common[w] }); len(rest) > 0 {
			terms = rest
		}
	}
	// The passages kept move to the front of ps, which the answer does not
	// read again; one buffer holds each text in lower case in turn.
	out := ps[:0]
	var lower []byte
	for _, p := range ps {
		lower = appendLower(lower[:0], p.text)
		if !containsAny(lower, terms) {
			lower = appendLower(lower[:0], p.title)
			if !containsAny(lower, terms) {
				continue
			}
		}
		p.n = len(out) + 1
		out = append(out, p)
	}
	return out
}

// containsAny reports whether lower, lower-case text, contains one of words.
func containsAny(lower []byte, words []string) bool {
	for _, w := range words {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

// appendLower appends s in lower case to dst, as strings.ToLower writes it
// (an invalid UTF-8 byte becomes U+FFFD), without a string of its own.
func appendLower(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			// s[:i] is ASCII: s[i:] starts a rune (or an invalid byte).
			for _, r := range s[i:] {
				dst = utf8.AppendRune(dst, unicode.ToLower(r))
			}
			return dst
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// commonTerms are the terms (word prefixes) that more than half of the
// domain's pages contain (or maxCommonPages of a large site), counted in
// its index, on a site of a few pages at least. A failed count leaves a
// term uncommon: the check is then only stricter than it needs to be.
func (s *Service) commonTerms(ctx context.Context, domain string, terms []string) map[string]bool {
	pages, err := s.pageCount(ctx, domain)
	if err != nil || pages < minPagesForCommon {
		return nil
	}
	enough := min(pages/2+1, maxCommonPages)
	common := map[string]bool{}
	for _, w := range terms {
		n, err := s.termPages(ctx, domain, w, enough)
		if err != nil {
			s.log.DebugContext(ctx, "count the pages of a term", "domain", domain, "err", err)
			continue
		}
		common[w] = n >= enough
	}
	return common
}

// termPageCounter is an index that counts the pages holding a term without
// ranking them (search.Memory walks the term's postings).
type termPageCounter interface {
	CountPages(ctx context.Context, domain string, t search.Term, f search.Filter, upTo int) (int, error)
}

// termPages counts the pages (up to upTo) that hold a word prefix w in a
// passage every reader may see. An index held in memory counts them; any
// other is asked for one hit a page.
func (s *Service) termPages(ctx context.Context, domain, w string, upTo int) (int, error) {
	term := search.Term{Words: []string{w}, Prefix: true, Required: true}
	if c, ok := s.index.(termPageCounter); ok {
		return c.CountPages(ctx, domain, term, search.Filter{}, upTo)
	}
	hits, err := s.index.Search(ctx, domain, search.Query{Text: w, Terms: []search.Term{term}, Limit: upTo, MaxPerPage: 1})
	return len(hits), err
}

const (
	// minPagesForCommon is the size of site below which no term is
	// common: on two pages, "more than half" says nothing.
	minPagesForCommon = 3
	// maxCommonPages bounds the count: a term on that many pages is
	// common on any site, and the search stays small.
	maxCommonPages = 200
)

// genericWords are words of questions that occur on most pages of any docs
// site, as queryWords cuts them (five letters at most). A passage sharing
// only these with a question is not about it.
var genericWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		suppo work works worki run runni get gets set setup need make way able possi
		help featu avail find show tell know want like also just more some any all
		other there here them they its doc docs docum page pages guide
		exist provi allow enabl offer handl did done don doesn isn didn won
		into onto over under yes please thank thanks
	`) {
		m[w] = true
	}
	return m
}()

// indexed reports whether the domain's index holds any page. Asked only
// when a question found nothing; an error counts as indexed, so that the
// reader is told the usual "not covered" rather than a wrong reason.
func (s *Service) indexed(ctx context.Context, domain string) bool {
	pages, err := s.pageCount(ctx, domain)
	if err != nil {
		s.log.WarnContext(ctx, "read the domain's indexed pages", "domain", domain, "err", err)
		return true
	}
	return pages > 0
}

// pageCounter is an index that knows how many pages a domain has without
// reading them from the store (search.Memory counts the index it holds).
type pageCounter interface {
	PageCount(ctx context.Context, domain string) (int, error)
}

// pageCount is how many pages the domain's index holds. Answers ask it, so
// an index held in memory answers it rather than the store.
func (s *Service) pageCount(ctx context.Context, domain string) (int, error) {
	if c, ok := s.index.(pageCounter); ok {
		return c.PageCount(ctx, domain)
	}
	pages, err := s.index.PageHashes(ctx, domain)
	return len(pages), err
}
