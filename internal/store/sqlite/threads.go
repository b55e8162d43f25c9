package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/docsmith/docsmith/internal/assistant"
)

var _ assistant.ThreadStore = (*Store)(nil)

// CreateThread stores a new assistant thread with no turn yet.
func (s *Store) CreateThread(ctx context.Context, t assistant.Thread) error {
	return s.insert(ctx, "thread", t.ID,
		`INSERT INTO threads (id, domain, org_id, fp, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		t.ID, t.Domain, t.OrgID, t.FP, toMicros(t.CreatedAt), toMicros(t.UpdatedAt))
}

// GetThread returns a thread.
func (s *Store) GetThread(ctx context.Context, id string) (assistant.Thread, error) {
	t := assistant.Thread{ID: id}
	var created, updated int64
	err := s.read.QueryRowContext(ctx, `SELECT domain, org_id, fp, created_at, updated_at FROM threads WHERE id = ?`, id).
		Scan(&t.Domain, &t.OrgID, &t.FP, &created, &updated)
	if err != nil {
		return assistant.Thread{}, notFoundOr(err, "thread", id)
	}
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	return t, nil
}

// AddTurn appends a turn to its thread under the next sequence number and
// touches the thread.
func (s *Store) AddTurn(ctx context.Context, t assistant.Turn) (int, error) {
	seqs, err := s.AddTurns(ctx, []assistant.Turn{t})
	if err != nil {
		return 0, err
	}
	return seqs[0], nil
}

// AddTurns appends turns in one transaction, in order, each under the next
// sequence number of its thread: all are stored or none.
func (s *Store) AddTurns(ctx context.Context, turns []assistant.Turn) ([]int, error) {
	sources := make([]string, len(turns))
	for i, t := range turns {
		if err := assistant.CheckNewThread(t); err != nil {
			return nil, err
		}
		src := t.Sources
		if src == nil {
			src = []assistant.TurnSource{}
		}
		b, err := json.Marshal(src)
		if err != nil {
			return nil, fmt.Errorf("encode sources of a turn of thread %s: %w", t.ThreadID, err)
		}
		sources[i] = string(b)
	}
	seqs := make([]int, len(turns))
	err := s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		for i, t := range turns {
			if th := t.NewThread; th != nil {
				// Already there when this write is retried after a commit
				// whose answer was lost. Its update time is its turn's, as
				// the update below would make it.
				res, err := tx.ExecContext(ctx, `INSERT INTO threads (id, domain, org_id, fp, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`, th.ID, th.Domain, th.OrgID, th.FP, toMicros(th.CreatedAt), toMicros(t.CreatedAt))
				if err != nil {
					return fmt.Errorf("insert thread %s: %w", th.ID, err)
				}
				if n, err := res.RowsAffected(); err == nil && n == 1 {
					// A thread this write created holds no turn yet:
					// this one is its first.
					seqs[i] = 1
					if err := insertThreadTurn(ctx, tx, t, 1, sources[i]); err != nil {
						return err
					}
					continue
				}
			}
			// A write retried after a commit whose answer was lost finds
			// its turn already there.
			if t.MessageID != "" {
				err := tx.QueryRowContext(ctx, `SELECT seq FROM thread_turns WHERE thread_id = ? AND message_id = ?`, t.ThreadID, t.MessageID).Scan(&seqs[i])
				if err == nil {
					continue
				}
				if !errors.Is(err, sql.ErrNoRows) {
					return fmt.Errorf("look for turn %s of thread %s: %w", t.MessageID, t.ThreadID, err)
				}
			}
			if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM thread_turns WHERE thread_id = ?`, t.ThreadID).Scan(&seqs[i]); err != nil {
				return fmt.Errorf("next turn of thread %s: %w", t.ThreadID, err)
			}
			res, err := tx.ExecContext(ctx, `UPDATE threads SET updated_at = ? WHERE id = ?`, toMicros(t.CreatedAt), t.ThreadID)
			if err := updated(res, err, "thread", t.ThreadID); err != nil {
				return err
			}
			if err := insertThreadTurn(ctx, tx, t, seqs[i], sources[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return seqs, nil
}

// insertThreadTurn inserts turn t as turn seq of its thread, its sources
// encoded.
func insertThreadTurn(ctx context.Context, tx *wtx, t assistant.Turn, seq int, sources string) error {
	missing, err := encodeMissing(t)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO thread_turns (thread_id, seq, message_id, fp, question, answer, sources, model, status, note, missing, error,
    input_tokens, output_tokens, retrieval_us, first_text_us, total_us, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ThreadID, seq, t.MessageID, t.FP, t.Question, t.Answer, sources, t.Model, t.Status, t.StatusNote, missing, t.Error,
		t.InputTokens, t.OutputTokens, t.RetrievalTime.Microseconds(), t.FirstTextTime.Microseconds(), t.TotalTime.Microseconds(),
		toMicros(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert turn of thread %s: %w", t.ThreadID, err)
	}
	return nil
}

// encodeMissing is a turn's missing names as a JSON array.
func encodeMissing(t assistant.Turn) (string, error) {
	missing := t.Missing
	if missing == nil {
		missing = []string{}
	}
	b, err := json.Marshal(missing)
	if err != nil {
		return "", fmt.Errorf("encode the missing names of a turn of thread %s: %w", t.ThreadID, err)
	}
	return string(b), nil
}

// RecentTurns returns a thread's last limit turns, oldest first.
func (s *Store) RecentTurns(ctx context.Context, threadID string, limit int) ([]assistant.Turn, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT seq, message_id, fp, question, answer, sources, model, status, note, missing, error,
    input_tokens, output_tokens, retrieval_us, first_text_us, total_us, created_at, rating, rating_comment, rated_at
FROM thread_turns WHERE thread_id = ? ORDER BY seq DESC LIMIT ?`, threadID, limit)
	if err != nil {
		return nil, fmt.Errorf("list turns of thread %s: %w", threadID, err)
	}
	defer rows.Close()
	var out []assistant.Turn
	for rows.Next() {
		t := assistant.Turn{ThreadID: threadID}
		var sources, missing string
		var retrieval, firstText, total, created int64
		var rated sql.NullInt64
		if err := rows.Scan(&t.Seq, &t.MessageID, &t.FP, &t.Question, &t.Answer, &sources, &t.Model, &t.Status, &t.StatusNote, &missing, &t.Error,
			&t.InputTokens, &t.OutputTokens, &retrieval, &firstText, &total, &created, &t.Rating, &t.Comment, &rated); err != nil {
			return nil, fmt.Errorf("scan turn of thread %s: %w", threadID, err)
		}
		if err := json.Unmarshal([]byte(sources), &t.Sources); err != nil {
			return nil, fmt.Errorf("decode sources of turn %d of thread %s: %w", t.Seq, threadID, err)
		}
		if err := json.Unmarshal([]byte(missing), &t.Missing); err != nil {
			return nil, fmt.Errorf("decode the missing names of turn %d of thread %s: %w", t.Seq, threadID, err)
		}
		t.RetrievalTime = time.Duration(retrieval) * time.Microsecond
		t.FirstTextTime = time.Duration(firstText) * time.Microsecond
		t.TotalTime = time.Duration(total) * time.Microsecond
		t.CreatedAt = fromMicros(created)
		if rated.Valid {
			t.RatedAt = fromMicros(rated.Int64)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list turns of thread %s: %w", threadID, err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// RateTurn stores a reader's rating on the thread's turn with that message
// id, replacing an earlier one.
func (s *Store) RateTurn(ctx context.Context, f assistant.Feedback) error {
	return s.writeTx(ctx, func(ctx context.Context, tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE thread_turns SET rating = ?, rating_comment = ?, rated_at = ? WHERE thread_id = ? AND message_id = ?`,
			f.Rating, f.Comment, toMicros(f.CreatedAt), f.ThreadID, f.MessageID)
		return updated(res, err, "answer", f.MessageID)
	})
}

var _ assistant.SpendStore = (*Store)(nil)

// DomainSpend sums the domain's turns since since that went to a model not
// in free. The range on thread_turns_created reads only the period's turns.
func (s *Store) DomainSpend(ctx context.Context, domain string, since time.Time, free []string) (assistant.Spend, error) {
	freeJSON, err := json.Marshal(free)
	if err != nil {
		return assistant.Spend{}, fmt.Errorf("encode the free models: %w", err)
	}
	var sp assistant.Spend
	err = s.read.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(tt.input_tokens), 0), COALESCE(SUM(tt.output_tokens), 0)
FROM thread_turns tt JOIN threads t ON t.id = tt.thread_id
WHERE tt.created_at >= ? AND t.domain = ?
  AND tt.model NOT IN (SELECT value FROM json_each(?))
  AND tt.status NOT IN (?, ?)`,
		toMicros(since), domain, string(freeJSON), assistant.TurnNotCovered, assistant.TurnNotIndexed).Scan(&sp.Answers, &sp.InputTokens, &sp.OutputTokens)
	if err != nil {
		return assistant.Spend{}, fmt.Errorf("sum the model spend of domain %s: %w", domain, err)
	}
	return sp, nil
}
