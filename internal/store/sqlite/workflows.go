package sqlite

import (
	"context"
	"errors"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// WorkflowRuns implements agentjob.Store.
func (s *Store) WorkflowRuns(ctx context.Context, projectID, workflowID string, since time.Time) (agentjob.RunStats, error) {
	return agentjob.RunStats{}, errors.New("not implemented")
}
