package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/docsmith/docsmith/internal/answereval"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
)

// evalAnswers runs `docsmith eval answers`: it indexes a docs corpus in a
// throw-away store, has the assistant answer every question of a set, and
// reports whether each answer's status is right, whether its text holds
// the answer facts and whether it cites an expected page.
func evalAnswers(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("eval answers", env)
	loader := config.Bind(fs, false)
	corpus := fs.String("corpus", "", "docs root of the corpus (the directory with docs.json or mint.json)")
	questions := fs.String("questions", "", "question set, JSON lines (id, question, expected_paths, answer_facts, kind)")
	model := fs.String("model", "extractive", "the domain's model: extractive (no model), or PROVIDER/MODEL with the provider configured as for serve")
	grounding := fs.String("grounding", "", `the domain's grounding setting: "mark" (default) or "strict"`)
	show := fs.Bool("show", false, "list each question whose answer is wrong in status, facts or citations, with its answer")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: docsmith eval answers --corpus DIR --questions FILE [--model extractive|PROVIDER/MODEL] [--show]\n\n")
		fs.PrintDefaults()
	}
	if _, err := parse(fs, args); err != nil {
		return usageErr(err)
	}
	if err := required("corpus", *corpus); err != nil {
		return err
	}
	if err := required("questions", *questions); err != nil {
		return err
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	// With --database-url (or DOCSMITH_DATABASE_URL), the corpus is indexed
	// in a temporary schema of that PostgreSQL database.
	store, engine, cleanup, err := evalStore(ctx, cfg.DatabaseURL, env)
	if err != nil {
		return err
	}
	defer cleanup()
	models := llm.Config{
		OpenAIBaseURL:    cfg.Models.OpenAIBaseURL,
		OpenAIAPIKey:     cfg.Models.OpenAIAPIKey,
		AnthropicBaseURL: cfg.Models.AnthropicBaseURL,
		AnthropicAPIKey:  cfg.Models.AnthropicAPIKey,
		CallTimeout:      cfg.Models.CallTimeout,
	}
	settings := tenant.DomainSettings{}
	if err := setGrounding(&settings, *grounding); err != nil {
		return err
	}
	// Answers come from the index in memory, as the server serves them.
	rep, err := answereval.Evaluate(ctx, answereval.Options{
		Corpus:    *corpus,
		Questions: *questions,
		Index:     search.NewMemory(store, search.MemoryConfig{}),
		Model:     *model,
		OpenModel: func(name string) (llm.Model, error) { return llm.Open(name, models) },
		Settings:  settings,
	})
	if err != nil {
		return err
	}
	return printAnswerReport(env, rep, engine, *show)
}

func printAnswerReport(env Env, rep answereval.Report, engine string, show bool) error {
	c := rep.Counts()
	ew := &errWriter{w: env.Stdout}
	ew.printf("engine          %s\n", engine)
	ew.printf("corpus          %s\n", rep.Corpus)
	ew.printf("questions       %s: %d (%d the docs answer, %d they do not)\n", rep.Questions, c.Questions, c.Answerable, c.NotInDocs)
	ew.printf("model           %s\n", rep.Model)
	ew.printf("index           %d pages, %d chunks\n", rep.Build.Pages, rep.Build.Chunks)
	ew.printf("status right    %s\n", ratio(c.StatusRight, c.Questions))
	if c.NotInDocs > 0 {
		ew.printf("not covered     %s   (questions the docs do not answer, said to be not covered)\n", ratio(c.NotCovered, c.NotInDocs))
	}
	if c.Answerable > 0 {
		ew.printf("wrongly not     %s   (questions the docs answer, said to be not covered)\n", ratio(c.WronglyNotCovered, c.Answerable))
		ew.printf("partial         %s   (questions the docs answer, said to be covered in part)\n", ratio(c.Partial, c.Answerable))
		ew.printf("citation@%d      %s   (an expected page among the first %d citations)\n", answereval.CitationCutoff, ratio(c.CitationHits, c.Answerable), answereval.CitationCutoff)
	}
	if c.WithFacts > 0 {
		ew.printf("facts in answer %s   (every answer fact in the answer's text)\n", ratio(c.FactsInAnswer, c.WithFacts))
	}
	if rep.Model != "" && rep.Model != "extractive" {
		ew.printf("unsupported     %d sentences\n", c.Unsupported)
	}
	ew.printf("took            %s\n", rep.Duration.Round(1e6))
	if show {
		for _, r := range rep.Results {
			var wrong []string
			if !r.StatusRight() {
				wrong = append(wrong, "status "+r.Status)
			}
			if !r.NotInDocs() && len(r.AnswerFacts) > 0 && !r.FactsInAnswer {
				wrong = append(wrong, "facts missing "+strings.Join(r.AnswerFacts, " | "))
			}
			if !r.NotInDocs() && !r.CitationHit {
				wrong = append(wrong, "expected "+strings.Join(r.ExpectedPaths, ", ")+" cited "+strings.Join(r.Cited, ", "))
			}
			if len(wrong) == 0 {
				continue
			}
			ew.printf("\n%s: %s\n  %s\n", r.ID, r.Question.Question, strings.Join(wrong, "\n  "))
			if r.Note != "" {
				ew.printf("  note: %s\n", r.Note)
			}
			ew.printf("  answer: %s\n", strings.ReplaceAll(clipLine(r.Answer, 600), "\n", "\n          "))
		}
	}
	return ew.err
}

// ratio prints n of total with its share.
func ratio(n, total int) string {
	if total == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d = %.3f", n, total, float64(n)/float64(total))
}

// clipLine shortens s to about max bytes for a report.
func clipLine(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + " …"
}

// setGrounding sets a domain's grounding from a flag value: "" keeps the
// default.
func setGrounding(s *tenant.DomainSettings, v string) error {
	switch v {
	case "", "mark", "strict":
		return nil
	}
	return fmt.Errorf(`--grounding must be "mark" or "strict", not %q`, v)
}
