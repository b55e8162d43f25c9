package prcheck_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/forge"
	"github.com/docsmith/docsmith/internal/prcheck"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/tenant"
)

// scriptedForge answers SetStatus and UpsertComment with the errors it is
// given, in turn, and records what succeeded.
type scriptedForge struct {
	forge.Forge
	mu       sync.Mutex
	fails    []error
	statuses []forge.CommitStatus
	comments []string
}

func (f *scriptedForge) next() error {
	if len(f.fails) == 0 {
		return nil
	}
	err := f.fails[0]
	f.fails = f.fails[1:]
	return err
}

func (f *scriptedForge) SetStatus(_ context.Context, _ string, st forge.CommitStatus) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.next(); err != nil {
		return err
	}
	f.statuses = append(f.statuses, st)
	return nil
}

func (f *scriptedForge) UpsertComment(_ context.Context, _ int, marker, body string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.next(); err != nil {
		return err
	}
	if !strings.Contains(body, marker) {
		return &forge.Error{Forge: "test", Message: "no marker"}
	}
	f.comments = append(f.comments, body)
	return nil
}

// countingRunner reports a regression, and counts its runs.
type countingRunner struct{ runs int }

func (r *countingRunner) Run(_ context.Context, req checkrun.Request) (answercheck.Report, error) {
	r.runs++
	c := answercheck.Check{Name: "rotate-keys", Question: "How do I rotate the keys?", Cite: []string{"guides/keys"}, Origin: answercheck.OriginFile}
	before := []answercheck.Result{answercheck.Judge(c, answercheck.Answer{Status: assistant.StatusAnswered, Cited: []string{"guides/keys"}})}
	after := []answercheck.Result{answercheck.Judge(c, answercheck.Answer{Status: assistant.StatusNotCovered})}
	checks, totals := answercheck.Compare(before, after)
	return answercheck.Report{Domain: req.Domain.ID, Ref: req.Ref, Checks: checks, Totals: totals}, nil
}

type fixture struct {
	store  *sqlite.Store
	now    time.Time
	forge  *scriptedForge
	runner *countingRunner
	worker *prcheck.Worker
	p      tenant.Project
}

func newFixture(t *testing.T, fails ...error) *fixture {
	t.Helper()
	ctx := t.Context()
	s, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	f := &fixture{store: s, now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), forge: &scriptedForge{fails: fails}, runner: &countingRunner{}}
	f.p = tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "https://git.example/acme/docs.git", BaseRef: "main", ForgeKind: tenant.ForgeGitea, ForgeURL: "https://git.example", Model: "builtin", CreatedAt: f.now}
	must(t, s.CreateOrg(ctx, tenant.Org{ID: "acme", CreatedAt: f.now}))
	must(t, s.CreateProject(ctx, f.p))
	must(t, s.CreateDomain(ctx, tenant.Domain{ID: "docs.acme.test", OrgID: "acme", ProjectID: "docs", Model: "builtin", CreatedAt: f.now}))
	forgeOf := func(tenant.Project) (forge.Forge, error) { return f.forge, nil }
	f.worker = prcheck.NewWorker(prcheck.WorkerConfig{
		Store: s, Tenants: s, Runner: f.runner, Runs: s, ForgeOf: forgeOf, PublicURL: "https://docsmith.example",
		WorkerID: "w1", MaxAttempts: 3, RetryDelay: time.Minute, Now: func() time.Time { return f.now },
	})
	q := prcheck.NewQueue(s, s, forgeOf, nil, func() time.Time { return f.now })
	if _, err := q.Enqueue(ctx, f.p, prcheck.Request{Number: 5, HeadSHA: strings.Repeat("c", 40), BaseRef: "main", PullRef: "refs/pull/5/head", Link: "https://git.example/acme/docs/pulls/5", Source: prcheck.SourceWebhook}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) runOne(t *testing.T) bool {
	t.Helper()
	worked, err := f.worker.RunOne(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return worked
}

func (f *fixture) check(t *testing.T) prcheck.Check {
	t.Helper()
	all, err := f.store.PRChecks(t.Context(), "docs", 5)
	if err != nil || len(all) != 1 {
		t.Fatalf("PRChecks = %+v, %v", all, err)
	}
	return all[0]
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A forge that fails for now is tried again after a doubling delay, without
// asking the checks again; the status then names the regression and the
// comment is posted once.
func TestForgeErrorsRetryWithoutAskingAgain(t *testing.T) {
	t.Parallel()
	unavailable := &forge.Error{Forge: "gitea", Method: http.MethodPost, Path: "/repos/acme/docs/statuses", Status: http.StatusBadGateway}
	// The pending status on queueing, then the final status twice.
	f := newFixture(t, unavailable, unavailable, unavailable)
	if !f.runOne(t) {
		t.Fatal("nothing claimed")
	}
	c := f.check(t)
	if c.State != prcheck.StateQueued || !c.RunAfter.Equal(f.now.Add(time.Minute)) || len(c.Runs) != 1 || !strings.Contains(c.Error, "502") {
		t.Fatalf("after a 502: %+v", c)
	}
	if f.runOne(t) {
		t.Fatal("ran again before its delay")
	}
	f.now = f.now.Add(time.Minute)
	f.runOne(t)
	if c := f.check(t); c.State != prcheck.StateQueued || !c.RunAfter.Equal(f.now.Add(2*time.Minute)) {
		t.Fatalf("after a second 502 the delay doubles: %+v", c)
	}
	f.now = f.now.Add(2 * time.Minute)
	f.runOne(t)
	c = f.check(t)
	if c.State != prcheck.StateDone || f.runner.runs != 1 {
		t.Fatalf("after the forge came back: %+v, %d runs of the checks", c, f.runner.runs)
	}
	if len(f.forge.statuses) != 1 || f.forge.statuses[0].State != "failure" || f.forge.statuses[0].Context != prcheck.StatusContext ||
		!strings.Contains(f.forge.statuses[0].Description, "rotate-keys") ||
		f.forge.statuses[0].TargetURL != "https://docsmith.example"+prcheck.RunPath("docs.acme.test", c.Runs[0].ID) {
		t.Fatalf("statuses = %+v", f.forge.statuses)
	}
	if len(f.forge.comments) != 1 || !strings.Contains(f.forge.comments[0], "**Regressed**") {
		t.Fatalf("comments = %q", f.forge.comments)
	}
	run, err := f.store.GetRun(t.Context(), "docs.acme.test", c.Runs[0].ID)
	if err != nil || run.PRNumber != 5 || run.PRLink != "https://git.example/acme/docs/pulls/5" || run.Trigger != checkrun.TriggerPullRequest {
		t.Fatalf("stored run = %+v, %v", run, err)
	}
}

// A forge error that will not pass (a token without the right scope)
// fails the check at once.
func TestForgeRefusalFailsTheCheck(t *testing.T) {
	t.Parallel()
	refused := &forge.Error{Forge: "gitea", Method: http.MethodPost, Path: "/repos/acme/docs/statuses", Status: http.StatusForbidden, Hint: "the token lacks the repository scope"}
	f := newFixture(t)
	f.forge.fails = []error{refused}
	f.runOne(t)
	if c := f.check(t); c.State != prcheck.StateFailed || !strings.Contains(c.Error, "repository scope") || c.Attempts != 1 {
		t.Fatalf("after a 403: %+v", c)
	}
	if f.runOne(t) {
		t.Fatal("a failed check was claimed again")
	}
}
