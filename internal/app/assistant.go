package app

import (
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/search"
)

// newAssistant is the assistant over the store's indexes, threads and page
// catalogs, with the configured model providers and daily budget; turns
// stores its answered turns, reg takes its metrics.
func (m *Main) newAssistant(b *Backend, turns assistant.TurnRecorder, reg prometheus.Registerer) *assistant.Service {
	models := m.modelConfig()
	return assistant.New(assistant.Config{
		Index:      b.Index,
		Threads:    b.Threads,
		Turns:      turns,
		Catalogs:   b.Catalogs,
		OpenModel:  func(name string) (llm.Model, error) { return llm.Open(name, models) },
		Log:        m.Log,
		Now:        m.Now,
		Spend:      b.Spend,
		Budget:     assistant.Budget{AnswersPerDay: m.Config.Budget.AnswersPerDay, TokensPerDay: m.Config.Budget.TokensPerDay},
		Registerer: reg,
		Hybrid:     b.semantic.hybrid(),

		// Agents' feedback on pages, from MCP.
		PageFeedback: b.PageFeedback,
	})
}

// modelConfig is how the assistant and the agent open models: the
// configured providers, over the one HTTP client of this server, whose idle
// connections they share.
func (m *Main) modelConfig() llm.Config {
	return ModelConfig(m.Config, m.modelClient, m.Log)
}

// ModelConfig is how a process opens models: the configured providers,
// over client (nil: a client of their own).
func ModelConfig(cfg config.Config, client *http.Client, log *slog.Logger) llm.Config {
	return llm.Config{
		OpenAIBaseURL:    cfg.Models.OpenAIBaseURL,
		OpenAIAPIKey:     cfg.Models.OpenAIAPIKey,
		AnthropicBaseURL: cfg.Models.AnthropicBaseURL,
		AnthropicAPIKey:  cfg.Models.AnthropicAPIKey,
		CallTimeout:      cfg.Models.CallTimeout,
		HTTPClient:       client,
		Log:              log,
	}
}

// NewIndexer returns the indexer of a server and of 'docsmith index': it
// finds projects in projects and writes index; it keeps a mirror of each
// repository in DATA_DIR/git-mirrors, checks the docs out of it into
// DATA_DIR/index-work when they are too large to read into memory, and
// reads the tokens projects name with lookupEnv.
func NewIndexer(cfg config.Config, git *gitcli.Git, projects indexer.ProjectStore, index search.Index, catalogs indexer.CatalogStore, lookupEnv func(string) (string, bool), log *slog.Logger) *indexer.Indexer {
	repos := projectrepo.New(projectrepo.Config{
		Git:       git,
		WorkDir:   filepath.Join(cfg.DataDir, "index-work"),
		MirrorDir: filepath.Join(cfg.DataDir, "git-mirrors"),
		LookupEnv: lookupEnv,
		Log:       log,
	})
	return indexer.New(indexer.Config{Repos: repos, Projects: projects, Index: index, Catalogs: catalogs, Log: log})
}
