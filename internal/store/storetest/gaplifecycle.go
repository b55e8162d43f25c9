package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apperr"
)

// testGapLifecycles checks that a gap's lifecycle starts in progress with
// its questions, records a check only while its job is the one linked, and
// starts again, its check cleared, when another job is linked.
func testGapLifecycles(t *testing.T, s Store) {
	ctx := t.Context()
	t0 := baseTime()
	start := analytics.GapLifecycle{
		Domain: "docs", Key: "restore+snapshot", State: analytics.GapInProgress,
		Terms: []string{"restore", "snapshot"}, TopPage: "guides/backups",
		Questions: []string{"How do I restore a snapshot?", "Can snapshots be restored elsewhere?"},
		ProjectID: "p", JobID: "job_1", LinkedAt: t0, UpdatedAt: t0,
	}
	must(t, s.StartGapLifecycle(ctx, start), "StartGapLifecycle")
	must(t, s.StartGapLifecycle(ctx, analytics.GapLifecycle{Domain: "other", Key: "restore+snapshot", State: analytics.GapInProgress, ProjectID: "q", JobID: "job_9", LinkedAt: t0, UpdatedAt: t0}), "StartGapLifecycle other")

	got, err := s.GapLifecycles(ctx, "docs")
	must(t, err, "GapLifecycles")
	if len(got) != 1 {
		t.Fatalf("GapLifecycles = %+v, want one", got)
	}
	l := got[0]
	if l.Key != start.Key || l.State != analytics.GapInProgress || l.JobID != "job_1" || l.ProjectID != "p" || l.TopPage != "guides/backups" ||
		!reflect.DeepEqual(l.Terms, start.Terms) || !reflect.DeepEqual(l.Questions, start.Questions) ||
		l.CheckedCommit != "" || l.CheckedAt != nil || l.ClosedAt != nil || len(l.Answers) != 0 {
		t.Fatalf("started lifecycle = %+v", l)
	}
	sameTime(t, "linked at", l.LinkedAt, t0)

	checked := t0.Add(time.Hour)
	proof := []analytics.GapAnswer{{Question: start.Questions[0], Status: "answered", Text: "Run the restore command.", Cited: []string{"guides/backups"}, Commit: "c0ffee", At: checked}}
	closed := l
	closed.State, closed.CheckedCommit, closed.CheckedPush, closed.CheckedAt, closed.ClosedAt, closed.Answers, closed.UpdatedAt =
		analytics.GapClosed, "c0ffee", "beef", &checked, &checked, proof, checked
	must(t, s.RecordGapCheck(ctx, closed), "RecordGapCheck")
	stale := closed
	stale.JobID = "job_0"
	wantCode(t, s.RecordGapCheck(ctx, stale), apperr.Conflict, "RecordGapCheck of a job no longer linked")

	got, err = s.GapLifecycles(ctx, "docs")
	must(t, err, "GapLifecycles")
	l = got[0]
	if l.State != analytics.GapClosed || l.CheckedCommit != "c0ffee" || l.CheckedPush != "beef" || l.CheckedAt == nil || l.ClosedAt == nil ||
		len(l.Answers) != 1 || l.Answers[0].Text != proof[0].Text || l.Answers[0].CitedPage() != "guides/backups" || l.Answers[0].Commit != "c0ffee" {
		t.Fatalf("closed lifecycle = %+v", l)
	}
	sameTime(t, "closed at", *l.ClosedAt, checked)
	sameTime(t, "answered at", l.Answers[0].At, checked)

	// A second job started from the gap: in progress again, nothing checked.
	again := start
	again.JobID, again.LinkedAt, again.UpdatedAt, again.Questions = "job_2", t0.Add(2*time.Hour), t0.Add(2*time.Hour), []string{"How do I restore a snapshot?"}
	must(t, s.StartGapLifecycle(ctx, again), "StartGapLifecycle again")
	got, err = s.GapLifecycles(ctx, "docs")
	must(t, err, "GapLifecycles")
	l = got[0]
	if len(got) != 1 || l.State != analytics.GapInProgress || l.JobID != "job_2" || l.CheckedCommit != "" || l.ClosedAt != nil || len(l.Answers) != 0 || len(l.Questions) != 1 {
		t.Fatalf("restarted lifecycle = %+v", got)
	}
}
