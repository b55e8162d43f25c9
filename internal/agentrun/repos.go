package agentrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
	"github.com/docsmith/docsmith/internal/workspace"
)

// The Runner reads projects' workflows for the workflow service: it holds the git wrapper, the
// work directory and the credential model every turn uses.
var _ workflowrun.Repos = (*Runner)(nil)

// RepoError is a failure to read a project's repository. Its message names the repository
// (without credentials) and the ref, never the token. Transient says whether trying again later
// may help: the remote could not be reached, timed out, or answered with a server error.
type RepoError struct {
	Repo      string // the repository, redacted
	Ref       string
	Transient bool
	Err       error
	msg       string
}

func (e *RepoError) Error() string { return e.msg }
func (e *RepoError) Unwrap() error { return e.Err }

// ErrBranchNotFound is what a RepoError wraps when the remote has no such branch.
var ErrBranchNotFound = errors.New("the branch does not exist on the remote")

// repoError describes err, a failure to read ref of p's repository, with creds' secret removed
// wherever it might appear.
func repoError(p tenant.Project, ref string, err error, creds *gitcli.Credentials) *RepoError {
	secret := ""
	if creds != nil {
		secret = creds.Password
	}
	repo := redactURL(p.RepoURL)
	return &RepoError{
		Repo:      repo,
		Ref:       ref,
		Transient: transientGit(err),
		Err:       err,
		msg:       fmt.Sprintf("reading %s of %s (project %s): %s", ref, repo, p.ID, gitcli.Redact(err.Error(), secret)),
	}
}

// BaseSHA is the commit the project's base ref points at on its remote, read with ls-remote and
// the project's credentials, as turns get them. It fails with a *RepoError.
func (r *Runner) BaseSHA(ctx context.Context, p tenant.Project) (string, error) {
	creds, _, err := r.credentials(p)
	if err != nil {
		return "", repoError(p, p.BaseRef, err, nil)
	}
	sha, found, err := r.cfg.Git.RemoteBranchSHA(ctx, p.RepoURL, p.BaseRef, creds)
	if err != nil {
		return "", repoError(p, p.BaseRef, err, creds)
	}
	if !found {
		return "", repoError(p, p.BaseRef, ErrBranchNotFound, creds)
	}
	return sha, nil
}

// syncWorkspaces starts the name of the workspaces ReadWorkflows clones into; SweepWorkspaces
// removes those a killed process left.
const syncWorkspaces = "workflows-"

// ReadWorkflows reads the workflow files at the project's base ref: a shallow clone of that one
// branch into a workspace under WorkDir, read through an os.Root (so that nothing in the
// repository leads the reader out of the checkout), then removed. It returns the commit it
// read. A repository it cannot read fails it with a *RepoError; files with errors are problems,
// not errors.
func (r *Runner) ReadWorkflows(ctx context.Context, p tenant.Project) (string, []workflow.Workflow, []workflow.Problem, error) {
	creds, _, err := r.credentials(p)
	if err != nil {
		return "", nil, nil, repoError(p, p.BaseRef, err, nil)
	}
	dir, err := workspace.Create(r.cfg.WorkDir, syncWorkspaces+safeName(p.ID)+"-")
	if err != nil {
		return "", nil, nil, fmt.Errorf("create workspace: %w", err)
	}
	defer func() { _ = dir.Remove() }()
	repo, err := r.cfg.Git.Clone(ctx, p.RepoURL, p.BaseRef, filepath.Join(dir.Path, "repo"), creds)
	if err != nil {
		return "", nil, nil, repoError(p, p.BaseRef, err, creds)
	}
	sha, err := repo.HeadSHA(ctx)
	if err != nil {
		return "", nil, nil, fmt.Errorf("read the commit of %s: %w", p.BaseRef, err)
	}
	root, err := os.OpenRoot(repo.Dir)
	if err != nil {
		return "", nil, nil, fmt.Errorf("open the checkout: %w", err)
	}
	defer func() { _ = root.Close() }()
	linked, err := unlinkWorkflowLinks(ctx, repo, root)
	if err != nil {
		return "", nil, nil, err
	}
	wfs, problems := workflow.Load(root.FS())
	return sha, wfs, append(linked, problems...), nil
}

// unlinkWorkflowLinks removes from the checkout the symbolic links the
// repository records on the way to a workflow file, and returns a problem
// for each. The checkout holds every link as a plain file naming its
// target, which Load would otherwise read as a broken workflow (or a
// directory that is not one); this way the problem says what is wrong.
func unlinkWorkflowLinks(ctx context.Context, repo *gitcli.Repo, root *os.Root) ([]workflow.Problem, error) {
	links, err := repo.Symlinks(ctx)
	if err != nil {
		return nil, err
	}
	var problems []workflow.Problem
	for _, l := range links {
		for _, dir := range workflow.Dirs {
			if l == dir || strings.HasPrefix(l, dir+"/") || strings.HasPrefix(dir, l+"/") {
				if err := root.Remove(filepath.FromSlash(l)); err != nil {
					return nil, fmt.Errorf("remove the placeholder of the link %s: %w", l, err)
				}
				problems = append(problems, workflow.Problem{File: l, Msg: "is a symbolic link, which docsmith does not follow to read workflows"})
				break
			}
		}
	}
	return problems, nil
}
