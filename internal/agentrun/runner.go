// Package agentrun carries out one turn of an agent job: it checks out the
// project's repository at the job's branch, lets the model (an LLM in a
// tool-calling loop, or the builtin command language) edit the docs through
// confined file tools, validates the result, commits, pushes, and opens or
// updates the pull request.
package agentrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/agentrun/tools"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/docs"
	"github.com/docsmith/docsmith/internal/forge"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/llm"
	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workspace"
)

// Budgets bound one turn; 0 means no limit. Wall time is the queue's
// TurnTimeout.
type Budgets struct {
	MaxSteps        int
	MaxTokens       int
	MaxFilesChanged int
	MaxLinesChanged int
}

// Config is what a Runner needs.
type Config struct {
	// WorkDir holds one temporary workspace per running turn.
	WorkDir string
	Git     *gitcli.Git
	// OpenModel returns the model for a PROVIDER/MODEL name other than
	// builtin.
	OpenModel func(name string) (llm.Model, error)
	// HTTPClient talks to forges.
	HTTPClient *http.Client
	// LookupEnv reads forge tokens named by projects (os.LookupEnv).
	LookupEnv   func(string) (string, bool)
	AuthorName  string
	AuthorEmail string
	Budgets     Budgets
	// RetryDelay is how long a turn waits before it runs again after a
	// failure that may pass (a forge answering 5xx or 429, a network
	// error); it doubles with each attempt. Default 30s.
	RetryDelay time.Duration
	// Context bounds each context repository a workflow run clones.
	Context ContextLimits
	// BasePushed, when set, is told each time an automerge turn has pushed
	// to the project's base branch, so that what reads that branch (the
	// domains' indexes) can follow at once. It must not block.
	BasePushed func(ctx context.Context, p tenant.Project)
	// PullRequestPushed, when set, is told each time a turn has pushed to
	// its job's branch and opened or updated the job's pull request, so
	// that the pull request's new head can be checked. It must not block
	// for long, and its failure does not fail the turn.
	PullRequestPushed func(ctx context.Context, p tenant.Project, pr PushedPullRequest)
	Log               *slog.Logger
	Now               func() time.Time
}

// PushedPullRequest is a job's pull request and the commit a turn pushed
// to its branch.
type PushedPullRequest struct {
	Number int
	URL    string
	Branch string
	// Base is the branch the pull request merges into.
	Base string
	// SHA is the pushed commit, the pull request's new head.
	SHA string
}

// Runner runs turns; it implements agentjob.Runner.
type Runner struct {
	cfg Config
}

var _ agentjob.Runner = (*Runner)(nil)

// New returns a Runner.
func New(cfg Config) *Runner {
	if cfg.AuthorName == "" {
		cfg.AuthorName = "docsmith"
	}
	if cfg.AuthorEmail == "" {
		cfg.AuthorEmail = "docsmith@localhost"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = 30 * time.Second
	}
	return &Runner{cfg: cfg}
}

// repos reads projects' repositories with the Runner's git wrapper, work
// directory and token lookup.
func (r *Runner) repos() *projectrepo.Repos {
	return projectrepo.New(projectrepo.Config{Git: r.cfg.Git, WorkDir: r.cfg.WorkDir, LookupEnv: r.cfg.LookupEnv, Log: r.cfg.Log})
}

// turnError is a failure whose message is meant for the job's caller as is.
// err, if set, is its cause, kept for errors.As (never shown).
type turnError struct {
	msg string
	err error
}

func (e *turnError) Error() string { return e.msg }
func (e *turnError) Unwrap() error { return e.err }

func failf(format string, args ...any) error { return &turnError{msg: fmt.Sprintf(format, args...)} }

// RunTurn carries out the turn's message on the job's branch.
func (r *Runner) RunTurn(ctx context.Context, turn agentjob.Turn, progress agentjob.Progress) (agentjob.TurnOutcome, error) {
	out, err := r.runTurn(ctx, turn, progress)
	if err == nil || ctx.Err() != nil {
		return out, err
	}
	var te *turnError
	var retry *agentjob.RetryError
	if errors.As(err, &te) || errors.As(err, &retry) || errors.Is(err, agentjob.ErrLeaseLost) {
		return out, err
	}
	// Anything else is described without internals; the cause is logged.
	r.cfg.Log.Error("agent turn failed", "job", turn.Job.ID, "seq", turn.Message.Seq, "err", err)
	return out, failf("%s", describe(err))
}

func (r *Runner) runTurn(ctx context.Context, turn agentjob.Turn, progress agentjob.Progress) (agentjob.TurnOutcome, error) {
	job, project := turn.Job, turn.Project
	if err := checkAutomerge(turn); err != nil {
		return agentjob.TurnOutcome{}, err
	}
	creds, tokenSource, err := r.credentials(project)
	if err != nil {
		return agentjob.TurnOutcome{}, err
	}
	// A turn that was reclaimed after its process died left its workspace
	// behind; so may any other killed turn. Clear them before making ours.
	r.SweepWorkspaces()
	wsDir, err := workspace.Create(r.cfg.WorkDir, workspacePrefix(turn))
	if err != nil {
		return agentjob.TurnOutcome{}, fmt.Errorf("create workspace: %w", err)
	}
	defer func() { _ = wsDir.Remove() }()

	repo, onRemote, err := r.checkout(ctx, turn, filepath.Join(wsDir.Path, "repo"), creds)
	if err != nil {
		return agentjob.TurnOutcome{}, err
	}
	progress.Emit(ctx, "checkout", map[string]any{"branch": job.Branch, "base": project.BaseRef})

	// A turn run again may find that an earlier attempt already pushed its
	// commit: it resumes after the push instead of editing again.
	cp, err := r.resumePoint(ctx, turn, repo, onRemote, creds)
	if err != nil {
		return agentjob.TurnOutcome{}, err
	}
	if cp.PushedSHA != "" {
		progress.Emit(ctx, "resume", map[string]any{"sha": cp.PushedSHA})
		return r.publish(ctx, turn, creds, tokenSource, cp, agentjob.Usage{}, progress)
	}

	// Every reader and writer of the turn goes through this one pair of
	// roots: nothing in the repository can lead them out of the checkout.
	co, err := docs.OpenCheckout(repo.Dir, project.DocsRoot)
	if err != nil {
		return agentjob.TurnOutcome{}, failf("%s", describe(err))
	}
	defer func() { _ = co.Close() }()
	ws, err := tools.New(co.Docs, tools.Limits{MaxFilesChanged: r.cfg.Budgets.MaxFilesChanged, MaxLinesChanged: r.cfg.Budgets.MaxLinesChanged})
	if err != nil {
		return agentjob.TurnOutcome{}, err
	}
	defer func() { _ = ws.Close() }()

	// Context repositories are for a model to read; the builtin command
	// language reads none.
	var cx *turnContext
	if len(runContext(job)) > 0 && job.Model != tenant.DefaultModel {
		cx, err = r.cloneContext(ctx, turn, filepath.Join(wsDir.Path, "context"), creds, progress)
		if err != nil {
			return agentjob.TurnOutcome{}, err
		}
		defer cx.Close()
	}

	summary, usage, err := r.edit(ctx, turn, co, ws, cx, progress)
	if err != nil {
		return agentjob.TurnOutcome{}, err
	}
	changes := ws.Changed()
	if len(changes) == 0 {
		if summary == "" {
			summary = "No files needed changing."
		}
		return agentjob.TurnOutcome{Summary: summary, PRLink: job.PRLink, PRNumber: job.PRNumber, Usage: usage}, nil
	}
	v := validateEdits(co, ws)
	if len(v.introduced) > 0 {
		progress.Emit(ctx, "validation", map[string]any{"ok": false, "problems": len(v.introduced), "preexisting": len(v.existing)})
		msg := "the edits do not validate, so nothing was committed:\n" + problemList(v.introduced)
		if len(v.existing) > 0 {
			msg += "\nThe base branch already has these problems, which are not this turn's:\n" + problemList(v.existing)
		}
		return agentjob.TurnOutcome{}, failf("%s", msg)
	}
	if err := refuseLinkEdits(ctx, repo, project.DocsRoot, changes); err != nil {
		return agentjob.TurnOutcome{}, err
	}
	files := repoPaths(project.DocsRoot, changes)
	progress.Emit(ctx, "validation", map[string]any{"ok": true, "files": len(files), "preexisting": len(v.existing)})
	if note := existingNote(v.existing); note != "" {
		summary = strings.TrimSpace(summary + " " + note)
	}

	sha, committed, err := repo.CommitAll(ctx, gitcli.CommitOptions{
		Message:     commitMessage(turn.Message.Prompt, summary),
		AuthorName:  r.cfg.AuthorName,
		AuthorEmail: r.cfg.AuthorEmail,
		Trailers:    []string{"Docsmith-Job: " + job.ID, turnTrailer + ": " + turnIdentity(turn)},
	})
	if err != nil {
		return agentjob.TurnOutcome{}, fmt.Errorf("commit: %w", err)
	}
	if !committed {
		return agentjob.TurnOutcome{Summary: summary, PRLink: job.PRLink, PRNumber: job.PRNumber, Usage: usage}, nil
	}
	// A cancel that arrives now leaves the commit in the workspace, which is
	// removed: nothing half-made reaches the remote.
	if err := ctx.Err(); err != nil {
		return agentjob.TurnOutcome{}, err
	}
	// Fence: a worker that may have lost its lease pushes nothing.
	if err := checkLease(ctx, turn); err != nil {
		return agentjob.TurnOutcome{}, err
	}
	if err := repo.PushRebasing(ctx, job.Branch, creds, 3); err != nil {
		var conflict *gitcli.ConflictError
		if errors.As(err, &conflict) {
			return agentjob.TurnOutcome{}, failf("someone else pushed to %s and their changes conflict with this turn's: %v", job.Branch, err)
		}
		err = fmt.Errorf("push %s: %w", job.Branch, err)
		if transientGit(err) {
			return agentjob.TurnOutcome{}, r.gitFailure(turn, err, "%s", describe(err))
		}
		return agentjob.TurnOutcome{}, err
	}
	pushed, err := repo.HeadSHA(ctx)
	if err != nil {
		pushed = sha
	}
	progress.Emit(ctx, "commit", map[string]any{"sha": pushed, "branch": job.Branch, "files": files})
	cp = agentjob.Checkpoint{PushedSHA: pushed, Summary: summary, FilesChanged: files}
	if err := saveCheckpoint(ctx, turn, cp); err != nil {
		return agentjob.TurnOutcome{}, err
	}
	return r.publish(ctx, turn, creds, tokenSource, cp, usage, progress)
}

// automerge reports whether the job's turns push straight to the base
// branch, with no pull request.
func automerge(job agentjob.Job) bool { return job.Run != nil && job.Run.Automerge }

// checkAutomerge fails an automerge turn, before anything is cloned or
// edited, when the project does not allow automerge or the job's branch is
// not the project's base branch (the run was made for another base).
func checkAutomerge(turn agentjob.Turn) error {
	job, p := turn.Job, turn.Project
	if !automerge(job) {
		return nil
	}
	what := "the workflow"
	if job.Workflow != "" {
		what = "the workflow " + job.Workflow
	}
	if !p.AllowAutomerge {
		return failf("%s asks for automerge, but project %s does not allow it; nothing was changed. To let its workflows push straight to %s: docsmith project update --id %s --allow-automerge", what, p.ID, p.BaseRef, p.ID)
	}
	if job.Branch != p.BaseRef {
		return failf("%s asks for automerge, which pushes to the base branch, but this run works on %s and project %s's base branch is now %s; nothing was changed", what, job.Branch, p.ID, p.BaseRef)
	}
	return nil
}

// turnTrailer names the commit trailer that identifies a turn in git: a
// repeated turn finds its own commit on the remote by it.
const turnTrailer = "Docsmith-Turn"

// turnIdentity is the value of a turn's trailer: <job id>/<message seq>.
func turnIdentity(turn agentjob.Turn) string {
	return fmt.Sprintf("%s/%d", turn.Job.ID, turn.Message.Seq)
}

// resumeDepth is how many commits of the job's branch a repeated turn looks
// through for its own: people may have pushed on top of it since.
const resumeDepth = 50

// resumePoint is where a turn resumes: the checkpoint the store holds, or
// its own commit found on the branch, pushed by an attempt that died (or
// was stopped on shutdown) before it could record it. A repeated turn, and
// every automerge turn, looks through the branch's recent history; any
// other first attempt (which may still be a turn handed back on shutdown)
// only at the tip, which costs nothing.
// When the job's branch is not on the remote (onRemote false), nothing of
// this turn was pushed.
func (r *Runner) resumePoint(ctx context.Context, turn agentjob.Turn, repo *gitcli.Repo, onRemote bool, creds *gitcli.Credentials) (agentjob.Checkpoint, error) {
	cp := turn.Message.Checkpoint
	if cp.PushedSHA != "" || !onRemote {
		return cp, nil
	}
	depth := 1
	if turn.Attempt > 1 || automerge(turn.Job) {
		// An automerge turn's branch is the base branch, which others push
		// to all the time: its own commit may already lie under theirs.
		depth = resumeDepth
	}
	sha, found, err := repo.FindTrailer(ctx, turn.Job.Branch, turnTrailer, turnIdentity(turn), depth, creds)
	if err != nil {
		if transientGit(err) {
			return cp, r.gitFailure(turn, err, "the history of %s could not be read: %s", turn.Job.Branch, describe(err))
		}
		return cp, fmt.Errorf("look for this turn's commit: %w", err)
	}
	if !found {
		return cp, nil
	}
	body, files, err := repo.CommitInfo(ctx, sha)
	if err != nil {
		return cp, fmt.Errorf("read this turn's pushed commit: %w", err)
	}
	r.cfg.Log.Info("turn resumes after its push", "job", turn.Job.ID, "seq", turn.Message.Seq, "sha", sha)
	cp = agentjob.Checkpoint{PushedSHA: sha, Summary: body, FilesChanged: files}
	if err := saveCheckpoint(ctx, turn, cp); err != nil {
		return cp, err
	}
	return cp, nil
}

// publish opens or updates the pull request for a pushed turn, unless an
// earlier attempt already did, and records it.
func (r *Runner) publish(ctx context.Context, turn agentjob.Turn, creds *gitcli.Credentials, tokenSource string, cp agentjob.Checkpoint, usage agentjob.Usage, progress agentjob.Progress) (agentjob.TurnOutcome, error) {
	job := turn.Job
	out := agentjob.TurnOutcome{Summary: cp.Summary, FilesChanged: cp.FilesChanged, PRLink: job.PRLink, PRNumber: job.PRNumber, Usage: usage}
	if cp.PRNumber != 0 {
		out.PRLink, out.PRNumber = cp.PRLink, cp.PRNumber
		// An earlier attempt opened it, and may have stopped before it
		// told: telling twice queues the head once.
		r.pullRequestPushed(ctx, turn, cp)
		return out, nil
	}
	if automerge(job) {
		out.Summary = strings.TrimSpace(cp.Summary + fmt.Sprintf(" Pushed to %s.", job.Branch))
		if r.cfg.BasePushed != nil {
			r.cfg.BasePushed(ctx, turn.Project)
		}
		return out, nil
	}
	if turn.Project.ForgeKind == tenant.ForgeLocal {
		out.Summary = strings.TrimSpace(cp.Summary + fmt.Sprintf(" Pushed to branch %s.", job.Branch))
		return out, nil
	}
	// Fence: a worker that may have lost its lease calls no forge.
	if err := checkLease(ctx, turn); err != nil {
		return agentjob.TurnOutcome{}, err
	}
	pr, err := r.pullRequest(ctx, turn, creds, tokenSource, cp.Summary, cp.FilesChanged)
	if errors.Is(err, forge.ErrNoPullRequests) {
		out.Summary = strings.TrimSpace(cp.Summary + fmt.Sprintf(" Pushed to branch %s.", job.Branch))
		return out, nil
	}
	if err != nil {
		var ferr *forge.Error
		if errors.As(err, &ferr) && ferr.Temporary() {
			return agentjob.TurnOutcome{}, agentjob.RetryAfter(r.retryDelay(turn), err)
		}
		return agentjob.TurnOutcome{}, err
	}
	out.PRLink, out.PRNumber = pr.URL, pr.Number
	progress.Emit(ctx, "pr", map[string]any{"url": pr.URL, "number": pr.Number})
	cp.PRNumber, cp.PRLink = pr.Number, pr.URL
	if err := saveCheckpoint(ctx, turn, cp); err != nil {
		return agentjob.TurnOutcome{}, err
	}
	r.pullRequestPushed(ctx, turn, cp)
	return out, nil
}

// pullRequestPushed tells Config.PullRequestPushed of the pull request a
// turn pushed to.
func (r *Runner) pullRequestPushed(ctx context.Context, turn agentjob.Turn, cp agentjob.Checkpoint) {
	if r.cfg.PullRequestPushed == nil || cp.PRNumber == 0 || cp.PushedSHA == "" || automerge(turn.Job) {
		return
	}
	r.cfg.PullRequestPushed(ctx, turn.Project, PushedPullRequest{
		Number: cp.PRNumber, URL: cp.PRLink, Branch: turn.Job.Branch, Base: turn.Project.BaseRef, SHA: cp.PushedSHA,
	})
}

// turnWorkspaces starts the name of every turn's workspace.
const turnWorkspaces = "turn-"

// workspacePrefix names a turn's workspace after its job, message and
// attempt, so an operator can tell whose a directory is.
func workspacePrefix(turn agentjob.Turn) string {
	return fmt.Sprintf("%s%s-%d-%d-", turnWorkspaces, safeName(turn.Job.ID), turn.Message.Seq, turn.Attempt)
}

// safeName keeps the letters, digits and '-' of an id, at most 36 of them, for a directory name.
func safeName(id string) string {
	id = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, id)
	if len(id) > 36 {
		id = id[:36]
	}
	return id
}

// SweepWorkspaces removes the workspaces of turns (and of workflow reads)
// that no live process runs any more (killed or crashed, in this process's
// past or in another worker process sharing the work directory) and
// returns their names. The server calls it at start-up; every turn calls
// it before it starts.
func (r *Runner) SweepWorkspaces() []string {
	var all []string
	for _, prefix := range []string{turnWorkspaces, projectrepo.WorkflowWorkspaces} {
		removed, err := workspace.Sweep(r.cfg.WorkDir, prefix, r.cfg.Log)
		if err != nil {
			r.cfg.Log.Warn("sweeping stale workspaces failed", "dir", r.cfg.WorkDir, "err", err)
		}
		all = append(all, removed...)
	}
	return all
}

// checkLease checks the turn's lease right before a side effect.
func checkLease(ctx context.Context, turn agentjob.Turn) error {
	if turn.Lease == nil {
		return nil
	}
	return turn.Lease.Check(ctx)
}

// saveCheckpoint records how far the turn got. A checkpoint that cannot be
// written is not fatal unless the lease is gone: the commit's trailer and
// the pull request's marker let a repeated turn find its work anyway.
func saveCheckpoint(ctx context.Context, turn agentjob.Turn, cp agentjob.Checkpoint) error {
	if turn.Lease == nil {
		return nil
	}
	if err := turn.Lease.Save(ctx, cp); err != nil && errors.Is(err, agentjob.ErrLeaseLost) {
		return err
	}
	return nil
}

// retryDelay is how long a turn waits before it runs again after a failure
// that may pass: it doubles with each attempt, up to a limit.
func (r *Runner) retryDelay(turn agentjob.Turn) time.Duration {
	d := r.cfg.RetryDelay
	for i := 1; i < turn.Attempt && d < maxRetryDelay; i++ {
		d *= 2
	}
	return min(d, maxRetryDelay)
}

const maxRetryDelay = 10 * time.Minute

// transientGit reports whether a git failure may pass if tried again (see
// projectrepo.Transient).
func transientGit(err error) bool { return projectrepo.Transient(err) }

// checkout clones the job's branch if it exists on the remote (a follow-up),
// or the base ref and creates the branch (the first turn), and reports
// whether the branch was on the remote. An automerge job's branch is the
// base branch itself, which it never creates. A remote that cannot be
// reached for now makes the turn run again later.
func (r *Runner) checkout(ctx context.Context, turn agentjob.Turn, dir string, creds *gitcli.Credentials) (*gitcli.Repo, bool, error) {
	project, job := turn.Project, turn.Job
	exists, err := r.cfg.Git.RemoteBranchExists(ctx, project.RepoURL, job.Branch, creds)
	if err != nil {
		return nil, false, r.gitFailure(turn, err, "the repository %s could not be reached: %s", redactURL(project.RepoURL), describe(err))
	}
	if !exists && automerge(job) {
		return nil, false, failf("the base branch %s does not exist in %s, so there is nothing to push to", job.Branch, redactURL(project.RepoURL))
	}
	ref := project.BaseRef
	if exists {
		ref = job.Branch
	}
	repo, err := r.cfg.Git.Clone(ctx, project.RepoURL, ref, dir, creds)
	if err != nil {
		return nil, false, r.gitFailure(turn, err, "cloning %s at %s failed: %s", redactURL(project.RepoURL), ref, describe(err))
	}
	if !exists {
		if err := repo.CreateBranch(ctx, job.Branch); err != nil {
			return nil, false, fmt.Errorf("create branch %s: %w", job.Branch, err)
		}
	}
	return repo, exists, nil
}

// gitFailure is the turn's error for a git command that failed: run the
// turn again after a delay when the failure may pass (the remote could not
// be reached or answered with a server error), else fail it with the
// message.
func (r *Runner) gitFailure(turn agentjob.Turn, err error, format string, args ...any) error {
	if transientGit(err) {
		return agentjob.RetryAfter(r.retryDelay(turn), failf(format, args...))
	}
	return failf(format, args...)
}

// edit runs the job's model over the workspace and returns its summary and
// the tokens it used.
func (r *Runner) edit(ctx context.Context, turn agentjob.Turn, co *docs.Checkout, ws *tools.Workspace, cx *turnContext, progress agentjob.Progress) (string, agentjob.Usage, error) {
	if turn.Job.Model == tenant.DefaultModel {
		summary, err := runBuiltin(ctx, turn.Message.Prompt, co.FS(), ws, progress)
		return summary, agentjob.Usage{}, err
	}
	model, err := r.cfg.OpenModel(turn.Job.Model)
	if err != nil {
		return "", agentjob.Usage{}, failf("model %q: %v", turn.Job.Model, err)
	}
	loop := &loop{
		model:    model,
		ws:       ws,
		checkout: co,
		context:  cx,
		budgets:  r.cfg.Budgets,
		progress: progress,
		log:      r.cfg.Log,
	}
	summary, err := loop.run(ctx, turn)
	return summary, agentjob.Usage{InputTokens: loop.usage.InputTokens, OutputTokens: loop.usage.OutputTokens}, err
}

// credentials reads the project's forge token (projectrepo.Credentials),
// a token that cannot be read failing the turn with what to fix.
func (r *Runner) credentials(p tenant.Project) (*gitcli.Credentials, string, error) {
	creds, source, err := projectrepo.Credentials(p, r.cfg.LookupEnv)
	if err != nil {
		return nil, source, &turnError{msg: apperr.MessageOf(err), err: err}
	}
	return creds, source, nil
}

// pullRequest opens the job's pull request, or adds this turn to the one
// that is open for the branch, so a retried turn never opens a second.
func (r *Runner) pullRequest(ctx context.Context, turn agentjob.Turn, creds *gitcli.Credentials, tokenSource, summary string, files []string) (forge.PullRequest, error) {
	p := turn.Project
	token := ""
	if creds != nil {
		token = creds.Password
	}
	f, err := forge.New(forge.Config{Kind: p.ForgeKind, APIBaseURL: p.ForgeURL, RepoURL: p.RepoURL, Token: token, TokenSource: tokenSource, HTTPClient: r.cfg.HTTPClient, Log: r.cfg.Log})
	if err != nil {
		return forge.PullRequest{}, failf("forge %s: %v", p.ForgeKind, err)
	}
	section := turnSection(turn.Message, summary, files, r.cfg.Now())
	open, err := f.FindOpen(ctx, turn.Job.Branch, p.BaseRef)
	if err != nil {
		return forge.PullRequest{}, forgeFailure(err)
	}
	if open != nil {
		if !strings.Contains(open.Body, turnMarker(turn.Message.Seq)) {
			if err := f.UpdateBody(ctx, open.Number, strings.TrimRight(open.Body, "\n")+"\n\n"+section); err != nil {
				return forge.PullRequest{}, forgeFailure(err)
			}
		}
		return *open, nil
	}
	pr, err := f.Open(ctx, forge.NewPullRequest{
		Title: prTitle(firstPrompt(turn.Job, turn.Message)),
		Body:  prBody(summary, files, section),
		Head:  turn.Job.Branch,
		Base:  p.BaseRef,
	})
	if err != nil {
		return forge.PullRequest{}, forgeFailure(err)
	}
	return pr, nil
}

func forgeFailure(err error) error {
	if errors.Is(err, forge.ErrNoPullRequests) {
		return err
	}
	return &turnError{msg: "the pull request could not be opened or updated: " + describe(err), err: err}
}

// refuseLinkEdits fails the turn when it modified a file the repository
// records as a symbolic link: the checkout holds it as a plain file with
// the link's target, and committing the edit would repoint the link.
func refuseLinkEdits(ctx context.Context, repo *gitcli.Repo, docsRoot string, changes []tools.Change) error {
	links, err := repo.Symlinks(ctx)
	if err != nil {
		return err
	}
	if len(links) == 0 {
		return nil
	}
	isLink := map[string]bool{}
	for _, l := range links {
		isLink[l] = true
	}
	for _, c := range changes {
		if c.Kind != tools.ChangeModified {
			continue
		}
		if p := repoPaths(docsRoot, []tools.Change{c})[0]; isLink[p] {
			return failf("%s is a symbolic link in the repository, which docsmith does not follow or change (the checkout holds it as a plain file naming its target); nothing was committed", p)
		}
	}
	return nil
}

func firstPrompt(job agentjob.Job, m agentjob.Message) string {
	if len(job.Messages) > 0 {
		return job.Messages[0].Prompt
	}
	return m.Prompt
}

func changedPaths(changes []tools.Change) []string {
	out := make([]string, 0, len(changes))
	for _, c := range changes {
		if c.Kind != tools.ChangeDeleted {
			out = append(out, c.Path)
		}
	}
	return out
}

// repoPaths are the changed files relative to the repository root, with
// both sides of a move.
func repoPaths(docsRoot string, changes []tools.Change) []string {
	var out []string
	add := func(p string) {
		if docsRoot != "" && docsRoot != "." {
			p = path.Join(docsRoot, p)
		}
		out = append(out, p)
	}
	for _, c := range changes {
		if c.Kind == tools.ChangeMoved && c.From != "" {
			add(c.From)
		}
		add(c.Path)
	}
	return out
}

func problemList(problems []docs.Problem) string {
	var b strings.Builder
	for i, p := range problems {
		if i == 20 {
			fmt.Fprintf(&b, "- ... and %d more\n", len(problems)-20)
			break
		}
		fmt.Fprintf(&b, "- %s\n", p.String())
	}
	return strings.TrimRight(b.String(), "\n")
}

// describe gives an error's message with any URL credentials removed.
func describe(err error) string {
	return gitcli.Redact(err.Error())
}

func redactURL(u string) string { return gitcli.Redact(u) }
