package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEvalRetrieval(t *testing.T) {
	t.Parallel()
	questions := filepath.Join(t.TempDir(), "q.jsonl")
	lines := []string{
		`{"id": "k-dev01", "question": "How hot should the water be for green tea?", "expected_paths": ["guides/brewing"], "answer_facts": ["80 degrees"], "kind": "lookup"}`,
		`{"id": "k-dev02", "question": "Does the kettle speak Klingon?", "expected_paths": ["guides/klingon"], "answer_facts": [], "kind": "lookup"}`,
		`{"id": "k-dev03", "question": "Can the kettle order pizza?", "expected_paths": [], "answer_facts": [], "kind": "not_in_docs"}`,
	}
	if err := os.WriteFile(questions, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, t.TempDir(), "eval", "retrieval", "--corpus", "../search/testdata/site", "--questions", questions, "--k", "3", "--show-misses")
	if r.code != 0 {
		t.Fatalf("eval retrieval = %+v", r)
	}
	for _, want := range []string{
		"3 (2 with expected pages, 1 not in the docs)",
		"recall@1      0.500",
		"recall@3      0.500",
		"MRR           0.500",
		"not in docs   k-dev03 top score",
		"misses        1",
		"  k-dev02 (not retrieved)",
		"expected: guides/klingon",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestEvalRetrievalUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval", "retrieval"}, 1, "--corpus is required"},
		{[]string{"eval", "retrieval", "--corpus", "x"}, 1, "--questions is required"},
		{[]string{"eval", "retrieval", "--corpus", "x", "--questions", "y", "--k", "0"}, 1, "--k must be at least 1"},
		{[]string{"eval", "retrieval", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"eval", "retrieval", "--corpus", t.TempDir(), "--questions", filepath.Join(t.TempDir(), "none.jsonl")}, 1, "read questions"},
	}
	for _, tt := range tests {
		r := run(t, t.TempDir(), tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%q = %+v, want code %d and %q", tt.args, r, tt.code, tt.want)
		}
	}
}

func TestEvalAnswers(t *testing.T) {
	t.Parallel()
	questions := filepath.Join(t.TempDir(), "q.jsonl")
	lines := []string{
		`{"id": "k-dev01", "question": "How hot should the water be for green tea?", "expected_paths": ["guides/brewing"], "answer_facts": ["80 degrees"], "kind": "lookup"}`,
		`{"id": "k-dev02", "question": "How hot should the water be for green tea?", "expected_paths": ["guides/brewing"], "answer_facts": ["a fact no page states"], "kind": "lookup"}`,
		`{"id": "k-dev03", "question": "Can the kettle order a pizza from Zorblax?", "expected_paths": [], "answer_facts": [], "kind": "not_in_docs"}`,
	}
	if err := os.WriteFile(questions, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, t.TempDir(), "eval", "answers", "--corpus", "../search/testdata/site", "--questions", questions, "--show")
	if r.code != 0 {
		t.Fatalf("eval answers = %+v", r)
	}
	for _, want := range []string{
		"3 (2 the docs answer, 1 they do not)",
		"model           extractive",
		"wrongly not     0/2 = 0.000",
		"citation@3      2/2 = 1.000",
		"facts in answer 1/2 = 0.500",
		"k-dev02: How hot should the water be for green tea?\n  facts missing a fact no page states",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, args := range [][]string{
		{"eval", "answers", "--questions", questions},
		{"eval", "answers", "--corpus", "x", "--questions", questions, "--grounding", "loose"},
	} {
		if r := run(t, t.TempDir(), args...); r.code != 1 {
			t.Errorf("%q = %+v, want an error", args, r)
		}
	}
}
