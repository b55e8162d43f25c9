package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

var _ workflowrun.Store = (*Store)(nil)

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

// SaveWorkflows implements workflowrun.Store in one transaction. Its first
// write is the project's sync state row, which it then holds: two syncs of
// one project (two replicas) take turns instead of mixing their lists.
func (s *Store) SaveWorkflows(ctx context.Context, projectID string, state workflowrun.SyncState, wfs []workflow.Workflow) error {
	problems, err := json.Marshal(nonNilProblems(state.Problems))
	if err != nil {
		return fmt.Errorf("encode workflow problems: %w", err)
	}
	defs := make([]string, len(wfs))
	ids := make([]string, len(wfs))
	for i, wf := range wfs {
		b, err := json.Marshal(wf)
		if err != nil {
			return fmt.Errorf("encode workflow %s: %w", wf.ID, err)
		}
		defs[i], ids[i] = string(b), wf.ID
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO workflow_syncs (project_id, base_sha, synced_at, problems) VALUES ($1, $2, $3, $4)
			ON CONFLICT (project_id) DO UPDATE SET base_sha = excluded.base_sha, synced_at = excluded.synced_at, problems = excluded.problems`,
			projectID, state.BaseSHA, state.SyncedAt, string(problems))
		if isForeignKeyViolation(err) {
			return apperr.New(apperr.NotFound, "project %q not found", projectID)
		}
		if err != nil {
			return fmt.Errorf("write sync state: %w", err)
		}
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM workflows WHERE project_id = $1 AND id <> ALL($2)`, projectID, ids)
		for i, wf := range wfs {
			// A workflow kept keeps when it was first seen and its last slot.
			b.Queue(`INSERT INTO workflows (project_id, id, definition, first_seen) VALUES ($1, $2, $3, $4)
				ON CONFLICT (project_id, id) DO UPDATE SET definition = excluded.definition`,
				projectID, wf.ID, defs[i], state.SyncedAt)
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("write workflows: %w", err)
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
	var (
		state workflowrun.SyncState
		out   []workflowrun.Stored
	)
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		state, out = workflowrun.SyncState{}, nil
		var problems []byte
		err := tx.QueryRow(ctx, `SELECT base_sha, synced_at, problems FROM workflow_syncs WHERE project_id = $1`, projectID).Scan(&state.BaseSHA, &state.SyncedAt, &problems)
		if errors.Is(err, pgx.ErrNoRows) {
			state = workflowrun.SyncState{}
			return nil
		}
		if err != nil {
			return err
		}
		state.SyncedAt = utc(state.SyncedAt)
		if err := json.Unmarshal(problems, &state.Problems); err != nil {
			return fmt.Errorf("decode problems: %w", err)
		}
		if len(state.Problems) == 0 {
			state.Problems = nil
		}
		rows, err := tx.Query(ctx, `SELECT id, definition, first_seen, last_slot FROM workflows WHERE project_id = $1 ORDER BY id`, projectID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var def []byte
			var last *time.Time
			var st workflowrun.Stored
			if err := rows.Scan(&id, &def, &st.FirstSeen, &last); err != nil {
				return err
			}
			st.FirstSeen = utc(st.FirstSeen)
			if last != nil {
				st.LastSlot = utc(*last)
			}
			if err := json.Unmarshal(def, &st.Workflow); err != nil {
				return fmt.Errorf("decode workflow %s: %w", id, err)
			}
			out = append(out, st)
		}
		return rows.Err()
	})
	if err != nil {
		return workflowrun.SyncState{}, nil, fmt.Errorf("read workflows of %s: %w", projectID, err)
	}
	return state, out, nil
}

// AdvanceSlot implements workflowrun.Store: the compare is in the
// statement, which a racing replica's update re-checks once the first
// commits, so the later slot wins.
func (s *Store) AdvanceSlot(ctx context.Context, projectID, workflowID string, at time.Time) error {
	if at.IsZero() {
		return nil
	}
	_, err := s.pool.Exec(ctx, `UPDATE workflows SET last_slot = $1 WHERE project_id = $2 AND id = $3 AND (last_slot IS NULL OR last_slot < $1)`,
		at, projectID, workflowID)
	if err = s.noteWrite(err); err != nil {
		return fmt.Errorf("advance the slot of workflow %s: %w", workflowID, err)
	}
	return nil
}

// DeliverySeen implements workflowrun.Store, in one statement.
func (s *Store) DeliverySeen(ctx context.Context, projectID, deliveryID string, push *workflowrun.Pushed) (bool, error) {
	query := `SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE project_id = $1 AND delivery_id = $2)`
	args := []any{projectID, deliveryID}
	if push != nil {
		query += ` OR EXISTS (SELECT 1 FROM webhook_pushes WHERE project_id = $1 AND repo = $3 AND branch = $4 AND before_sha = $5 AND after_sha = $6)`
		args = append(args, push.Repo, push.Branch, push.Before, push.After)
	}
	var seen bool
	if err := s.pool.QueryRow(ctx, query, args...).Scan(&seen); err != nil {
		return false, fmt.Errorf("look up webhook delivery: %w", err)
	}
	return seen, nil
}

// RecordDelivery implements workflowrun.Store in one transaction. It
// forgets the project's deliveries older than workflowrun.DeliveryRetention
// and pushes older than workflowrun.PushRetention as it goes.
func (s *Store) RecordDelivery(ctx context.Context, projectID string, d workflowrun.Handled) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM webhook_deliveries WHERE project_id = $1 AND received_at < $2`,
			projectID, d.At.Add(-workflowrun.DeliveryRetention)); err != nil {
			return fmt.Errorf("forget old webhook deliveries: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM webhook_pushes WHERE project_id = $1 AND received_at < $2`,
			projectID, d.At.Add(-workflowrun.PushRetention)); err != nil {
			return fmt.Errorf("forget old webhook pushes: %w", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (project_id, delivery_id, forge, received_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (project_id, delivery_id) DO NOTHING`, projectID, d.ID, d.Forge, d.At)
		if isForeignKeyViolation(err) {
			return apperr.New(apperr.NotFound, "project %q not found", projectID)
		}
		if err != nil {
			return fmt.Errorf("record webhook delivery: %w", err)
		}
		if d.Push == nil {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO webhook_pushes (project_id, repo, branch, before_sha, after_sha, delivery_id, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (project_id, repo, branch, before_sha, after_sha) DO NOTHING`,
			projectID, d.Push.Repo, d.Push.Branch, d.Push.Before, d.Push.After, d.ID, d.At)
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
