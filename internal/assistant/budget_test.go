package assistant_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

// TestBudgetSpentAnswersFromSearch checks, against the scripted
// OpenAI-protocol model server, that a domain whose day's budget is spent
// (by its answers or by its tokens, from the server's default or its own
// setting) answers from search alone and says why, without calling the
// model; that the spend is read from the stored turns; and that /metrics
// counts the tokens and the answers given from search.
func TestBudgetSpentAnswersFromSearch(t *testing.T) {
	t.Parallel()
	one := 1
	thousand := 1000
	tests := []struct {
		name     string
		server   assistant.Budget
		answers  *int // the domain's own AnswersPerDay
		tokens   *int // the domain's own TokensPerDay
		answered int  // model answers before the budget is spent
	}{
		{name: "answers, server default", server: assistant.Budget{AnswersPerDay: 2}, answered: 2},
		{name: "tokens, domain setting", server: assistant.Budget{AnswersPerDay: 100, TokensPerDay: 100}, tokens: &thousand, answered: 2},
		{name: "answers, domain setting over the default", server: assistant.Budget{AnswersPerDay: 100}, answers: &one, answered: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			turns := make([]llmtest.Turn, tc.answered)
			for i := range turns {
				turns[i] = llmtest.Text("Add the patterns to `.ternignore` [1].").WithUsage(600, 100)
			}
			srv := llmtest.NewOpenAIServer(t, turns...) // a request past these fails the test
			reg := prometheus.NewRegistry()
			e := setup(t, func(c *assistant.Config) {
				c.OpenModel = openModel(srv.URL)
				c.Budget = tc.server
				c.Registerer = reg
				c.Spend = c.Threads.(assistant.SpendStore) // the SQLite store
			})
			d := e.domain
			d.Settings.AnswersPerDay, d.Settings.TokensPerDay = tc.answers, tc.tokens
			d = e.withModel(d, "openai/test-model")

			for i := range tc.answered {
				_, r := e.answer(t.Context(), d, ask("How do I exclude files from a sync?"))
				if strings.Contains(r.text, "daily limit") || !strings.Contains(r.text, ".ternignore") {
					t.Fatalf("answer %d within the budget = %q", i+1, r.text)
				}
			}
			a, r := e.answer(t.Context(), d, ask("How do I exclude files from a sync?"))
			if !strings.HasPrefix(r.text, "This site's assistant has reached its daily limit; here are the most relevant passages.") ||
				len(r.sources) == 0 || r.errorText != "" || !r.finished {
				t.Fatalf("answer past the budget = %+v", r)
			}
			if n := len(srv.Requests()); n != tc.answered {
				t.Fatalf("the model got %d requests, want %d", n, tc.answered)
			}
			if turn := e.turns(a.Thread.ID)[0]; turn.Model != assistant.ModelExtractive || turn.Status != assistant.TurnAnswered {
				t.Errorf("turn past the budget stored as model %q, status %q", turn.Model, turn.Status)
			}

			spend, err := e.svc.DaySpend(t.Context(), d)
			must(t, err)
			if spend.Answers != tc.answered || spend.InputTokens != 600*tc.answered || spend.OutputTokens != 100*tc.answered || !spend.Exhausted() {
				t.Errorf("day's spend = %+v", spend)
			}
			want := map[string]float64{
				`docsmith_assistant_model_tokens_total{domain="tern",kind="input"}`:  600 * float64(tc.answered),
				`docsmith_assistant_model_tokens_total{domain="tern",kind="output"}`: 100 * float64(tc.answered),
				`docsmith_assistant_budget_exhausted_answers_total{domain="tern"}`:   1,
			}
			got := counters(t, reg)
			// Grounding has metrics of its own, checked where it is.
			maps.DeleteFunc(got, func(name string, _ float64) bool { return strings.HasPrefix(name, "docsmith_assistant_grounded_") })
			if !maps.Equal(got, want) {
				t.Errorf("metrics = %v, want %v", got, want)
			}
		})
	}
}

// counters reads every counter of reg as name{label="value",...} → value.
func counters(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	must(t, err)
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetCounter().GetValue()
		}
	}
	return out
}
