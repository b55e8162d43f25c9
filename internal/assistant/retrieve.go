package assistant

import (
	"context"
	"fmt"
	"strings"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/mdblock"
	"github.com/docsmith/docsmith/internal/search"
)

// Sizes of what goes to the model and into extractive answers.
const (
	maxHistoryTurns = 5    // earlier question/answer pairs
	maxHistoryChars = 4000 // per earlier message
	maxContextChars = 4000 // per context item
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
		Synonyms:    a.domain.Settings.Synonyms,
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
