package app

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/semantic"
)

// semanticProviders are the embeddings and rerank clients the
// configuration names; both nil when it names none, and search is BM25
// alone, as fast as ever.
type semanticProviders struct {
	embedder semantic.Embedder
	reranker semantic.Reranker
	metrics  *semantic.Metrics
	cfg      config.Config
	log      *slog.Logger
}

func newSemanticProviders(cfg config.Config, reg prometheus.Registerer, log *slog.Logger) (semanticProviders, error) {
	sp := semanticProviders{cfg: cfg, log: log}
	if !cfg.Embeddings.Enabled() && !cfg.Rerank.Enabled() {
		return sp, nil
	}
	sp.metrics = semantic.NewMetrics(reg)
	deps := semantic.Deps{Metrics: sp.metrics, Log: log}
	var err error
	if sp.embedder, err = semantic.NewEmbedder(cfg.Embeddings, deps); err != nil {
		return sp, fmt.Errorf("embeddings: %w", err)
	}
	if sp.reranker, err = semantic.NewReranker(cfg.Rerank, deps); err != nil {
		return sp, fmt.Errorf("rerank: %w", err)
	}
	return sp, nil
}

// hybrid is how the retrievers use the providers.
func (sp semanticProviders) hybrid() search.Hybrid {
	return search.Hybrid{
		Embedder:     sp.embedder,
		Reranker:     sp.reranker,
		EmbedTimeout: sp.cfg.Embeddings.Timeout,
		RerankBudget: sp.cfg.Rerank.Budget,
		Metrics:      sp.metrics,
		Log:          sp.log,
	}
}
