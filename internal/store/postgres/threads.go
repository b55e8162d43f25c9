package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docsmith/docsmith/internal/assistant"
)

var _ assistant.ThreadStore = (*Store)(nil)

// CreateThread stores a new assistant thread with no turn yet.
func (s *Store) CreateThread(ctx context.Context, t assistant.Thread) error {
	return s.insert(ctx, "thread", t.ID,
		`INSERT INTO threads (id, domain, org_id, fp, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		t.ID, t.Domain, t.OrgID, t.FP, utc(t.CreatedAt), utc(t.UpdatedAt))
}

// GetThread returns a thread.
func (s *Store) GetThread(ctx context.Context, id string) (assistant.Thread, error) {
	t := assistant.Thread{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT domain, org_id, fp, created_at, updated_at FROM threads WHERE id = $1`, id).
		Scan(&t.Domain, &t.OrgID, &t.FP, &t.CreatedAt, &t.UpdatedAt)
	if err != nil {
		return assistant.Thread{}, notFoundOr(err, "thread", id)
	}
	t.CreatedAt, t.UpdatedAt = utc(t.CreatedAt), utc(t.UpdatedAt)
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
// sequence number of its thread: all are stored or none. The threads' rows
// are locked first, in the order of their ids, so turns added at once by
// several processes get distinct numbers without deadlocking.
func (s *Store) AddTurns(ctx context.Context, turns []assistant.Turn) ([]int, error) {
	sources := make([]string, len(turns))
	missing := make([]string, len(turns))
	var threads []string
	var newThreads []*assistant.Thread
	for i, t := range turns {
		if err := assistant.CheckNewThread(t); err != nil {
			return nil, err
		}
		if t.NewThread != nil {
			newThreads = append(newThreads, t.NewThread)
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
		names := t.Missing
		if names == nil {
			names = []string{}
		}
		if b, err = json.Marshal(names); err != nil {
			return nil, fmt.Errorf("encode the missing names of a turn of thread %s: %w", t.ThreadID, err)
		}
		missing[i] = string(b)
		threads = append(threads, t.ThreadID)
	}
	slices.Sort(threads)
	threads = slices.Compact(threads)
	seqs := make([]int, len(turns))
	err := s.tx(ctx, func(tx pgx.Tx) error {
		for _, th := range newThreads {
			// Already there when this write is retried after a commit
			// whose answer was lost.
			_, err := tx.Exec(ctx, `INSERT INTO threads (id, domain, org_id, fp, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (id) DO NOTHING`, th.ID, th.Domain, th.OrgID, th.FP, utc(th.CreatedAt), utc(th.UpdatedAt))
			if err != nil {
				return fmt.Errorf("insert thread %s: %w", th.ID, err)
			}
		}
		for _, id := range threads {
			var locked string
			err := tx.QueryRow(ctx, `SELECT id FROM threads WHERE id = $1 FOR UPDATE`, id).Scan(&locked)
			if err != nil {
				return notFoundOr(err, "thread", id)
			}
		}
		for i, t := range turns {
			// A write retried after a commit whose answer was lost (a
			// timeout during COMMIT) finds its turn already there.
			if t.MessageID != "" {
				err := tx.QueryRow(ctx, `SELECT seq FROM thread_turns WHERE thread_id = $1 AND message_id = $2`, t.ThreadID, t.MessageID).Scan(&seqs[i])
				if err == nil {
					continue
				}
				if !errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("look for turn %s of thread %s: %w", t.MessageID, t.ThreadID, err)
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE threads SET updated_at = $1 WHERE id = $2`, utc(t.CreatedAt), t.ThreadID); err != nil {
				return fmt.Errorf("touch thread %s: %w", t.ThreadID, err)
			}
			if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM thread_turns WHERE thread_id = $1`, t.ThreadID).Scan(&seqs[i]); err != nil {
				return fmt.Errorf("next turn of thread %s: %w", t.ThreadID, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO thread_turns (thread_id, seq, message_id, fp, question, answer, sources, model, status, note, missing, error,
    input_tokens, output_tokens, retrieval_us, first_text_us, total_us, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
				t.ThreadID, seqs[i], t.MessageID, t.FP, t.Question, t.Answer, sources[i], t.Model, t.Status, t.StatusNote, missing[i], t.Error,
				t.InputTokens, t.OutputTokens, t.RetrievalTime.Microseconds(), t.FirstTextTime.Microseconds(), t.TotalTime.Microseconds(),
				utc(t.CreatedAt))
			if err != nil {
				return fmt.Errorf("insert turn of thread %s: %w", t.ThreadID, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return seqs, nil
}

// RecentTurns returns a thread's last limit turns, oldest first.
func (s *Store) RecentTurns(ctx context.Context, threadID string, limit int) ([]assistant.Turn, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, message_id, fp, question, answer, sources::text, model, status, note, missing::text, error,
    input_tokens, output_tokens, retrieval_us, first_text_us, total_us, created_at, rating, rating_comment, rated_at
FROM thread_turns WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2`, threadID, limit)
	if err != nil {
		return nil, fmt.Errorf("list turns of thread %s: %w", threadID, err)
	}
	defer rows.Close()
	var out []assistant.Turn
	for rows.Next() {
		t := assistant.Turn{ThreadID: threadID}
		var sources, missing string
		var retrieval, firstText, total int64
		var rated *time.Time
		if err := rows.Scan(&t.Seq, &t.MessageID, &t.FP, &t.Question, &t.Answer, &sources, &t.Model, &t.Status, &t.StatusNote, &missing, &t.Error,
			&t.InputTokens, &t.OutputTokens, &retrieval, &firstText, &total, &t.CreatedAt, &t.Rating, &t.Comment, &rated); err != nil {
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
		t.CreatedAt = utc(t.CreatedAt)
		if rated != nil {
			t.RatedAt = utc(*rated)
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
	tag, err := s.pool.Exec(ctx, `UPDATE thread_turns SET rating = $1, rating_comment = $2, rated_at = $3 WHERE thread_id = $4 AND message_id = $5`,
		f.Rating, f.Comment, utc(f.CreatedAt), f.ThreadID, f.MessageID)
	return updated(tag, err, "answer", f.MessageID)
}

var _ assistant.SpendStore = (*Store)(nil)

// DomainSpend sums the domain's turns since since that went to a model not
// in free. The range on thread_turns_created reads only the period's turns.
func (s *Store) DomainSpend(ctx context.Context, domain string, since time.Time, free []string) (assistant.Spend, error) {
	var sp assistant.Spend
	err := s.pool.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(tt.input_tokens), 0), COALESCE(SUM(tt.output_tokens), 0)
FROM thread_turns tt JOIN threads t ON t.id = tt.thread_id
WHERE tt.created_at >= $1 AND t.domain = $2
  AND NOT (tt.model = ANY($3)) AND tt.status NOT IN ($4, $5)`,
		since, domain, free, assistant.TurnNotCovered, assistant.TurnNotIndexed).Scan(&sp.Answers, &sp.InputTokens, &sp.OutputTokens)
	if err != nil {
		return assistant.Spend{}, fmt.Errorf("sum the model spend of domain %s: %w", domain, err)
	}
	return sp, nil
}
