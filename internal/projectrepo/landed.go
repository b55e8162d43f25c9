package projectrepo

import (
	"context"
	"fmt"

	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/tenant"
)

// LandedDepth is how many commits of a branch, up to the commit read,
// Landed looks through for a job's commits or its trailer.
const LandedDepth = 200

// JobTrailer names the trailer the agent writes on each of a job's commits,
// whose value is the job's id.
const JobTrailer = "Docsmith-Job"

// Landed reports whether the commit at of p's branch holds the work of job
// jobID: one of its pushed commits is an ancestor of at, or a commit of the
// branch's last LandedDepth up to at carries the job's trailer (a rebase
// or squash merge that kept the messages). It reads through p's mirror.
func (r *Repos) Landed(ctx context.Context, p tenant.Project, branch, at string, pushed []string, jobID string) (gitcli.Landing, error) {
	m, err := r.OpenMirror(ctx, p)
	if err != nil {
		return gitcli.Landing{}, err
	}
	defer m.Close()
	l, err := m.m.Landed(ctx, branch, at, LandedDepth, m.creds, pushed, JobTrailer, jobID)
	if err != nil {
		return gitcli.Landing{}, fmt.Errorf("project %s: %w", p.ID, err)
	}
	return l, nil
}
