package search

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/docsmith/docsmith/internal/search/engine"
)

// Defaults of a Retriever.
const (
	DefaultPageSize = 10
	MaxPageSize     = 50
	// DefaultMaxPerPage keeps one page from filling the results.
	DefaultMaxPerPage = 2
	// DefaultSecondPassageRatio keeps a page's second passage only when
	// it scores nearly as well as its first: five results are then about
	// five pages, unless a page answers twice over.
	DefaultSecondPassageRatio = 0.9
	// DefaultPathBoost is the factor for the reader's current page.
	DefaultPathBoost = 1.5
	// DefaultOtherLanguage is the factor for a chunk in another language
	// than the question's, when the question's language is clear and no
	// language filter is set.
	DefaultOtherLanguage = 0.5
	// maxContextTerms bounds the terms taken from each context value.
	maxContextTerms = 12
)

// Retriever turns a reader's question into a query and ranked passages.
type Retriever struct {
	idx Index
	// MaxPerPage, PathBoost and OtherLanguage default to the constants
	// above when zero.
	MaxPerPage    int
	PathBoost     float64
	OtherLanguage float64
	// hybrid, if set, fuses dense retrieval and reranking with BM25 (see
	// WithHybrid).
	hybrid *hybrid
	// synonyms holds the domains' synonym tables compiled (nil in a
	// Retriever not made by NewRetriever: they are then compiled each
	// time).
	synonyms *synonymCache
}

// NewRetriever returns a Retriever over idx with the default settings.
func NewRetriever(idx Index) *Retriever {
	return &Retriever{idx: idx, MaxPerPage: DefaultMaxPerPage, PathBoost: DefaultPathBoost, OtherLanguage: DefaultOtherLanguage,
		synonyms: newSynonymCache()}
}

// Request is one retrieval.
type Request struct {
	// Query is the reader's question or search text.
	Query string
	// Context holds extra text (code or a selection the reader points
	// at) whose words are added to the query.
	Context []string
	// CurrentPath is the page the reader is on ("/guides/setup"); its
	// chunks are boosted.
	CurrentPath string
	// PageSize is the number of passages wanted, 1–50 (default 10).
	PageSize int
	// ScoreThreshold drops passages scoring below it (scores are in
	// [0, 1]).
	ScoreThreshold float64
	Filter         Filter
	// Synonyms are the domain's own groups of words or phrases that mean
	// the same (its settings), searched besides the built-in ones.
	Synonyms [][]string
}

// Retrieve returns up to req.PageSize passages, best first.
func (r *Retriever) Retrieve(ctx context.Context, domain string, req Request) ([]Hit, error) {
	size := req.PageSize
	if size <= 0 {
		size = DefaultPageSize
	}
	size = min(size, MaxPageSize)
	lang := engine.DetectLanguage(req.Query)
	stopLang := lang
	if req.Filter.Language != "" {
		stopLang = engine.PrimaryLanguage(req.Filter.Language)
	}
	terms := engine.ParseQuery(req.Query, stopLang)
	for _, c := range req.Context {
		ct := engine.ParseQuery(c, stopLang)
		n := 0
		for _, t := range ct {
			if n == maxContextTerms {
				break
			}
			t.Required, t.Prefix = false, false
			terms = append(terms, t)
			n++
		}
	}
	if len(terms) == 0 {
		return nil, nil
	}
	terms = dedupeTerms(engine.ExpandSynonyms(req.Query, terms, engine.BuiltinSynonyms(), r.synonyms.table(req.Synonyms)))
	q := Query{
		Text:               req.Query,
		Terms:              terms,
		Limit:              max(4*size, 40),
		Filter:             req.Filter,
		BoostPath:          PagePath(req.CurrentPath),
		PathBoost:          orDefault(r.PathBoost, DefaultPathBoost),
		MaxPerPage:         r.MaxPerPage,
		SecondPassageRatio: DefaultSecondPassageRatio,
	}
	if q.MaxPerPage == 0 {
		q.MaxPerPage = DefaultMaxPerPage
	}
	hits, err := r.idx.Search(ctx, domain, q)
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	if len(hits) == 0 && hasRequired(terms) {
		// A quoted phrase nothing contains: rank on every word instead of
		// answering with nothing.
		q.Terms = relax(terms)
		if hits, err = r.idx.Search(ctx, domain, q); err != nil {
			return nil, fmt.Errorf("retrieve: %w", err)
		}
	}
	if pref, other := r.preferredLanguage(lang, req); pref != "" {
		for i := range hits {
			if hits[i].Language != "" && !engine.SameLanguage(hits[i].Language, pref) {
				hits[i].Score *= other
			}
		}
		sortByScore(hits)
	}
	if r.hybrid != nil {
		hits = r.hybrid.fuse(ctx, domain, req, hits, q.Limit, q.MaxPerPage)
	}
	// The hits kept move to the front, each at most once: most often none
	// is dropped and none moves.
	kept := 0
	for i := range hits {
		if kept == size {
			break
		}
		if hits[i].Score >= req.ScoreThreshold {
			if kept != i {
				hits[kept] = hits[i]
			}
			kept++
		}
	}
	return hits[:kept], nil
}

// sortByScore sorts hits by score, best first, equal scores in their order,
// as a stable sort would. Most often no score changed, or none enough to
// change the order, and nothing moves. Otherwise, since a Hit is large, the
// hits' places are sorted, and each hit then moves once to its own.
func sortByScore(hits []Hit) {
	if slices.IsSortedFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) }) {
		return
	}
	var room [4 * MaxPageSize]int32
	order := room[:0]
	for i := range hits {
		order = append(order, int32(i))
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(hits[b].Score, hits[a].Score) })
	// Place i takes the hit at order[i]: each cycle of the permutation is
	// followed from its first place, whose hit is held aside, and each
	// place done is marked as taking its own.
	for first := range order {
		if int(order[first]) == first {
			continue
		}
		held := hits[first]
		at := first
		for {
			from := int(order[at])
			order[at] = int32(at)
			if from == first {
				break
			}
			hits[at] = hits[from]
			at = from
		}
		hits[at] = held
	}
}

// preferredLanguage is the language the reader most likely reads, and the
// factor for chunks in other languages: the question's language when it is
// clear, else the language of the page the reader is on (a path starting
// with a language code, as translated Mintlify sites have), else English,
// more weakly, for a question written in plain ASCII. A language filter
// makes this moot.
func (r *Retriever) preferredLanguage(detected string, req Request) (string, float64) {
	other := orDefault(r.OtherLanguage, DefaultOtherLanguage)
	switch {
	case req.Filter.Language != "":
		return "", 1
	case detected != "":
		return detected, other
	}
	if first, _, _ := strings.Cut(PagePath(req.CurrentPath), "/"); isLanguageCode(first) {
		return first, other
	}
	if engine.PlainASCII(req.Query) {
		return "en", (1 + other) / 2
	}
	return "", 1
}

// isLanguageCode reports whether a path segment is one of the language codes
// docs sites put in front of translated pages.
func isLanguageCode(s string) bool {
	switch strings.ToLower(s) {
	case "ar", "ca", "cn", "cs", "da", "de", "el", "en", "es", "fi", "fr", "fr-ca", "he", "hi", "hu", "id", "it",
		"ja", "jp", "ko", "lv", "nl", "no", "pl", "pt", "pt-br", "ro", "ru", "sv", "th", "tr", "uk", "uz", "vi",
		"zh", "zh-hans", "zh-hant", "zh-cn", "zh-tw":
		return true
	}
	return false
}

// PagePath turns a reader's current path or URL path ("/guides/setup/",
// "/guides/setup.mdx#install", "/") into a navigation path ("guides/setup",
// "index").
func PagePath(p string) string {
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if p = strings.Trim(p, "/"); p == "" {
		return "index"
	}
	p = path.Clean(p)
	for _, ext := range []string{".mdx", ".md"} {
		p = strings.TrimSuffix(p, ext)
	}
	return p
}

func hasRequired(ts []Term) bool {
	for _, t := range ts {
		if t.Required {
			return true
		}
	}
	return false
}

// relax makes every term optional, adding a required phrase's words on their
// own.
func relax(ts []Term) []Term {
	var out []Term
	for _, t := range ts {
		if !t.Required {
			out = append(out, t)
			continue
		}
		t.Required = false
		out = append(out, t)
		if len(t.Words) > 1 {
			for _, w := range t.Words {
				if !engine.StopWord("en", w) && len([]rune(w)) > 1 {
					out = append(out, Term{Words: []string{w}})
				}
			}
		}
	}
	return dedupeTerms(out)
}

// dedupeTerms keeps the first of equal terms, up to engine.MaxTerms, at the front
// of ts's array. The terms kept are compared one by one: there are few of
// them, and no key is built.
func dedupeTerms(ts []Term) []Term {
	out := ts[:0]
	for _, t := range ts {
		if slices.ContainsFunc(out, func(o Term) bool {
			return o.Prefix == t.Prefix && o.Required == t.Required && slices.Equal(o.Words, t.Words)
		}) {
			continue
		}
		out = append(out, t)
		if len(out) == engine.MaxTerms {
			break
		}
	}
	return out
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}
