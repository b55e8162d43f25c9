package assistant

import (
	"context"
	"strings"

	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/search/engine"
)

// What the answer asks the index: how many pages a domain has, and how many
// hold a word or a phrase.

// termPageCounter is an index that counts the pages holding a term without
// ranking them (search.Memory walks the term's postings).
type termPageCounter interface {
	CountPages(ctx context.Context, domain string, t search.Term, f search.Filter, upTo int) (int, error)
}

// termPages counts the pages (up to upTo) that hold term in a passage the
// filter keeps: the reader's, so that a word only on pages the reader may
// not see is one the docs do not show them. An index held in memory counts
// them; any other is asked for one hit a page.
func (s *Service) termPages(ctx context.Context, domain string, term search.Term, f search.Filter, upTo int) (int, error) {
	if c, ok := s.index.(termPageCounter); ok {
		return c.CountPages(ctx, domain, term, f, upTo)
	}
	hits, err := s.index.Search(ctx, domain, search.Query{Text: strings.Join(term.Words, " "), Terms: []search.Term{term}, Filter: f, Limit: upTo, MaxPerPage: 1})
	return len(hits), err
}

const (
	// minPagesForCommon is the size of site below which no word is
	// common: on two pages, "more than half" says nothing.
	minPagesForCommon = 3
	// maxCommonPages bounds the count: a word on that many pages is
	// common on any site, and the search stays small.
	maxCommonPages = 200
)

// genericWord reports whether w is a word of questions that docs use on
// most pages of any site ("Does it support Windows?" is about Windows, not
// support): a passage sharing only these with a question is not about it.
// Words are compared as the index stems them.
func genericWord(w string) bool {
	g := false
	engine.Words(w, func(_, stem string) { g = genericStems[stem] })
	return g
}

// genericStems are the stems of genericWords' list.
var genericStems = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"support", "work", "run", "get", "set", "setup", "need", "make", "way", "able", "possible",
		"help", "feature", "available", "find", "show", "tell", "know", "want", "like", "also", "just",
		"more", "some", "any", "all", "other", "there", "here", "them", "they", "its", "doc", "docs",
		"documentation", "guide", "exist", "provide", "allow", "enable", "offer", "handle", "done",
		"use", "using", "thing", "something", "anything", "yes", "please", "thank", "thanks", "hi", "hello",
		"instead", "without", "step", "many", "much", "built", "able", "option", "actually", "really", "good", "best",
	} {
		engine.Words(w, func(_, stem string) { m[stem] = true })
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
