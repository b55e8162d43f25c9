package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// WorkflowRuns implements agentjob.Store: one statement, so the active run
// and the count are read from the same state of the jobs.
func (s *Store) WorkflowRuns(ctx context.Context, projectID, workflowID string, since time.Time) (agentjob.RunStats, error) {
	var st agentjob.RunStats
	err := s.read.QueryRowContext(ctx, `SELECT
		COALESCE((SELECT id FROM jobs WHERE project_id = ? AND workflow = ? AND status = 'active' ORDER BY created_at DESC, id DESC LIMIT 1), ''),
		(SELECT COUNT(*) FROM jobs WHERE project_id = ? AND workflow = ? AND created_at >= ? AND status <> 'failed')`,
		projectID, workflowID, projectID, workflowID, toMicros(since)).Scan(&st.ActiveJobID, &st.NotFailed)
	if err != nil {
		return agentjob.RunStats{}, fmt.Errorf("read runs of workflow %s: %w", workflowID, err)
	}
	return st, nil
}
