package agentrun

import (
	"context"

	"github.com/docsmith/docsmith/internal/projectrepo"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// The Runner reads projects' workflows for the workflow service, through
// the same projectrepo.Repos (git wrapper, work directory, credentials)
// its turns use.
var _ workflowrun.Repos = (*Runner)(nil)

// RepoError is a failure to read a project's repository (see
// projectrepo.RepoError).
type RepoError = projectrepo.RepoError

// ErrBranchNotFound is what a RepoError wraps when the remote has no such
// branch.
var ErrBranchNotFound = projectrepo.ErrBranchNotFound

// BaseSHA is projectrepo.Repos.BaseSHA.
func (r *Runner) BaseSHA(ctx context.Context, p tenant.Project) (string, error) {
	return r.repos().BaseSHA(ctx, p)
}

// ReadWorkflows is projectrepo.Repos.ReadWorkflows.
func (r *Runner) ReadWorkflows(ctx context.Context, p tenant.Project) (string, []workflow.Workflow, []workflow.Problem, error) {
	return r.repos().ReadWorkflows(ctx, p)
}
