package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// WorkflowRuns implements agentjob.Store: one statement, so the active run
// and the count are read from the same snapshot.
func (s *Store) WorkflowRuns(ctx context.Context, projectID, workflowID string, since time.Time) (agentjob.RunStats, error) {
	var st agentjob.RunStats
	err := s.pool.QueryRow(ctx, `SELECT
		COALESCE((SELECT id FROM jobs WHERE project_id = $1 AND workflow = $2 AND status = 'active' ORDER BY created_at DESC, id DESC LIMIT 1), ''),
		(SELECT count(*) FROM jobs WHERE project_id = $1 AND workflow = $2 AND created_at >= $3 AND status <> 'failed')`,
		projectID, workflowID, since).Scan(&st.ActiveJobID, &st.NotFailed)
	if err != nil {
		return agentjob.RunStats{}, fmt.Errorf("read runs of workflow %s: %w", workflowID, err)
	}
	return st, nil
}
