package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docsmith/docsmith/internal/agentjob"
)

// Group commit of job creates. Each create is a transaction of its own,
// and under load most of the server's work for one is the statement's and
// the commit's, not the rows': a few hundred microseconds of CPU and a WAL
// flush for a job and its turn. The creates that arrive while earlier ones
// are being stored wait and then go together, in one statement and one
// commit (insertJobsSQL). A create that finds no batch in flight goes at
// once, alone, so a quiet server adds no wait.
const (
	// maxJobBatches is how many batches may be in flight at once: enough
	// to keep the database busy while the next batch gathers, few enough
	// that the creates of a burst go together.
	maxJobBatches = 2
	// maxJobBatch bounds the creates of one statement.
	maxJobBatch = 128
	// jobBatchTimeout bounds one batch's statement: it serves many
	// callers, so none of their contexts may end it.
	jobBatchTimeout = 30 * time.Second
)

// jobBatcher gathers job creates into batches (see maxJobBatches).
type jobBatcher struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	queue   []*pendingJob
	running int // batches in flight, each with a goroutine

	// What /metrics shows: jobs stored through batches, and the batch
	// statements that stored them.
	jobs, batches atomic.Int64
}

// JobCreateStats counts the job creates stored through group commit and
// the statements (each a commit of its own) that stored them.
type JobCreateStats struct {
	Jobs, Statements int64
}

// JobCreateStats reports the creates group-committed so far.
func (s *Store) JobCreateStats() JobCreateStats {
	return JobCreateStats{Jobs: s.jobBatch.jobs.Load(), Statements: s.jobBatch.batches.Load()}
}

// pendingJob is one create waiting for its batch.
type pendingJob struct {
	job    newJob
	taken  bool          // in a batch: no longer withdrawn when its caller gives up (under mu)
	done   chan struct{} // closed when stored and err are set
	stored agentjob.Job
	err    error
}

// insert stores a job with its events and returns it as stored. A caller
// whose context ends before its job was taken into a batch withdraws it:
// the job is not stored. Once taken, the job is stored or not whatever the
// caller does, as a statement under way is, and a caller that gives up
// then gets its context's error.
func (b *jobBatcher) insert(ctx context.Context, nj newJob) (agentjob.Job, error) {
	p := &pendingJob{job: nj, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, p)
	if b.running < maxJobBatches {
		b.running++
		go b.drain()
	}
	b.mu.Unlock()
	select {
	case <-p.done:
		return p.stored, p.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	if !p.taken {
		for i, q := range b.queue {
			if q == p {
				b.queue = append(b.queue[:i], b.queue[i+1:]...)
				break
			}
		}
		b.mu.Unlock()
		return agentjob.Job{}, fmt.Errorf("insert job %s: %w", nj.job.ID, ctx.Err())
	}
	b.mu.Unlock()
	return agentjob.Job{}, fmt.Errorf("insert job %s: gave up waiting for the database: %w", nj.job.ID, ctx.Err())
}

// drain stores batches from the queue until it is empty.
func (b *jobBatcher) drain() {
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxJobBatch)
		if n == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		batch := make([]*pendingJob, n)
		copy(batch, b.queue)
		b.queue = append(b.queue[:0], b.queue[n:]...)
		for _, p := range batch {
			p.taken = true
		}
		b.mu.Unlock()
		b.write(batch)
	}
}

// write inserts a batch and tells each of its callers. When the batch's
// statement fails, each job is tried alone, so that one job's error (its
// project deleted meanwhile, say) is its own caller's only.
func (b *jobBatcher) write(batch []*pendingJob) {
	ctx, cancel := context.WithTimeout(context.Background(), jobBatchTimeout)
	defer cancel()
	jobs := make([]newJob, len(batch))
	for i, p := range batch {
		jobs[i] = p.job
	}
	stored, err := insertJobs(ctx, b.pool, jobs)
	if err == nil {
		b.batches.Add(1)
		b.jobs.Add(int64(len(batch)))
		for i, p := range batch {
			p.stored = stored[i]
			close(p.done)
		}
		return
	}
	if len(batch) == 1 {
		batch[0].err = err
		close(batch[0].done)
		return
	}
	for _, p := range batch {
		one, err := insertJobs(ctx, b.pool, []newJob{p.job})
		if err == nil {
			b.batches.Add(1)
			b.jobs.Add(1)
			p.stored = one[0]
		}
		p.err = err
		close(p.done)
	}
}
