package projectrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workspace"
)

// BaseSHA is the commit the project's base ref points at on its remote,
// read with ls-remote and the project's credentials. It fails with a
// *RepoError.
func (r *Repos) BaseSHA(ctx context.Context, p tenant.Project) (string, error) {
	creds, _, err := r.Credentials(p)
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

// WorkflowWorkspaces starts the name of the workspaces ReadWorkflows
// clones into, so that those a killed process left can be swept.
const WorkflowWorkspaces = "workflows-"

// ReadWorkflows reads the workflow files at the project's base ref: a
// shallow clone of that one branch into a workspace under WorkDir, read
// through an os.Root (so that nothing in the repository leads the reader
// out of the checkout), then removed. It returns the commit it read. A
// repository it cannot read fails it with a *RepoError; files with errors
// are problems, not errors.
func (r *Repos) ReadWorkflows(ctx context.Context, p tenant.Project) (string, []workflow.Workflow, []workflow.Problem, error) {
	creds, _, err := r.Credentials(p)
	if err != nil {
		return "", nil, nil, repoError(p, p.BaseRef, err, nil)
	}
	dir, err := workspace.Create(r.cfg.WorkDir, WorkflowWorkspaces+WorkspaceName(p.ID)+"-")
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

// WorkspaceName keeps the characters of an id that are safe in a
// directory name, at most 36 of them, for the names of workspaces.
func WorkspaceName(id string) string {
	id = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, id)
	if len(id) > 36 {
		id = id[:36]
	}
	return id
}
