package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/semantic/semantictest"
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

// TestEvalRetrievalHybridLocalProviders: with an embeddings model and a
// rerank endpoint configured as for serve (here local servers speaking the
// OpenAI embeddings and the rerank protocols), the evaluation embeds the
// corpus's passages, asks every question of both providers, and says that
// it measured hybrid retrieval.
func TestEvalRetrievalHybridLocalProviders(t *testing.T) {
	t.Parallel()
	embeddings := semantictest.NewEmbeddingsServer(t, semantictest.EmbeddingsOptions{})
	rerank := semantictest.NewRerankServer(t, semantictest.RerankOptions{})
	questions := filepath.Join(t.TempDir(), "q.jsonl")
	line := `{"id": "k-h01", "question": "How hot should the water be for green tea?", "expected_paths": ["guides/brewing"], "answer_facts": [], "kind": "lookup"}`
	if err := os.WriteFile(questions, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"DOCSMITH_EMBEDDINGS":          "openai/test-embed",
		"DOCSMITH_EMBEDDINGS_BASE_URL": embeddings.URL,
		"DOCSMITH_EMBEDDINGS_API_KEY":  "k",
		"DOCSMITH_RERANK_URL":          rerank.URL,
		"DOCSMITH_RERANK_MODEL":        "test-rerank",
	}
	r := runWith(t, t.TempDir(), vars, "eval", "retrieval", "--corpus", "../search/testdata/site", "--questions", questions)
	if r.code != 0 {
		t.Fatalf("eval retrieval = %+v", r)
	}
	if !strings.Contains(r.stdout, "retrieval     hybrid: bm25 with embeddings ") || !strings.Contains(r.stdout, "rerank test-rerank") {
		t.Errorf("output does not say the retrieval was hybrid:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "recall@1      1.000") {
		t.Errorf("the brewing page is not first:\n%s", r.stdout)
	}
	// Every passage once, then the question.
	if n := embeddings.TextsEmbedded(); n < 2 {
		t.Errorf("%d texts embedded, want the passages and the question", n)
	}
	if len(rerank.Requests()) != 1 {
		t.Errorf("%d rerank requests, want one for the question", len(rerank.Requests()))
	}
}
