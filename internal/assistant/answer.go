package assistant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// What the reader sees when nothing relevant was found, and when the answer
// failed. Neither carries internal details.
const (
	notCoveredText = "The documentation does not cover this. I found no passage about it, so I cannot answer from the docs; " +
		"try other words, or ask about something the documentation describes."
	// notMentionedText follows the note that names what the docs do not
	// mention.
	notMentionedText = "So I cannot answer this from the documentation; ask about something it describes."
	failedText       = "The assistant could not answer this time. Please try again in a moment."
	// notIndexedText says why a domain whose index was never built answers
	// nothing, and what its administrator runs to build it.
	notIndexedText = "This assistant has no index of the documentation yet, so it cannot answer from the docs. " +
		"An administrator builds it with `docsmith index %s` or POST /v2/domains/%s/index."
)

// Answer is one question on its way to the client. Begin makes it before
// anything is written, so that the thread id can go in the headers.
type Answer struct {
	// Thread is the thread the answer belongs to; Continued says whether
	// it existed before this request.
	Thread    Thread
	Continued bool

	svc     *Service
	domain  tenant.Domain
	req     Request
	history []llm.Message
	started time.Time
}

// Begin resolves the request's thread, continuing it or starting a new one,
// and gathers the conversation. The request must have passed Validate. An
// error here comes before the first byte.
func (s *Service) Begin(ctx context.Context, d tenant.Domain, req Request) (*Answer, error) {
	started := time.Now()
	id := req.ThreadID
	if id == "" {
		id = threadIDFromHistory(req.Messages)
	}
	th, continued, err := s.resolveThread(ctx, d, id, req.FP)
	if err != nil {
		return nil, err
	}
	a := &Answer{Thread: th, Continued: continued, svc: s, domain: d, req: req, started: started}
	a.history = historyFromMessages(req.Messages[:len(req.Messages)-1])
	if len(a.history) == 0 && continued {
		// A client that sends only the new question (and the threadId) still
		// gets the thread's earlier turns as context.
		turns, err := s.threads.RecentTurns(ctx, th.ID, maxHistoryTurns)
		if err != nil {
			return nil, fmt.Errorf("read thread %s: %w", th.ID, err)
		}
		a.history = historyFromTurns(turns)
	}
	return a, nil
}

// passage is a retrieved chunk as the answer uses it: numbered from 1 in
// this turn, with its citation.
type passage struct {
	n     int
	hit   search.Hit
	url   string
	title string
	text  string
}

func (p passage) source(words map[string]bool) Source {
	return Source{ID: "src_" + strconv.Itoa(p.n), URL: p.url, Title: p.title, Path: p.hit.PagePath, Quote: passageQuote(p.text, words)}
}

// sources are the citations of the passages, each quoting the sentence
// that best matches the question.
func sources(ps []passage, question string) []Source {
	words := quoteWords(question)
	out := make([]Source, len(ps))
	for i, p := range ps {
		out[i] = p.source(words)
	}
	return out
}

func turnSources(ps []passage) []TurnSource {
	out := make([]TurnSource, len(ps))
	for i, p := range ps {
		out[i] = TurnSource{ID: "src_" + strconv.Itoa(p.n), URL: p.url, Title: p.title, Path: p.hit.PagePath, Score: p.hit.Score}
	}
	return out
}

// Stream writes the answer on st: the start (with the thread id),
// keep-alives while retrieving, the citations, the text, and the finish.
// Failures after the start go in-band; a client that goes away cancels
// retrieval and generation. The turn is stored whatever happens. Stream
// returns an error only for what the caller should log.
func (a *Answer) Stream(ctx context.Context, st Sink) error {
	s := a.svc
	t := &Turn{
		ThreadID:  a.Thread.ID,
		MessageID: newID("msg_"),
		FP:        a.req.FP,
		Question:  a.req.Question(),
		Model:     a.domain.Model,
		CreatedAt: s.now(),
	}
	if !a.Continued {
		th := a.Thread
		t.NewThread = &th
	}
	recorded := false
	defer func() {
		if !recorded {
			a.record(ctx, t)
		}
	}()
	if err := st.Start(t.MessageID, a.Thread.ID); err != nil {
		return a.fail(ctx, st, t, err)
	}
	beat := startHeartbeat(st, s.heartbeat)
	defer beat.stop()

	ps, err := a.retrieve(ctx)
	t.RetrievalTime = time.Since(a.started)
	if err != nil {
		beat.stop()
		return a.fail(ctx, st, t, err)
	}
	// A domain past its day's budget answers as one without a model does,
	// and says why first.
	budgetNote := ""
	if !isExtractive(a.domain.Model) {
		if budgetNote = a.overBudget(ctx); budgetNote != "" {
			t.Model = ModelExtractive
		}
	}
	extractive := isExtractive(a.domain.Model) || budgetNote != ""
	var v verdict
	if extractive || len(ps) == 0 {
		// Without a model to judge them, passages that do not bear on the
		// question are not quoted as if they answered it, and a question
		// about what the docs never mention says so.
		v = a.status(ctx, ps)
		ps = v.kept
		t.StatusNote, t.Missing = v.note, v.missing
	}
	var usage *Usage
	switch {
	case len(ps) == 0:
		beat.stop()
		text := notCoveredText
		if v.note != "" {
			text = v.note + " " + notMentionedText
		}
		t.Status = TurnNotCovered
		if !a.svc.indexed(ctx, a.domain.ID) {
			text = fmt.Sprintf(notIndexedText, a.domain.ID, a.domain.ID)
			t.Status = TurnNotIndexed
		}
		t.FirstTextTime = time.Since(a.started)
		if err := st.Status(answerStatus(t)); err != nil {
			return a.fail(ctx, st, t, err)
		}
		if err := writeText(st, t, text, []string{text}); err != nil {
			return a.fail(ctx, st, t, err)
		}
	case extractive:
		beat.stop()
		ps, answer, pieces := a.extractive(ctx, ps)
		t.Sources = turnSources(ps)
		// The citations go out with the quoted text, in one write.
		if err := st.BufferSources(sources(ps, a.req.Question())); err != nil {
			return a.fail(ctx, st, t, err)
		}
		t.Status = TurnAnswered
		if v.status == TurnPartial {
			t.Status = TurnPartial
		}
		if err := st.Status(answerStatus(t)); err != nil {
			return a.fail(ctx, st, t, err)
		}
		t.FirstTextTime = time.Since(a.started)
		if t.Status == TurnPartial {
			// The note comes first, as the budget's does.
			answer, pieces = lead(v.note, answer, pieces)
		}
		if budgetNote != "" {
			answer, pieces = lead(budgetNote, answer, pieces)
			a.svc.metrics.exhausted.WithLabelValues(a.domain.ID).Inc()
		}
		if err := writeText(st, t, answer, pieces); err != nil {
			return a.fail(ctx, st, t, err)
		}
	default:
		names := a.namesNotInDocs(ctx, ps)
		t.Sources = turnSources(ps)
		if err := st.Sources(sources(ps, a.req.Question())); err != nil {
			beat.stop()
			return a.fail(ctx, st, t, err)
		}
		var grounded groundingStats
		usage, grounded, err = a.generate(ctx, st, t, ps, beat)
		beat.stop()
		if err != nil {
			return a.fail(ctx, st, t, err)
		}
		t.Status, t.StatusNote = modelStatus(grounded, names)
		if names.byName && len(grounded.declines) == 0 && t.StatusNote != strictNothingText {
			t.Missing = names.missing
		}
		if err := st.Status(answerStatus(t)); err != nil {
			return a.fail(ctx, st, t, err)
		}
	}
	// The turn is stored before the finish part goes out, so that a reader
	// who rates the answer the moment it ends finds it (the feedback
	// endpoint looks it up by its message id).
	a.record(ctx, t)
	recorded = true
	if err := st.Finish(Finish{ThreadID: a.Thread.ID, TopLevelThreadID: a.domain.FinishThreadID, Status: answerStatus(t), Usage: usage}); err != nil {
		return a.fail(ctx, st, t, err)
	}
	return nil
}

// generate has the model write the answer from the numbered passages,
// streaming it through the citation filter, then the grounder, which
// checks each sentence against the passages it cites and, with strict
// grounding, leaves out those they do not back.
func (a *Answer) generate(ctx context.Context, st Sink, t *Turn, ps []passage, beat *heartbeat) (*Usage, groundingStats, error) {
	model, err := a.svc.model(a.domain.Model)
	if err != nil {
		return nil, groundingStats{}, err
	}
	genCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	const textID = "txt_0"
	opened := false
	var answer strings.Builder
	emit := func(s string) error {
		if !opened {
			beat.stop()
			t.FirstTextTime = time.Since(a.started)
			if err := st.TextStart(textID); err != nil {
				return err
			}
			opened = true
		}
		answer.WriteString(s)
		// Held until the model's stream has nothing more at hand (Flush
		// below): the deltas of one read of it go out in one write.
		return st.BufferTextDelta(textID, s)
	}
	g := newGrounder(groundedPassages(ps), a.domain.Settings.StrictGrounding(), emit, func(sp groundedSpan) error {
		return st.Grounding(Grounding{TextID: textID, Start: sp.start, End: sp.end, Sources: sp.sources, Supported: sp.supported, Missing: sp.missing})
	})
	filter := newCiteFilter(len(ps), g.Write)
	var writeErr error
	failed := func(err error) {
		writeErr = err
		cancel() // the client is gone: stop generating
	}
	resp, err := model.Chat(genCtx, llm.Request{
		System:    systemPrompt(a.domain, a.req, ps),
		Messages:  append(append([]llm.Message(nil), a.history...), llm.Message{Role: llm.RoleUser, Content: a.req.Question()}),
		MaxTokens: maxAnswerTokens,
		Flush: func() {
			if writeErr != nil || !opened {
				return
			}
			if err := st.Flush(); err != nil {
				failed(err)
			}
		},
	}, func(delta string) {
		if writeErr != nil {
			return
		}
		if err := filter.Write(delta); err != nil {
			failed(err)
		}
	})
	if writeErr == nil {
		writeErr = filter.Close()
	}
	if writeErr == nil {
		writeErr = g.Close()
	}
	if writeErr == nil && err == nil && g.stats.left > 0 && g.stats.kept == 0 && len(g.stats.declines) == 0 {
		// Strict grounding left nothing to say: the reader learns why.
		sep := ""
		if answer.Len() > 0 {
			sep = "\n\n"
		}
		writeErr = emit(sep + strictNothingText)
	}
	if writeErr == nil && opened {
		// What the filter held back goes out now, not after the turn is
		// stored.
		writeErr = st.Flush()
	}
	t.Answer = answer.String()
	t.InputTokens, t.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
	a.svc.metrics.tokens.WithLabelValues(a.domain.ID, "input").Add(float64(t.InputTokens))
	a.svc.metrics.tokens.WithLabelValues(a.domain.ID, "output").Add(float64(t.OutputTokens))
	a.svc.grounding.record(a.domain.ID, filter.dropped, g.stats)
	if filter.dropped > 0 {
		a.svc.log.InfoContext(ctx, "removed citation markers to passages not retrieved in this turn",
			"domain", a.domain.ID, "thread", a.Thread.ID, "removed", filter.dropped)
	}
	if n := g.stats.claims - g.stats.supported; n > 0 {
		a.svc.log.InfoContext(ctx, "model answer has sentences its cited passages do not back",
			"domain", a.domain.ID, "thread", a.Thread.ID, "unsupported", n, "claims", g.stats.claims, "left_out", g.stats.left)
	}
	if writeErr != nil {
		return nil, g.stats, writeErr
	}
	if err != nil {
		return nil, g.stats, fmt.Errorf("model %s: %w", a.domain.Model, err)
	}
	return &Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}, g.stats, nil
}

// groundedPassages are the passages as the grounder reads them.
func groundedPassages(ps []passage) []groundedPassage {
	out := make([]groundedPassage, len(ps))
	for i, p := range ps {
		out[i] = newGroundedPassage(p.title, p.text)
	}
	return out
}

// namesNotInDocs is the status that the question's names decide for a
// model's answer: the decision of answers without a model (see decide),
// of which only names the docs never mention count; the model still
// reads every passage and judges the rest itself.
func (a *Answer) namesNotInDocs(ctx context.Context, ps []passage) verdict {
	v := a.status(ctx, ps)
	if !v.byName {
		return verdict{status: TurnAnswered}
	}
	return v
}

// answerStatus is what the turn's answer is worth, as the reader is told.
// An answer from a domain with no index yet covers nothing.
func answerStatus(t *Turn) AnswerStatus {
	switch t.Status {
	case TurnAnswered, TurnPartial:
		return AnswerStatus{Status: t.Status, Note: t.StatusNote, Missing: t.Missing}
	default:
		return AnswerStatus{Status: StatusNotCovered, Note: t.StatusNote, Missing: t.Missing}
	}
}

// maxAnswerTokens bounds one model answer.
const maxAnswerTokens = 1500

// PaidModel says whether a domain model's answers cost the team tokens
// (and so count against its daily budget).
func PaidModel(model string) bool { return !isExtractive(model) }

func isExtractive(model string) bool {
	return model == "" || model == ModelExtractive || model == modelBuiltin
}

// lead puts a note before an answer ready all at once, as its own first
// piece.
func lead(note, answer string, pieces []string) (string, []string) {
	return note + "\n\n" + answer, append([]string{note + "\n\n"}, pieces...)
}

// writeText sends an answer that is ready all at once, in pieces (which
// together are the answer), as one text block in one write.
func writeText(st Sink, t *Turn, answer string, pieces []string) error {
	t.Answer = answer
	return st.Text("txt_0", pieces...)
}

// fail ends the answer after an error: in-band, unless the client is gone
// or the stream is already closed.
func (a *Answer) fail(ctx context.Context, st Sink, t *Turn, err error) error {
	t.Error = err.Error()
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), ctx.Err()) {
		t.Status = TurnCanceled
		return nil //nolint:nilerr // the client left: nothing to report to it
	}
	if ctx.Err() != nil {
		// The server stopped the answer (it shuts down): the client is
		// still there and learns in-band that this answer ends here.
		t.Error = fmt.Sprintf("%v: %v", context.Cause(ctx), err)
	}
	t.Status = TurnFailed
	a.svc.log.ErrorContext(ctx, "assistant answer failed", "domain", a.domain.ID, "thread", a.Thread.ID, "err", err)
	if errors.Is(err, ErrClosed) {
		return nil
	}
	if st.Error(failedText) != nil {
		// The client went away while we wrote: nothing more to do.
		t.Status = TurnCanceled
	}
	return nil
}

// record stores the turn, even when the request's context has ended: the
// recorder retries a write that fails and never gives up on a timeout.
func (a *Answer) record(ctx context.Context, t *Turn) {
	t.TotalTime = time.Since(a.started)
	ctx = context.WithoutCancel(ctx)
	switch err := a.svc.turns.Record(ctx, *t); {
	case errors.Is(err, ErrTurnQueued):
		a.svc.log.InfoContext(ctx, "assistant turn queued to be stored", "domain", a.domain.ID, "thread", a.Thread.ID)
	case err != nil:
		a.svc.log.ErrorContext(ctx, "store assistant turn", "domain", a.domain.ID, "thread", a.Thread.ID, "err", err)
	}
	// Its attributes are boxed before the logger could say it drops them:
	// an answer at a level above info pays nothing for them.
	if a.svc.log.Enabled(ctx, slog.LevelInfo) {
		a.svc.log.InfoContext(ctx, "assistant answer", "domain", a.domain.ID, "thread", a.Thread.ID, "continued", a.Continued,
			"status", t.Status, "model", t.Model, "sources", len(t.Sources), "retrieval", t.RetrievalTime, "first_text", t.FirstTextTime,
			"total", t.TotalTime, "input_tokens", t.InputTokens, "output_tokens", t.OutputTokens)
	}
}

// heartbeat writes keep-alives until stopped, so that proxies do not cut a
// connection that is quiet while retrieval and the model work. It is a
// timer, not a goroutine: an answer that is quick costs no more than
// starting and stopping one.
type heartbeat struct {
	st    Sink
	every time.Duration
	mu    sync.Mutex // held while a keep-alive is written
	timer *time.Timer
	ended bool
}

func startHeartbeat(st Sink, every time.Duration) *heartbeat {
	h := &heartbeat{st: st, every: every}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timer = time.AfterFunc(every, h.beat)
	return h
}

// beat writes one keep-alive and sets the next, unless stopped or the
// stream failed.
func (h *heartbeat) beat() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended || h.st.Heartbeat() != nil {
		return
	}
	h.timer.Reset(h.every)
}

// stop ends the keep-alives and waits until none is being written.
func (h *heartbeat) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended = true
	h.timer.Stop()
}
