package gapproof_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/gapproof"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// The gap proof's decisions, over a real SQLite store: which gaps are asked
// again after a build, and what they become. The repository and the
// assistant are stand-ins here (the app's test has the real ones): landed
// says which commits hold the job's work, and answers what each question
// gets.
type bench struct {
	store  *sqlite.Store
	stats  *analytics.Service
	jobs   map[string]agentjob.Job
	prover *gapproof.Prover

	mu      sync.Mutex
	landed  map[string]bool   // built commit -> holds the job's work
	answers map[string]string // question -> status
	asked   []string
}

func newBench(t *testing.T) *bench {
	t.Helper()
	store, err := sqlite.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	b := &bench{store: store, stats: analytics.NewService(store), jobs: map[string]agentjob.Job{}, landed: map[string]bool{}, answers: map[string]string{}}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	b.prover = gapproof.New(gapproof.Config{
		Lifecycles: b.stats, Jobs: jobReader{b}, Projects: projects{}, Repos: repos{b}, Asker: asker{b},
		Now: func() time.Time { return now },
	})
	return b
}

type jobReader struct{ b *bench }

func (j jobReader) Get(_ context.Context, _, id string) (agentjob.Job, error) {
	j.b.mu.Lock()
	defer j.b.mu.Unlock()
	return j.b.jobs[id], nil
}

type projects struct{}

func (projects) GetProject(context.Context, string) (tenant.Project, error) {
	return tenant.Project{ID: "p", BaseRef: "main"}, nil
}

type repos struct{ b *bench }

func (r repos) Landed(_ context.Context, _ tenant.Project, branch, at string, pushed []string, _ string) (gitcli.Landing, error) {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if branch != "main" || len(pushed) == 0 || !r.b.landed[at] {
		return gitcli.Landing{}, nil
	}
	return gitcli.Landing{Landed: true, Commit: pushed[len(pushed)-1], By: gitcli.LandedByAncestry}, nil
}

type asker struct{ b *bench }

func (a asker) Ask(_ context.Context, _ tenant.Domain, q string) (answercheck.Answer, *answercheck.Collected, error) {
	a.b.mu.Lock()
	defer a.b.mu.Unlock()
	a.b.asked = append(a.b.asked, q)
	return answercheck.Answer{Status: a.b.answers[q], Text: "about " + q, Cited: []string{"guides/snapshots"}}, nil, nil
}

func (b *bench) push(jobID string, shas ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	j := agentjob.Job{ID: jobID, ProjectID: "p"}
	for i, sha := range shas {
		j.Messages = append(j.Messages, agentjob.Message{Seq: i + 1, Checkpoint: agentjob.Checkpoint{PushedSHA: sha}})
	}
	b.jobs[jobID] = j
}

func (b *bench) askedTimes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.asked)
}

func (b *bench) state(t *testing.T) analytics.GapLifecycle {
	t.Helper()
	ls, err := b.stats.GapLifecycles(t.Context(), "quill")
	if err != nil || len(ls) != 1 {
		t.Fatalf("lifecycles = %+v, %v", ls, err)
	}
	return ls[0]
}

func sha(c byte) string {
	s := make([]byte, 40)
	for i := range s {
		s[i] = c
	}
	return string(s)
}

// TestGapIsAskedOncePerCommitAndAgainAfterANewPush: a build whose commit
// does not hold the job's work asks nothing; one that does asks the
// questions, once however often it is rebuilt; a reopened gap is asked
// again only once its job pushed more and that landed; a closed one stays
// closed.
func TestGapIsAskedOncePerCommitAndAgainAfterANewPush(t *testing.T) {
	t.Parallel()
	b := newBench(t)
	ctx := t.Context()
	d := tenant.Domain{ID: "quill", ProjectID: "p"}
	questions := []string{"How do I restore a snapshot?", "Can I restore an older snapshot?"}
	gap := analytics.Gap{Key: "restore+snapshot", Terms: []string{"restore", "snapshot"}}
	for _, q := range questions {
		gap.Questions = append(gap.Questions, analytics.GapQuestion{Question: q})
	}
	if err := b.stats.StartGapWork(ctx, analytics.GapJob{Domain: "quill", GapKey: gap.Key, ProjectID: "p", JobID: "job_1", CreatedAt: time.Now()}, gap); err != nil {
		t.Fatal(err)
	}

	// Nothing pushed yet, then pushed but not merged: nothing asked.
	b.prover.Built(ctx, d, sha('1'))
	b.push("job_1", sha('a'))
	b.prover.Built(ctx, d, sha('2'))
	if n := b.askedTimes(); n != 0 || b.state(t).State != analytics.GapInProgress {
		t.Fatalf("asked %d times before the merge; state %s", n, b.state(t).State)
	}

	// Merged, the first question still not answered: reopened.
	b.landed[sha('3')] = true
	b.answers[questions[0]] = "not_covered"
	b.answers[questions[1]] = "answered"
	b.prover.Built(ctx, d, sha('3'))
	l := b.state(t)
	if l.State != analytics.GapReopened || l.CheckedCommit != sha('3') || l.CheckedPush != sha('a') || b.askedTimes() != 2 || l.Answers[0].Status != "not_covered" {
		t.Fatalf("after the first merge: %+v, asked %d", l, b.askedTimes())
	}
	// Rebuilt at the same commit, or at a later one with no new push: not
	// asked again.
	b.prover.Built(ctx, d, sha('3'))
	b.landed[sha('4')] = true
	b.prover.Built(ctx, d, sha('4'))
	if n := b.askedTimes(); n != 2 {
		t.Fatalf("asked %d times, want 2: a reopened gap is asked again only after a new push", n)
	}

	// The job pushes a fix, which lands: all answered, closed with proof.
	b.push("job_1", sha('a'), sha('b'))
	b.answers[questions[0]] = "answered"
	b.landed[sha('5')] = true
	b.prover.Built(ctx, d, sha('5'))
	l = b.state(t)
	if l.State != analytics.GapClosed || l.ClosedAt == nil || l.CheckedCommit != sha('5') || b.askedTimes() != 4 ||
		!slices.Equal([]string{l.Answers[0].Question, l.Answers[1].Question}, questions) || l.Answers[0].CitedPage() != "guides/snapshots" {
		t.Fatalf("after the fix: %+v, asked %d", l, b.askedTimes())
	}
	// Closed stays closed, whatever is built next.
	b.landed[sha('6')] = true
	b.prover.Built(ctx, d, sha('6'))
	if n := b.askedTimes(); n != 4 || b.state(t).State != analytics.GapClosed {
		t.Fatalf("a closed gap was asked again (%d)", n)
	}
}
