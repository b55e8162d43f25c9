package app

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/docsmith/docsmith/internal/agentrun"
	"github.com/docsmith/docsmith/internal/forge"
	"github.com/docsmith/docsmith/internal/prcheck"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
)

// prChecks is the queue of pull request heads to check and, in a
// process that runs workers, the worker that checks them.
type prChecks struct {
	queue  *prcheck.Queue
	worker *prcheck.Worker
}

// newPRChecks builds the queue and the worker of pull request checks.
// The runner is m.checks; without one, nothing is queued.
func (m *Main) newPRChecks(b *Backend) *prChecks {
	if m.checks == nil || b.PRChecks == nil {
		return nil
	}
	host, _ := os.Hostname()
	workerID := fmt.Sprintf("%s/%d/%d/pr-checks", host, os.Getpid(), m.Now().UnixNano())
	forgeOf := m.projectForge
	return &prChecks{
		queue: prcheck.NewQueue(b.PRChecks, b.Tenants, forgeOf, m.Log, m.Now),
		worker: prcheck.NewWorker(prcheck.WorkerConfig{
			Store:     b.PRChecks,
			Tenants:   b.Tenants,
			Runner:    m.checks,
			Runs:      b.CheckRuns,
			ForgeOf:   forgeOf,
			PublicURL: m.Config.PublicURL,
			WorkerID:  workerID,
			Poll:      m.Config.QueuePoll,
			Log:       m.Log,
			Now:       m.Now,
		}),
	}
}

// lateQueue hands the webhooks' pull requests to the queue of pull
// request checks, built after the workflow service that takes them.
type lateQueue struct{ m *Main }

func (l lateQueue) Enqueue(ctx context.Context, p tenant.Project, req prcheck.Request) (prcheck.Enqueued, error) {
	if l.m.prChecks == nil {
		return prcheck.Enqueued{Ignored: "this server does not check pull requests"}, nil
	}
	return l.m.prChecks.Enqueue(ctx, p, req)
}

// Enqueue queues a head and wakes this process's worker for it.
func (c *prChecks) Enqueue(ctx context.Context, p tenant.Project, req prcheck.Request) (prcheck.Enqueued, error) {
	q, err := c.queue.Enqueue(ctx, p, req)
	if err == nil && q.New {
		c.worker.Wake()
	}
	return q, err
}

// projectForge is the forge of project p with the token it names: the
// same credentials its agent jobs use, sent only to its own forge.
func (m *Main) projectForge(p tenant.Project) (forge.Forge, error) {
	creds, source, err := projectrepo.Credentials(p, m.LookupEnv)
	if err != nil {
		return nil, err
	}
	token := ""
	if creds != nil {
		token = creds.Password
	}
	return forge.New(forge.Config{Kind: p.ForgeKind, APIBaseURL: p.ForgeURL, RepoURL: p.RepoURL, Token: token, TokenSource: source, HTTPClient: &http.Client{}, Log: m.Log})
}

// pullRequestPushed queues the head an agent turn pushed to its job's pull
// request. The checks read the job's branch in the project's repository.
func (m *Main) pullRequestPushed(ctx context.Context, p tenant.Project, pr agentrun.PushedPullRequest) {
	if m.prChecks == nil {
		return
	}
	_, err := m.prChecks.Enqueue(context.WithoutCancel(ctx), p, prcheck.Request{
		Number: pr.Number, HeadSHA: pr.SHA, HeadRef: pr.Branch, BaseRef: pr.Base,
		PullRef: pr.Branch, Link: pr.URL, Source: prcheck.SourceAgent,
	})
	if err != nil {
		m.Log.Warn("pull request check of an agent turn not queued", "project", p.ID, "pr", pr.Number, "err", err)
	}
}
