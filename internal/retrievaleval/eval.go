// Package retrievaleval measures retrieval on a docs corpus and a question
// set: where the expected pages rank, whether the answer facts are in the
// first passages, and how high questions the docs do not answer score.
package retrievaleval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/docsmith/docsmith/internal/search"
)

// Question is one line of an evaluation set (a JSON lines file).
type Question struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	// ExpectedPaths are the pages that answer it; any one is a hit.
	ExpectedPaths []string `json:"expected_paths"`
	// AnswerFacts are strings a correct answer contains.
	AnswerFacts []string `json:"answer_facts"`
	// Kind is lookup, howto, conceptual or not_in_docs.
	Kind string `json:"kind"`
}

// KindNotInDocs marks a question the docs do not answer.
const KindNotInDocs = "not_in_docs"

// EvalOptions tunes Evaluate. Zero values take the defaults.
type EvalOptions struct {
	// K is the cut-off of recall@K (default 5).
	K int
	// Domain is the index domain to build into (default "eval").
	Domain string
	// SiteURL is the site URL of the chunks (default https://docs.example).
	SiteURL string
	// Retriever runs the questions (default search.NewRetriever(idx)).
	Retriever *search.Retriever
	// AfterBuild, if set, runs once the corpus is indexed and before the
	// questions: the embedding of the passages, for hybrid retrieval.
	AfterBuild func(ctx context.Context, domain string) error
}

// QuestionResult is how retrieval did on one question.
type QuestionResult struct {
	ID, Question, Kind string
	Expected           []string
	// Pages are the distinct pages retrieved, best first (at most 10).
	Pages []string
	// Rank is the 1-based position of the first expected page among the
	// distinct pages retrieved, 0 when none was retrieved.
	Rank int
	// TopScore is the best hit's score, 0 when nothing matched.
	TopScore float64
	// FactsInTopK is true when every answer fact appears (ignoring case)
	// in the text of the first K passages, what an assistant asking for K
	// passages would have to answer from.
	FactsInTopK bool
}

// answerable is true for a question with expected pages; not_in_docs
// questions (and any without expected pages) are scored apart.
func (q QuestionResult) answerable() bool { return q.Kind != KindNotInDocs && len(q.Expected) > 0 }

// Report is the outcome of an evaluation.
type Report struct {
	Corpus, QuestionsFile string
	K                     int
	Build                 search.BuildStats
	// Answerable counts the questions with expected pages; the rates are
	// over them.
	Questions, Answerable, NotInDocs int
	RecallAt1, RecallAtK, MRR        float64
	// PassageRecallAtK is the share of answerable questions with an
	// expected page among the first K passages (not distinct pages).
	PassageRecallAtK float64
	// FactsAtK is the share of answerable questions whose answer facts are
	// all in the first K passages.
	FactsAtK float64
	Results  []QuestionResult
}

// Misses are the answerable questions without an expected page in the top
// K distinct pages.
func (r Report) Misses() []QuestionResult {
	var out []QuestionResult
	for _, q := range r.Results {
		if q.answerable() && (q.Rank == 0 || q.Rank > r.K) {
			out = append(out, q)
		}
	}
	return out
}

// NotInDocsResults are the questions the docs do not answer, with their top
// scores, to judge a score threshold against the answerable ones.
func (r Report) NotInDocsResults() []QuestionResult {
	var out []QuestionResult
	for _, q := range r.Results {
		if !q.answerable() {
			out = append(out, q)
		}
	}
	return out
}

// AnswerableTopScores returns the top scores of the answerable questions,
// lowest first.
func (r Report) AnswerableTopScores() []float64 {
	var out []float64
	for _, q := range r.Results {
		if q.answerable() {
			out = append(out, q.TopScore)
		}
	}
	sort.Float64s(out)
	return out
}

// ReadQuestions reads a JSONL question file.
func ReadQuestions(path string) ([]Question, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read questions: %w", err)
	}
	var out []Question
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var q Question
		if err := json.Unmarshal(line, &q); err != nil {
			return nil, fmt.Errorf("read questions: %s line %d: %w", path, n, err)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read questions: %w", err)
	}
	return out, nil
}

// Evaluate builds idx from the docs in corpusDir, runs every question of
// questionsFile through a Retriever, and scores where the expected pages
// came: recall@1, recall@K and MRR over the distinct pages retrieved.
func Evaluate(ctx context.Context, idx search.Index, corpusDir, questionsFile string, opts EvalOptions) (Report, error) {
	if opts.K <= 0 {
		opts.K = 5
	}
	if opts.Domain == "" {
		opts.Domain = "eval"
	}
	if opts.SiteURL == "" {
		opts.SiteURL = "https://docs.example"
	}
	r := opts.Retriever
	if r == nil {
		r = search.NewRetriever(idx)
	}
	questions, err := ReadQuestions(questionsFile)
	if err != nil {
		return Report{}, err
	}
	// The corpus is read and indexed as `docsmith index` reads and indexes
	// a project's folder, so that what is measured is what is served.
	_, chunks, err := search.LoadFolder(corpusDir, "", opts.SiteURL)
	if err != nil {
		return Report{}, fmt.Errorf("evaluate: load %s: %w", corpusDir, err)
	}
	st, err := search.BuildChunks(ctx, idx, opts.Domain, chunks)
	if err != nil {
		return Report{}, fmt.Errorf("evaluate: %w", err)
	}
	if opts.AfterBuild != nil {
		if err := opts.AfterBuild(ctx, opts.Domain); err != nil {
			return Report{}, fmt.Errorf("evaluate: %w", err)
		}
	}
	rep := Report{Corpus: corpusDir, QuestionsFile: questionsFile, K: opts.K, Build: st, Questions: len(questions)}
	var passageHits, factHits int
	for _, q := range questions {
		hits, err := r.Retrieve(ctx, opts.Domain, search.Request{Query: q.Question, PageSize: search.MaxPageSize})
		if err != nil {
			return Report{}, fmt.Errorf("evaluate %s: %w", q.ID, err)
		}
		res := QuestionResult{ID: q.ID, Question: q.Question, Kind: q.Kind, Expected: q.ExpectedPaths}
		if len(hits) > 0 {
			res.TopScore = hits[0].Score
		}
		expected := map[string]bool{}
		for _, p := range q.ExpectedPaths {
			expected[p] = true
		}
		seen := map[string]bool{}
		var pages []string
		for _, h := range hits {
			if seen[h.PagePath] {
				continue
			}
			seen[h.PagePath] = true
			pages = append(pages, h.PagePath)
			if res.Rank == 0 && expected[h.PagePath] {
				res.Rank = len(pages)
			}
		}
		res.Pages = pages[:min(len(pages), 10)]
		top := hits[:min(len(hits), opts.K)]
		var text strings.Builder
		passageHit := false
		for _, h := range top {
			text.WriteString(strings.ToLower(h.Text))
			text.WriteByte('\n')
			passageHit = passageHit || expected[h.PagePath]
		}
		if len(q.AnswerFacts) > 0 {
			res.FactsInTopK = true
			for _, f := range q.AnswerFacts {
				if !strings.Contains(text.String(), strings.ToLower(f)) {
					res.FactsInTopK = false
				}
			}
		}
		rep.Results = append(rep.Results, res)
		if !res.answerable() {
			rep.NotInDocs++
			continue
		}
		rep.Answerable++
		if res.Rank == 1 {
			rep.RecallAt1++
		}
		if res.Rank > 0 && res.Rank <= opts.K {
			rep.RecallAtK++
		}
		if res.Rank > 0 {
			rep.MRR += 1 / float64(res.Rank)
		}
		if passageHit {
			passageHits++
		}
		if res.FactsInTopK {
			factHits++
		}
	}
	if n := float64(rep.Answerable); n > 0 {
		rep.RecallAt1 /= n
		rep.RecallAtK /= n
		rep.MRR /= n
		rep.PassageRecallAtK = float64(passageHits) / n
		rep.FactsAtK = float64(factHits) / n
	}
	return rep, nil
}
