package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

var _ workflowrun.Store = (*Store)(nil)

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

// SaveWorkflows implements workflowrun.Store in one transaction.
func (s *Store) SaveWorkflows(ctx context.Context, projectID string, state workflowrun.SyncState, wfs []workflow.Workflow) error {
	problems, err := json.Marshal(nonNilProblems(state.Problems))
	if err != nil {
		return fmt.Errorf("encode workflow problems: %w", err)
	}
	defs := make([]string, len(wfs))
	keep := make([]any, 0, len(wfs)+1)
	keep = append(keep, projectID)
	for i, wf := range wfs {
		b, err := json.Marshal(wf)
		if err != nil {
			return fmt.Errorf("encode workflow %s: %w", wf.ID, err)
		}
		defs[i] = string(b)
		keep = append(keep, wf.ID)
	}
	err = s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO workflow_syncs (project_id, base_sha, synced_at, problems) VALUES (?, ?, ?, ?)
			ON CONFLICT (project_id) DO UPDATE SET base_sha = excluded.base_sha, synced_at = excluded.synced_at, problems = excluded.problems`,
			projectID, state.BaseSHA, toMicros(state.SyncedAt), string(problems))
		if isForeignKeyViolation(err) {
			return apperr.New(apperr.NotFound, "project %q not found", projectID)
		}
		if err != nil {
			return fmt.Errorf("write sync state: %w", err)
		}
		query := `DELETE FROM workflows WHERE project_id = ?`
		if len(wfs) > 0 {
			query += ` AND id NOT IN (` + placeholders(len(wfs)) + `)`
		}
		if _, err := tx.ExecContext(ctx, query, keep...); err != nil {
			return fmt.Errorf("delete removed workflows: %w", err)
		}
		for i, wf := range wfs {
			// A workflow kept keeps when it was first seen and its last slot.
			_, err := tx.ExecContext(ctx, `INSERT INTO workflows (project_id, id, definition, first_seen) VALUES (?, ?, ?, ?)
				ON CONFLICT (project_id, id) DO UPDATE SET definition = excluded.definition`,
				projectID, wf.ID, defs[i], toMicros(state.SyncedAt))
			if err != nil {
				return fmt.Errorf("write workflow %s: %w", wf.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save workflows of %s: %w", projectID, err)
	}
	return nil
}

// Workflows implements workflowrun.Store, from one snapshot.
func (s *Store) Workflows(ctx context.Context, projectID string) (workflowrun.SyncState, []workflowrun.Stored, error) {
	state, wfs, err := s.workflows(ctx, projectID)
	if err != nil {
		return workflowrun.SyncState{}, nil, fmt.Errorf("read workflows of %s: %w", projectID, err)
	}
	return state, wfs, nil
}

func (s *Store) workflows(ctx context.Context, projectID string) (workflowrun.SyncState, []workflowrun.Stored, error) {
	var state workflowrun.SyncState
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return state, nil, err
	}
	defer func() { _ = tx.Rollback() }()
	var synced int64
	var problems string
	err = tx.QueryRowContext(ctx, `SELECT base_sha, synced_at, problems FROM workflow_syncs WHERE project_id = ?`, projectID).Scan(&state.BaseSHA, &synced, &problems)
	if errors.Is(err, sql.ErrNoRows) {
		return workflowrun.SyncState{}, nil, nil
	}
	if err != nil {
		return state, nil, err
	}
	state.SyncedAt = fromMicros(synced)
	if err := json.Unmarshal([]byte(problems), &state.Problems); err != nil {
		return state, nil, fmt.Errorf("decode problems: %w", err)
	}
	if len(state.Problems) == 0 {
		state.Problems = nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, definition, first_seen, last_slot FROM workflows WHERE project_id = ? ORDER BY id`, projectID)
	if err != nil {
		return state, nil, err
	}
	defer rows.Close()
	var out []workflowrun.Stored
	for rows.Next() {
		var id, def string
		var first int64
		var last sql.NullInt64
		if err := rows.Scan(&id, &def, &first, &last); err != nil {
			return state, nil, err
		}
		st := workflowrun.Stored{FirstSeen: fromMicros(first)}
		if last.Valid {
			st.LastSlot = fromMicros(last.Int64)
		}
		if err := json.Unmarshal([]byte(def), &st.Workflow); err != nil {
			return state, nil, fmt.Errorf("decode workflow %s: %w", id, err)
		}
		out = append(out, st)
	}
	return state, out, rows.Err()
}

// AdvanceSlot implements workflowrun.Store: the compare is in the
// statement, so of two replicas that race the later slot wins.
func (s *Store) AdvanceSlot(ctx context.Context, projectID, workflowID string, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	_, err := s.exec(ctx, `UPDATE workflows SET last_slot = ? WHERE project_id = ? AND id = ? AND (last_slot IS NULL OR last_slot < ?)`,
		toMicros(at), projectID, workflowID, toMicros(at))
	if err != nil {
		return fmt.Errorf("advance the slot of workflow %s: %w", workflowID, err)
	}
	return nil
}

// DeliverySeen implements workflowrun.Store, from one snapshot.
func (s *Store) DeliverySeen(ctx context.Context, projectID, deliveryID string, push *workflowrun.Pushed) (bool, error) {
	query := `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE project_id = ? AND delivery_id = ?)`
	args := []any{projectID, deliveryID}
	if push != nil {
		query += ` OR EXISTS (SELECT 1 FROM webhook_pushes WHERE project_id = ? AND repo = ? AND branch = ? AND before_sha = ? AND after_sha = ?)`
		args = append(args, projectID, push.Repo, push.Branch, push.Before, push.After)
	}
	var seen bool
	if err := s.read.QueryRowContext(ctx, query, args...).Scan(&seen); err != nil {
		return false, fmt.Errorf("look up webhook delivery: %w", err)
	}
	return seen, nil
}

// RecordDelivery implements workflowrun.Store in one transaction. It
// forgets the project's deliveries older than workflowrun.DeliveryRetention
// and pushes older than workflowrun.PushRetention as it goes.
func (s *Store) RecordDelivery(ctx context.Context, projectID string, d workflowrun.Handled) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE project_id = ? AND received_at < ?`,
			projectID, toMicros(d.At.Add(-workflowrun.DeliveryRetention))); err != nil {
			return fmt.Errorf("forget old webhook deliveries: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_pushes WHERE project_id = ? AND received_at < ?`,
			projectID, toMicros(d.At.Add(-workflowrun.PushRetention))); err != nil {
			return fmt.Errorf("forget old webhook pushes: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (project_id, delivery_id, forge, received_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (project_id, delivery_id) DO NOTHING`, projectID, d.ID, d.Forge, toMicros(d.At))
		if isForeignKeyViolation(err) {
			return apperr.New(apperr.NotFound, "project %q not found", projectID)
		}
		if err != nil {
			return fmt.Errorf("record webhook delivery: %w", err)
		}
		if d.Push == nil {
			return nil
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_pushes (project_id, repo, branch, before_sha, after_sha, delivery_id, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (project_id, repo, branch, before_sha, after_sha) DO NOTHING`,
			projectID, d.Push.Repo, d.Push.Branch, d.Push.Before, d.Push.After, d.ID, toMicros(d.At))
		if err != nil {
			return fmt.Errorf("record webhook push: %w", err)
		}
		return nil
	})
}

func nonNilProblems(p []workflow.Problem) []workflow.Problem {
	if p == nil {
		return []workflow.Problem{}
	}
	return p
}
