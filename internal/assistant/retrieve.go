package assistant

import (
	"context"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search"
)

// Sizes of what goes to the model and into extractive answers.
const (
	maxHistoryTurns    = 5    // earlier question/answer pairs
	maxHistoryChars    = 4000 // per earlier message
	maxContextChars    = 4000 // per context item
	maxExtractive      = 3    // passages quoted without a model
	maxExtractiveChars = 900  // per quoted passage
	// shortQuestion is the number of words up to which a follow-up ("and
	// on Windows?") is searched together with the question before it.
	shortQuestion = 4
)

// retrieve finds the turn's passages: the question, with the context values
// and, for a short follow-up, the previous question as extra query text,
// filtered, the current page boosted. Passages are numbered from 1, best
// first; none means nothing relevant was found.
func (a *Answer) retrieve(ctx context.Context) ([]passage, error) {
	q := a.req.Question()
	extra := a.req.contextValues()
	if prev := previousQuestion(a.req.Messages); prev != "" && len(strings.Fields(q)) <= shortQuestion {
		extra = append(extra, prev)
	}
	hits, err := a.svc.retriever.Retrieve(ctx, a.domain.ID, search.Request{
		Query:       q,
		Context:     extra,
		CurrentPath: a.req.CurrentPath,
		PageSize:    a.req.PageSize,
		Filter:      a.req.Filter,
	})
	if err != nil {
		return nil, fmt.Errorf("retrieve passages: %w", err)
	}
	return a.svc.passages(a.domain.SiteURL, hits), nil
}

// passages keeps the relevant hits: none when even the best is below the
// minimum score, else every hit scoring at least half of it. Hits with the
// same link (parts of one long section) become one passage.
func (s *Service) passages(siteURL string, hits []search.Hit) []passage {
	if len(hits) == 0 || hits[0].Score < s.minScore {
		return nil
	}
	out := make([]passage, 0, len(hits))
	for _, h := range hits {
		if h.Score < s.minScore/2 {
			continue
		}
		url := citeURL(siteURL, h.PagePath, h.Anchor)
		if i := passageWithURL(out, url); i >= 0 {
			out[i].text = joinParts(out[i].text, chunkText(h))
			continue
		}
		out = append(out, passage{n: len(out) + 1, hit: h, url: url, title: citeTitle(h), text: chunkText(h)})
	}
	return out
}

// passageWithURL is the index of the passage linking to url, or -1. A turn
// has a handful of passages (MaxPageSize at most): a scan is cheaper than a
// map.
func passageWithURL(ps []passage, url string) int {
	for i := range ps {
		if ps[i].url == url {
			return i
		}
	}
	return -1
}

// chunkText is what a passage shows of a chunk, its Markdown (see
// search.Chunk.Display), without the overlap it repeats from the chunk
// before it, nor the blank lines around it. Spaces starting its first line
// stay: they may indent code.
func chunkText(h search.Hit) string {
	text, overlap := h.Display()
	if overlap > 0 && overlap < len(text) {
		text = text[overlap:]
	}
	for {
		line, rest, found := strings.Cut(text, "\n")
		if !found || strings.TrimSpace(line) != "" {
			break
		}
		text = rest
	}
	return strings.TrimRight(text, " \t\r\n")
}

// joinParts appends the next part of a long section to a passage: on the
// next line inside a code block the passage leaves open, else after a
// blank line when the parts are Markdown blocks, else on the next line.
func joinParts(passage, next string) string {
	if _, open := mdblock.OpenFence(passage); open || !strings.Contains(passage, "\n\n") {
		return passage + "\n" + next
	}
	return passage + "\n\n" + next
}

// citeURL links a passage: the site URL, the page path and the heading's
// anchor. Without a site URL the link is site-relative, which is what a
// widget on the site itself needs. An "index" page is its folder.
func citeURL(siteURL, pagePath, anchor string) string {
	u := search.PageURL(siteURL, pagePath)
	if anchor != "" {
		u += "#" + anchor
	}
	return u
}

// citeTitle is "Page title › Heading", or the page title alone for the
// page's top.
func citeTitle(h search.Hit) string {
	title := h.PageTitle
	if title == "" {
		title = h.PagePath
	}
	if h.Heading != "" && h.Heading != title {
		return title + " › " + h.Heading
	}
	return title
}

// bestPassages are what an extractive answer quotes: the best passage, and
// the next ones while they score at least half as well, up to three.
func bestPassages(ps []passage) []passage {
	out := ps[:1]
	for _, p := range ps[1:] {
		if len(out) == maxExtractive || p.hit.Score < ps[0].hit.Score/2 {
			break
		}
		out = append(out, p)
	}
	return out
}

// extractiveText quotes the passages, each under its title and marker: the
// answer, and the pieces of it to stream. A passage longer than
// maxExtractiveChars is cut to the lines around the one that shares most
// words with the question.
func extractiveText(ps []passage, question string) (answer string, pieces []string) {
	const intro = "These passages of the documentation match your question best:\n\n"
	words := queryWords(question)
	quotes := make([]quote, len(ps))
	size := len(intro)
	for i, p := range ps {
		quotes[i] = excerpt(p.text, words, maxExtractiveChars)
		size += len(p.title) + len(strconv.Itoa(p.n)) + 10 + quotes[i].size()
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(intro)
	// ends[i] is where piece i ends in the answer.
	ends := make([]int, 0, len(ps)+1)
	ends = append(ends, b.Len())
	for i, p := range ps {
		b.WriteString("**")
		b.WriteString(p.title)
		b.WriteString("** [")
		b.WriteString(strconv.Itoa(p.n))
		b.WriteString("]\n\n")
		quotes[i].write(&b)
		if i < len(ps)-1 {
			b.WriteString("\n")
		}
		ends = append(ends, b.Len())
	}
	answer = b.String()
	pieces = make([]string, len(ends))
	from := 0
	for i, end := range ends {
		pieces[i] = answer[from:end]
		from = end
	}
	return answer, pieces
}

// quote is what an extractive answer quotes of a passage: lines of its
// text, and whether lines were left out before and after them.
type quote struct {
	lines               string
	cutBefore, cutAfter bool
	// closeFence closes a code block the quote cuts before its end.
	closeFence string
	// blocks is set when the quote starts or ends in a code block or a
	// table, which the "…" lines must not run into.
	blocks bool
}

// ellipsis is the line that stands for lines left out.
const ellipsis = "…"

// write writes the quote as a Markdown block quote, "…" for the lines
// left out, apart from a code block or a table by a blank line.
func (q quote) write(b *strings.Builder) {
	if q.cutBefore {
		writeQuoteLine(b, ellipsis)
		if q.blocks {
			writeQuoteLine(b, "")
		}
	}
	for line := range strings.SplitSeq(q.lines, "\n") {
		writeQuoteLine(b, line)
	}
	if q.closeFence != "" {
		writeQuoteLine(b, q.closeFence)
	}
	if q.cutAfter {
		if q.blocks {
			writeQuoteLine(b, "")
		}
		writeQuoteLine(b, ellipsis)
	}
}

// size is about the bytes write writes, for growing a builder once.
func (q quote) size() int {
	return len(q.lines) + 3*(strings.Count(q.lines, "\n")+1) + 2*(len(ellipsis)+3) + len(q.closeFence) + 8
}

func writeQuoteLine(b *strings.Builder, line string) {
	if line = strings.TrimRight(line, " \t"); line == "" {
		b.WriteString(">\n")
		return
	}
	b.WriteString("> ")
	b.WriteString(line)
	b.WriteByte('\n')
}

// excerpt quotes text: all of it, or, when it is longer than max bytes, the
// line that matches most question words (the shortest of equals: a heading
// says most with least), the heading before it, and as many following
// lines as fit. Code blocks and tables are kept whole: a quote that would
// start inside one starts at its first line (a table's header), one that
// would end inside a code block takes the rest of it when that is short
// and otherwise closes it, and one that would end inside a table's header
// takes its first row.
func excerpt(text string, words []string, max int) quote {
	if len(text) <= max {
		return quote{lines: text}
	}
	lines := strings.Split(text, "\n")
	spans := mdblock.Spans(lines)
	best, bestScore := 0, 0
	for i, n := range lineMatches(strings.ToLower(text), len(lines), words) {
		if n > bestScore || n == bestScore && n > 0 && len(lines[i]) < len(lines[best]) {
			best, bestScore = i, n
		}
	}
	from := best
	if s, ok := mdblock.At(spans, best); ok {
		from = s.From
	}
	if h := headingBefore(lines, from); h >= 0 {
		from = h
	}
	size := 0
	to := from
	for to < len(lines) && (to == from || size+len(lines[to])+1 <= max) {
		size += len(lines[to]) + 1
		to++
	}
	q := quote{cutBefore: from > 0}
	if s, ok := mdblock.At(spans, to-1); ok && to-1 < s.To {
		switch {
		case s.Kind == mdblock.Table && to-1 < s.From+2:
			to = min(s.To, s.From+2) + 1 // the header, its delimiter and a row
		case s.Kind == mdblock.Table:
			// Cut between rows, a table stays a table.
		case lineBytes(lines[to:s.To+1])+size <= max+max/2:
			to = s.To + 1
		default:
			q.closeFence = s.Close
		}
		size = lineBytes(lines[from:to])
	}
	// A quote cut short does not end on a heading whose section it leaves
	// out, nor on blank lines.
	for to < len(lines) && to-1 > from && endsBare(lines[to-1]) {
		if _, inBlock := mdblock.At(spans, to-1); inBlock {
			break
		}
		to--
		size = lineBytes(lines[from:to])
	}
	q.cutAfter = to < len(lines)
	if to-from == 1 && len(lines[from]) > max {
		q.lines = clip(lines[from], max)
		return q
	}
	_, startsInBlock := mdblock.At(spans, from)
	_, endsInBlock := mdblock.At(spans, to-1)
	q.blocks = startsInBlock || endsInBlock || q.closeFence != ""
	start := 0
	for _, l := range lines[:from] {
		start += len(l) + 1
	}
	q.lines = text[start : start+size-1] // lines[from:to], joined by "\n"
	return q
}

// headingBefore is the line of the heading just above line i (a blank
// line between them allowed), or -1. A Markdown heading starts with "#";
// a short line right above is taken for a heading of plain text.
func headingBefore(lines []string, i int) int {
	switch {
	case i == 0:
		return -1
	case strings.HasPrefix(lines[i-1], "#"):
		return i - 1
	case strings.TrimSpace(lines[i-1]) == "" && i >= 2 && strings.HasPrefix(lines[i-2], "#"):
		return i - 2
	case strings.TrimSpace(lines[i-1]) != "" && len(lines[i-1]) <= maxHeading && !isMarkdownBlockLine(lines[i-1]):
		return i - 1
	}
	return -1
}

// endsBare reports whether a quote ending on line would end bare: on a
// blank line or a Markdown heading.
func endsBare(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// isMarkdownBlockLine reports whether a line ends a code block or is a
// table row, which no heading of plain text is.
func isMarkdownBlockLine(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") || strings.HasPrefix(t, "|")
}

// lineBytes is the size of lines joined by line breaks, one after each.
func lineBytes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// maxHeading is the length up to which a line is taken for a heading.
const maxHeading = 80

// queryWords are the question's words that carry meaning, cut to a crude
// stem ("excluding" and "exclude" meet at "exclu").
func queryWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		n := utf8.RuneCountInString(w)
		if n < 3 || commonWords[w] {
			continue
		}
		if n > 5 {
			// The first five runes (lower-casing left w valid UTF-8).
			cut := 0
			for range 5 {
				_, size := utf8.DecodeRuneInString(w[cut:])
				cut += size
			}
			w = w[:cut]
		}
		out = append(out, w)
	}
	return out
}

// lineMatches counts, for each of the n lines of lower (lower-case text,
// which has as many lines as the text it was made from: lower-casing
// neither adds nor removes a line break), the words that occur in that
// line, each as often as it is listed. Words hold no line break.
//
// It reads the text once. At each byte, the words that may start there
// are those whose first two bytes are this byte and the next (the
// question's words make few such pairs, where one byte alone matched at
// most places), and only those are compared.
func lineMatches(lower string, n int, words []string) []int {
	counts := make([]int, n)
	if len(words) > 64 {
		return lineMatchesEach(lower, counts, words)
	}
	// first[b] and second[b] have bit k set when words[k] has byte b
	// first, or second; single[b] when words[k] is that one byte.
	var first, second, single [256]uint64
	always := 0
	for k, w := range words {
		switch len(w) {
		case 0:
			always++
		case 1:
			single[w[0]] |= 1 << k
		default:
			first[w[0]] |= 1 << k
			second[w[1]] |= 1 << k
		}
	}
	line := 0
	var found uint64
	for i := 0; i < len(lower); i++ {
		b := lower[i]
		if b == '\n' {
			counts[line] = always + bits.OnesCount64(found)
			line, found = line+1, 0
			continue
		}
		maybe := single[b]
		if i+1 < len(lower) {
			maybe |= first[b] & second[lower[i+1]]
		}
		for maybe &^= found; maybe != 0; maybe &= maybe - 1 {
			k := bits.TrailingZeros64(maybe)
			if strings.HasPrefix(lower[i:], words[k]) {
				found |= 1 << k
			}
		}
	}
	counts[line] = always + bits.OnesCount64(found)
	return counts
}

// lineMatchesEach is lineMatches for many words, line by line and word
// by word.
func lineMatchesEach(lower string, counts []int, words []string) []int {
	i := 0
	for line := range strings.SplitSeq(lower, "\n") {
		for _, w := range words {
			if strings.Contains(line, w) {
				counts[i]++
			}
		}
		i++
	}
	return counts
}

var commonWords = map[string]bool{
	"the": true, "and": true, "how": true, "what": true, "does": true, "with": true, "for": true, "you": true, "can": true,
	"from": true, "this": true, "that": true, "are": true, "not": true, "but": true, "when": true, "which": true, "who": true,
	"why": true, "where": true, "into": true, "about": true, "there": true, "their": true, "your": true, "have": true, "has": true,
	"was": true, "were": true, "will": true, "should": true, "would": true, "could": true, "use": true, "using": true,
}

// clip shortens text to about max bytes, at a line (else a word) boundary.
func clip(text string, max int) string {
	if len(text) <= max {
		return text
	}
	cut := text[:max]
	if i := strings.LastIndexByte(cut, '\n'); i > max/2 {
		return cut[:i] + "\n…"
	}
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		return cut[:i] + " …"
	}
	for len(cut) > 0 && cut[len(cut)-1]&0xC0 == 0x80 {
		cut = cut[:len(cut)-1] // do not split a UTF-8 sequence
	}
	if len(cut) > 0 && cut[len(cut)-1] >= 0xC0 {
		cut = cut[:len(cut)-1]
	}
	return cut + "…"
}

// threadIDFromHistory is the thread the last assistant message of the
// history says it belongs to, if any.
func threadIDFromHistory(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" && msgs[i].ThreadID != "" {
			return msgs[i].ThreadID
		}
	}
	return ""
}

// previousQuestion is the user's question before the last one, if any.
func previousQuestion(msgs []Message) string {
	for i := len(msgs) - 2; i >= 0; i-- {
		if msgs[i].Role == "user" && strings.TrimSpace(msgs[i].Text) != "" {
			return strings.TrimSpace(msgs[i].Text)
		}
	}
	return ""
}

// historyFromMessages is the conversation before the question, as the model
// sees it: user and assistant messages only (a client cannot smuggle in
// system instructions), the last few, earlier citation markers removed.
func historyFromMessages(msgs []Message) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		text := strings.TrimSpace(m.Text)
		if text == "" {
			continue
		}
		switch m.Role {
		case "user":
			out = append(out, llm.Message{Role: llm.RoleUser, Content: clip(text, maxHistoryChars)})
		case "assistant":
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: clip(stripMarkers(text), maxHistoryChars)})
		}
	}
	return trimHistory(out)
}

// historyFromTurns is a stored thread as conversation.
func historyFromTurns(turns []Turn) []llm.Message {
	var out []llm.Message
	for _, t := range turns {
		if t.Question == "" || t.Answer == "" || t.Status == TurnFailed {
			continue
		}
		out = append(out,
			llm.Message{Role: llm.RoleUser, Content: clip(t.Question, maxHistoryChars)},
			llm.Message{Role: llm.RoleAssistant, Content: clip(stripMarkers(t.Answer), maxHistoryChars)})
	}
	return trimHistory(out)
}

// trimHistory keeps the last turns, starting with a user message as the
// providers want.
func trimHistory(msgs []llm.Message) []llm.Message {
	if n := 2 * maxHistoryTurns; len(msgs) > n {
		msgs = msgs[len(msgs)-n:]
	}
	for len(msgs) > 0 && msgs[0].Role != llm.RoleUser {
		msgs = msgs[1:]
	}
	// Two messages of one role in a row (an assistant message the client
	// dropped) are merged, which every provider accepts.
	var out []llm.Message
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content += "\n\n" + m.Content
			continue
		}
		out = append(out, m)
	}
	// The question follows as a user message: the history must end with
	// the assistant.
	if n := len(out); n > 0 && out[n-1].Role == llm.RoleUser {
		out = out[:n-1]
	}
	return out
}
