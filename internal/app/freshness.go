package app

import (
	"context"
	"errors"
	"time"

	"github.com/docsmith/docsmith/internal/agentrun"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/indexer"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
)

// RecordingIndexer builds domains' indexes and records each build's
// outcome as the domain's index state, for builds asked for by hand
// ('docsmith index', the index endpoint, a domain just created).
type RecordingIndexer struct {
	Indexer  *indexer.Indexer
	Recorder *freshness.Recorder
	Now      func() time.Time
}

// NewRecordingIndexer records x's builds in the backend's index states,
// without metrics (the CLI's).
func NewRecordingIndexer(x *indexer.Indexer, b *Backend) *RecordingIndexer {
	return &RecordingIndexer{Indexer: x, Recorder: freshness.NewRecorder(b.IndexStates, nil, nil), Now: time.Now}
}

// Index builds the domain's index and records the outcome. A failure to
// record is joined to the build's own error only when the build succeeded.
func (r *RecordingIndexer) Index(ctx context.Context, d tenant.Domain) (indexer.IndexResult, error) {
	started := r.Now()
	res, err := r.Indexer.Index(ctx, d)
	if ctx.Err() != nil {
		return res, err
	}
	rerr := r.Recorder.Record(context.WithoutCancel(ctx), d.ID, started, buildOf(res), err)
	if err != nil {
		return res, err
	}
	return res, rerr
}

func buildOf(res indexer.IndexResult) freshness.Build {
	return freshness.Build{Commit: res.Commit, Pages: res.Pages, Passages: res.Chunks}
}

// indexerBuilds is the assistant's indexer as freshness sees it.
type indexerBuilds struct{ x *indexer.Indexer }

func (i indexerBuilds) Index(ctx context.Context, d tenant.Domain) (freshness.Build, error) {
	res, err := i.x.Index(ctx, d)
	return buildOf(res), err
}

// runnerHeads reads branch heads with ls-remote through the agent's
// repository access, with the project's credentials.
type runnerHeads struct{ r *agentrun.Runner }

// Head implements freshness.Heads. A project whose repository is a plain
// local folder (not a git repository, which the indexer reads as it is)
// has no head to poll.
func (h runnerHeads) Head(ctx context.Context, p tenant.Project, ref string) (string, error) {
	if _, plain := projectrepo.PlainFolder(p.RepoURL); plain {
		return "", nil
	}
	p.BaseRef = ref
	sha, err := h.r.BaseSHA(ctx, p)
	var re *agentrun.RepoError
	if errors.As(err, &re) {
		// Its message names the repository (credentials redacted) and what
		// went wrong: the status shows it.
		return "", apperr.Wrap(err, apperr.Conflict, "%s", re.Error())
	}
	return sha, err
}
