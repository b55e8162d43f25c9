// Package gapproof closes content gaps with evidence. When a domain's
// index is built from a commit that holds the work of a job started from
// one of its gaps (the job's pushed commits merged into the branch the
// domain reads), the gap's questions are asked again on that index, as a
// reader would ask them but kept out of the analytics: all answered closes
// the gap, with the answers as its proof; any not answered reopens it,
// with what the assistant said.
package gapproof

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
)

// Lifecycles reads and writes gaps' lifecycles (analytics.Service).
type Lifecycles interface {
	GapLifecycles(ctx context.Context, domain string) ([]analytics.GapLifecycle, error)
	RecordGapCheck(ctx context.Context, l analytics.GapLifecycle) error
}

// Jobs reads agent jobs (agentjob.Service).
type Jobs interface {
	Get(ctx context.Context, projectID, id string) (agentjob.Job, error)
}

// Projects reads projects.
type Projects interface {
	GetProject(ctx context.Context, id string) (tenant.Project, error)
}

// Repos tells whether a commit of a project's branch holds a job's work
// (projectrepo.Repos).
type Repos interface {
	Landed(ctx context.Context, p tenant.Project, branch, at string, pushed []string, jobID string) (gitcli.Landing, error)
}

// Asker asks a domain's assistant a question, keeping nothing of it
// (answercheck.Asker over an assistant whose turns are discarded).
type Asker interface {
	Ask(ctx context.Context, d tenant.Domain, question string) (answercheck.Answer, *answercheck.Collected, error)
}

// Config is what a Prover needs.
type Config struct {
	Lifecycles Lifecycles
	Jobs       Jobs
	Projects   Projects
	Repos      Repos
	Asker      Asker
	Now        func() time.Time
	Log        *slog.Logger
}

// Prover checks the gaps of a domain after each build of its index.
type Prover struct {
	cfg Config
}

// New returns a Prover.
func New(cfg Config) *Prover {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Prover{cfg: cfg}
}

// Built is the freshness hook: it checks the domain's gaps against the
// index just built from commit, and logs what it could not do.
func (p *Prover) Built(ctx context.Context, d tenant.Domain, commit string) {
	checked, err := p.Check(ctx, d, commit)
	for _, l := range checked {
		p.cfg.Log.InfoContext(ctx, "gap checked", "domain", d.ID, "gap", l.Key, "state", l.State, "job", l.JobID, "commit", commit)
	}
	if err != nil {
		p.cfg.Log.WarnContext(ctx, "gap check failed", "domain", d.ID, "commit", commit, "err", err)
	}
}

// Check asks again the questions of each gap of d that is in progress (or
// reopened, and its job pushed since) whose job's work commit holds, on the
// index built from commit, and records the outcome. It returns the
// lifecycles it changed. A gap already checked at commit is not asked
// again; nor is one whose job's work commit does not hold.
func (p *Prover) Check(ctx context.Context, d tenant.Domain, commit string) ([]analytics.GapLifecycle, error) {
	if commit == "" {
		return nil, nil // a plain folder: no history to look for a job's work in
	}
	ls, err := p.cfg.Lifecycles.GapLifecycles(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	var project *tenant.Project
	var changed []analytics.GapLifecycle
	var errs []error
	for _, l := range ls {
		if l.State != analytics.GapInProgress && l.State != analytics.GapReopened || l.CheckedCommit == commit {
			continue
		}
		job, err := p.cfg.Jobs.Get(ctx, l.ProjectID, l.JobID)
		if apperr.Is(err, apperr.NotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("gap %s: job %s: %w", l.Key, l.JobID, err))
			continue
		}
		pushed := PushedCommits(job)
		if len(pushed) == 0 {
			continue // nothing pushed yet
		}
		newest := pushed[len(pushed)-1]
		if l.State == analytics.GapReopened && newest == l.CheckedPush {
			continue // reopened, and the job pushed nothing since
		}
		if project == nil {
			pr, err := p.cfg.Projects.GetProject(ctx, d.ProjectID)
			if err != nil {
				return changed, errors.Join(append(errs, fmt.Errorf("project %s: %w", d.ProjectID, err))...)
			}
			project = &pr
		}
		landing, err := p.cfg.Repos.Landed(ctx, *project, freshness.RefOf(d, *project), commit, pushed, job.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("gap %s: %w", l.Key, err))
			continue
		}
		if !landing.Landed {
			continue
		}
		next, err := p.ask(ctx, d, l, commit, newest)
		if err != nil {
			errs = append(errs, fmt.Errorf("gap %s: %w", l.Key, err))
			continue
		}
		if err := p.cfg.Lifecycles.RecordGapCheck(ctx, next); err != nil {
			errs = append(errs, err)
			continue
		}
		changed = append(changed, next)
	}
	return changed, errors.Join(errs...)
}

// ask asks l's questions on d's index and returns l closed or reopened.
func (p *Prover) ask(ctx context.Context, d tenant.Domain, l analytics.GapLifecycle, commit, pushed string) (analytics.GapLifecycle, error) {
	var answers []analytics.GapAnswer
	for _, q := range l.Questions {
		a, _, err := p.cfg.Asker.Ask(ctx, d, q)
		if err != nil {
			return l, err
		}
		answers = append(answers, analytics.GapAnswer{
			Question: q, Status: a.Status, Text: a.Text, Cited: a.Cited, Commit: commit, At: p.cfg.Now(),
		})
	}
	now := p.cfg.Now()
	l.CheckedCommit, l.CheckedPush, l.CheckedAt, l.Answers, l.UpdatedAt = commit, pushed, &now, answers, now
	if analytics.Proved(answers) {
		l.State, l.ClosedAt = analytics.GapClosed, &now
	} else {
		l.State, l.ClosedAt = analytics.GapReopened, nil
	}
	return l, nil
}

// PushedCommits are the commits a job's turns pushed, oldest first.
func PushedCommits(j agentjob.Job) []string {
	var out []string
	for _, m := range j.Messages {
		if sha := m.Checkpoint.PushedSHA; sha != "" {
			out = append(out, sha)
		}
	}
	return out
}
