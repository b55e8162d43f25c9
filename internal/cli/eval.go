package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/retrievaleval"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/semantic"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/sqlite"
)

// evalRetrieval runs `docsmith eval retrieval`: it indexes a docs corpus in
// a throw-away store and scores retrieval on a question set. The store is a
// SQLite file in a temporary directory, or, with --database-url (or
// DOCSMITH_DATABASE_URL), a temporary schema of that PostgreSQL database,
// dropped afterwards: both stores are measured by the same command.
func evalRetrieval(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("eval retrieval", env)
	corpus := fs.String("corpus", "", "docs root of the corpus (the directory with docs.json or mint.json)")
	questions := fs.String("questions", "", "question set, JSON lines (id, question, expected_paths, answer_facts, kind)")
	k := fs.Int("k", 5, "cut-off of recall@k")
	showMisses := fs.Bool("show-misses", false, "list the questions whose expected page is not in the top k")
	loader := config.Bind(fs, false)
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: docsmith eval retrieval --corpus DIR --questions FILE [--k 5] [--show-misses] [--database-url URL]\n\n"+
			"With DOCSMITH_EMBEDDINGS (and DOCSMITH_RERANK_URL) set as for serve, retrieval is hybrid: the corpus's passages\n"+
			"are embedded by that provider, and the questions fused and reranked as the server does.\n\n")
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
	if *k < 1 {
		return fmt.Errorf("--k must be at least 1, not %d", *k)
	}
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return err
	}
	index, engine, cleanup, err := evalStore(ctx, cfg.DatabaseURL, env)
	if err != nil {
		return err
	}
	defer cleanup()
	// Retrieval runs as the server runs it: on the domain's index in
	// memory, loaded from the store, hybrid when the configuration names
	// providers.
	opts, mode, err := evalProviders(cfg, index, env)
	if err != nil {
		return err
	}
	opts.K = *k
	rep, err := retrievaleval.Evaluate(ctx, opts.index, *corpus, *questions, opts.EvalOptions)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(env.Stdout, "engine        %s\nretrieval     %s\n", engine, mode); err != nil {
		return err
	}
	return printReport(env.Stdout, rep, *showMisses)
}

// evalSetup is what an evaluation searches with: the index in memory and
// the options that make retrieval hybrid.
type evalSetup struct {
	retrievaleval.EvalOptions
	index *search.Memory
}

// evalProviders builds the index in memory over the store and, when cfg
// names an embeddings model or a rerank endpoint, the hybrid retriever the
// server would use: the passages are embedded once the corpus is indexed.
// mode says which retrieval is measured.
func evalProviders(cfg config.Config, store search.Source, env Env) (evalSetup, string, error) {
	if !cfg.Embeddings.Enabled() && !cfg.Rerank.Enabled() {
		return evalSetup{index: search.NewMemory(store, search.MemoryConfig{})}, "bm25", nil
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	deps := semantic.Deps{Log: log}
	embedder, err := semantic.NewEmbedder(cfg.Embeddings, deps)
	if err != nil {
		return evalSetup{}, "", fmt.Errorf("embeddings: %w", err)
	}
	reranker, err := semantic.NewReranker(cfg.Rerank, deps)
	if err != nil {
		return evalSetup{}, "", fmt.Errorf("rerank: %w", err)
	}
	mem := search.NewMemory(store, search.MemoryConfig{Embedder: embedder})
	setup := evalSetup{index: mem}
	setup.Retriever = search.NewRetriever(mem).WithHybrid(search.Hybrid{
		Embedder: embedder, Reranker: reranker, EmbedTimeout: cfg.Embeddings.Timeout, RerankBudget: cfg.Rerank.Budget, Log: log,
	})
	var parts []string
	if embedder != nil {
		parts = append(parts, "embeddings "+embedder.Model())
		setup.AfterBuild = func(ctx context.Context, domain string) error {
			st, err := mem.UpdateVectors(ctx, domain)
			if err != nil {
				return fmt.Errorf("embed the passages: %w", err)
			}
			if st.Missing > 0 {
				return fmt.Errorf("embed the passages: %d of %d have no vector", st.Missing, st.Passages)
			}
			return nil
		}
	}
	if reranker != nil {
		parts = append(parts, "rerank "+cfg.Rerank.Model)
	}
	return setup, "hybrid: bm25 with " + strings.Join(parts, ", "), nil
}

// evalStore opens the throw-away store an evaluation indexes its corpus
// in: a SQLite file in a temporary directory, or, with a database URL (or
// DOCSMITH_DATABASE_URL), a temporary schema of that PostgreSQL database.
// cleanup removes it.
func evalStore(ctx context.Context, databaseURL string, env Env) (index search.Source, engine string, cleanup func(), err error) {
	if databaseURL == "" {
		lookup := env.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		if v, ok := lookup("DOCSMITH_DATABASE_URL"); ok {
			databaseURL = v
		}
	}
	if databaseURL != "" {
		store, drop, err := postgres.OpenScratch(ctx, databaseURL, "docsmith_eval_", slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, "", nil, fmt.Errorf("create a temporary schema: %w", err)
		}
		return store, "in memory over postgres (temporary schema)", func() { _ = drop(context.WithoutCancel(ctx)) }, nil
	}
	dir, err := os.MkdirTemp("", "docsmith-eval-*")
	if err != nil {
		return nil, "", nil, fmt.Errorf("create a temporary store: %w", err)
	}
	store, err := sqlite.Open(ctx, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", nil, err
	}
	return store, "in memory over sqlite", func() { _ = store.Close(); _ = os.RemoveAll(dir) }, nil
}

func printReport(w io.Writer, rep retrievaleval.Report, showMisses bool) error {
	ew := &errWriter{w: w}
	ew.printf("corpus        %s\n", rep.Corpus)
	ew.printf("questions     %s: %d (%d with expected pages, %d not in the docs)\n", rep.QuestionsFile, rep.Questions, rep.Answerable, rep.NotInDocs)
	ew.printf("index         %d pages, %d chunks, built in %s\n", rep.Build.Pages, rep.Build.Chunks, rep.Build.Duration.Round(1e6))
	ew.printf("recall@1      %.3f\n", rep.RecallAt1)
	ew.printf("recall@%-2d     %.3f\n", rep.K, rep.RecallAtK)
	ew.printf("MRR           %.3f\n", rep.MRR)
	ew.printf("passages@%-2d   %.3f   (an expected page among the first %d passages)\n", rep.K, rep.PassageRecallAtK, rep.K)
	ew.printf("facts@%-2d      %.3f   (every answer fact in the first %d passages)\n", rep.K, rep.FactsAtK, rep.K)
	if scores := rep.AnswerableTopScores(); len(scores) > 0 {
		ew.printf("top score     answerable: min %.3f, median %.3f, max %.3f\n", scores[0], scores[len(scores)/2], scores[len(scores)-1])
	}
	for _, q := range rep.NotInDocsResults() {
		ew.printf("not in docs   %s top score %.3f, top pages %s\n", q.ID, q.TopScore, strings.Join(q.Pages[:min(3, len(q.Pages))], ", "))
	}
	misses := rep.Misses()
	ew.printf("misses        %d\n", len(misses))
	if showMisses {
		for _, q := range misses {
			rank := "not retrieved"
			if q.Rank > 0 {
				rank = fmt.Sprintf("rank %d", q.Rank)
			}
			ew.printf("  %s (%s)\n    question: %s\n    expected: %s\n    got:      %s\n", q.ID, rank, q.Question,
				strings.Join(q.Expected, ", "), strings.Join(q.Pages[:min(3, len(q.Pages))], ", "))
		}
	}
	return ew.err
}

// errWriter keeps the first write error, so a report is printed without an
// error check per line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
