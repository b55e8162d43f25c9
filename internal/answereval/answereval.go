// Package answereval measures the assistant's answers on a question set
// over a docs corpus, as a reader would receive them: whether each answer's
// status says rightly that the docs cover the question or not, whether its
// text holds the facts a right answer must state, and whether it cites a
// page that answers it. The answers are produced by the assistant itself
// (assistant.Service), over an index built as `docsmith index` builds one.
package answereval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/retrievaleval"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// CitationCutoff is how many of an answer's first citations may hold an
// expected page for the citation to count as a hit.
const CitationCutoff = 3

// Options says what to evaluate.
type Options struct {
	Corpus, Questions string
	// Index is where the corpus is indexed (an empty store's index).
	Index search.Index
	// Model is the domain's model: "" or "extractive" answers without one.
	Model string
	// OpenModel opens a model by name; nil allows only extractive answers.
	OpenModel func(name string) (llm.Model, error)
	// Settings are the evaluated domain's settings (grounding, say).
	Settings tenant.DomainSettings
}

// Result is one question's answer, judged.
type Result struct {
	retrievaleval.Question
	// Status is the answer's status as the reader was told it.
	Status string
	Note   string
	// Answer is the answer's text.
	Answer string
	// Cited are the pages of the answer's citations, in order.
	Cited []string
	// FactsInAnswer is true when every answer fact is in the text.
	FactsInAnswer bool
	// CitationHit is true when an expected page is among the first
	// CitationCutoff citations.
	CitationHit bool
	// Unsupported counts the sentences whose grounding failed.
	Unsupported int
}

// NotInDocs reports whether the docs do not answer the question.
func (r Result) NotInDocs() bool {
	return r.Kind == retrievaleval.KindNotInDocs || len(r.ExpectedPaths) == 0
}

// StatusRight reports whether the status says what the question set
// expects: not covered for a question the docs do not answer, covered
// (wholly or in part) for one they do.
func (r Result) StatusRight() bool {
	if r.NotInDocs() {
		return r.Status == assistant.StatusNotCovered
	}
	return r.Status == assistant.StatusAnswered || r.Status == assistant.StatusPartial
}

// Report is the outcome of an evaluation.
type Report struct {
	Corpus, Questions string
	Build             search.BuildStats
	Model             string
	Results           []Result
	Duration          time.Duration
}

// Counts are a report's figures.
type Counts struct {
	Questions int
	// NotInDocs and NotCovered: questions the docs do not answer, and of
	// them those answered not_covered.
	NotInDocs, NotCovered int
	// Answerable and WronglyNotCovered: questions the docs answer, and of
	// them those answered not_covered.
	Answerable, WronglyNotCovered int
	// Partial counts the answerable questions answered partial.
	Partial int
	// WithFacts and FactsInAnswer: questions with answer facts, and of them
	// those whose answer text holds all of them.
	WithFacts, FactsInAnswer int
	// CitationHits: answerable questions with an expected page among the
	// first CitationCutoff citations.
	CitationHits int
	// StatusRight: questions whose status is what the set expects.
	StatusRight int
	// Unsupported: sentences marked unsupported, over all answers.
	Unsupported int
}

// Counts adds up the results.
func (r Report) Counts() Counts {
	var c Counts
	c.Questions = len(r.Results)
	for _, q := range r.Results {
		if q.StatusRight() {
			c.StatusRight++
		}
		c.Unsupported += q.Unsupported
		if q.NotInDocs() {
			c.NotInDocs++
			if q.Status == assistant.StatusNotCovered {
				c.NotCovered++
			}
			continue
		}
		c.Answerable++
		switch q.Status {
		case assistant.StatusNotCovered:
			c.WronglyNotCovered++
		case assistant.StatusPartial:
			c.Partial++
		}
		if len(q.AnswerFacts) > 0 {
			c.WithFacts++
			if q.FactsInAnswer {
				c.FactsInAnswer++
			}
		}
		if q.CitationHit {
			c.CitationHits++
		}
	}
	return c
}

// Evaluate indexes the corpus and asks the assistant every question of the
// set, each in a thread of its own.
func Evaluate(ctx context.Context, opts Options) (Report, error) {
	start := time.Now()
	questions, err := retrievaleval.ReadQuestions(opts.Questions)
	if err != nil {
		return Report{}, err
	}
	domain := tenant.Domain{ID: "eval", OrgID: "eval", SiteURL: "https://docs.example", Model: opts.Model, Settings: opts.Settings}
	_, chunks, err := search.LoadFolder(opts.Corpus, "", domain.SiteURL)
	if err != nil {
		return Report{}, fmt.Errorf("evaluate answers: load %s: %w", opts.Corpus, err)
	}
	build, err := search.BuildChunks(ctx, opts.Index, domain.ID, chunks)
	if err != nil {
		return Report{}, fmt.Errorf("evaluate answers: %w", err)
	}
	svc := assistant.New(assistant.Config{
		Index:     opts.Index,
		Turns:     answercheck.DiscardTurns{},
		OpenModel: opts.OpenModel,
		Heartbeat: time.Hour,
	})
	rep := Report{Corpus: opts.Corpus, Questions: opts.Questions, Build: build, Model: opts.Model}
	for _, q := range questions {
		req := assistant.Request{FP: "anonymous", Messages: []assistant.Message{{Role: "user", Text: q.Question}}}
		if err := req.Validate(); err != nil {
			return Report{}, fmt.Errorf("question %s: %w", q.ID, err)
		}
		a, err := svc.Begin(ctx, domain, req)
		if err != nil {
			return Report{}, fmt.Errorf("question %s: %w", q.ID, err)
		}
		got := &answercheck.Collected{}
		if err := a.Stream(ctx, got); err != nil {
			return Report{}, fmt.Errorf("question %s: %w", q.ID, err)
		}
		if got.Failure != "" {
			return Report{}, fmt.Errorf("question %s: the answer failed: %s", q.ID, got.Failure)
		}
		rep.Results = append(rep.Results, judge(q, got))
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// judge compares an answer with what the question set expects of it.
func judge(q retrievaleval.Question, got *answercheck.Collected) Result {
	r := Result{Question: q, Status: got.LastStatus.Status, Note: got.LastStatus.Note, Answer: got.Body.String()}
	for _, s := range got.Cites {
		r.Cited = append(r.Cited, s.Path)
	}
	lower := strings.ToLower(r.Answer)
	r.FactsInAnswer = true
	for _, f := range q.AnswerFacts {
		if !strings.Contains(lower, strings.ToLower(f)) {
			r.FactsInAnswer = false
		}
	}
	for i, p := range r.Cited {
		if i == CitationCutoff {
			break
		}
		for _, want := range q.ExpectedPaths {
			if p == want {
				r.CitationHit = true
			}
		}
	}
	for _, g := range got.Groundings {
		if !g.Supported {
			r.Unsupported++
		}
	}
	return r
}
