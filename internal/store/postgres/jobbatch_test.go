package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// openFresh opens a store on a fresh schema, closed when the test ends.
func openFresh(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), storetest.PostgresURL(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openWithProject opens a store on a fresh schema holding one organization
// and project "p".
func openWithProject(t *testing.T) *Store {
	t.Helper()
	s := openFresh(t)
	now := time.Now().UTC()
	if err := s.CreateOrg(t.Context(), tenant.Org{ID: "acme", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateProject(t.Context(), tenant.Project{ID: "p", OrgID: "acme", RepoURL: "/srv/docs", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return s
}

// testJob is a new job of project with one queued turn and two events.
func testJob(project, id string) newJob {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return newJob{
		job: agentjob.Job{
			ID: id, ProjectID: project, Status: agentjob.Active, Repository: "/srv/docs", Branch: "docsmith/" + id, BaseRef: "main",
			FilesChanged: []string{"a.mdx", "b/c.mdx"}, CreatedAt: now, UpdatedAt: now,
			Messages: []agentjob.Message{{Seq: 1, Prompt: "prompt of " + id, State: agentjob.TurnQueued, CreatedAt: now}},
		},
		events: []agentjob.NewEvent{{Type: "job.created", Data: map[string]string{"id": id}}, {Type: "turn.queued", Data: map[string]int{"seq": 1}}},
	}
}

// TestJobCreatesGoTogether: concurrent creates are stored in fewer
// statements than jobs, and each caller gets its own job back, as stored.
func TestJobCreatesGoTogether(t *testing.T) {
	t.Parallel()
	s := openWithProject(t)
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			want := testJob("p", fmt.Sprintf("job-%02d", i))
			got, replayed, err := s.CreateJob(t.Context(), want.job, nil, want.events)
			if err != nil || replayed {
				t.Errorf("create %s: replayed %v, %v", want.job.ID, replayed, err)
				return
			}
			if got.ID != want.job.ID || len(got.Messages) != 1 || got.Messages[0].Prompt != want.job.Messages[0].Prompt ||
				fmt.Sprint(got.FilesChanged) != "[a.mdx b/c.mdx]" || !got.CreatedAt.Equal(want.job.CreatedAt) {
				t.Errorf("create %s returned %+v", want.job.ID, got)
			}
			events, err := s.ListEvents(t.Context(), want.job.ID, 0, 10)
			if err != nil || len(events) != 2 || events[0].Type != "job.created" || events[1].Type != "turn.queued" || events[0].ID >= events[1].ID {
				t.Errorf("events of %s: %+v, %v", want.job.ID, events, err)
			}
		})
	}
	wg.Wait()
	stats := s.JobCreateStats()
	if stats.Jobs != n || stats.Statements >= n {
		t.Errorf("stats %+v: want %d jobs in fewer statements", stats, n)
	}
	t.Logf("%d jobs in %d statements", stats.Jobs, stats.Statements)
}

// TestJobBatchErrorIsItsOwn: a job the database refuses (its project is
// gone) fails alone; the others of its batch are stored.
func TestJobBatchErrorIsItsOwn(t *testing.T) {
	t.Parallel()
	s := openWithProject(t)
	batch := []*pendingJob{
		{job: testJob("p", "good-1"), done: make(chan struct{})},
		{job: testJob("no-such-project", "bad"), done: make(chan struct{})},
		{job: testJob("p", "good-2"), done: make(chan struct{})},
	}
	s.jobBatch.write(batch)
	for _, p := range batch {
		<-p.done
	}
	if batch[0].err != nil || batch[2].err != nil {
		t.Fatalf("good jobs failed: %v, %v", batch[0].err, batch[2].err)
	}
	if batch[1].err == nil || !isForeignKeyViolation(batch[1].err) {
		t.Errorf("the job of a missing project: err %v, want a foreign key violation", batch[1].err)
	}
	for _, id := range []string{"good-1", "good-2"} {
		if _, err := s.GetJob(t.Context(), "p", id); err != nil {
			t.Errorf("get %s: %v", id, err)
		}
	}
	if _, err := s.GetJob(t.Context(), "no-such-project", "bad"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("get bad: %v, want NotFound", err)
	}
}

// TestJobCreateWithdrawnBeforeItsBatch: a caller that gives up while its
// job waits for a batch takes the job back; it is never stored.
func TestJobCreateWithdrawnBeforeItsBatch(t *testing.T) {
	t.Parallel()
	s := openWithProject(t)
	// Every batch slot is taken, so the create waits in the queue.
	s.jobBatch.mu.Lock()
	s.jobBatch.running = maxJobBatches
	s.jobBatch.mu.Unlock()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	nj := testJob("p", "withdrawn")
	go func() {
		_, _, err := s.CreateJob(ctx, nj.job, nil, nj.events)
		done <- err
	}()
	for {
		s.jobBatch.mu.Lock()
		queued := len(s.jobBatch.queue)
		s.jobBatch.mu.Unlock()
		if queued == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("create: %v, want context.Canceled", err)
	}

	// The slots free up; the queue is empty and stays so.
	s.jobBatch.mu.Lock()
	s.jobBatch.running = 0
	queued := len(s.jobBatch.queue)
	s.jobBatch.mu.Unlock()
	if queued != 0 {
		t.Fatalf("%d creates still queued after the caller gave up", queued)
	}
	other := testJob("p", "next")
	if _, _, err := s.CreateJob(t.Context(), other.job, nil, other.events); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetJob(t.Context(), "p", "withdrawn"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("get the withdrawn job: %v, want NotFound", err)
	}
}

// TestGetJobTakesThePrimaryKey: the generic plan of a job's read, made
// while the tables have no statistics (a new schema; a burst of jobs before
// autovacuum analyzes them), finds the job by its primary key, not by
// walking one of the (project_id, …, id) indexes over every job of the
// project.
func TestGetJobTakesThePrimaryKey(t *testing.T) {
	t.Parallel()
	s := openWithProject(t)
	for i := range 50 {
		nj := testJob("p", fmt.Sprintf("job-%02d", i))
		if _, _, err := s.CreateJob(t.Context(), nj.job, nil, nj.events); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := s.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = conn.Exec(context.Background(), `RESET plan_cache_mode; DEALLOCATE ALL`) }()
	if _, err := conn.Exec(t.Context(), `PREPARE get_job AS `+getJobSQL); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(t.Context(), `EXPLAIN EXECUTE get_job('job-07')`)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if !strings.Contains(text, "jobs_pkey") || strings.Contains(text, "jobs_project") {
		t.Errorf("the generic plan of getJobSQL does not take jobs_pkey:\n%s", text)
	}
}
