// Package engine is docsmith's search engine: text analysis (CJK bigrams,
// identifier splitting, stemming, stop words, language detection), query
// parsing, an inverted index of passages with bm25 and MaxScore pruning,
// page-level ranking, and the snapshot encoding of an index. It knows
// nothing of domains, stores or caches: an Index is built from Chunks and
// answers Queries.
package engine

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/docsmith/docsmith/internal/mdblock"
)

// Chunk is one passage of a page: a heading's section, or part of one when
// the section is long.
type Chunk struct {
	// ID is unique within a domain: the page path, the anchor and, for the
	// second and later parts of a long section, "~N".
	ID string
	// PagePath is the page's navigation path ("guides/setup").
	PagePath string
	// Anchor is the heading's id on the page, "" for the page's top.
	Anchor string
	// URL is siteURL + "/" + PagePath, plus "#" + Anchor when there is one.
	URL       string
	PageTitle string
	// Heading is the section's heading, "" for the page's top.
	Heading string
	// Breadcrumb is where the chunk sits: the navigation tabs and groups
	// above the page, the page title, then the headings down to this one.
	Breadcrumb []string
	// Text is the chunk's plain text, one line per paragraph, list item,
	// table row or code line.
	Text string
	// Markdown is the chunk as Markdown, what every surface shows: code
	// fences with their info string and exact bytes, tables, lists, block
	// quotes, links (site-relative ones made absolute) and image alt text
	// kept, Mintlify components turned into their plain Markdown
	// equivalents. The first part of a section with a heading starts with
	// that heading as a Markdown heading line of its level.
	Markdown string
	// MarkdownOverlap is how many bytes at the start of Markdown repeat the
	// end of the previous chunk's Markdown (see Overlap). A chunk that
	// starts inside a code block or table first repeats its opening fence
	// or header rows, counted in the overlap; Markdown after the overlap
	// starts with the separator (line break or blank line) that follows the
	// previous chunk's content (see AssemblePage).
	MarkdownOverlap   int
	Version, Language string
	// Groups are the access groups of the page (its "groups" front matter):
	// a page with groups is shown only to readers in one of them.
	Groups []string
	// PageHash identifies the content of the page's chunks, for incremental
	// rebuilds: a page whose hash is unchanged is not rewritten.
	PageHash string
	// Seq orders the chunks of a page.
	Seq int
	// Overlap is how many bytes at the start of Text repeat the end of the
	// previous chunk (a long section split in parts overlaps a little).
	Overlap int
	// Keywords is page-level text that is searched but not shown: the
	// page's description, sidebar title, front matter keywords and, for an
	// API page, its method, path and operation id.
	Keywords string
	// Boost multiplies the chunk's relevance (front matter "boost"); 0
	// means 1.
	Boost float64
}

// Filter narrows a search. Empty fields do not filter.
type Filter struct {
	// Version keeps chunks of that version and chunks with no version.
	Version string `json:"version,omitempty"`
	// Language keeps chunks of that language and chunks with no language.
	Language string `json:"language,omitempty"`
	// Groups are the access groups the reader belongs to. Chunks of pages
	// without groups are always kept; chunks of restricted pages only when
	// they share a group with this list.
	Groups []string `json:"groups,omitempty"`
}

// Term is one clause of a query: a word, a prefix, or a phrase.
type Term struct {
	// Words holds one word, or several for a phrase that must appear in
	// this order. Words are already analyzed (see ParseQuery): lower
	// case, CJK as bigrams.
	Words []string
	// Prefix matches any word starting with the (last) word.
	Prefix bool
	// Required terms must all match; the others are alternatives that
	// only rank.
	Required bool
	// Weight multiplies the term's contribution to a chunk's relevance;
	// 0 means 1. Terms a query is expanded with (synonyms, related terms)
	// weigh less than the reader's own words, and are not counted as
	// words of the question when scores are normalized.
	Weight float64
	// standsFor, on a synonym, holds the words of the reader's that it
	// stands for: the more the docs use the reader's own words, the less
	// the synonym is needed (see gatedWeight).
	standsFor []string
}

// weight is the factor of the term's contribution.
func (t Term) weight() float64 {
	if t.Weight <= 0 || math.IsNaN(t.Weight) {
		return 1
	}
	return t.Weight
}

// expansion reports whether the term was added to the reader's words with
// a lower weight.
func (t Term) expansion() bool { return t.weight() < 1 }

// String writes the term compactly, for logs and tests: its words joined by
// spaces, "*" after a prefix, "+" before a required term.
func (t Term) String() string {
	s := strings.Join(t.Words, " ")
	if t.Prefix {
		s += "*"
	}
	if t.Required {
		s = "+" + s
	}
	if t.expansion() {
		s += "^" + strconv.FormatFloat(t.Weight, 'g', 3, 64)
	}
	return s
}

// Expansion reports whether t was added to the reader's terms by the
// analysis rather than typed (its Weight is below 1): it ranks, but the
// reader did not ask for it, so a chunk without it lacks nothing the
// reader wanted (the assistant does not count it as a question word).
func (t Term) Expansion() bool { return t.expansion() }

// Query is a search as an Index runs it: optional terms ranked by their
// relevance, required terms all present, then boosts and filters.
type Query struct {
	// Text is the original text, for logs; Index implementations search
	// Terms.
	Text  string
	Terms []Term
	// Limit is the number of hits to return.
	Limit  int
	Filter Filter
	// BoostPath is a page (the reader's current page) whose chunks are
	// multiplied by PathBoost.
	BoostPath string
	PathBoost float64
	// MaxPerPage caps the chunks returned from one page (0: no cap).
	MaxPerPage int
	// SecondPassageRatio, when set, keeps a page's second and later
	// chunks (up to MaxPerPage) only when they score at least this share
	// of the page's best chunk, so that the first results are mostly one
	// page each.
	SecondPassageRatio float64
}

// Hit is a chunk found by a search.
type Hit struct {
	Chunk
	// Score is the relevance in [0, 1], higher is better; scores compare
	// within one domain's index.
	Score float64
}

// PageText is one indexed page as Markdown.
type PageText struct {
	Path, Title, URL string
	// Content is the page as Markdown (see Chunk.Markdown): the title as a
	// level-1 heading, then the sections in order, each under its heading at
	// its level.
	Content string
	// Groups are the page's access groups (see Chunk.Groups).
	Groups []string
}

// VisibleTo reports whether a reader in groups may see the page: a page
// without groups is public, a restricted one needs a shared group, as
// Filter.Groups keeps chunks in a search.
func (pt PageText) VisibleTo(groups []string) bool {
	if len(pt.Groups) == 0 {
		return true
	}
	for _, g := range groups {
		if slices.Contains(pt.Groups, g) {
			return true
		}
	}
	return false
}

// boostDamping tempers front matter boosts. Mintlify multiplies a semantic
// similarity that varies little between candidates by the boost; bm25 varies
// much more, and sites set boosts of 3 or 5 on whole sections, so the full
// factor would let a boosted page outrank far better matches.
const boostDamping = 0.1

// rankBoost is the factor ranking multiplies a chunk's relevance by for its
// Boost: Boost to the power boostDamping, 1 when unset.
func rankBoost(boost float64) float64 {
	if boost <= 0 || math.IsNaN(boost) || math.IsInf(boost, 0) {
		return 1
	}
	return math.Pow(boost, boostDamping)
}

// AssemblePage rebuilds a page as Markdown from its chunks in seq order: the
// title as a level-1 heading, then each chunk's Markdown (which holds its
// headings at their levels) without the MarkdownOverlap it repeats from the
// chunk before. A chunk that starts inside a code block reopened its fence
// within that overlap, so the closing fence the chunk before added is
// dropped, and the code block reads as one. A chunk stored without Markdown
// (by a store that does not keep it yet) gives its heading and plain text
// instead. It is what every Index's Page returns; ok is false when there are
// no chunks.
func AssemblePage(chunks []Chunk) (PageText, bool) {
	if len(chunks) == 0 {
		return PageText{}, false
	}
	first := chunks[0]
	pt := PageText{Path: first.PagePath, Title: first.PageTitle, URL: strings.SplitN(first.URL, "#", 2)[0]}
	b := []byte("# " + first.PageTitle)
	prevAnchor := ""
	for i, c := range chunks {
		newSection := i == 0 || c.Anchor != prevAnchor
		prevAnchor = c.Anchor
		for _, g := range c.Groups {
			if !slices.Contains(pt.Groups, g) {
				pt.Groups = append(pt.Groups, g)
			}
		}
		md := c.Markdown
		if md == "" {
			md = plainMarkdown(c, newSection)
		}
		if n := c.MarkdownOverlap; n > 0 && n <= len(md) {
			if mdblock.InsideFence(md[:n]) {
				if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
					b = b[:i]
				}
			}
			b = append(b, md[n:]...)
			continue
		}
		if strings.TrimSpace(md) != "" {
			b = append(b, "\n\n"...)
			b = append(b, md...)
		}
	}
	pt.Content = string(append(b, '\n'))
	return pt, true
}

// plainMarkdown is a chunk without Markdown as pages read before chunks had
// Markdown: a heading line (when it starts a section) right above its text
// past the overlap.
func plainMarkdown(c Chunk, newSection bool) string {
	text := c.Text
	if c.Overlap > 0 && c.Overlap <= len(text) {
		text = strings.TrimLeft(text[c.Overlap:], "\n")
	}
	if newSection && c.Heading != "" {
		return strings.TrimSuffix("## "+c.Heading+"\n"+text, "\n")
	}
	return text
}
