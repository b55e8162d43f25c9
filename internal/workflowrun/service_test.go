package workflowrun_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/prcheck"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/workflow"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// store is what the service and the tests need of a real store.
type store interface {
	workflowrun.Store
	workflowrun.Tenants
	agentjob.Store
	CreateOrg(ctx context.Context, o tenant.Org) error
	CreateProject(ctx context.Context, p tenant.Project) error
}

// clock is a settable time shared by every replica of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// repos serves workflow files as a docs repository at a commit would.
type repos struct {
	mu    sync.Mutex
	sha   string
	files map[string]string
	reads atomic.Int32
	polls atomic.Int32
}

func (r *repos) set(sha string, files map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sha, r.files = sha, files
}

func (r *repos) BaseSHA(context.Context, tenant.Project) (string, error) {
	r.polls.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sha, nil
}

func (r *repos) ReadWorkflows(context.Context, tenant.Project) (string, []workflow.Workflow, []workflow.Problem, error) {
	r.reads.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	var wfs []workflow.Workflow
	var problems []workflow.Problem
	for name, text := range r.files {
		wf, ps := workflow.Parse(name, []byte(text))
		if len(ps) > 0 {
			problems = append(problems, ps...)
			continue
		}
		wfs = append(wfs, wf)
	}
	return r.sha, wfs, problems, nil
}

type env struct {
	t       *testing.T
	store   store
	clock   *clock
	repos   *repos
	project tenant.Project
	secret  string
}

const (
	daily   = ".mintlify/workflows/daily.md"
	onPush  = ".mintlify/workflows/update-docs.md"
	merging = ".mintlify/workflows/merge.md"
)

var files = map[string]string{
	daily:  "---\nname: Daily links\non:\n  cron: \"0 9 * * *\"\n---\nfix broken links everywhere\n",
	onPush: "---\nname: Update docs from code\non:\n  push:\n    - repo: acme/api\n      branch: main\ncontext:\n  - repo: acme/api\n---\nRead the change and update the reference.\n",
}

func sqliteStore(t *testing.T) store {
	s, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func postgresStore(t *testing.T) store {
	s, err := postgres.Open(context.Background(), storetest.PostgresURL(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func setup(t *testing.T, s store) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, store: s, clock: &clock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}, repos: &repos{}, secret: "s3cret"}
	e.repos.set("aaaa", files)
	if err := s.CreateOrg(ctx, tenant.Org{ID: "acme", CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	e.project = tenant.Project{ID: "docs", OrgID: "acme", RepoURL: "https://git.example/acme/docs.git", BaseRef: "main",
		ForgeKind: tenant.ForgeGitea, ForgeURL: "https://git.example", Model: "builtin", WebhookSecretEnv: "DOCS_HOOK_SECRET",
		ContextRepos: []string{"acme/api"}, CreatedAt: e.clock.Now()}
	if err := s.CreateProject(ctx, e.project); err != nil {
		t.Fatal(err)
	}
	return e
}

// service is one replica's workflow service.
func (e *env) service(cfg workflowrun.Config) *workflowrun.Service {
	cfg.Now = e.clock.Now
	cfg.LookupEnv = func(k string) (string, bool) {
		if k == "DOCS_HOOK_SECRET" {
			return e.secret, true
		}
		return "", false
	}
	jobs := agentjob.NewService(e.store, agentjob.NewHub(), e.clock.Now)
	return workflowrun.New(e.store, e.store, jobs, e.repos, cfg)
}

func (e *env) jobs() []agentjob.Job {
	e.t.Helper()
	jobs, err := e.store.ListJobs(context.Background(), e.project.ID, agentjob.ListQuery{Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return jobs
}

func (e *env) tick(s *workflowrun.Service) {
	e.t.Helper()
	if err := s.Tick(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

func TestScheduleStartsEachSlotOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	s := e.service(workflowrun.Config{})
	e.tick(s) // 08:00: first seen; nothing is due
	if n := len(e.jobs()); n != 0 {
		t.Fatalf("a workflow first seen at 08:00 started %d runs before its first slot", n)
	}
	e.clock.Set(time.Date(2026, 3, 2, 9, 0, 20, 0, time.UTC))
	e.tick(s)
	e.tick(s)
	jobs := e.jobs()
	if len(jobs) != 1 {
		t.Fatalf("the 09:00 slot started %d runs, want 1", len(jobs))
	}
	j := jobs[0]
	if j.Trigger != agentjob.TriggerSchedule || j.Workflow != "daily" || j.Messages[0].Prompt != "fix broken links everywhere\n" && strings.TrimSpace(j.Messages[0].Prompt) != "fix broken links everywhere" {
		t.Fatalf("run = trigger %q workflow %q prompt %q", j.Trigger, j.Workflow, j.Messages[0].Prompt)
	}
	l, err := s.List(context.Background(), e.project)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range l.Workflows {
		if w.ID == "daily" {
			if !w.LastSlot.Equal(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)) {
				t.Errorf("LastSlot = %v", w.LastSlot)
			}
			if w.NextRun == nil || !w.NextRun.Equal(time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)) {
				t.Errorf("NextRun = %v", w.NextRun)
			}
		}
	}
}

func TestMissedSlotsRunOnceAfterRestart(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	e.tick(e.service(workflowrun.Config{NewRunWhileActive: true}))
	// Down for three days and a bit: a new process starts at day 4 10:00.
	e.clock.Set(time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC))
	restarted := e.service(workflowrun.Config{NewRunWhileActive: true})
	e.tick(restarted)
	e.tick(restarted)
	if n := len(e.jobs()); n != 1 {
		t.Fatalf("four missed daily slots started %d runs, want 1", n)
	}
	e.clock.Set(time.Date(2026, 3, 6, 9, 0, 1, 0, time.UTC))
	e.tick(restarted)
	if n := len(e.jobs()); n != 2 {
		t.Fatalf("the next day's slot: %d runs in all, want 2", n)
	}
}

// Replicas racing for one slot start it once: on SQLite and on PostgreSQL,
// which is what several replicas share.
func TestReplicasStartASlotOnce(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(*testing.T) store{"sqlite": sqliteStore, "postgres": postgresStore} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, open(t))
			e.tick(e.service(workflowrun.Config{NewRunWhileActive: true}))
			e.clock.Set(time.Date(2026, 3, 2, 9, 0, 5, 0, time.UTC))
			replicas := make([]*workflowrun.Service, 4)
			for i := range replicas {
				replicas[i] = e.service(workflowrun.Config{NewRunWhileActive: true})
			}
			var wg sync.WaitGroup
			for _, r := range replicas {
				wg.Go(func() {
					if err := r.Tick(context.Background()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if n := len(e.jobs()); n != 1 {
				t.Fatalf("%d replicas ticking at one slot started %d runs, want 1", len(replicas), n)
			}
		})
	}
}

func TestBaseRefMoveSyncs(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	s := e.service(workflowrun.Config{SyncInterval: time.Minute})
	e.tick(s)
	e.tick(s)
	if n := e.repos.reads.Load(); n != 1 {
		t.Fatalf("files read %d times with the base ref unmoved, want 1", n)
	}
	withBroken := map[string]string{daily: files[daily], ".docsmith/workflows/bad.md": "---\nname: x\non:\n  cron: \"99 * * * *\"\n---\ndo\n"}
	e.repos.set("bbbb", withBroken)
	e.clock.Set(e.clock.Now().Add(2 * time.Minute))
	e.tick(s)
	l, err := s.List(context.Background(), e.project)
	if err != nil {
		t.Fatal(err)
	}
	if l.BaseSHA != "bbbb" || len(l.Workflows) != 1 || l.Workflows[0].ID != "daily" {
		t.Fatalf("after the move: sha %q, workflows %+v", l.BaseSHA, l.Workflows)
	}
	if len(l.Problems) != 1 || l.Problems[0].File != ".docsmith/workflows/bad.md" || l.Problems[0].Key != "on.cron" {
		t.Fatalf("problems = %+v", l.Problems)
	}
}

func TestManualRunFollowUpAndDailyCap(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	ctx := context.Background()
	s := e.service(workflowrun.Config{DailyCap: 2})
	if _, err := s.Sync(ctx, e.project); err != nil {
		t.Fatal(err)
	}
	first, start, err := s.RunManual(ctx, e.project, "daily", "k1")
	if err != nil || start != agentjob.RunCreated || first.Trigger != agentjob.TriggerManual {
		t.Fatalf("first run: %v %v %+v", start, err, first)
	}
	again, start, err := s.RunManual(ctx, e.project, "daily", "k1")
	if err != nil || start != agentjob.RunReplayed || again.ID != first.ID {
		t.Fatalf("the same key again: %v %v", start, err)
	}
	queued, start, err := s.RunManual(ctx, e.project, "daily", "")
	if err != nil || start != agentjob.RunQueued || queued.ID != first.ID || len(queued.Messages) != 2 {
		t.Fatalf("a run while the first is active: %v %v, %d messages", start, err, len(queued.Messages))
	}
	if _, _, err := s.RunManual(ctx, e.project, "nope", ""); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("unknown workflow: %v", err)
	}

	// With a new job per trigger, the cap counts jobs that did not fail.
	capped := e.service(workflowrun.Config{DailyCap: 2, NewRunWhileActive: true})
	second, _, err := capped.RunManual(ctx, e.project, "daily", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := capped.RunManual(ctx, e.project, "daily", ""); !apperr.Is(err, apperr.RateLimited) || !strings.Contains(apperr.MessageOf(err), "daily cap") {
		t.Fatalf("a third run in a day: %v", err)
	}
	failJob(t, e, second)
	if _, start, err := capped.RunManual(ctx, e.project, "daily", ""); err != nil || start != agentjob.RunCreated {
		t.Fatalf("after a run failed, it does not count: %v %v", start, err)
	}
	// A day later the cap is free again.
	e.clock.Set(e.clock.Now().Add(25 * time.Hour))
	if _, _, err := capped.RunManual(ctx, e.project, "daily", ""); err != nil {
		t.Fatalf("a day later: %v", err)
	}
}

// failJob cancels a job, which fails it.
func failJob(t *testing.T, e *env, j agentjob.Job) {
	t.Helper()
	jobs := agentjob.NewService(e.store, agentjob.NewHub(), e.clock.Now)
	if _, err := jobs.Cancel(context.Background(), e.project.ID, j.ID); err != nil {
		t.Fatal(err)
	}
}

func TestAutomergeNeedsPermission(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	ctx := context.Background()
	e.repos.set("aaaa", map[string]string{merging: "---\nname: Merge\non:\n  cron: \"0 9 * * *\"\nautomerge: true\n---\nfix broken links everywhere\n"})
	s := e.service(workflowrun.Config{})
	l, err := s.Sync(ctx, e.project)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Workflows) != 1 || !strings.Contains(l.Workflows[0].Refused, "docsmith project update --id docs --allow-automerge") {
		t.Fatalf("listing = %+v", l.Workflows)
	}
	if _, _, err := s.RunManual(ctx, e.project, "merge", ""); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("manual run without permission: %v", err)
	}
	// A refused slot is passed over, not retried every tick.
	e.clock.Set(time.Date(2026, 3, 2, 9, 0, 1, 0, time.UTC))
	e.tick(s)
	if n := len(e.jobs()); n != 0 {
		t.Fatalf("%d runs started without permission", n)
	}
	allowed := e.project
	allowed.AllowAutomerge = true
	j, _, err := s.RunManual(ctx, allowed, "merge", "")
	if err != nil {
		t.Fatal(err)
	}
	if j.Branch != "main" || j.Run == nil || !j.Run.Automerge {
		t.Fatalf("an automerged run works on %q with %+v", j.Branch, j.Run)
	}
}

// giteaPush is a Gitea push webhook for a branch of repo that moves it
// from 1111… to 2222….
func giteaPush(t *testing.T, secret, delivery, repo, branch string) (http.Header, []byte) {
	t.Helper()
	return giteaPushOf(t, secret, delivery, repo, branch, strings.Repeat("1", 40), strings.Repeat("2", 40))
}

// giteaPushOf is a Gitea push webhook for a branch of repo that moves it
// from before to after.
func giteaPushOf(t *testing.T, secret, delivery, repo, branch, before, after string) (http.Header, []byte) {
	t.Helper()
	body := fmt.Sprintf(`{"ref":"refs/heads/%s","before":%q,"after":%q,
"repository":{"full_name":%q,"default_branch":"main"},"pusher":{"login":"dev"},
"commits":[{"id":%q,"message":"Add the --watch flag","author":{"name":"Dev"},"added":["cmd/watch.go"],"modified":["README.md"],"removed":[]}]}`, branch, before, after, repo, after)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	h := http.Header{}
	h.Set("X-Gitea-Event", "push")
	h.Set("X-Gitea-Delivery", delivery)
	h.Set("X-Gitea-Signature", hex.EncodeToString(mac.Sum(nil)))
	h.Set("Content-Type", "application/json")
	return h, []byte(body)
}

func TestPushWebhookStartsRunsOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	ctx := context.Background()
	s := e.service(workflowrun.Config{})
	if _, err := s.Sync(ctx, e.project); err != nil {
		t.Fatal(err)
	}
	h, body := giteaPush(t, e.secret, "d-1", "acme/api", "main")
	res, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Workflow != "update-docs" || res.Runs[0].Start != agentjob.RunCreated {
		t.Fatalf("result = %+v", res)
	}
	j, err := e.store.GetJob(ctx, e.project.ID, res.Runs[0].JobID)
	if err != nil {
		t.Fatal(err)
	}
	m := j.Messages[0]
	if j.Trigger != agentjob.TriggerPush || m.Push == nil || m.Push.After != strings.Repeat("2", 40) || !strings.Contains(m.Prompt, "cmd/watch.go") ||
		j.Run == nil || len(j.Run.Context) != 1 || j.Run.Context[0] != "acme/api" {
		t.Fatalf("run = %+v, message = %+v", j, m)
	}

	// The forge sends the same delivery again: nothing new.
	again, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body))
	if err != nil || !again.Replayed || len(again.Runs) != 0 {
		t.Fatalf("redelivery: %+v %v", again, err)
	}
	if n := len(e.jobs()); n != 1 {
		t.Fatalf("%d jobs after a redelivery, want 1", n)
	}

	// Another branch, or another repository, starts nothing.
	h2, body2 := giteaPush(t, e.secret, "d-2", "acme/api", "dev")
	res2, err := s.Webhook(ctx, e.project, h2, bytes.NewReader(body2))
	if err != nil || len(res2.Runs) != 0 || !strings.Contains(res2.Ignored, "no workflow") {
		t.Fatalf("a push to dev: %+v %v", res2, err)
	}

	// A wrong secret is refused before anything is read.
	bad, badBody := giteaPush(t, "wrong", "d-3", "acme/api", "main")
	_, err = s.Webhook(ctx, e.project, bad, bytes.NewReader(badBody))
	if !apperr.Is(err, apperr.Unauthorized) || !errors.Is(err, workflowrun.ErrBadSignature) {
		t.Fatalf("wrong secret: %v", err)
	}
	noSecret := e.project
	noSecret.WebhookSecretEnv = ""
	if _, err := s.Webhook(ctx, noSecret, h, bytes.NewReader(body)); !apperr.Is(err, apperr.Unauthorized) || !errors.Is(err, workflowrun.ErrBadSignature) ||
		!strings.Contains(apperr.MessageOf(err), "--webhook-secret-env") {
		t.Fatalf("no secret: %v", err)
	}
	// Headers that say nothing a forge sends are refused the same way
	// as a bad signature: they come before any verification.
	if _, err := s.Webhook(ctx, e.project, http.Header{}, bytes.NewReader(body)); !apperr.Is(err, apperr.Unauthorized) || !errors.Is(err, workflowrun.ErrBadSignature) {
		t.Fatalf("no forge headers: %v", err)
	}
}

func TestPushToTheDocsBaseSyncs(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	ctx := context.Background()
	var told []string
	s := e.service(workflowrun.Config{DocsPushed: func(_ context.Context, p tenant.Project, push workflowrun.Pushed) []string {
		told = append(told, p.ID+" "+push.Repo+" "+push.Branch)
		return []string{"help-" + push.Branch}
	}})
	e.repos.set("cccc", files)
	h, body := giteaPush(t, e.secret, "d-9", "acme/docs", "main")
	res, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body))
	if err != nil || !res.Synced {
		t.Fatalf("a push to the docs base: %+v %v", res, err)
	}
	if !slices.Equal(res.Reindexed, []string{"help-main"}) {
		t.Fatalf("the docs push was not told: %+v", res.Reindexed)
	}
	l, err := s.List(ctx, e.project)
	if err != nil || l.BaseSHA != "cccc" || len(l.Workflows) != 2 {
		t.Fatalf("listing after the push: %+v %v", l, err)
	}
	// A push to another branch of the docs repository is told too (a
	// domain may read it); one to another repository is not.
	h, body = giteaPush(t, e.secret, "d-10", "acme/docs", "beta")
	if res, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body)); err != nil || res.Synced || !slices.Equal(res.Reindexed, []string{"help-beta"}) {
		t.Fatalf("a push to the docs repository's beta: %+v %v", res, err)
	}
	h, body = giteaPush(t, e.secret, "d-11", "acme/api", "main")
	if res, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body)); err != nil || res.Reindexed != nil {
		t.Fatalf("a push to another repository: %+v %v", res, err)
	}
	if want := []string{"docs acme/docs main", "docs acme/docs beta"}; !slices.Equal(told, want) {
		t.Fatalf("told %q, want %q", told, want)
	}
}

// A project that never used workflows (never synced, no webhook secret) is
// not polled; once synced by hand, it is.
func TestOnlyProjectsUsingWorkflowsArePolled(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	ctx := context.Background()
	plain := tenant.Project{ID: "plain", OrgID: "acme", RepoURL: "https://git.example/acme/plain.git", BaseRef: "main", Model: "builtin", CreatedAt: e.clock.Now()}
	if err := e.store.CreateProject(ctx, plain); err != nil {
		t.Fatal(err)
	}
	s := e.service(workflowrun.Config{SyncInterval: time.Minute})
	e.tick(s)
	if n := e.repos.polls.Load(); n != 1 {
		t.Fatalf("%d base refs polled, want 1 (only the project with a webhook secret)", n)
	}
	if _, err := s.Sync(ctx, plain); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(e.clock.Now().Add(2 * time.Minute))
	e.tick(s)
	if n := e.repos.polls.Load(); n != 3 {
		t.Fatalf("%d base refs polled in all, want 3 (both projects the second time)", n)
	}
}

// forgetfulSlots is a store whose slot records never land, as when a
// process dies between starting a slot's run and recording the slot.
type forgetfulSlots struct{ store }

func (forgetfulSlots) AdvanceSlot(context.Context, string, string, time.Time) error { return nil }

// A slot whose record was lost is due again, and its key keeps it from
// starting a second run.
func TestSlotStartedButNotRecordedRunsOnce(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	e.store = forgetfulSlots{e.store}
	s := e.service(workflowrun.Config{NewRunWhileActive: true})
	e.tick(s)
	e.clock.Set(time.Date(2026, 3, 2, 9, 0, 5, 0, time.UTC))
	e.tick(s)
	e.clock.Set(time.Date(2026, 3, 2, 9, 5, 0, 0, time.UTC))
	e.tick(e.service(workflowrun.Config{NewRunWhileActive: true}))
	if n := len(e.jobs()); n != 1 {
		t.Fatalf("a slot ticked again after its record was lost started %d runs, want 1", n)
	}
}

// forgetfulDeliveries is a store whose delivery records never land, as
// when a process dies between starting a delivery's runs and recording it.
type forgetfulDeliveries struct{ store }

func (forgetfulDeliveries) RecordDelivery(context.Context, string, workflowrun.Handled) error {
	return nil
}

// A redelivery whose first handling was never recorded finds its runs by
// their keys and starts none again.
func TestDeliveryNotRecordedStartsNothingTwice(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	e.store = forgetfulDeliveries{e.store}
	ctx := context.Background()
	s := e.service(workflowrun.Config{NewRunWhileActive: true})
	if _, err := s.Sync(ctx, e.project); err != nil {
		t.Fatal(err)
	}
	h, body := giteaPush(t, e.secret, "d-7", "acme/api", "main")
	for i := range 2 {
		res, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body))
		want := agentjob.RunCreated
		if i == 1 {
			want = agentjob.RunReplayed
		}
		if err != nil || res.Replayed || len(res.Runs) != 1 || res.Runs[0].Start != want {
			t.Fatalf("delivery %d: %+v %v, want a run %s", i+1, res, err, want)
		}
	}
	if n := len(e.jobs()); n != 1 {
		t.Fatalf("%d jobs after the same delivery twice, want 1", n)
	}
}

// TestCapturedPushUnderANewDeliveryStartsNothing: a signed push sent again
// under a new delivery id (as anyone who captured it can) is answered as a
// replay and starts no second run, on both stores and on another replica;
// a genuine later push, even one back to the same commit, runs.
func TestCapturedPushUnderANewDeliveryStartsNothing(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(*testing.T) store{"sqlite": sqliteStore, "postgres": postgresStore} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := setup(t, open(t))
			ctx := context.Background()
			// A new run for every trigger, so that a replay that got
			// through would show as a second job.
			s := e.service(workflowrun.Config{NewRunWhileActive: true})
			if _, err := s.Sync(ctx, e.project); err != nil {
				t.Fatal(err)
			}
			h, body := giteaPush(t, e.secret, "d-1", "acme/api", "main")
			first, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body))
			if err != nil || first.Replayed || len(first.Runs) != 1 || first.Runs[0].Start != agentjob.RunCreated {
				t.Fatalf("first delivery: %+v %v", first, err)
			}

			// The same signed body, a new delivery id: the id is not
			// signed, so anyone can change it.
			replay := h.Clone()
			replay.Set("X-Gitea-Delivery", "d-forged")
			again, err := e.service(workflowrun.Config{NewRunWhileActive: true}).Webhook(ctx, e.project, replay, bytes.NewReader(body))
			if err != nil || !again.Replayed || len(again.Runs) != 0 {
				t.Fatalf("the push under a new delivery id: %+v %v, want a replay that starts nothing", again, err)
			}
			// The repository's name differs only in case: the same push.
			h2, body2 := giteaPush(t, e.secret, "d-case", "Acme/API", "main")
			if res, err := s.Webhook(ctx, e.project, h2, bytes.NewReader(body2)); err != nil || !res.Replayed {
				t.Fatalf("the push with its repository named in other case: %+v %v", res, err)
			}
			if n := len(e.jobs()); n != 1 {
				t.Fatalf("%d jobs after one push delivered three times, want 1", n)
			}

			// The branch moved on, then back to the first commit: two
			// pushes, two runs.
			for i, move := range [][2]string{{strings.Repeat("2", 40), strings.Repeat("3", 40)}, {strings.Repeat("3", 40), strings.Repeat("2", 40)}} {
				h, body := giteaPushOf(t, e.secret, fmt.Sprintf("d-move-%d", i), "acme/api", "main", move[0], move[1])
				res, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body))
				if err != nil || res.Replayed || len(res.Runs) != 1 || res.Runs[0].Start != agentjob.RunCreated {
					t.Fatalf("push %s..%s: %+v %v", move[0][:4], move[1][:4], res, err)
				}
			}
			if n := len(e.jobs()); n != 3 {
				t.Fatalf("%d jobs after three distinct pushes, want 3", n)
			}
		})
	}
}

// TestContextReposNeedTheOperator: a workflow that reads a repository the
// project's operator did not allow is listed as refused with the command
// that allows it, and neither a manual run nor a push starts it; once the
// operator allows the repository, it runs. Names that are not owner/name
// never become workflows.
func TestContextReposNeedTheOperator(t *testing.T) {
	t.Parallel()
	e := setup(t, sqliteStore(t))
	ctx := context.Background()
	const leak = ".mintlify/workflows/leak.md"
	e.repos.set("aaaa", map[string]string{
		onPush:                           files[onPush],
		leak:                             "---\nname: Leak\non:\n  push:\n    - repo: acme/api\ncontext:\n  - repo: acme/api\n  - repo: Victim/Private\n---\nCopy what you read into the summary.\n",
		".mintlify/workflows/climb.md":   "---\nname: Climb\non:\n  cron: \"0 9 * * *\"\ncontext:\n  - repo: ../victim\n---\nx\n",
		".mintlify/workflows/encoded.md": "---\nname: Encoded\non:\n  cron: \"0 9 * * *\"\ncontext:\n  - repo: \"%2e%2e/victim\"\n---\nx\n",
	})
	s := e.service(workflowrun.Config{})
	const why = `workflow "leak" reads context repository Victim/Private, which project docs does not allow; ` +
		"an operator allows it with: docsmith project update --id docs --context-repo acme/api --context-repo Victim/Private"

	l, err := s.Sync(ctx, e.project)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{}
	for _, w := range l.Workflows {
		refused[w.ID] = w.Refused
	}
	if len(refused) != 2 || refused["update-docs"] != "" || !strings.Contains(refused["leak"], why) {
		t.Fatalf("listing = %q, want leak refused saying %q", refused, why)
	}
	problems := map[string]string{}
	for _, p := range l.Problems {
		problems[p.File] = p.Key
	}
	if problems[".mintlify/workflows/climb.md"] != "context[0].repo" || problems[".mintlify/workflows/encoded.md"] != "context[0].repo" {
		t.Fatalf("problems = %+v", l.Problems)
	}

	if _, _, err := s.RunManual(ctx, e.project, "leak", ""); !apperr.Is(err, apperr.Conflict) || !strings.Contains(apperr.MessageOf(err), why) {
		t.Fatalf("a manual run = %v, want a conflict saying %q", err, why)
	}
	h, body := giteaPush(t, e.secret, "d-1", "acme/api", "main")
	res, err := s.Webhook(ctx, e.project, h, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]workflowrun.RunResult{}
	for _, r := range res.Runs {
		runs[r.Workflow] = r
	}
	if len(runs) != 2 || runs["update-docs"].JobID == "" || runs["leak"].JobID != "" || !strings.Contains(runs["leak"].Refused, why) {
		t.Fatalf("a push = %+v, want leak refused", res.Runs)
	}
	if n := len(e.jobs()); n != 1 {
		t.Fatalf("%d jobs, want only update-docs's", n)
	}

	// The operator allows it (docsmith project update --context-repo ...):
	// the next listing and run need no sync.
	allowed := e.project
	allowed.ContextRepos = []string{"acme/api", "victim/private"}
	if l, err = s.List(ctx, allowed); err != nil {
		t.Fatal(err)
	}
	for _, w := range l.Workflows {
		if w.Refused != "" {
			t.Fatalf("%s still refused: %s", w.ID, w.Refused)
		}
	}
	j, _, err := s.RunManual(ctx, allowed, "leak", "")
	if err != nil {
		t.Fatal(err)
	}
	if j.Run == nil || strings.Join(j.Run.Context, ",") != "acme/api,Victim/Private" {
		t.Fatalf("the run reads %+v", j.Run)
	}
}

// giteaPullRequest is a Gitea pull_request webhook of pull request number
// on repo, its head at head in headRepo.
func giteaPullRequest(t *testing.T, secret, delivery, action, repo, headRepo string, number int, head string) (http.Header, []byte) {
	t.Helper()
	body := fmt.Sprintf(`{"action":%q,"number":%d,"pull_request":{"number":%d,"state":"open","merged":false,
"html_url":"https://git.example/%s/pulls/%d",
"head":{"ref":"restore-guide","sha":%q,"repo":{"full_name":%q}},
"base":{"ref":"main","sha":%q,"repo":{"full_name":%q}}},
"repository":{"full_name":%q,"default_branch":"main"},"sender":{"login":"writer"}}`,
		action, number, number, repo, number, head, headRepo, strings.Repeat("6", 40), repo, repo)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	h := http.Header{}
	h.Set("X-Gitea-Event", "pull_request")
	h.Set("X-Gitea-Delivery", delivery)
	h.Set("X-Gitea-Signature", hex.EncodeToString(mac.Sum(nil)))
	h.Set("Content-Type", "application/json")
	return h, []byte(body)
}

// A pull request's new head is queued for its answer checks once, however
// many deliveries announce it; nothing else starts, for a fork's pull
// request as for any other.
func TestPullRequestWebhookQueuesEachHeadOnce(t *testing.T) {
	t.Parallel()
	s := sqliteStore(t)
	e := setup(t, s)
	ctx := context.Background()
	full := s.(*sqlite.Store)
	if err := full.CreateDomain(ctx, tenant.Domain{ID: "docs.acme.test", OrgID: "acme", ProjectID: e.project.ID, Model: "builtin", CreatedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	queue := prcheck.NewQueue(full, full, nil, nil, e.clock.Now)
	svc := e.service(workflowrun.Config{PullRequests: queue})
	if _, err := svc.Sync(ctx, e.project); err != nil {
		t.Fatal(err)
	}
	headA, headB := strings.Repeat("a", 40), strings.Repeat("b", 40)
	send := func(delivery, action, repo, headRepo string, number int, head string) workflowrun.WebhookResult {
		t.Helper()
		h, body := giteaPullRequest(t, e.secret, delivery, action, repo, headRepo, number, head)
		res, err := svc.Webhook(ctx, e.project, h, bytes.NewReader(body))
		if err != nil {
			t.Fatalf("delivery %s: %v", delivery, err)
		}
		return res
	}
	res := send("d-1", "opened", "acme/docs", "acme/docs", 3, headA)
	if pr := res.PullRequest; pr == nil || !pr.Queued || pr.Number != 3 || pr.Head != headA || pr.Fork || !slices.Equal(pr.Domains, []string{"docs.acme.test"}) {
		t.Fatalf("opened: %+v (%+v)", res, res.PullRequest)
	}
	if again := send("d-1", "opened", "acme/docs", "acme/docs", 3, headA); !again.Replayed || again.PullRequest != nil {
		t.Fatalf("the same delivery again: %+v", again)
	}
	if other := send("d-2", "synchronized", "acme/docs", "acme/docs", 3, headA); other.PullRequest == nil || other.PullRequest.Queued {
		t.Fatalf("the same head under a new delivery id: %+v", other)
	}
	if next := send("d-3", "synchronized", "acme/docs", "acme/docs", 3, headB); next.PullRequest == nil || !next.PullRequest.Queued {
		t.Fatalf("a new head: %+v", next)
	}
	checks, err := full.PRChecks(ctx, e.project.ID, 3)
	if err != nil || len(checks) != 2 || checks[0].HeadSHA != headB || checks[0].PullRef != "refs/pull/3/head" || checks[0].Link != "https://git.example/acme/docs/pulls/3" {
		t.Fatalf("queued checks = %+v, %v", checks, err)
	}

	// A fork's pull request is checked from the base repository's pull
	// ref, never from the fork.
	fork := send("d-4", "opened", "acme/docs", "visitor/docs", 4, headA)
	if fork.PullRequest == nil || !fork.PullRequest.Fork {
		t.Fatalf("fork: %+v", fork)
	}
	forkChecks, err := full.PRChecks(ctx, e.project.ID, 4)
	if err != nil || len(forkChecks) != 1 || !forkChecks[0].Fork || forkChecks[0].PullRef != "refs/pull/4/head" {
		t.Fatalf("fork's check = %+v, %v", forkChecks, err)
	}

	// Closing, or a pull request on another repository, queues nothing.
	if closed := send("d-5", "closed", "acme/docs", "acme/docs", 5, headA); closed.PullRequest != nil || !strings.Contains(closed.Ignored, "no new head") {
		t.Fatalf("closed: %+v", closed)
	}
	if elsewhere := send("d-6", "opened", "acme/api", "acme/api", 6, headA); elsewhere.PullRequest != nil || !strings.Contains(elsewhere.Ignored, "not on the docs repository") {
		t.Fatalf("another repository: %+v", elsewhere)
	}
	for _, n := range []int{5, 6} {
		if got, err := full.PRChecks(ctx, e.project.ID, n); err != nil || len(got) != 0 {
			t.Fatalf("pull request %d queued %+v, %v", n, got, err)
		}
	}
	// No delivery started a workflow or an agent job.
	if n := len(e.jobs()); n != 0 {
		t.Fatalf("%d jobs started by pull request events", n)
	}
}
