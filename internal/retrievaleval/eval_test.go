package retrievaleval

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docsmith/docsmith/internal/search"
)

func writeQuestions(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "questions.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvaluateScores(t *testing.T) {
	t.Parallel()
	questions := writeQuestions(t,
		`{"id": "q1", "question": "first question", "expected_paths": ["a"], "answer_facts": ["Alpha"], "kind": "lookup"}`,
		``,
		`{"id": "q2", "question": "second question", "expected_paths": ["x", "c"], "answer_facts": ["gamma", "missing"], "kind": "howto"}`,
		`{"id": "q3", "question": "third question", "expected_paths": ["z"], "answer_facts": [], "kind": "lookup"}`,
		`{"id": "q4", "question": "fourth question", "expected_paths": [], "answer_facts": [], "kind": "not_in_docs"}`,
	)
	results := map[string][]search.Hit{
		"first question": {
			{Chunk: search.Chunk{PagePath: "a", Text: "alpha text"}, Score: 0.9},
			{Chunk: search.Chunk{PagePath: "b"}, Score: 0.5},
		},
		"second question": {
			{Chunk: search.Chunk{PagePath: "a"}, Score: 0.8},
			{Chunk: search.Chunk{PagePath: "a"}, Score: 0.7},
			{Chunk: search.Chunk{PagePath: "b"}, Score: 0.6},
			{Chunk: search.Chunk{PagePath: "c", Text: "Gamma"}, Score: 0.5},
		},
		"third question":  {{Chunk: search.Chunk{PagePath: "a"}, Score: 0.4}},
		"fourth question": {{Chunk: search.Chunk{PagePath: "b"}, Score: 0.3}},
	}
	idx := newFakeIndex()
	idx.search = func(q search.Query) []search.Hit { return slices.Clone(results[q.Text]) }
	rep, err := Evaluate(t.Context(), idx, "testdata/site", questions, EvalOptions{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Questions != 4 || rep.Answerable != 3 || rep.NotInDocs != 1 || rep.Build.Pages != 7 {
		t.Errorf("counts = %d %d %d, build %+v", rep.Questions, rep.Answerable, rep.NotInDocs, rep.Build)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	// q1 rank 1, q2 rank 3 (pages a, b, c), q3 missed.
	if !near(rep.RecallAt1, 1.0/3) || !near(rep.RecallAtK, 2.0/3) || !near(rep.MRR, (1+1.0/3)/3) {
		t.Errorf("recall@1 %v, recall@3 %v, MRR %v", rep.RecallAt1, rep.RecallAtK, rep.MRR)
	}
	// Passages: q1 yes; q2's c is the 4th passage, past K.
	if !near(rep.PassageRecallAtK, 1.0/3) || !near(rep.FactsAtK, 1.0/3) {
		t.Errorf("passages@3 %v, facts@3 %v", rep.PassageRecallAtK, rep.FactsAtK)
	}
	misses := rep.Misses()
	if len(misses) != 1 || misses[0].ID != "q3" || misses[0].Rank != 0 || !slices.Equal(misses[0].Pages, []string{"a"}) {
		t.Errorf("misses = %+v", misses)
	}
	nid := rep.NotInDocsResults()
	if len(nid) != 1 || nid[0].ID != "q4" || nid[0].TopScore != 0.3 {
		t.Errorf("not in docs = %+v", nid)
	}
	if got := rep.AnswerableTopScores(); !slices.Equal(got, []float64{0.4, 0.8, 0.9}) {
		t.Errorf("answerable top scores = %v", got)
	}
}

func TestEvaluateErrors(t *testing.T) {
	t.Parallel()
	good := writeQuestions(t, `{"id": "q1", "question": "kettle", "expected_paths": ["index"], "kind": "lookup"}`)
	tests := []struct {
		name, corpus, questions, want string
	}{
		{"missing questions", "testdata/site", filepath.Join(t.TempDir(), "nope.jsonl"), "read questions"},
		{"bad line", "testdata/site", writeQuestions(t, `{"id": "q1"}`, `{not json`), "line 2"},
		{"no docs config", t.TempDir(), good, "load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Evaluate(t.Context(), newFakeIndex(), tt.corpus, tt.questions, EvalOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// fakeIndex keeps the pages written to it and answers searches with a
// canned function.
type fakeIndex struct {
	mu     sync.Mutex
	pages  map[string][]search.Chunk
	search func(q search.Query) []search.Hit
}

func newFakeIndex() *fakeIndex { return &fakeIndex{pages: map[string][]search.Chunk{}} }

func (f *fakeIndex) ReplacePages(_ context.Context, _ string, chunks []search.Chunk, removed []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range chunks {
		f.pages[c.PagePath] = append(f.pages[c.PagePath], c)
	}
	for _, p := range removed {
		delete(f.pages, p)
	}
	return nil
}

func (f *fakeIndex) PageHashes(context.Context, string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for p, cs := range f.pages {
		out[p] = cs[0].PageHash
	}
	return out, nil
}

func (f *fakeIndex) Search(_ context.Context, _ string, q search.Query) ([]search.Hit, error) {
	if f.search == nil {
		return nil, nil
	}
	return f.search(q), nil
}

func (f *fakeIndex) Page(context.Context, string, string) (search.PageText, error) {
	return search.PageText{}, search.ErrPageNotFound
}
