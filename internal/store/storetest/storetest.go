// Package storetest is the conformance suite every docsmith store must pass.
// A store's own test calls Run with a function that opens a fresh, empty,
// migrated store; each case runs in parallel on its own store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docsmith/docsmith/internal/agentjob"
	"github.com/docsmith/docsmith/internal/analytics"
	"github.com/docsmith/docsmith/internal/apikey"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/checkwatch"
	"github.com/docsmith/docsmith/internal/freshness"
	"github.com/docsmith/docsmith/internal/prcheck"
	"github.com/docsmith/docsmith/internal/ratelimit"
	"github.com/docsmith/docsmith/internal/search"
	"github.com/docsmith/docsmith/internal/tenant"
	"github.com/docsmith/docsmith/internal/trafficcheck"
	"github.com/docsmith/docsmith/internal/websession"
	"github.com/docsmith/docsmith/internal/workflowrun"
)

// Store is everything a docsmith store implements.
type Store interface {
	tenant.Store
	agentjob.Store
	ratelimit.Store
	search.Source
	search.VectorSource
	assistant.ThreadStore
	assistant.SpendStore
	analytics.Store
	websession.Store
	assistant.CatalogStore
	assistant.PageFeedbackStore
	workflowrun.Store
	freshness.Store
	checkrun.Store
	trafficcheck.Store
	checkwatch.ScheduleStore
	prcheck.Store
	// CreateThread stores a thread with no turn yet, as fixtures need; the
	// assistant stores a new thread with its first turn.
	CreateThread(ctx context.Context, t assistant.Thread) error
}

type testCase struct {
	name string
	fn   func(t *testing.T, s Store)
}

// Run runs every case of the suite, each as a parallel subtest on its own
// store. open must return a fresh, empty, migrated store that no other test
// uses, and close it in t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) Store) {
	cases := []testCase{
		{"Tenant/Orgs", testOrgs},
		{"Tenant/Projects", testProjects},
		{"Tenant/Domains", testDomains},
		{"Tenant/Keys", testKeys},

		{"Jobs/CreateAndGet", testCreateAndGetJob},
		{"Jobs/CreateReturnsTheStoredJob", testCreateReturnsStored},
		{"Jobs/List", testListJobs},

		{"Idempotency/CreateJob", testIdempotentCreate},
		{"Idempotency/AddMessage", testIdempotentMessage},

		{"State/FollowUpAndStaleVersion", testAddMessage},
		{"State/Cancel", testChangeStatusCancel},

		{"Queue/ClaimEmpty", testClaimEmpty},
		{"Queue/ClaimOldest", testClaimOldest},
		{"Queue/OneRunningTurnPerJob", testOneRunningTurnPerJob},
		{"Queue/StartNotBeforePreviousEnd", testStartNotBeforePreviousEnd},
		{"Queue/TurnsInSeqOrder", testTurnsInSeqOrder},
		{"Queue/JobsIndependent", testJobsIndependent},
		{"Queue/Lease", testLease},
		{"Queue/Requeue", testRequeue},
		{"Queue/FinishStaleClaim", testFinishStaleClaim},
		{"Queue/RetryAfterAndCheckpoint", testRetryAfterAndCheckpoint},
		{"Queue/FinishCompletedClearsError", testFinishCompletedClearsError},
		{"Queue/FinishPRLinkAndFiles", testFinishPRLinkAndFiles},

		{"Events", testEvents},

		{"Concurrency/ClaimTurn", testConcurrentClaims},
		{"Concurrency/WorkersRunFollowUpsInOrder", testConcurrentWorkers},
		{"Concurrency/FinishRacesFollowUp", testFinishRacesFollowUp},
		{"Concurrency/EventsWhileAppending", testEventsWhileAppending},
	}
	// Table-driven cases: every row gets its own store too.
	cases = append(cases, archiveCases()...)
	cases = append(cases, finishJobStatusCases()...)
	cases = append(cases, searchCases()...)
	cases = append(cases, vectorCases()...)
	cases = append(cases, analyticsCases()...)
	cases = append(cases, webSessionCases()...)
	cases = append(cases, workflowJobCases()...)
	cases = append(cases, workflowStoreCases()...)
	cases = append(cases, checkedCases()...)
	cases = append(cases, indexStateCases()...)
	cases = append(cases, checkRunCases()...)
	cases = append(cases, trafficCheckCases()...)
	cases = append(cases, checkScheduleCases()...)
	cases = append(cases, prCheckCases()...)
	for _, c := range rateLimitCases() {
		cases = append(cases, testCase{c.name, func(t *testing.T, s Store) { c.fn(t, s) }})
	}
	cases = append(cases, testCase{"RateLimit/Sweep", testRateLimitSweep})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if s == nil {
				t.Fatal("open returned a nil store")
			}
			c.fn(t, s)
		})
	}
}

type rateLimitCase struct {
	name string
	fn   func(t *testing.T, s ratelimit.Store)
}

func rateLimitCases() []rateLimitCase {
	return []rateLimitCase{
		{"RateLimit/Window", testRateLimitWindow},
		{"RateLimit/MultipleRules", testRateLimitMultipleRules},
		{"RateLimit/KeysIndependent", testRateLimitKeysIndependent},
		{"RateLimit/Concurrent", testRateLimitConcurrent},
		{"RateLimit/Token", testRateLimitToken},
		{"RateLimit/TokenConcurrent", testRateLimitTokenConcurrent},
	}
}

// RunRateLimit runs the suite's rate-limit cases against a store that keeps
// only rate limits (Redis), each as a parallel subtest on its own store.
// open must return a fresh, empty store that no other test uses.
func RunRateLimit(t *testing.T, open func(t *testing.T) ratelimit.Store) {
	for _, c := range rateLimitCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if s == nil {
				t.Fatal("open returned a nil store")
			}
			c.fn(t, s)
		})
	}
}

// ---------------------------------------------------------------------------
// Helpers

// zone is the location of every input time: a store must keep the instant,
// whatever zone it was given in.
var zone = time.FixedZone("UTC+05:30", 5*3600+30*60)

// baseTime is near the real clock (so a store that stamps records with its
// own clock still behaves) and has microsecond digits (so a store that drops
// them fails the round trips).
func baseTime() time.Time {
	return time.Now().Truncate(time.Second).Add(654321 * time.Microsecond).In(zone)
}

const lease = time.Minute

type env struct {
	t    *testing.T
	ctx  context.Context
	s    Store
	t0   time.Time
	org  tenant.Org
	proj tenant.Project
}

// setup creates an org and a project in s.
func setup(t *testing.T, s Store) *env {
	t.Helper()
	e := &env{t: t, ctx: t.Context(), s: s, t0: baseTime()}
	e.org = tenant.Org{ID: "acme", CreatedAt: e.t0}
	if err := s.CreateOrg(e.ctx, e.org); err != nil {
		t.Fatalf("CreateOrg: %v", err)
	}
	e.proj = e.project("docs")
	return e
}

func (e *env) project(id string) tenant.Project {
	e.t.Helper()
	p := tenant.Project{
		ID: id, OrgID: e.org.ID, RepoURL: "https://example.com/acme/" + id + ".git", BaseRef: "main",
		ForgeKind: tenant.ForgeLocal, DocsRoot: ".", Model: "builtin", CreatedAt: e.t0,
	}
	if err := e.s.CreateProject(e.ctx, p); err != nil {
		e.t.Fatalf("CreateProject %s: %v", id, err)
	}
	return p
}

// newJob is an active job of the env's project with one queued message.
func (e *env) newJob(at time.Time) agentjob.Job {
	return e.newJobIn(e.proj.ID, at)
}

func (e *env) newJobIn(projectID string, at time.Time) agentjob.Job {
	id := uuid.NewString()
	return agentjob.Job{
		ID: id, ProjectID: projectID, Status: agentjob.Active,
		Repository: "https://example.com/acme/docs.git", Branch: agentjob.BranchName(id, "edit"),
		BaseRef: "main", Model: "builtin", CreatedAt: at, UpdatedAt: at,
		Messages: []agentjob.Message{{Seq: 1, Prompt: "fix the typo", State: agentjob.TurnQueued, CreatedAt: at}},
	}
}

func (e *env) create(job agentjob.Job) agentjob.Job {
	e.t.Helper()
	got, replayed, err := e.s.CreateJob(e.ctx, job, nil, nil)
	if err != nil {
		e.t.Fatalf("CreateJob: %v", err)
	}
	if replayed {
		e.t.Fatalf("CreateJob without an idempotency key replayed")
	}
	return got
}

func (e *env) job(id string) agentjob.Job {
	e.t.Helper()
	return e.jobIn(e.proj.ID, id)
}

func (e *env) jobIn(projectID, id string) agentjob.Job {
	e.t.Helper()
	j, err := e.s.GetJob(e.ctx, projectID, id)
	if err != nil {
		e.t.Fatalf("GetJob %s: %v", id, err)
	}
	return j
}

// addMessage queues follow-up seq as agentjob.Service does: the reducer
// decides from the job as read, the store applies its patch.
func (e *env) addMessage(jobID string, seq int, at time.Time) agentjob.Job {
	e.t.Helper()
	j, replayed, err := e.tryApply(jobID, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: fmt.Sprintf("message %d", seq), At: at}, nil)
	if err != nil {
		e.t.Fatalf("add message %d: %v", seq, err)
	}
	if replayed {
		e.t.Fatalf("a follow-up without an idempotency key replayed")
	}
	if n := len(j.Messages); n != seq {
		e.t.Fatalf("after adding message %d the job has %d messages", seq, n)
	}
	return j
}

// tryApply reads the job, has the reducer decide in, and applies the patch.
func (e *env) tryApply(jobID string, in agentjob.Input, idem *agentjob.Idempotency) (agentjob.Job, bool, error) {
	return tryApply(e.ctx, e.s, e.proj.ID, jobID, in, idem)
}

func tryApply(ctx context.Context, s Store, projectID, jobID string, in agentjob.Input, idem *agentjob.Idempotency) (agentjob.Job, bool, error) {
	j, err := s.GetJob(ctx, projectID, jobID)
	if err != nil {
		return agentjob.Job{}, false, err
	}
	p, events, err := agentjob.Reduce(j, in)
	if err != nil {
		return agentjob.Job{}, false, err
	}
	if p.Noop {
		return j, false, nil
	}
	return s.Apply(ctx, projectID, jobID, p, idem, events)
}

// cancel fails an active job with reason, as a caller's cancel does.
func (e *env) cancel(jobID, reason string, at time.Time) agentjob.Job {
	e.t.Helper()
	j, _, err := e.tryApply(jobID, agentjob.Input{Kind: agentjob.InCancel, Reason: reason, At: at}, nil)
	if err != nil {
		e.t.Fatalf("cancel job %s: %v", jobID, err)
	}
	return j
}

// archive archives a job.
func (e *env) archive(jobID string, at time.Time) (agentjob.Job, error) {
	j, _, err := e.tryApply(jobID, agentjob.Input{Kind: agentjob.InArchive, At: at}, nil)
	return j, err
}

// turnResult is how a test ends a turn; finish turns it into the reducer's
// input as the pool does.
type turnResult struct {
	State        agentjob.TurnState
	Summary      string
	Error        string
	PRLink       string
	PRNumber     int
	FilesChanged []string
	At           time.Time
}

func (r turnResult) input(c agentjob.Claim) agentjob.Input {
	outcome := map[agentjob.TurnState]agentjob.Outcome{
		agentjob.TurnDone: agentjob.OutcomeDone, agentjob.TurnFailed: agentjob.OutcomeFailed, agentjob.TurnCanceled: agentjob.OutcomeCanceled,
	}[r.State]
	return agentjob.Input{Kind: agentjob.InTurnEnd, At: r.At, Turn: agentjob.TurnEnd{
		Claim: c, Outcome: outcome, Summary: r.Summary, Error: r.Error, PRLink: r.PRLink, PRNumber: r.PRNumber,
		FilesChanged: r.FilesChanged, MaxAttempts: 10,
	}}
}

// tryFinish ends a claimed turn as the pool does: a job that changed
// meanwhile is read and decided again.
func (e *env) tryFinish(c agentjob.Claim, r turnResult) (agentjob.Job, error) {
	for attempt := 0; ; attempt++ {
		j, _, err := tryApply(e.ctx, e.s, c.ProjectID, c.JobID, r.input(c), nil)
		if !errors.Is(err, agentjob.ErrStale) || attempt >= 10 {
			return j, err
		}
	}
}

// interrupt takes back a claimed turn whose lease expired: it is queued
// again, its attempt used.
func (e *env) interrupt(c agentjob.Claim) error {
	in := agentjob.Input{Kind: agentjob.InTurnEnd, At: e.t0, Turn: agentjob.TurnEnd{Claim: c, Outcome: agentjob.OutcomeInterrupted, MaxAttempts: 10}}
	_, _, err := tryApply(e.ctx, e.s, c.ProjectID, c.JobID, in, nil)
	return err
}

func (e *env) claim(worker string, now time.Time) agentjob.Claim {
	e.t.Helper()
	c, ok, err := e.s.ClaimTurn(e.ctx, worker, now, now.Add(lease))
	if err != nil {
		e.t.Fatalf("ClaimTurn: %v", err)
	}
	if !ok {
		e.t.Fatalf("ClaimTurn found nothing, want a turn")
	}
	return c
}

func (e *env) noClaim(now time.Time) {
	e.t.Helper()
	c, ok, err := e.s.ClaimTurn(e.ctx, "w-none", now, now.Add(lease))
	if err != nil {
		e.t.Fatalf("ClaimTurn: %v", err)
	}
	if ok {
		e.t.Fatalf("ClaimTurn claimed %+v, want nothing", c)
	}
}

func (e *env) finish(c agentjob.Claim, r turnResult) agentjob.Job {
	e.t.Helper()
	j, err := e.tryFinish(c, r)
	if err != nil {
		e.t.Fatalf("finish %+v: %v", c, err)
	}
	return j
}

func (e *env) events(jobID string) []agentjob.JobEvent {
	e.t.Helper()
	evs, err := e.s.ListEvents(e.ctx, jobID, 0, 1000)
	if err != nil {
		e.t.Fatalf("ListEvents: %v", err)
	}
	return evs
}

// statusEvents returns the status values of a job's status events, in order.
func (e *env) statusEvents(jobID string) []string {
	e.t.Helper()
	var out []string
	for _, ev := range e.events(jobID) {
		if ev.Type == agentjob.EventStatus {
			out = append(out, fmt.Sprint(decode(e.t, ev.Data)["status"]))
		}
	}
	return out
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("event data %s is not a JSON object: %v", raw, err)
	}
	return m
}

func wantCode(t *testing.T, err error, code apperr.Code, what string) {
	t.Helper()
	if !apperr.Is(err, code) {
		t.Fatalf("%s: got error %v, want apperr %s", what, err, code)
	}
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func sameTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func samePtrTime(t *testing.T, what string, got, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s = %v, want %v", what, fmtPtr(got), fmtPtr(want))
	case !got.Equal(*want):
		t.Errorf("%s = %v, want %v", what, *got, *want)
	}
}

func fmtPtr(p *time.Time) string {
	if p == nil {
		return "nil"
	}
	return p.String()
}

func msg(t *testing.T, j agentjob.Job, seq int) agentjob.Message {
	t.Helper()
	for _, m := range j.Messages {
		if m.Seq == seq {
			return m
		}
	}
	t.Fatalf("job %s has no message %d (messages %+v)", j.ID, seq, j.Messages)
	return agentjob.Message{}
}

func jobIDs(jobs []agentjob.Job) []string {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	return ids
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func sha(s string) []byte {
	b := make([]byte, 32)
	copy(b, s)
	return b
}

// ---------------------------------------------------------------------------
// Tenancy

func testOrgs(t *testing.T, s Store) {
	ctx, t0 := t.Context(), baseTime()
	orgs := []tenant.Org{{ID: "beta", CreatedAt: t0.Add(time.Second)}, {ID: "alpha", CreatedAt: t0}}
	for _, o := range orgs {
		must(t, s.CreateOrg(ctx, o), "CreateOrg "+o.ID)
	}
	for _, o := range orgs {
		got, err := s.GetOrg(ctx, o.ID)
		must(t, err, "GetOrg "+o.ID)
		if got.ID != o.ID {
			t.Errorf("GetOrg(%s).ID = %q", o.ID, got.ID)
		}
		sameTime(t, "org "+o.ID+" CreatedAt", got.CreatedAt, o.CreatedAt)
	}
	list, err := s.ListOrgs(ctx)
	must(t, err, "ListOrgs")
	var ids []string
	for _, o := range list {
		ids = append(ids, o.ID)
	}
	if want := []string{"alpha", "beta"}; !slices.Equal(sorted(ids), want) {
		t.Errorf("ListOrgs ids = %v, want %v", ids, want)
	}

	err = s.CreateOrg(ctx, tenant.Org{ID: "alpha", CreatedAt: t0.Add(time.Hour)})
	wantCode(t, err, apperr.Conflict, "CreateOrg duplicate")
	got, err := s.GetOrg(ctx, "alpha")
	must(t, err, "GetOrg after duplicate")
	sameTime(t, "org alpha CreatedAt after duplicate", got.CreatedAt, t0)

	_, err = s.GetOrg(ctx, "missing")
	wantCode(t, err, apperr.NotFound, "GetOrg unknown")
}

func checkProject(t *testing.T, got, want tenant.Project) {
	t.Helper()
	sameTime(t, "project "+want.ID+" CreatedAt", got.CreatedAt, want.CreatedAt)
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("project %s:\n got  %+v\n want %+v", want.ID, got, want)
	}
}

func testProjects(t *testing.T, s Store) {
	e := setup(t, s)
	must(t, s.CreateOrg(e.ctx, tenant.Org{ID: "other", CreatedAt: e.t0}), "CreateOrg other")

	full := tenant.Project{
		ID: "handbook", OrgID: "acme", RepoURL: "https://github.com/acme/handbook.git", BaseRef: "trunk",
		ForgeKind: tenant.ForgeGitHub, ForgeURL: "https://api.github.com", TokenEnv: "GH_TOKEN",
		TokenFile: "/run/secrets/gh", DocsRoot: "site/docs", Model: "openai/gpt-test",
		WebhookSecretEnv: "GH_WEBHOOK_SECRET", AllowAutomerge: true, ContextRepos: []string{"acme/api", "acme/sdk"},
		CreatedAt: e.t0.Add(time.Second),
	}
	foreign := tenant.Project{
		ID: "theirs", OrgID: "other", RepoURL: "/srv/theirs", BaseRef: "main", ForgeKind: tenant.ForgeLocal,
		DocsRoot: ".", Model: "builtin", CreatedAt: e.t0.Add(2 * time.Second),
	}
	for _, p := range []tenant.Project{full, foreign} {
		must(t, s.CreateProject(e.ctx, p), "CreateProject "+p.ID)
	}
	for _, want := range []tenant.Project{e.proj, full, foreign} {
		got, err := s.GetProject(e.ctx, want.ID)
		must(t, err, "GetProject "+want.ID)
		checkProject(t, got, want)
	}

	for _, tc := range []struct {
		org  string
		want []string
	}{
		{"acme", []string{"docs", "handbook"}},
		{"other", []string{"theirs"}},
		{"", []string{"docs", "handbook", "theirs"}},
		{"nobody", nil},
	} {
		list, err := s.ListProjects(e.ctx, tc.org)
		must(t, err, "ListProjects "+tc.org)
		var ids []string
		for _, p := range list {
			ids = append(ids, p.ID)
			if p.ID == full.ID {
				checkProject(t, p, full)
			}
		}
		if !slices.Equal(sorted(ids), tc.want) {
			t.Errorf("ListProjects(%q) = %v, want %v", tc.org, ids, tc.want)
		}
	}

	dup := full
	dup.RepoURL = "/elsewhere"
	wantCode(t, s.CreateProject(e.ctx, dup), apperr.Conflict, "CreateProject duplicate")
	_, err := s.GetProject(e.ctx, "missing")
	wantCode(t, err, apperr.NotFound, "GetProject unknown")

	upd := full
	upd.RepoURL, upd.BaseRef, upd.ForgeKind, upd.ForgeURL = "https://gitlab.example/acme/handbook.git", "release", tenant.ForgeGitLab, "https://gitlab.example/api/v4"
	upd.TokenEnv, upd.TokenFile, upd.DocsRoot, upd.Model = "", "/run/secrets/gl", "docs", "anthropic/claude-test"
	upd.WebhookSecretEnv, upd.WebhookSecretFile, upd.AllowAutomerge = "", "/run/secrets/hook", false
	upd.ContextRepos = nil
	must(t, s.UpdateProject(e.ctx, upd), "UpdateProject")
	got, err := s.GetProject(e.ctx, full.ID)
	must(t, err, "GetProject after update")
	checkProject(t, got, upd) // CreatedAt and OrgID are kept

	// The webhook secret and automerge settle the other way round too.
	plain := e.proj
	plain.WebhookSecretEnv, plain.AllowAutomerge = "DOCS_WEBHOOK_SECRET", true
	plain.ContextRepos = []string{"acme/api"}
	must(t, s.UpdateProject(e.ctx, plain), "UpdateProject "+plain.ID)
	got, err = s.GetProject(e.ctx, plain.ID)
	must(t, err, "GetProject after update")
	checkProject(t, got, plain)

	missing := upd
	missing.ID = "missing"
	wantCode(t, s.UpdateProject(e.ctx, missing), apperr.NotFound, "UpdateProject unknown")

	// Another org cannot update the project.
	hijack := upd
	hijack.OrgID, hijack.RepoURL = "other", "/hijacked"
	wantCode(t, s.UpdateProject(e.ctx, hijack), apperr.NotFound, "UpdateProject of another org's project")
	got, err = s.GetProject(e.ctx, full.ID)
	must(t, err, "GetProject after refused update")
	checkProject(t, got, upd)
}

func checkDomain(t *testing.T, got, want tenant.Domain) {
	t.Helper()
	sameTime(t, "domain "+want.ID+" CreatedAt", got.CreatedAt, want.CreatedAt)
	if !slices.Equal(got.AllowedOrigins, want.AllowedOrigins) {
		t.Errorf("domain %s AllowedOrigins = %q, want %q", want.ID, got.AllowedOrigins, want.AllowedOrigins)
	}
	got.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
	got.AllowedOrigins, want.AllowedOrigins = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("domain %s:\n got  %+v\n want %+v", want.ID, got, want)
	}
}

func testDomains(t *testing.T, s Store) {
	e := setup(t, s)
	second := e.project("api")
	must(t, s.CreateOrg(e.ctx, tenant.Org{ID: "other", CreatedAt: e.t0}), "CreateOrg other")
	must(t, s.CreateProject(e.ctx, tenant.Project{ID: "theirs", OrgID: "other", RepoURL: "/srv/theirs", BaseRef: "main", ForgeKind: tenant.ForgeLocal, DocsRoot: ".", Model: "builtin", CreatedAt: e.t0}), "CreateProject theirs")

	domains := []tenant.Domain{
		{ID: "help", OrgID: "acme", ProjectID: e.proj.ID, Ref: "main", SiteURL: "https://docs.acme.example", Model: "extractive",
			AllowedOrigins: []string{"https://docs.acme.example", "http://localhost:3000", "*"}, FinishThreadID: true, CreatedAt: e.t0},
		{ID: "api-help", OrgID: "acme", ProjectID: second.ID, Ref: "v2", Model: "openai/gpt-test",
			AllowedOrigins: []string{}, FinishThreadID: false, CreatedAt: e.t0.Add(time.Second),
			Settings: tenant.DomainSettings{ReaderSecretEnv: "API_HELP_READER_SECRET", AnswersPerDay: new(500), TokensPerDay: new(0), ProofOfWork: true}},
		{ID: "their-help", OrgID: "other", ProjectID: "theirs", Ref: "main", Model: "extractive",
			AllowedOrigins: []string{"https://theirs.example"}, FinishThreadID: false, CreatedAt: e.t0.Add(2 * time.Second)},
	}
	for _, d := range domains {
		must(t, s.CreateDomain(e.ctx, d), "CreateDomain "+d.ID)
	}
	for _, want := range domains {
		got, err := s.GetDomain(e.ctx, want.ID)
		must(t, err, "GetDomain "+want.ID)
		checkDomain(t, got, want)
	}

	for _, tc := range []struct {
		org  string
		want []string
	}{
		{"acme", []string{"api-help", "help"}},
		{"other", []string{"their-help"}},
		{"", []string{"api-help", "help", "their-help"}},
		{"nobody", nil},
	} {
		list, err := s.ListDomains(e.ctx, tc.org)
		must(t, err, "ListDomains "+tc.org)
		var ids []string
		for _, d := range list {
			ids = append(ids, d.ID)
			if d.ID == "help" {
				checkDomain(t, d, domains[0])
			}
		}
		if !slices.Equal(sorted(ids), tc.want) {
			t.Errorf("ListDomains(%q) = %v, want %v", tc.org, ids, tc.want)
		}
	}

	dup := domains[0]
	dup.Ref = "other"
	wantCode(t, s.CreateDomain(e.ctx, dup), apperr.Conflict, "CreateDomain duplicate")
	_, err := s.GetDomain(e.ctx, "missing")
	wantCode(t, err, apperr.NotFound, "GetDomain unknown")

	// Both directions of FinishThreadID and of the origins survive an update.
	for _, upd := range []tenant.Domain{
		func() tenant.Domain {
			d := domains[0]
			d.ProjectID, d.Ref, d.SiteURL, d.Model = second.ID, "release", "https://help.acme.example", "anthropic/claude-test"
			d.AllowedOrigins, d.FinishThreadID = []string{"https://help.acme.example"}, false
			d.Settings = tenant.DomainSettings{ReaderSecretFile: "/run/secrets/reader", AnswersPerDay: new(0)}
			return d
		}(),
		func() tenant.Domain {
			d := domains[1]
			d.AllowedOrigins, d.FinishThreadID = []string{"https://a.example", "https://b.example"}, true
			d.Settings = tenant.DomainSettings{}
			return d
		}(),
	} {
		must(t, s.UpdateDomain(e.ctx, upd), "UpdateDomain "+upd.ID)
		got, err := s.GetDomain(e.ctx, upd.ID)
		must(t, err, "GetDomain after update")
		checkDomain(t, got, upd)
	}

	missing := domains[0]
	missing.ID = "missing"
	wantCode(t, s.UpdateDomain(e.ctx, missing), apperr.NotFound, "UpdateDomain unknown")
	hijack := domains[2]
	hijack.OrgID, hijack.AllowedOrigins = "acme", []string{"*"}
	wantCode(t, s.UpdateDomain(e.ctx, hijack), apperr.NotFound, "UpdateDomain of another org's domain")
	got, err := s.GetDomain(e.ctx, domains[2].ID)
	must(t, err, "GetDomain after refused update")
	checkDomain(t, got, domains[2])
}

func checkKey(t *testing.T, got, want tenant.Key) {
	t.Helper()
	if got.ID != want.ID || got.OrgID != want.OrgID || got.Kind != want.Kind || got.Name != want.Name || !slices.Equal(got.Hash, want.Hash) {
		t.Errorf("key %s:\n got  %+v\n want %+v", want.ID, got, want)
	}
	sameTime(t, "key "+want.ID+" CreatedAt", got.CreatedAt, want.CreatedAt)
	samePtrTime(t, "key "+want.ID+" RevokedAt", got.RevokedAt, want.RevokedAt)
}

func testKeys(t *testing.T, s Store) {
	e := setup(t, s)
	must(t, s.CreateOrg(e.ctx, tenant.Org{ID: "other", CreatedAt: e.t0}), "CreateOrg other")
	keys := []tenant.Key{
		{ID: "aaaaaaaaaaaa", OrgID: "acme", Kind: apikey.Admin, Name: "ci", Hash: sha("one\x00\xff"), CreatedAt: e.t0},
		{ID: "bbbbbbbbbbbb", OrgID: "acme", Kind: apikey.Assistant, Name: "", Hash: sha("two"), CreatedAt: e.t0.Add(time.Second)},
		{ID: "cccccccccccc", OrgID: "other", Kind: apikey.Admin, Name: "theirs", Hash: sha("three"), CreatedAt: e.t0.Add(2 * time.Second)},
	}
	for _, k := range keys {
		must(t, s.CreateKey(e.ctx, k), "CreateKey "+k.ID)
	}
	for _, want := range keys {
		got, err := s.GetKey(e.ctx, want.ID)
		must(t, err, "GetKey "+want.ID)
		checkKey(t, got, want)
	}
	for _, tc := range []struct {
		org  string
		want []string
	}{
		{"acme", []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb"}},
		{"other", []string{"cccccccccccc"}},
		{"", []string{"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"}},
		{"nobody", nil},
	} {
		list, err := s.ListKeys(e.ctx, tc.org)
		must(t, err, "ListKeys "+tc.org)
		var ids []string
		for _, k := range list {
			ids = append(ids, k.ID)
			if k.ID == keys[0].ID {
				checkKey(t, k, keys[0])
			}
		}
		if !slices.Equal(sorted(ids), tc.want) {
			t.Errorf("ListKeys(%q) = %v, want %v", tc.org, ids, tc.want)
		}
	}

	dup := keys[0]
	dup.Hash = sha("other")
	wantCode(t, s.CreateKey(e.ctx, dup), apperr.Conflict, "CreateKey duplicate")
	got, err := s.GetKey(e.ctx, keys[0].ID)
	must(t, err, "GetKey after duplicate")
	checkKey(t, got, keys[0])
	_, err = s.GetKey(e.ctx, "zzzzzzzzzzzz")
	wantCode(t, err, apperr.NotFound, "GetKey unknown")

	at := e.t0.Add(time.Hour)
	wantCode(t, s.RevokeKey(e.ctx, "other", keys[0].ID, at), apperr.NotFound, "RevokeKey of another org's key")
	got, err = s.GetKey(e.ctx, keys[0].ID)
	must(t, err, "GetKey after refused revoke")
	samePtrTime(t, "RevokedAt after refused revoke", got.RevokedAt, nil)
	wantCode(t, s.RevokeKey(e.ctx, "acme", "zzzzzzzzzzzz", at), apperr.NotFound, "RevokeKey unknown")

	must(t, s.RevokeKey(e.ctx, "acme", keys[0].ID, at), "RevokeKey")
	got, err = s.GetKey(e.ctx, keys[0].ID)
	must(t, err, "GetKey after revoke")
	want := keys[0]
	want.RevokedAt = &at
	checkKey(t, got, want)
	got, err = s.GetKey(e.ctx, keys[1].ID)
	must(t, err, "GetKey of the other key")
	checkKey(t, got, keys[1]) // untouched
}

// ---------------------------------------------------------------------------
// Jobs

// testCreateReturnsStored: what CreateJob returns is exactly what GetJob
// reads back, whatever the job carries, so that a store may return the job
// from its write instead of reading it again.
func testCreateReturnsStored(t *testing.T, s Store) {
	e := setup(t, s)
	plain := e.newJob(e.t0)
	files := e.newJob(e.t0.Add(time.Nanosecond * 1500))
	files.FilesChanged = []string{"guides/a.mdx"}
	files.Messages = append(files.Messages, agentjob.Message{Seq: 2, Prompt: "then this", State: agentjob.TurnQueued, CreatedAt: e.t0.Add(time.Second)})
	run := e.runJob("nightly", e.t0.Add(time.Minute), &agentjob.PushRange{Repo: "acme/api", Branch: "main", Before: "a1", After: "b2"})
	for name, in := range map[string]agentjob.Job{"plain": plain, "two messages, nanoseconds": files, "workflow run": run} {
		got, _, err := s.CreateJob(e.ctx, in, nil, nil)
		must(t, err, "CreateJob "+name)
		if want := e.job(in.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: CreateJob returned\n%+v\nGetJob reads\n%+v", name, got, want)
		}
	}
}

func testCreateAndGetJob(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("other")
	in := e.newJob(e.t0)
	in.Messages[0].Prompt = "Fix the typo in «README» ✓"
	events := []agentjob.NewEvent{
		{Type: agentjob.EventStatus, Data: map[string]any{"status": agentjob.Active}},
		{Type: agentjob.EventMessageQueued, Data: map[string]any{"seq": 1}},
	}
	got, replayed, err := s.CreateJob(e.ctx, in, nil, events)
	must(t, err, "CreateJob")
	if replayed {
		t.Errorf("CreateJob replayed = true")
	}
	fetched := e.job(in.ID)
	for name, j := range map[string]agentjob.Job{"CreateJob": got, "GetJob": fetched} {
		if j.ID != in.ID || j.ProjectID != in.ProjectID || j.Status != agentjob.Active || j.Repository != in.Repository ||
			j.Branch != in.Branch || j.BaseRef != in.BaseRef || j.Model != in.Model {
			t.Errorf("%s returned %+v, want the fields of %+v", name, j, in)
		}
		if j.PRLink != "" || j.PRNumber != 0 || j.Summary != "" || j.Error != "" || len(j.FilesChanged) != 0 {
			t.Errorf("%s: new job has outcome fields set: %+v", name, j)
		}
		sameTime(t, name+" CreatedAt", j.CreatedAt, e.t0)
		sameTime(t, name+" UpdatedAt", j.UpdatedAt, e.t0)
		samePtrTime(t, name+" CompletedAt", j.CompletedAt, nil)
		samePtrTime(t, name+" ArchivedAt", j.ArchivedAt, nil)
		if len(j.Messages) != 1 {
			t.Fatalf("%s: %d messages, want 1", name, len(j.Messages))
		}
		m := j.Messages[0]
		if m.Seq != 1 || m.Prompt != in.Messages[0].Prompt || m.State != agentjob.TurnQueued || m.Attempts != 0 || m.Summary != "" || m.Error != "" {
			t.Errorf("%s message = %+v", name, m)
		}
		sameTime(t, name+" message CreatedAt", m.CreatedAt, e.t0)
		samePtrTime(t, name+" message StartedAt", m.StartedAt, nil)
		samePtrTime(t, name+" message FinishedAt", m.FinishedAt, nil)
	}

	evs := e.events(in.ID)
	if len(evs) != 2 || evs[0].Type != agentjob.EventStatus || evs[1].Type != agentjob.EventMessageQueued {
		t.Fatalf("events = %+v, want status then message.queued", evs)
	}
	if d := decode(t, evs[0].Data); d["status"] != "active" {
		t.Errorf("status event data = %v", d)
	}
	if d := decode(t, evs[1].Data); d["seq"] != float64(1) {
		t.Errorf("message.queued event data = %v", d)
	}
	sameTime(t, "event CreatedAt", evs[0].CreatedAt, e.t0)

	_, err = s.GetJob(e.ctx, other.ID, in.ID)
	wantCode(t, err, apperr.NotFound, "GetJob through another project")
	_, err = s.GetJob(e.ctx, e.proj.ID, uuid.NewString())
	wantCode(t, err, apperr.NotFound, "GetJob unknown")
}

func testListJobs(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("other")

	// Seven jobs, created out of order, in pairs that share a CreatedAt.
	var jobs []agentjob.Job
	for _, i := range []int{3, 0, 6, 1, 5, 2, 4} {
		jobs = append(jobs, e.create(e.newJob(e.t0.Add(time.Duration(i/2)*time.Second))))
	}
	e.create(e.newJobIn(other.ID, e.t0.Add(time.Hour))) // never listed
	failed := map[string]bool{}
	for _, j := range []agentjob.Job{jobs[1], jobs[4], jobs[5]} {
		e.cancel(j.ID, "boom", e.t0.Add(time.Minute))
		failed[j.ID] = true
	}

	newestFirst := slices.Clone(jobs)
	slices.SortFunc(newestFirst, func(a, b agentjob.Job) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return -compareStrings(a.ID, b.ID)
	})
	all := jobIDs(newestFirst)
	var allFailed []string
	for _, id := range all {
		if failed[id] {
			allFailed = append(allFailed, id)
		}
	}

	list, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Limit: 100})
	must(t, err, "ListJobs")
	if got := jobIDs(list); !slices.Equal(got, all) {
		t.Fatalf("ListJobs = %v\nwant newest first, ties by id descending: %v", got, all)
	}
	for _, j := range list {
		if len(j.Messages) != 1 || j.Messages[0].Seq != 1 {
			t.Errorf("listed job %s has messages %+v, want its one message", j.ID, j.Messages)
		}
		want := agentjob.Active
		if failed[j.ID] {
			want = agentjob.Failed
		}
		if j.Status != want {
			t.Errorf("listed job %s status %s, want %s", j.ID, j.Status, want)
		}
	}

	limited, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Limit: 3})
	must(t, err, "ListJobs limit 3")
	if got := jobIDs(limited); !slices.Equal(got, all[:3]) {
		t.Errorf("ListJobs limit 3 = %v, want %v", got, all[:3])
	}
	onlyFailed, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Status: agentjob.Failed, Limit: 100})
	must(t, err, "ListJobs failed")
	if got := jobIDs(onlyFailed); !slices.Equal(got, allFailed) {
		t.Errorf("ListJobs status=failed = %v, want %v", got, allFailed)
	}
	none, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Status: agentjob.Archived, Limit: 100})
	must(t, err, "ListJobs archived")
	if len(none) != 0 {
		t.Errorf("ListJobs status=archived = %v, want none", jobIDs(none))
	}
	empty := e.project("empty")
	none, err = s.ListJobs(e.ctx, empty.ID, agentjob.ListQuery{Limit: 100})
	must(t, err, "ListJobs of an empty project")
	if len(none) != 0 {
		t.Errorf("ListJobs of an empty project = %v", jobIDs(none))
	}

	for _, tc := range []struct {
		status agentjob.Status
		size   int
		want   []string
	}{
		{"", 1, all}, {"", 2, all}, {"", 3, all}, {"", 7, all}, {"", 10, all},
		{agentjob.Failed, 1, allFailed}, {agentjob.Failed, 2, allFailed},
	} {
		if got := pageAll(t, s, e.proj.ID, tc.status, tc.size); !slices.Equal(got, tc.want) {
			t.Errorf("paging status=%q by %d = %v, want each job once: %v", tc.status, tc.size, got, tc.want)
		}
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func pageAll(t *testing.T, s Store, projectID string, status agentjob.Status, size int) []string {
	t.Helper()
	var ids []string
	var after *agentjob.Cursor
	for range 50 {
		page, err := s.ListJobs(t.Context(), projectID, agentjob.ListQuery{Status: status, Limit: size, After: after})
		must(t, err, "ListJobs page")
		if len(page) > size {
			t.Fatalf("page of %d jobs with limit %d", len(page), size)
		}
		ids = append(ids, jobIDs(page)...)
		if len(page) < size {
			return ids
		}
		last := page[len(page)-1]
		after = &agentjob.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	t.Fatalf("paging by %d did not end; got %v", size, ids)
	return nil
}

// ---------------------------------------------------------------------------
// Idempotency

func testIdempotentCreate(t *testing.T, s Store) {
	e := setup(t, s)
	idem := agentjob.Idempotency{Scope: "create:" + e.proj.ID, Key: "retry-1", RequestHash: sha("prompt"), NotBefore: e.t0.Add(-24 * time.Hour)}
	events := []agentjob.NewEvent{{Type: agentjob.EventStatus, Data: map[string]any{"status": "active"}}}

	first := e.newJob(e.t0)
	got, replayed, err := s.CreateJob(e.ctx, first, &idem, events)
	must(t, err, "CreateJob first")
	if replayed || got.ID != first.ID {
		t.Fatalf("first CreateJob = %s replayed=%v, want %s not replayed", got.ID, replayed, first.ID)
	}

	second := e.newJob(e.t0.Add(time.Second))
	got, replayed, err = s.CreateJob(e.ctx, second, &idem, events)
	must(t, err, "CreateJob retry")
	if !replayed || got.ID != first.ID {
		t.Fatalf("retried CreateJob = %s replayed=%v, want %s replayed", got.ID, replayed, first.ID)
	}
	if len(got.Messages) != 1 || got.Messages[0].Seq != 1 {
		t.Errorf("replayed job messages = %+v", got.Messages)
	}
	_, err = s.GetJob(e.ctx, e.proj.ID, second.ID)
	wantCode(t, err, apperr.NotFound, "GetJob of the replayed request's job")
	if evs := e.events(second.ID); len(evs) != 0 {
		t.Errorf("replayed request wrote events: %+v", evs)
	}
	if n := len(e.events(first.ID)); n != 1 {
		t.Errorf("first job has %d events after the replay, want 1", n)
	}

	id, found, err := s.FindIdempotent(e.ctx, idem)
	must(t, err, "FindIdempotent")
	if !found || id != first.ID {
		t.Errorf("FindIdempotent = %q, %v; want %q, true", id, found, first.ID)
	}
	for name, q := range map[string]agentjob.Idempotency{
		"other key":   {Scope: idem.Scope, Key: "retry-2", RequestHash: idem.RequestHash, NotBefore: idem.NotBefore},
		"other scope": {Scope: "create:elsewhere", Key: idem.Key, RequestHash: idem.RequestHash, NotBefore: idem.NotBefore},
	} {
		id, found, err := s.FindIdempotent(e.ctx, q)
		if err != nil || found {
			t.Errorf("FindIdempotent with %s = %q, %v, %v; want not found", name, id, found, err)
		}
	}

	changed := idem
	changed.RequestHash = sha("another prompt")
	_, _, err = s.FindIdempotent(e.ctx, changed)
	wantCode(t, err, apperr.Invalid, "FindIdempotent with another body")
	third := e.newJob(e.t0.Add(2 * time.Second))
	_, _, err = s.CreateJob(e.ctx, third, &changed, events)
	wantCode(t, err, apperr.Invalid, "CreateJob with a reused key and another body")
	_, err = s.GetJob(e.ctx, e.proj.ID, third.ID)
	wantCode(t, err, apperr.NotFound, "GetJob of the refused request's job")

	// The record is older than NotBefore: expired, so the key starts afresh,
	// even with another body.
	expired := changed
	expired.NotBefore = e.t0.Add(time.Hour)
	_, found, err = s.FindIdempotent(e.ctx, expired)
	if err != nil || found {
		t.Fatalf("FindIdempotent of an expired record = %v, %v; want not found", found, err)
	}
	fourth := e.newJob(e.t0.Add(2 * time.Hour))
	got, replayed, err = s.CreateJob(e.ctx, fourth, &expired, events)
	must(t, err, "CreateJob with an expired key")
	if replayed || got.ID != fourth.ID {
		t.Fatalf("CreateJob with an expired key = %s replayed=%v, want new job %s", got.ID, replayed, fourth.ID)
	}
	id, found, err = s.FindIdempotent(e.ctx, expired)
	if err != nil || !found || id != fourth.ID {
		t.Errorf("FindIdempotent after the key was reused = %q, %v, %v; want %q", id, found, err, fourth.ID)
	}
	list, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Limit: 100})
	must(t, err, "ListJobs")
	if got, want := sorted(jobIDs(list)), sorted([]string{first.ID, fourth.ID}); !slices.Equal(got, want) {
		t.Errorf("jobs = %v, want %v", got, want)
	}
}

func testIdempotentMessage(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	idem := agentjob.Idempotency{Scope: "message:" + e.proj.ID + "/" + j.ID, Key: "m-1", RequestHash: sha("follow up"), NotBefore: e.t0.Add(-24 * time.Hour)}
	add := func(_ int, at time.Time, idem agentjob.Idempotency) (agentjob.Job, bool, error) {
		return e.tryApply(j.ID, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "follow up", At: at}, &idem)
	}

	got, replayed, err := add(2, e.t0.Add(time.Second), idem)
	must(t, err, "AddMessage first")
	if replayed || len(got.Messages) != 2 {
		t.Fatalf("first AddMessage replayed=%v messages=%d, want false, 2", replayed, len(got.Messages))
	}
	got, replayed, err = add(3, e.t0.Add(2*time.Second), idem)
	must(t, err, "AddMessage retry")
	if !replayed || got.ID != j.ID || len(got.Messages) != 2 {
		t.Fatalf("retried AddMessage replayed=%v messages=%d, want true, 2", replayed, len(got.Messages))
	}
	if n := len(e.events(j.ID)); n != 1 {
		t.Errorf("%d events after the replay, want 1 (only the first request's)", n)
	}
	id, found, err := s.FindIdempotent(e.ctx, idem)
	if err != nil || !found || id != j.ID {
		t.Errorf("FindIdempotent = %q, %v, %v; want %q", id, found, err, j.ID)
	}

	changed := idem
	changed.RequestHash = sha("something else")
	_, _, err = add(3, e.t0.Add(3*time.Second), changed)
	wantCode(t, err, apperr.Invalid, "AddMessage with a reused key and another body")
	if n := len(e.job(j.ID).Messages); n != 2 {
		t.Errorf("%d messages after the refused request, want 2", n)
	}

	expired := changed
	expired.NotBefore = e.t0.Add(time.Hour)
	got, replayed, err = add(3, e.t0.Add(2*time.Hour), expired)
	must(t, err, "AddMessage with an expired key")
	if replayed || len(got.Messages) != 3 {
		t.Errorf("AddMessage with an expired key replayed=%v messages=%d, want false, 3", replayed, len(got.Messages))
	}
}

// ---------------------------------------------------------------------------
// State application

func testAddMessage(t *testing.T, s Store) {
	e := setup(t, s)
	// Another job with more messages: message numbers are per job.
	busy := e.create(e.newJob(e.t0))
	e.addMessage(busy.ID, 2, e.t0)
	e.addMessage(busy.ID, 3, e.t0)
	j := e.create(e.newJob(e.t0))
	e.cancel(j.ID, "boom", e.t0.Add(time.Second))
	before := e.job(j.ID)
	eventsBefore := len(e.events(j.ID))

	// A patch decided on a stale read (the job moved on since) writes
	// nothing: no message, no status, no events, and no idempotency record.
	at := e.t0.Add(time.Minute)
	idem := agentjob.Idempotency{Scope: "message:x", Key: "k", RequestHash: sha("p"), NotBefore: e.t0.Add(-time.Hour)}
	stale := before
	stale.Version--
	stale.Status = agentjob.Completed
	p, ev, err := agentjob.Reduce(stale, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "again", At: at})
	must(t, err, "Reduce follow-up")
	_, _, err = s.Apply(e.ctx, e.proj.ID, j.ID, p, &idem, ev)
	wantCode(t, err, apperr.Conflict, "Apply of a patch with a stale version")
	if !errors.Is(err, agentjob.ErrStale) {
		t.Errorf("Apply of a stale patch = %v, want it to wrap ErrStale", err)
	}
	after := e.job(j.ID)
	if after.Status != agentjob.Failed || len(after.Messages) != 1 || after.Error != "boom" || after.Version != before.Version {
		t.Errorf("after a refused patch: status %s, %d messages, error %q, version %d; want failed, 1, boom, %d", after.Status, len(after.Messages), after.Error, after.Version, before.Version)
	}
	sameTime(t, "UpdatedAt after a refused patch", after.UpdatedAt, before.UpdatedAt)
	if n := len(e.events(j.ID)); n != eventsBefore {
		t.Errorf("a refused patch wrote %d events", n-eventsBefore)
	}
	if _, found, err := s.FindIdempotent(e.ctx, idem); err != nil || found {
		t.Errorf("a refused patch remembered its idempotency key (found=%v, err=%v)", found, err)
	}

	// A patch from a version ahead of the store's is refused too.
	ahead := before
	ahead.Version++
	p, ev, err = agentjob.Reduce(ahead, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "again", At: at})
	must(t, err, "Reduce follow-up")
	_, _, err = s.Apply(e.ctx, e.proj.ID, j.ID, p, nil, ev)
	wantCode(t, err, apperr.Conflict, "Apply of a patch with a future version")

	got, replayed, err := e.tryApply(j.ID, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "again", At: at}, nil)
	must(t, err, "follow-up")
	if replayed {
		t.Errorf("follow-up replayed without a key")
	}
	if got.Version != before.Version+1 {
		t.Errorf("version after one change = %d, want %d", got.Version, before.Version+1)
	}
	// The patch that was just applied cannot be applied twice.
	p, ev, err = agentjob.Reduce(before, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "again", At: at})
	must(t, err, "Reduce follow-up")
	_, _, err = s.Apply(e.ctx, e.proj.ID, j.ID, p, nil, ev)
	wantCode(t, err, apperr.Conflict, "Apply of the same patch twice")
	for name, j := range map[string]agentjob.Job{"Apply": got, "GetJob": e.job(j.ID)} {
		if j.Status != agentjob.Active || len(j.Messages) != 2 {
			t.Fatalf("%s: status %s, %d messages; want active, 2", name, j.Status, len(j.Messages))
		}
		if j.Error != "" {
			t.Errorf("%s: an active job kept the error %q", name, j.Error)
		}
		sameTime(t, name+" UpdatedAt", j.UpdatedAt, at)
		m := j.Messages[1]
		if m.Seq != 2 || m.Prompt != "again" || m.State != agentjob.TurnQueued || m.Attempts != 0 {
			t.Errorf("%s: new message = %+v", name, m)
		}
		sameTime(t, name+" message CreatedAt", m.CreatedAt, at)
		if first := j.Messages[0]; first.Seq != 1 || first.State != agentjob.TurnCanceled {
			t.Errorf("%s: first message = %+v, want seq 1 still canceled", name, first)
		}
	}
	evs := e.events(j.ID)
	if len(evs) != eventsBefore+2 || evs[eventsBefore].Type != agentjob.EventMessageQueued || evs[eventsBefore+1].Type != agentjob.EventStatus {
		t.Errorf("events after the follow-up = %+v, want message.queued and status appended", evs)
	}

	// The same job, reached through another project, is NotFound and never
	// changed.
	other := e.project("other")
	p, ev, err = agentjob.Reduce(e.job(j.ID), agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "elsewhere", At: e.t0.Add(2 * time.Minute)})
	must(t, err, "Reduce follow-up")
	_, _, err = s.Apply(e.ctx, other.ID, j.ID, p, nil, ev)
	wantCode(t, err, apperr.NotFound, "Apply through another project")
	if n := len(e.job(j.ID).Messages); n != 2 {
		t.Errorf("Apply through another project added a message (%d messages)", n)
	}
}

func testChangeStatusCancel(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	c := e.claim("w1", e.t0.Add(time.Second))
	e.addMessage(j.ID, 2, e.t0.Add(2*time.Second))
	e.addMessage(j.ID, 3, e.t0.Add(3*time.Second))
	if canceled, err := s.RenewLease(e.ctx, c, e.t0.Add(2*lease)); err != nil || canceled {
		t.Fatalf("RenewLease before cancel = %v, %v; want false, nil", canceled, err)
	}
	eventsBefore := len(e.events(j.ID))

	at := e.t0.Add(time.Minute)
	extra := agentjob.NewEvent{Type: "job.canceled", Data: map[string]any{"by": "test"}}
	p, evs, err := agentjob.Reduce(e.job(j.ID), agentjob.Input{Kind: agentjob.InCancel, Reason: "canceled by request", At: at})
	must(t, err, "Reduce cancel")
	got, _, err := s.Apply(e.ctx, e.proj.ID, j.ID, p, nil, append([]agentjob.NewEvent{extra}, evs...))
	must(t, err, "Apply cancel")
	for name, j := range map[string]agentjob.Job{"Apply": got, "GetJob": e.job(j.ID)} {
		if j.Status != agentjob.Failed || j.Error != "canceled by request" {
			t.Errorf("%s: status %s error %q; want failed, canceled by request", name, j.Status, j.Error)
		}
		sameTime(t, name+" UpdatedAt", j.UpdatedAt, at)
		samePtrTime(t, name+" ArchivedAt", j.ArchivedAt, nil)
		if m := msg(t, j, 1); m.State != agentjob.TurnRunning {
			t.Errorf("%s: running turn is %s, want still running until its worker stops", name, m.State)
		}
		for _, seq := range []int{2, 3} {
			m := msg(t, j, seq)
			if m.State != agentjob.TurnCanceled {
				t.Errorf("%s: queued turn %d is %s, want canceled", name, seq, m.State)
			}
			samePtrTime(t, fmt.Sprintf("%s: canceled turn %d FinishedAt", name, seq), m.FinishedAt, &at)
		}
	}
	canceled, err := s.RenewLease(e.ctx, c, e.t0.Add(3*lease))
	if err != nil || !canceled {
		t.Errorf("RenewLease after cancel = %v, %v; want true (cancel requested), nil", canceled, err)
	}
	// Should its worker die, the expired turn says it was canceled, so it is
	// not queued again.
	expired, err := s.ExpiredTurns(e.ctx, e.t0.Add(3*lease+time.Microsecond))
	must(t, err, "ExpiredTurns")
	want := c
	want.CancelRequested = true
	if len(expired) != 1 || expired[0] != want {
		t.Errorf("ExpiredTurns after cancel = %+v, want [%+v]", expired, want)
	}

	written := e.events(j.ID)[eventsBefore:]
	if len(written) != 2 || written[0].Type != "job.canceled" || written[1].Type != agentjob.EventStatus {
		t.Fatalf("events written by the cancel = %+v, want the caller's then a status event", written)
	}
	d := decode(t, written[1].Data)
	if d["status"] != "failed" || d["error"] != "canceled by request" {
		t.Errorf("status event data = %v", d)
	}
	sameTime(t, "status event CreatedAt", written[1].CreatedAt, at)

	// Nothing of the job can be claimed any more.
	e.noClaim(e.t0.Add(2 * time.Minute))

	// Canceling again is refused by the reducer; the stale patch of the
	// first cancel is refused by the store and writes nothing.
	n := len(e.events(j.ID))
	_, _, err = e.tryApply(j.ID, agentjob.Input{Kind: agentjob.InCancel, Reason: "again", At: e.t0.Add(time.Hour)}, nil)
	wantCode(t, err, apperr.Conflict, "cancel of a failed job")
	_, _, err = s.Apply(e.ctx, e.proj.ID, j.ID, p, nil, evs)
	wantCode(t, err, apperr.Conflict, "the same cancel applied twice")
	if j := e.job(j.ID); j.Status != agentjob.Failed || j.Error != "canceled by request" {
		t.Errorf("after a refused cancel: status %s error %q", j.Status, j.Error)
	}
	if m := len(e.events(j.ID)); m != n {
		t.Errorf("a refused cancel wrote %d events", m-n)
	}
	_, err = s.GetJob(e.ctx, e.proj.ID, uuid.NewString())
	wantCode(t, err, apperr.NotFound, "GetJob of an unknown job")
	_, _, err = s.Apply(e.ctx, e.proj.ID, uuid.NewString(), p, nil, nil)
	wantCode(t, err, apperr.NotFound, "Apply to an unknown job")

	// The worker stops and records the turn; the job stays failed with the
	// cancel's error, and no second status event is written.
	fin, err := e.tryFinish(c, turnResult{State: agentjob.TurnCanceled, Error: "stopped", At: e.t0.Add(2 * time.Minute)})
	must(t, err, "finish after cancel")
	if fin.Status != agentjob.Failed || fin.Error != "canceled by request" || msg(t, fin, 1).State != agentjob.TurnCanceled {
		t.Errorf("after FinishTurn: status %s error %q turn %s", fin.Status, fin.Error, msg(t, fin, 1).State)
	}
	if st := e.statusEvents(j.ID); len(st) != 1 {
		t.Errorf("status events = %v, want only the cancel's", st)
	}
}

func archiveCases() []testCase {
	var out []testCase
	for _, tc := range []struct {
		name      string
		from      agentjob.Status
		wantError string
	}{
		{"FromActive", agentjob.Active, ""},
		{"FromFailed", agentjob.Failed, "boom"},
	} {
		out = append(out, testCase{"State/Archive/" + tc.name, func(t *testing.T, s Store) {
			e := setup(t, s)
			j := e.create(e.newJob(e.t0))
			e.addMessage(j.ID, 2, e.t0)
			if tc.from == agentjob.Failed {
				e.cancel(j.ID, "boom", e.t0.Add(time.Second))
			}
			at := e.t0.Add(time.Hour)
			got, err := e.archive(j.ID, at)
			must(t, err, "archive")
			for name, j := range map[string]agentjob.Job{"Apply": got, "GetJob": e.job(j.ID)} {
				if j.Status != agentjob.Archived || j.Error != tc.wantError {
					t.Errorf("%s: status %s error %q; want archived, %q", name, j.Status, j.Error, tc.wantError)
				}
				samePtrTime(t, name+" ArchivedAt", j.ArchivedAt, &at)
				sameTime(t, name+" UpdatedAt", j.UpdatedAt, at)
				for _, m := range j.Messages {
					if m.State == agentjob.TurnQueued {
						t.Errorf("%s: turn %d still queued in an archived job", name, m.Seq)
					}
				}
			}
			if st := e.statusEvents(j.ID); len(st) == 0 || st[len(st)-1] != "archived" {
				t.Errorf("status events = %v, want the last to be archived", st)
			}
			e.noClaim(at)
			// Archiving again changes nothing: the reducer has nothing to write.
			again, err := e.archive(j.ID, at.Add(time.Hour))
			must(t, err, "archive again")
			if again.Version != got.Version || again.ArchivedAt == nil || !again.ArchivedAt.Equal(at) {
				t.Errorf("archiving an archived job changed it: version %d→%d, archivedAt %v", got.Version, again.Version, fmtPtr(again.ArchivedAt))
			}
		}})
	}
	return out
}

// ---------------------------------------------------------------------------
// Queue

func testClaimEmpty(t *testing.T, s Store) {
	e := setup(t, s)
	e.noClaim(e.t0)
	// A job that is not active has nothing to claim either.
	j := e.create(e.newJob(e.t0))
	e.cancel(j.ID, "x", e.t0)
	e.noClaim(e.t0.Add(time.Second))
	if expired, err := s.ExpiredTurns(e.ctx, e.t0.Add(time.Hour)); err != nil || len(expired) != 0 {
		t.Errorf("ExpiredTurns with nothing running = %+v, %v", expired, err)
	}

	// A running turn whose job was canceled is not handed back to the
	// queue: it stays running until its lease expires, and then it is
	// reported with CancelRequested so recovery ends it canceled.
	k := e.create(e.newJob(e.t0.Add(time.Minute)))
	c := e.claim("w1", e.t0.Add(2*time.Minute))
	e.cancel(k.ID, "canceled by request", e.t0.Add(3*time.Minute))
	if err := s.RequeueTurn(e.ctx, c); !apperr.Is(err, apperr.Conflict) {
		t.Fatalf("RequeueTurn after cancel = %v, want Conflict", err)
	}
	e.noClaim(e.t0.Add(4 * time.Minute))
	expired, err := s.ExpiredTurns(e.ctx, e.t0.Add(time.Hour))
	if err != nil || len(expired) != 1 || expired[0].JobID != k.ID || !expired[0].CancelRequested {
		t.Fatalf("ExpiredTurns after the refused requeue = %+v, %v; want job %s with CancelRequested", expired, err, k.ID)
	}
}

func testClaimOldest(t *testing.T, s Store) {
	e := setup(t, s)
	other := e.project("other")
	var byAge []agentjob.Job
	for _, tc := range []struct {
		project string
		offset  time.Duration
	}{{e.proj.ID, 2 * time.Second}, {other.ID, 0}, {e.proj.ID, time.Second}} {
		j := e.newJobIn(tc.project, e.t0.Add(tc.offset))
		if _, _, err := s.CreateJob(e.ctx, j, nil, nil); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		byAge = append(byAge, j)
	}
	slices.SortFunc(byAge, func(a, b agentjob.Job) int { return a.CreatedAt.Compare(b.CreatedAt) })

	for i, want := range byAge {
		now := e.t0.Add(time.Minute + time.Duration(i)*time.Second)
		worker := fmt.Sprintf("w%d", i)
		c := e.claim(worker, now)
		if c.JobID != want.ID || c.ProjectID != want.ProjectID || c.Seq != 1 || c.Attempts != 1 || c.Worker != worker {
			t.Fatalf("claim %d = %+v, want job %s of %s, seq 1, attempt 1, worker %s", i, c, want.ID, want.ProjectID, worker)
		}
		m := msg(t, e.jobIn(want.ProjectID, want.ID), 1)
		if m.State != agentjob.TurnRunning || m.Attempts != 1 {
			t.Errorf("claimed message = %+v, want running, attempt 1", m)
		}
		samePtrTime(t, "claimed message StartedAt", m.StartedAt, &now)
	}
	e.noClaim(e.t0.Add(time.Hour))
}

func testOneRunningTurnPerJob(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	e.addMessage(j.ID, 2, e.t0.Add(time.Second))
	c1 := e.claim("w1", e.t0.Add(time.Minute))
	if c1.JobID != j.ID || c1.Seq != 1 {
		t.Fatalf("first claim = %+v, want seq 1", c1)
	}
	e.noClaim(e.t0.Add(time.Minute)) // seq 2 waits for seq 1

	fin := e.finish(c1, turnResult{State: agentjob.TurnDone, Summary: "one", At: e.t0.Add(2 * time.Minute)})
	if fin.Status != agentjob.Active {
		t.Errorf("job with a queued turn behind is %s, want active", fin.Status)
	}
	c2 := e.claim("w2", e.t0.Add(3*time.Minute))
	if c2.JobID != j.ID || c2.Seq != 2 || c2.Attempts != 1 {
		t.Fatalf("second claim = %+v, want seq 2, attempt 1", c2)
	}
	e.noClaim(e.t0.Add(3 * time.Minute))
}

// testStartNotBeforePreviousEnd: a claim stamped before the job's previous
// turn ended (its worker read the clock, was paused, and claimed once that
// turn had finished; or two replicas' clocks disagree) records its start at
// that end, so that a job's turns never seem to overlap.
func testStartNotBeforePreviousEnd(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	e.addMessage(j.ID, 2, e.t0.Add(time.Second))
	c1 := e.claim("w1", e.t0.Add(time.Minute))
	end := e.t0.Add(2 * time.Minute)
	e.finish(c1, turnResult{State: agentjob.TurnDone, Summary: "one", At: end})
	c2 := e.claim("w2", e.t0.Add(90*time.Second))
	if c2.JobID != j.ID || c2.Seq != 2 {
		t.Fatalf("claim = %+v, want seq 2", c2)
	}
	samePtrTime(t, "seq 2 StartedAt", msg(t, e.job(j.ID), 2).StartedAt, &end)

	// A claim stamped after the end keeps its own time.
	k := e.create(e.newJob(e.t0.Add(time.Hour)))
	e.addMessage(k.ID, 2, e.t0.Add(time.Hour+time.Second))
	c1 = e.claim("w1", e.t0.Add(2*time.Hour))
	e.finish(c1, turnResult{State: agentjob.TurnDone, Summary: "one", At: e.t0.Add(3 * time.Hour)})
	later := e.t0.Add(4 * time.Hour)
	e.claim("w2", later)
	samePtrTime(t, "seq 2 StartedAt", msg(t, e.job(k.ID), 2).StartedAt, &later)
}

func testTurnsInSeqOrder(t *testing.T, s Store) {
	e := setup(t, s)
	// seq 2 is stamped earlier than seq 1 (clocks of two replicas disagree).
	j := e.create(e.newJob(e.t0.Add(10 * time.Second)))
	e.addMessage(j.ID, 2, e.t0)
	c := e.claim("w1", e.t0.Add(time.Minute))
	if c.JobID != j.ID || c.Seq != 1 {
		t.Fatalf("claim = %+v, want seq 1 first", c)
	}
	// Handed back, seq 1 still runs before seq 2.
	must(t, e.interrupt(c), "RequeueTurn")
	c = e.claim("w2", e.t0.Add(2*time.Minute))
	if c.Seq != 1 {
		t.Fatalf("claim after requeue = %+v, want seq 1 again", c)
	}
	e.noClaim(e.t0.Add(2 * time.Minute))
}

func testJobsIndependent(t *testing.T, s Store) {
	e := setup(t, s)
	a := e.create(e.newJob(e.t0))
	e.addMessage(a.ID, 2, e.t0.Add(time.Second))
	b := e.create(e.newJob(e.t0.Add(2 * time.Second)))

	ca := e.claim("w1", e.t0.Add(time.Minute))
	cb := e.claim("w2", e.t0.Add(time.Minute))
	if ca.JobID != a.ID || ca.Seq != 1 || cb.JobID != b.ID || cb.Seq != 1 {
		t.Fatalf("claims = %+v, %+v; want a/1 then b/1", ca, cb)
	}
	e.noClaim(e.t0.Add(time.Minute))
	e.finish(cb, turnResult{State: agentjob.TurnDone, At: e.t0.Add(2 * time.Minute)})
	e.noClaim(e.t0.Add(2 * time.Minute)) // b finishing does not free a's seq 2
	e.finish(ca, turnResult{State: agentjob.TurnDone, At: e.t0.Add(3 * time.Minute)})
	if c := e.claim("w3", e.t0.Add(4*time.Minute)); c.JobID != a.ID || c.Seq != 2 {
		t.Fatalf("claim = %+v, want a/2", c)
	}
}

func testLease(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	fresh := e.create(e.newJob(e.t0.Add(time.Second)))
	now := e.t0.Add(time.Minute)
	c := e.claim("w1", now)
	if c.JobID != j.ID {
		t.Fatalf("claimed %+v, want job %s", c, j.ID)
	}
	until := now.Add(lease)

	for name, bad := range map[string]agentjob.Claim{
		"another worker":  {JobID: c.JobID, ProjectID: c.ProjectID, Seq: c.Seq, Attempts: c.Attempts, Worker: "w2"},
		"another attempt": {JobID: c.JobID, ProjectID: c.ProjectID, Seq: c.Seq, Attempts: c.Attempts + 1, Worker: c.Worker},
		"another seq":     {JobID: c.JobID, ProjectID: c.ProjectID, Seq: 2, Attempts: c.Attempts, Worker: c.Worker},
		"another job":     {JobID: fresh.ID, ProjectID: c.ProjectID, Seq: 1, Attempts: 1, Worker: c.Worker},
	} {
		_, err := s.RenewLease(e.ctx, bad, until.Add(time.Hour))
		wantCode(t, err, apperr.Conflict, "RenewLease by "+name)
	}

	for _, tc := range []struct {
		at   time.Time
		want bool
	}{{now, false}, {until, false}, {until.Add(time.Microsecond), true}} {
		expired, err := s.ExpiredTurns(e.ctx, tc.at)
		must(t, err, "ExpiredTurns")
		if got := len(expired) == 1; got != tc.want || len(expired) > 1 {
			t.Fatalf("ExpiredTurns(lease end %+v) = %+v, want expired=%v", tc.at.Sub(until), expired, tc.want)
		}
		if tc.want && (expired[0] != c || expired[0].CancelRequested) {
			t.Errorf("ExpiredTurns = %+v, want the claim %+v without CancelRequested", expired[0], c)
		}
	}

	// Renewal by the owner moves the lease end; refused renewals did not.
	later := until.Add(10 * time.Minute)
	canceled, err := s.RenewLease(e.ctx, c, later)
	if err != nil || canceled {
		t.Fatalf("RenewLease by the owner = %v, %v; want false, nil", canceled, err)
	}
	if expired, err := s.ExpiredTurns(e.ctx, later); err != nil || len(expired) != 0 {
		t.Errorf("ExpiredTurns at the renewed lease end = %+v, %v; want none", expired, err)
	}
	if expired, err := s.ExpiredTurns(e.ctx, later.Add(time.Microsecond)); err != nil || len(expired) != 1 {
		t.Errorf("ExpiredTurns after the renewed lease = %+v, %v; want the turn", expired, err)
	}

	// Only running turns are listed: the second job's turn, claimed with a
	// longer lease, is not expired, and finished turns never are.
	c2, ok, err := s.ClaimTurn(e.ctx, "w2", now, now.Add(time.Hour))
	if err != nil || !ok || c2.JobID != fresh.ID {
		t.Fatalf("ClaimTurn = %+v, %v, %v; want the second job", c2, ok, err)
	}
	expired, err := s.ExpiredTurns(e.ctx, later.Add(time.Second))
	must(t, err, "ExpiredTurns")
	if len(expired) != 1 || expired[0].JobID != j.ID {
		t.Errorf("ExpiredTurns = %+v, want only job %s", expired, j.ID)
	}
	e.finish(c, turnResult{State: agentjob.TurnDone, At: later})
	if expired, err := s.ExpiredTurns(e.ctx, now.Add(24*time.Hour)); err != nil || len(expired) != 1 || expired[0].JobID != fresh.ID {
		t.Errorf("ExpiredTurns after finishing = %+v, %v; want only job %s", expired, err, fresh.ID)
	}
	_, err = s.RenewLease(e.ctx, c, later.Add(time.Hour))
	wantCode(t, err, apperr.Conflict, "RenewLease of a finished turn")
}

func testRequeue(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	c1 := e.claim("w1", e.t0.Add(time.Minute))

	wrong := c1
	wrong.Worker = "w2"
	wantCode(t, e.interrupt(wrong), apperr.Conflict, "RequeueTurn by another worker")

	// Counted (lease expired): the attempt stays used.
	must(t, e.interrupt(c1), "RequeueTurn counted")
	m := msg(t, e.job(j.ID), 1)
	if m.State != agentjob.TurnQueued || m.Attempts != 1 {
		t.Errorf("after a counted requeue: %+v, want queued with 1 attempt", m)
	}
	if expired, err := s.ExpiredTurns(e.ctx, e.t0.Add(time.Hour)); err != nil || len(expired) != 0 {
		t.Errorf("ExpiredTurns after requeue = %+v, %v", expired, err)
	}
	_, err := s.RenewLease(e.ctx, c1, e.t0.Add(time.Hour))
	wantCode(t, err, apperr.Conflict, "RenewLease of a requeued claim")
	wantCode(t, e.interrupt(c1), apperr.Conflict, "RequeueTurn twice")

	c2 := e.claim("w2", e.t0.Add(2*time.Minute))
	if c2.JobID != j.ID || c2.Seq != 1 || c2.Attempts != 2 {
		t.Fatalf("re-claim after a counted requeue = %+v, want attempt 2", c2)
	}

	// Not counted (hand-back on shutdown): the run does not use an attempt.
	must(t, s.RequeueTurn(e.ctx, c2), "RequeueTurn not counted")
	if m := msg(t, e.job(j.ID), 1); m.State != agentjob.TurnQueued || m.Attempts != 1 {
		t.Errorf("after an uncounted requeue: %+v, want queued with 1 attempt", m)
	}
	c3 := e.claim("w3", e.t0.Add(3*time.Minute))
	if c3.Attempts != 2 {
		t.Errorf("re-claim after an uncounted requeue = %+v, want attempt 2 again", c3)
	}
	if m := msg(t, e.job(j.ID), 1); m.State != agentjob.TurnRunning || m.Attempts != 2 {
		t.Errorf("re-claimed message = %+v, want running with 2 attempts", m)
	}
}

func testFinishStaleClaim(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	c1 := e.claim("w1", e.t0.Add(time.Minute))
	must(t, e.interrupt(c1), "RequeueTurn")
	c2 := e.claim("w1", e.t0.Add(2*time.Minute)) // same worker, next attempt
	n := len(e.events(j.ID))

	r := turnResult{State: agentjob.TurnDone, Summary: "stale", PRLink: "https://example.com/pr/9", PRNumber: 9, FilesChanged: []string{"stale.md"}, At: e.t0.Add(3 * time.Minute)}
	for name, bad := range map[string]agentjob.Claim{
		"an earlier attempt": c1,
		"another worker":     {JobID: c2.JobID, ProjectID: c2.ProjectID, Seq: c2.Seq, Attempts: c2.Attempts, Worker: "w9"},
	} {
		_, err := e.tryFinish(bad, r)
		wantCode(t, err, apperr.Conflict, "finish by "+name)
		if !errors.Is(err, agentjob.ErrLeaseLost) {
			t.Errorf("finish by %s = %v, want it to wrap ErrLeaseLost", name, err)
		}
	}
	_, err := s.RenewLease(e.ctx, c1, e.t0.Add(time.Hour))
	wantCode(t, err, apperr.Conflict, "RenewLease by an earlier attempt")
	wantCode(t, e.interrupt(c1), apperr.Conflict, "RequeueTurn by an earlier attempt")
	got := e.job(j.ID)
	if got.Status != agentjob.Active || got.PRLink != "" || got.Summary != "" || len(got.FilesChanged) != 0 || msg(t, got, 1).State != agentjob.TurnRunning {
		t.Errorf("a refused FinishTurn changed the job: %+v", got)
	}
	if m := len(e.events(j.ID)); m != n {
		t.Errorf("a refused FinishTurn wrote %d events", m-n)
	}

	r.Summary = "fresh"
	fin, err := e.tryFinish(c2, r)
	must(t, err, "finish by the current claim")
	if m := msg(t, fin, 1); m.State != agentjob.TurnDone || m.Attempts != 2 || m.Summary != "fresh" {
		t.Errorf("finished message = %+v, want done on attempt 2", m)
	}
	if fin.Status != agentjob.Completed || fin.Summary != "fresh" {
		t.Errorf("after FinishTurn: %+v", fin)
	}
	_, err = e.tryFinish(c2, r)
	wantCode(t, err, apperr.Conflict, "finish twice")
}

// testRetryAfterAndCheckpoint: a turn queued again after a retryable error
// is not claimed before its delay; its checkpoint, written only by the claim
// that holds the turn, survives into the next attempt.
func testRetryAfterAndCheckpoint(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	c1 := e.claim("w1", e.t0.Add(time.Second))
	cp := agentjob.Checkpoint{PushedSHA: "0123456789abcdef0123456789abcdef01234567", Summary: "pushed", FilesChanged: []string{"a.mdx"}}
	must(t, s.SaveCheckpoint(e.ctx, c1, cp), "SaveCheckpoint")
	for name, bad := range map[string]agentjob.Claim{
		"another worker":  {JobID: c1.JobID, ProjectID: c1.ProjectID, Seq: c1.Seq, Attempts: c1.Attempts, Worker: "w9"},
		"another attempt": {JobID: c1.JobID, ProjectID: c1.ProjectID, Seq: c1.Seq, Attempts: c1.Attempts + 1, Worker: c1.Worker},
	} {
		err := s.SaveCheckpoint(e.ctx, bad, agentjob.Checkpoint{PRNumber: 9})
		if !errors.Is(err, agentjob.ErrLeaseLost) {
			t.Errorf("SaveCheckpoint by %s = %v, want ErrLeaseLost", name, err)
		}
	}
	if got := msg(t, e.job(j.ID), 1).Checkpoint; got.PushedSHA != cp.PushedSHA || got.Summary != cp.Summary || !slices.Equal(got.FilesChanged, cp.FilesChanged) || got.PRNumber != 0 {
		t.Errorf("checkpoint = %+v, want %+v", got, cp)
	}

	retryAt := e.t0.Add(10 * time.Minute)
	in := agentjob.Input{Kind: agentjob.InTurnEnd, At: e.t0.Add(time.Minute), Turn: agentjob.TurnEnd{
		Claim: c1, Outcome: agentjob.OutcomeRetry, Error: "github: 502 from POST /pulls", RetryAt: retryAt, MaxAttempts: 3,
	}}
	got, _, err := e.tryApply(j.ID, in, nil)
	must(t, err, "retry")
	m := msg(t, got, 1)
	if got.Status != agentjob.Active || m.State != agentjob.TurnQueued || m.Attempts != 1 {
		t.Fatalf("after a retry: job %s, turn %+v; want active with the turn queued after 1 attempt", got.Status, m)
	}
	samePtrTime(t, "RunAfter", m.RunAfter, &retryAt)
	e.noClaim(retryAt.Add(-time.Second))
	c2 := e.claim("w2", retryAt)
	if c2.Seq != 1 || c2.Attempts != 2 {
		t.Fatalf("claim after the delay = %+v, want seq 1 attempt 2", c2)
	}
	if got := msg(t, e.job(j.ID), 1).Checkpoint; got.PushedSHA != cp.PushedSHA {
		t.Errorf("checkpoint after the retry = %+v, want the first attempt's", got)
	}
	if err := s.SaveCheckpoint(e.ctx, c1, agentjob.Checkpoint{PRNumber: 9}); !errors.Is(err, agentjob.ErrLeaseLost) {
		t.Errorf("SaveCheckpoint by the first attempt after the retry = %v, want ErrLeaseLost", err)
	}
	if _, err := s.RenewLease(e.ctx, c1, retryAt.Add(time.Hour)); !errors.Is(err, agentjob.ErrLeaseLost) {
		t.Errorf("RenewLease (the fence check) by the first attempt after the retry = %v, want ErrLeaseLost", err)
	}
	cp.PRNumber, cp.PRLink = 7, "https://example.com/acme/docs/pull/7"
	must(t, s.SaveCheckpoint(e.ctx, c2, cp), "SaveCheckpoint by the second attempt")
	if got := msg(t, e.job(j.ID), 1).Checkpoint; got.PRNumber != 7 || got.PRLink != cp.PRLink || got.PushedSHA != cp.PushedSHA {
		t.Errorf("checkpoint = %+v, want %+v", got, cp)
	}
}

func finishJobStatusCases() []testCase {
	var out []testCase
	for _, tc := range []struct {
		name string
		// prepare runs after the claim of seq 1.
		prepare   func(e *env, j agentjob.Job)
		result    turnResult
		want      agentjob.Status
		wantError string
		completed bool
		statusEv  bool
	}{
		{
			name:      "Completed",
			result:    turnResult{State: agentjob.TurnDone, Summary: "fixed it"},
			want:      agentjob.Completed,
			completed: true,
			statusEv:  true,
		},
		{
			name:      "Failed",
			result:    turnResult{State: agentjob.TurnFailed, Error: "the agent crashed"},
			want:      agentjob.Failed,
			wantError: "the agent crashed",
			statusEv:  true,
		},
		{
			name: "QueuedTurnBehind",
			prepare: func(e *env, j agentjob.Job) {
				e.addMessage(j.ID, 2, e.t0.Add(time.Second))
			},
			result: turnResult{State: agentjob.TurnDone, Summary: "part one"},
			want:   agentjob.Active,
		},
		{
			name: "FailedTurnWithQueuedTurnBehind",
			prepare: func(e *env, j agentjob.Job) {
				e.addMessage(j.ID, 2, e.t0.Add(time.Second))
			},
			result: turnResult{State: agentjob.TurnFailed, Error: "oops"},
			want:   agentjob.Active,
			// The job goes on with the next message, and says what failed.
			wantError: "message 1 failed: oops",
		},
		{
			name: "ArchivedWhileRunning",
			prepare: func(e *env, j agentjob.Job) {
				at := e.t0.Add(time.Second)
				_, err := e.archive(j.ID, at)
				must(e.t, err, "archive")
				expired, err := e.s.ExpiredTurns(e.ctx, e.t0.Add(24*time.Hour))
				must(e.t, err, "ExpiredTurns")
				if len(expired) != 1 || expired[0].JobID != j.ID || !expired[0].CancelRequested {
					e.t.Errorf("ExpiredTurns after archiving a running job = %+v, want its turn with CancelRequested", expired)
				}
			},
			result: turnResult{State: agentjob.TurnDone, Summary: "late"},
			want:   agentjob.Archived,
		},
	} {
		out = append(out, testCase{"Queue/FinishJobStatus/" + tc.name, func(t *testing.T, s Store) {
			e := setup(t, s)
			j := e.create(e.newJob(e.t0))
			c := e.claim("w1", e.t0.Add(time.Second))
			if tc.prepare != nil {
				tc.prepare(e, j)
			}
			statusBefore := e.statusEvents(j.ID)
			n := len(e.events(j.ID))

			r := tc.result
			r.At = e.t0.Add(time.Minute)
			got, err := e.tryFinish(c, r)
			must(t, err, "finish")
			for name, j := range map[string]agentjob.Job{"FinishTurn": got, "GetJob": e.job(j.ID)} {
				if j.Status != tc.want || j.Error != tc.wantError {
					t.Errorf("%s: status %s error %q; want %s, %q", name, j.Status, j.Error, tc.want, tc.wantError)
				}
				if tc.completed {
					samePtrTime(t, name+" CompletedAt", j.CompletedAt, &r.At)
				} else {
					samePtrTime(t, name+" CompletedAt", j.CompletedAt, nil)
				}
				if tc.statusEv {
					sameTime(t, name+" UpdatedAt", j.UpdatedAt, r.At)
				}
				if tc.completed && j.Summary != r.Summary {
					t.Errorf("%s: summary %q, want %q", name, j.Summary, r.Summary)
				}
				m := msg(t, j, 1)
				if m.State != r.State || m.Summary != r.Summary || m.Error != r.Error || m.Attempts != 1 {
					t.Errorf("%s: finished message = %+v, want state %s summary %q error %q", name, m, r.State, r.Summary, r.Error)
				}
				samePtrTime(t, name+" message FinishedAt", m.FinishedAt, &r.At)
			}

			evs := e.events(j.ID)[n:]
			if len(evs) == 0 || evs[0].Type != agentjob.EventTurnFinished {
				t.Fatalf("events written by FinishTurn = %+v, want the caller's first", evs)
			}
			st := e.statusEvents(j.ID)
			if !tc.statusEv {
				if len(st) != len(statusBefore) {
					t.Errorf("status events %v, want no new one (status unchanged)", st)
				}
				return
			}
			if len(evs) != 2 || evs[1].Type != agentjob.EventStatus {
				t.Fatalf("events written by FinishTurn = %+v, want turn.finished then status", evs)
			}
			d := decode(t, evs[1].Data)
			if d["status"] != string(tc.want) {
				t.Errorf("status event data = %v, want status %s", d, tc.want)
			}
			if tc.wantError != "" && d["error"] != tc.wantError {
				t.Errorf("status event data = %v, want error %q", d, tc.wantError)
			}
			if tc.completed && d["summary"] != r.Summary {
				t.Errorf("status event data = %v, want summary %q", d, r.Summary)
			}
			sameTime(t, "status event CreatedAt", evs[1].CreatedAt, r.At)
		}})
	}
	return out
}

func testFinishCompletedClearsError(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	c := e.claim("w1", e.t0.Add(time.Second))
	first := e.finish(c, turnResult{State: agentjob.TurnFailed, Error: "boom", At: e.t0.Add(time.Minute)})
	if first.Status != agentjob.Failed || first.Error != "boom" {
		t.Fatalf("after a failed turn: %s %q", first.Status, first.Error)
	}

	e.addMessage(j.ID, 2, e.t0.Add(2*time.Minute))
	c = e.claim("w1", e.t0.Add(3*time.Minute))
	at := e.t0.Add(4 * time.Minute)
	done := e.finish(c, turnResult{State: agentjob.TurnDone, Summary: "done", At: at})
	if done.Status != agentjob.Completed || done.Error != "" {
		t.Errorf("after a completed turn: status %s error %q; want completed with no error", done.Status, done.Error)
	}
	samePtrTime(t, "CompletedAt", done.CompletedAt, &at)

	// Completed again later: CompletedAt is the latest completion.
	e.addMessage(j.ID, 3, e.t0.Add(5*time.Minute))
	if j := e.job(j.ID); j.Status != agentjob.Active || j.CompletedAt != nil {
		t.Errorf("reactivated job: status %s CompletedAt %v; want active, nil", j.Status, fmtPtr(j.CompletedAt))
	}
	c = e.claim("w1", e.t0.Add(6*time.Minute))
	at = e.t0.Add(7 * time.Minute)
	done = e.finish(c, turnResult{State: agentjob.TurnDone, At: at})
	samePtrTime(t, "CompletedAt after the second completion", done.CompletedAt, &at)
	if done.Summary != "done" {
		t.Errorf("an empty turn summary replaced the job's summary: %q", done.Summary)
	}
	if st := e.statusEvents(j.ID); !slices.Equal(st, []string{"failed", "active", "completed", "active", "completed"}) {
		t.Errorf("status events written by FinishTurn = %v", st)
	}
}

func testFinishPRLinkAndFiles(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	const pr1, pr2 = "https://example.com/acme/docs/pull/1", "https://example.com/acme/docs/pull/2"

	steps := []struct {
		result    turnResult
		wantFiles []string
	}{
		{turnResult{State: agentjob.TurnDone, PRLink: pr1, PRNumber: 1, FilesChanged: []string{"a.md", "b.md"}}, []string{"a.md", "b.md"}},
		{turnResult{State: agentjob.TurnDone, FilesChanged: []string{"b.md", "c.md"}}, []string{"a.md", "b.md", "c.md"}},
		{turnResult{State: agentjob.TurnDone, PRLink: pr2, PRNumber: 2}, []string{"a.md", "b.md", "c.md"}},
		{turnResult{State: agentjob.TurnFailed, Error: "x", FilesChanged: []string{"d.md"}}, []string{"a.md", "b.md", "c.md", "d.md"}},
	}
	for i, step := range steps {
		seq := i + 1
		base := e.t0.Add(time.Duration(i) * time.Hour)
		if seq > 1 {
			if got := e.addMessage(j.ID, seq, base); got.PRLink != pr1 || got.PRNumber != 1 {
				t.Errorf("AddMessage changed the PR to %q #%d", got.PRLink, got.PRNumber)
			}
		}
		c := e.claim("w1", base.Add(time.Second))
		if c.Seq != seq {
			t.Fatalf("claimed seq %d, want %d", c.Seq, seq)
		}
		r := step.result
		r.At = base.Add(time.Minute)
		got := e.finish(c, r)
		if got.PRLink != pr1 || got.PRNumber != 1 {
			t.Errorf("after turn %d: PR %q #%d, want %q #1 (set once, never cleared or replaced)", seq, got.PRLink, got.PRNumber, pr1)
		}
		if files := sorted(got.FilesChanged); !slices.Equal(files, step.wantFiles) {
			t.Errorf("after turn %d: FilesChanged %v, want %v", seq, got.FilesChanged, step.wantFiles)
		}
		if len(got.FilesChanged) != len(step.wantFiles) {
			t.Errorf("after turn %d: FilesChanged has duplicates: %v", seq, got.FilesChanged)
		}
		if seq == 1 {
			evs := e.events(j.ID)
			d := decode(t, evs[len(evs)-1].Data)
			if d["status"] != "completed" || d["prLink"] != pr1 {
				t.Errorf("status event after the PR = %v, want completed with prLink", d)
			}
		}
	}
	at := e.t0.Add(10 * time.Hour)
	archived, err := e.archive(j.ID, at)
	must(t, err, "archive")
	if archived.PRLink != pr1 || archived.PRNumber != 1 || len(archived.FilesChanged) != 4 {
		t.Errorf("archiving changed the outcome: PR %q #%d files %v", archived.PRLink, archived.PRNumber, archived.FilesChanged)
	}
}

// ---------------------------------------------------------------------------
// Events

func testEvents(t *testing.T, s Store) {
	e := setup(t, s)
	a := e.create(e.newJob(e.t0))
	b := e.create(e.newJob(e.t0))
	at := e.t0.Add(time.Second)

	must(t, s.AppendEvents(e.ctx, a.ID, at, []agentjob.NewEvent{
		{Type: "tool.step", Data: map[string]any{"tool": "edit", "n": 1}},
		{Type: "commit", Data: map[string]any{"sha": "abc", "files": []string{"x.md"}}},
	}), "AppendEvents a")
	must(t, s.AppendEvents(e.ctx, b.ID, at, []agentjob.NewEvent{{Type: "other", Data: map[string]any{"job": "b"}}}), "AppendEvents b")
	must(t, s.AppendEvents(e.ctx, a.ID, at.Add(time.Second), []agentjob.NewEvent{{Type: "pr", Data: map[string]any{"url": "https://example.com/pr/1"}}}), "AppendEvents a again")
	must(t, s.AppendEvents(e.ctx, a.ID, at, nil), "AppendEvents none")
	if err := s.AppendEvents(e.ctx, "no-such-job", at, []agentjob.NewEvent{{Type: "stray"}}); err == nil {
		t.Errorf("AppendEvents to a job that does not exist succeeded")
	}
	if evs := e.events("no-such-job"); len(evs) != 0 {
		t.Errorf("events stored for a job that does not exist: %+v", evs)
	}

	all, err := s.ListEvents(e.ctx, a.ID, 0, 100)
	must(t, err, "ListEvents")
	wantTypes := []string{"tool.step", "commit", "pr"}
	var types []string
	for i, ev := range all {
		types = append(types, ev.Type)
		if ev.JobID != a.ID {
			t.Errorf("event %d JobID = %q, want %q", i, ev.JobID, a.ID)
		}
		if i > 0 && ev.ID <= all[i-1].ID {
			t.Errorf("event ids not increasing: %d after %d", ev.ID, all[i-1].ID)
		}
	}
	if !slices.Equal(types, wantTypes) {
		t.Fatalf("ListEvents types = %v, want %v (no events of other jobs)", types, wantTypes)
	}
	if d := decode(t, all[1].Data); d["sha"] != "abc" || !reflect.DeepEqual(d["files"], []any{"x.md"}) {
		t.Errorf("commit event data = %v", d)
	}
	if d := decode(t, all[0].Data); d["tool"] != "edit" || d["n"] != float64(1) {
		t.Errorf("tool.step event data = %v", d)
	}
	sameTime(t, "event 0 CreatedAt", all[0].CreatedAt, at)
	sameTime(t, "event 2 CreatedAt", all[2].CreatedAt, at.Add(time.Second))

	other, err := s.ListEvents(e.ctx, b.ID, 0, 100)
	must(t, err, "ListEvents b")
	if len(other) != 1 || other[0].Type != "other" || other[0].JobID != b.ID {
		t.Fatalf("ListEvents b = %+v", other)
	}
	// Ids grow over the whole store, in the order events were appended.
	if all[1].ID >= other[0].ID || other[0].ID >= all[2].ID {
		t.Errorf("event ids %d, %d (other job), %d do not follow the append order", all[1].ID, other[0].ID, all[2].ID)
	}

	for _, tc := range []struct {
		after int64
		limit int
		want  []string
	}{
		{0, 2, wantTypes[:2]},
		{all[0].ID, 100, wantTypes[1:]},
		{all[0].ID, 1, wantTypes[1:2]},
		{all[1].ID, 100, wantTypes[2:]},
		{other[0].ID, 100, wantTypes[2:]},
		{all[2].ID, 100, nil},
	} {
		page, err := s.ListEvents(e.ctx, a.ID, tc.after, tc.limit)
		must(t, err, "ListEvents page")
		var got []string
		for _, ev := range page {
			got = append(got, ev.Type)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListEvents(after %d, limit %d) = %v, want %v", tc.after, tc.limit, got, tc.want)
		}
	}

	// Resuming one event at a time sees each event once.
	var resumed []string
	var last int64
	for range 10 {
		page, err := s.ListEvents(e.ctx, a.ID, last, 1)
		must(t, err, "ListEvents resume")
		if len(page) == 0 {
			break
		}
		resumed = append(resumed, page[0].Type)
		last = page[0].ID
	}
	if !slices.Equal(resumed, wantTypes) {
		t.Errorf("resumed events = %v, want %v", resumed, wantTypes)
	}
	if evs, err := s.ListEvents(e.ctx, uuid.NewString(), 0, 100); err != nil || len(evs) != 0 {
		t.Errorf("ListEvents of an unknown job = %+v, %v; want none", evs, err)
	}
}

// ---------------------------------------------------------------------------
// Rate limits

func approx(got, want time.Duration) bool {
	d := got - want
	return d > -time.Second && d < time.Second
}

func take(t *testing.T, s ratelimit.Store, now time.Time, rules ...ratelimit.Rule) (bool, []ratelimit.Usage) {
	t.Helper()
	allowed, usage, err := s.Take(t.Context(), now, "", rules)
	must(t, err, "Take")
	if len(usage) != len(rules) {
		t.Fatalf("Take returned %d usages for %d rules", len(usage), len(rules))
	}
	for i, u := range usage {
		if u.Rule != rules[i] {
			t.Errorf("usage %d is of rule %+v, want %+v", i, u.Rule, rules[i])
		}
	}
	return allowed, usage
}

// takeOnce is take for a request named by token.
func takeOnce(t *testing.T, s ratelimit.Store, now time.Time, token string, rules ...ratelimit.Rule) (bool, []ratelimit.Usage) {
	t.Helper()
	allowed, usage, err := s.Take(t.Context(), now, token, rules)
	must(t, err, "Take")
	if len(usage) != len(rules) {
		t.Fatalf("Take returned %d usages for %d rules", len(usage), len(rules))
	}
	return allowed, usage
}

func testRateLimitWindow(t *testing.T, s ratelimit.Store) {
	t0 := baseTime()
	rule := ratelimit.Rule{Name: "agent requests per project", Key: "agent:project:docs", Limit: 3, Window: time.Hour}
	for _, tc := range []struct {
		at        time.Duration
		allowed   bool
		used      int
		resetIn   time.Duration
		checkName string
	}{
		{0, true, 1, time.Hour, "first hit"},
		{10 * time.Minute, true, 2, 50 * time.Minute, "second hit"},
		{20 * time.Minute, true, 3, 40 * time.Minute, "third hit"},
		{30 * time.Minute, false, 3, 30 * time.Minute, "fourth hit is refused"},
		{59 * time.Minute, false, 3, time.Minute, "still full; the refused hit was not recorded"},
		{time.Hour - time.Microsecond, false, 3, time.Microsecond, "the first hit is still in the window"},
		// The first hit left the window (now-window, now]; had a refused
		// take been recorded the window would still be full.
		{time.Hour, true, 3, 10 * time.Minute, "the first hit left the window"},
		{time.Hour + time.Minute, false, 3, 9 * time.Minute, "full again"},
		{3 * time.Hour, true, 1, time.Hour, "every hit left the window"},
	} {
		allowed, usage := take(t, s, t0.Add(tc.at), rule)
		u := usage[0]
		if allowed != tc.allowed || u.Used != tc.used || !approx(u.ResetIn, tc.resetIn) {
			t.Fatalf("%s (t0+%v): allowed=%v used=%d resetIn=%v; want %v, %d, ≈%v",
				tc.checkName, tc.at, allowed, u.Used, u.ResetIn, tc.allowed, tc.used, tc.resetIn)
		}
	}
}

func testRateLimitMultipleRules(t *testing.T, s ratelimit.Store) {
	t0 := baseTime()
	small := ratelimit.Rule{Name: "per key", Key: "agent:key:k1", Limit: 1, Window: time.Hour}
	large := ratelimit.Rule{Name: "per org", Key: "agent:org:acme", Limit: 5, Window: 24 * time.Hour}

	allowed, usage := take(t, s, t0, small, large)
	if !allowed || usage[0].Used != 1 || usage[1].Used != 1 {
		t.Fatalf("first take: allowed=%v usage=%+v", allowed, usage)
	}
	// small is full, in either position: nothing is recorded in large.
	for i, rules := range [][]ratelimit.Rule{{small, large}, {large, small}} {
		allowed, usage := take(t, s, t0.Add(time.Duration(i+1)*time.Minute), rules...)
		if allowed {
			t.Fatalf("take %d with a full rule was allowed", i)
		}
		for _, u := range usage {
			if u.Used != 1 {
				t.Errorf("refused take %d: %s used %d, want 1", i, u.Rule.Key, u.Used)
			}
		}
	}
	// large holds exactly the one hit of the allowed take: four more fit.
	for i := 2; i <= 5; i++ {
		allowed, usage := take(t, s, t0.Add(time.Duration(i)*time.Minute), large)
		if !allowed || usage[0].Used != i {
			t.Fatalf("take %d of large alone: allowed=%v used=%d; want true, %d", i, allowed, usage[0].Used, i)
		}
	}
	allowed, usage = take(t, s, t0.Add(10*time.Minute), large)
	if allowed || usage[0].Used != 5 {
		t.Fatalf("sixth take of large: allowed=%v used=%d; want false, 5", allowed, usage[0].Used)
	}
	// With large full, a take that small would allow records nothing in small.
	allowed, _ = take(t, s, t0.Add(2*time.Hour), small, large)
	if allowed {
		t.Fatalf("take with large full was allowed")
	}
	allowed, usage = take(t, s, t0.Add(2*time.Hour), small)
	if !allowed || usage[0].Used != 1 {
		t.Errorf("small alone after the refused take: allowed=%v used=%d; want true, 1", allowed, usage[0].Used)
	}
}

func testRateLimitKeysIndependent(t *testing.T, s ratelimit.Store) {
	t0 := baseTime()
	x := ratelimit.Rule{Name: "x", Key: "assistant:domain:x", Limit: 2, Window: time.Hour}
	y := ratelimit.Rule{Name: "y", Key: "assistant:domain:y", Limit: 2, Window: time.Hour}
	for i := 1; i <= 2; i++ {
		if allowed, usage := take(t, s, t0.Add(time.Duration(i)*time.Second), x); !allowed || usage[0].Used != i {
			t.Fatalf("take %d of x: allowed=%v used=%d", i, allowed, usage[0].Used)
		}
	}
	if allowed, _ := take(t, s, t0.Add(3*time.Second), x); allowed {
		t.Fatalf("third take of x was allowed")
	}
	for i := 1; i <= 2; i++ {
		if allowed, usage := take(t, s, t0.Add(4*time.Second), y); !allowed || usage[0].Used != i {
			t.Fatalf("take %d of y: allowed=%v used=%d; want true, %d", i, allowed, usage[0].Used, i)
		}
	}
	// The same key under another rule name counts the same hits.
	xAgain := x
	xAgain.Name = "x, named differently"
	if allowed, usage := take(t, s, t0.Add(5*time.Second), xAgain); allowed || usage[0].Used != 2 {
		t.Errorf("x under another name: allowed=%v used=%d; want false, 2", allowed, usage[0].Used)
	}
}

func testRateLimitToken(t *testing.T, s ratelimit.Store) {
	t0 := baseTime()
	one := ratelimit.Rule{Name: "per project", Key: "agent:project:once", Limit: 1, Window: time.Hour}
	if ok, usage := takeOnce(t, s, t0, "create a", one); !ok || usage[0].Used != 1 {
		t.Fatalf("first take of token a: allowed=%v used=%d; want true, 1", ok, usage[0].Used)
	}
	// The retry of a is counted already: allowed though the rule is full,
	// and nothing more is recorded.
	if ok, usage := takeOnce(t, s, t0.Add(time.Minute), "create a", one); !ok || usage[0].Used != 1 {
		t.Fatalf("retry of token a: allowed=%v used=%d; want true, 1", ok, usage[0].Used)
	}
	if ok, usage := takeOnce(t, s, t0.Add(2*time.Minute), "create b", one); ok || usage[0].Used != 1 {
		t.Fatalf("token b with the rule full: allowed=%v used=%d; want false, 1", ok, usage[0].Used)
	}
	if ok, _ := take(t, s, t0.Add(3*time.Minute), one); ok {
		t.Fatalf("a take without a token with the rule full was allowed")
	}
	// A token counts only in the keys that hold it: another key with room
	// records the hit, one that is full refuses it.
	other := ratelimit.Rule{Name: "per org", Key: "agent:org:once", Limit: 2, Window: time.Hour}
	if ok, usage := takeOnce(t, s, t0.Add(4*time.Minute), "create a", one, other); !ok || usage[0].Used != 1 || usage[1].Used != 1 {
		t.Fatalf("token a over both rules: allowed=%v usage=%+v; want true, 1 and 1", ok, usage)
	}
	if ok, usage := takeOnce(t, s, t0.Add(5*time.Minute), "create a", other); !ok || usage[0].Used != 1 {
		t.Fatalf("token a again on the second rule: allowed=%v used=%d; want true, 1", ok, usage[0].Used)
	}
	// Once its hit left the window, the token is a new request.
	if ok, usage := takeOnce(t, s, t0.Add(time.Hour), "create a", one); !ok || usage[0].Used != 1 {
		t.Fatalf("token a after the window: allowed=%v used=%d; want true, 1", ok, usage[0].Used)
	}
	if ok, _ := take(t, s, t0.Add(time.Hour+time.Minute), one); ok {
		t.Fatalf("the rule holds token a's new hit, yet a take was allowed")
	}
}

// testRateLimitTokenConcurrent sends one request's retries all at once:
// every one is allowed and the request is counted once.
func testRateLimitTokenConcurrent(t *testing.T, s ratelimit.Store) {
	t0 := baseTime()
	rule := ratelimit.Rule{Name: "per project", Key: "agent:project:retries", Limit: 3, Window: time.Hour}
	const retries = 12
	var wg sync.WaitGroup
	var allowed atomic.Int32
	start := make(chan struct{})
	for range retries {
		wg.Go(func() {
			<-start
			ok, _, err := s.Take(t.Context(), t0, "create same-key", []ratelimit.Rule{rule})
			if err != nil {
				t.Errorf("Take: %v", err)
				return
			}
			if ok {
				allowed.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := allowed.Load(); n != retries {
		t.Fatalf("%d of %d concurrent retries allowed, want all", n, retries)
	}
	// The one request left room for exactly two more.
	for i := 2; i <= 3; i++ {
		if ok, usage := take(t, s, t0.Add(time.Second), rule); !ok || usage[0].Used != i {
			t.Fatalf("take %d after the retries: allowed=%v used=%d; want true, %d", i, ok, usage[0].Used, i)
		}
	}
	if ok, _ := take(t, s, t0.Add(time.Second), rule); ok {
		t.Fatalf("the retries were counted once, yet a fourth request was allowed")
	}
}

// rateLimitEntries is what the SQL stores report of their size.
type rateLimitEntries interface {
	RateLimitEntries(ctx context.Context) (int, error)
}

// testRateLimitSweep checks that hits of keys never seen again do not stay:
// once they left their window, later takes of other keys delete them.
func testRateLimitSweep(t *testing.T, s Store) {
	counter, ok := s.(rateLimitEntries)
	if !ok {
		t.Fatalf("%T does not report its rate-limit entries", s)
	}
	entries := func() int {
		t.Helper()
		n, err := counter.RateLimitEntries(t.Context())
		must(t, err, "RateLimitEntries")
		return n
	}
	t0 := baseTime()
	const oneOff = 2*ratelimit.SweepBatch + 10
	for i := range oneOff {
		rule := ratelimit.Rule{Name: "per client IP", Key: fmt.Sprintf("assistant:ip:198.51.%d.%d", i/256, i%256), Limit: 5, Window: time.Hour}
		if ok, _ := take(t, s, t0, rule); !ok {
			t.Fatalf("one-off take %d refused", i)
		}
	}
	day := ratelimit.Rule{Name: "per org", Key: "assistant:org:acme", Limit: 5, Window: 24 * time.Hour}
	take(t, s, t0, day)
	if n := entries(); n != oneOff+1 {
		t.Fatalf("%d entries after %d one-off takes and one daily, want %d", n, oneOff, oneOff+1)
	}
	// Two hours on, the hourly hits are expired; takes of another key sweep
	// them a batch at a time, and the daily hit stays.
	live := ratelimit.Rule{Name: "per client IP", Key: "assistant:ip:192.0.2.1", Limit: 100, Window: time.Hour}
	const takes = 4
	for i := range takes {
		take(t, s, t0.Add(2*time.Hour+time.Duration(i)*time.Second), live)
	}
	if n := entries(); n != takes+1 {
		t.Fatalf("%d entries after the sweep, want %d (the live key's %d and the daily hit)", n, takes+1, takes)
	}
	if ok, usage := take(t, s, t0.Add(3*time.Hour), day); !ok || usage[0].Used != 2 {
		t.Fatalf("the daily key after the sweep: allowed=%v used=%d; want true, 2", ok, usage[0].Used)
	}
}

// ---------------------------------------------------------------------------
// Concurrency

func testConcurrentClaims(t *testing.T, s Store) {
	e := setup(t, s)
	const jobs, workers = 10, 16
	want := map[string]bool{}
	for i := range jobs {
		j := e.create(e.newJob(e.t0.Add(time.Duration(i) * time.Millisecond)))
		want[j.ID] = true
	}

	var (
		mu      sync.Mutex
		claims  = map[string][]agentjob.Claim{}
		wg      sync.WaitGroup
		start   = make(chan struct{})
		errs    []error
		now     = e.t0.Add(time.Minute)
		ctx     = e.ctx
		claimed int
	)
	for w := range workers {
		worker := fmt.Sprintf("w%02d", w)
		wg.Go(func() {
			<-start
			for {
				c, ok, err := s.ClaimTurn(ctx, worker, now, now.Add(lease))
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				if ok {
					claims[c.JobID] = append(claims[c.JobID], c)
					claimed++
				}
				mu.Unlock()
				if err != nil || !ok {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()

	for _, err := range errs {
		t.Errorf("ClaimTurn: %v", err)
	}
	if claimed != jobs {
		t.Errorf("%d claims, want %d", claimed, jobs)
	}
	for id := range want {
		cs := claims[id]
		if len(cs) != 1 {
			t.Errorf("job %s claimed %d times: %+v", id, len(cs), cs)
			continue
		}
		if cs[0].Seq != 1 || cs[0].Attempts != 1 {
			t.Errorf("claim %+v, want seq 1 attempt 1", cs[0])
		}
		m := msg(t, e.job(id), 1)
		if m.State != agentjob.TurnRunning || m.Attempts != 1 {
			t.Errorf("job %s message after the claims = %+v, want running, attempt 1", id, m)
		}
	}
	for id := range claims {
		if !want[id] {
			t.Errorf("claimed unknown job %s", id)
		}
	}
	e.noClaim(now)
	if expired, err := s.ExpiredTurns(ctx, now.Add(lease+time.Microsecond)); err != nil || len(expired) != jobs {
		t.Errorf("ExpiredTurns = %d turns, %v; want %d", len(expired), err, jobs)
	}
}

// testConcurrentWorkers runs many jobs, each with follow-ups queued behind
// its first message, on workers that claim and finish at once: every turn
// runs exactly once, a job never has two turns running, and a job's turns
// run in seq order.
func testConcurrentWorkers(t *testing.T, s Store) {
	e := setup(t, s)
	const jobs, perJob, workers = 6, 4, 8
	for i := range jobs {
		j := e.create(e.newJob(e.t0.Add(time.Duration(i) * time.Millisecond)))
		for seq := 2; seq <= perJob; seq++ {
			e.addMessage(j.ID, seq, e.t0.Add(time.Second+time.Duration(seq)*time.Millisecond))
		}
	}
	var (
		mu       sync.Mutex
		running  = map[string]bool{}
		nextSeq  = map[string]int{}
		finished int
		wg       sync.WaitGroup
		now      = e.t0.Add(time.Minute)
		deadline = time.Now().Add(30 * time.Second)
	)
	for w := range workers {
		worker := fmt.Sprintf("w%02d", w)
		wg.Go(func() {
			for {
				mu.Lock()
				done := finished == jobs*perJob
				mu.Unlock()
				if done || time.Now().After(deadline) {
					return
				}
				c, ok, err := s.ClaimTurn(e.ctx, worker, now, now.Add(lease))
				if err != nil {
					t.Errorf("ClaimTurn: %v", err)
					return
				}
				if !ok {
					time.Sleep(time.Millisecond)
					continue
				}
				mu.Lock()
				if running[c.JobID] {
					t.Errorf("job %s: seq %d claimed while another of its turns runs", c.JobID, c.Seq)
				}
				if want := nextSeq[c.JobID] + 1; c.Seq != want || c.Attempts != 1 {
					t.Errorf("job %s: claimed seq %d attempt %d, want seq %d attempt 1", c.JobID, c.Seq, c.Attempts, want)
				}
				running[c.JobID] = true
				nextSeq[c.JobID] = c.Seq
				mu.Unlock()
				time.Sleep(100 * time.Microsecond) // the turn's work
				// The mark goes before FinishTurn: once that commits, the
				// next turn may be claimed at once.
				mu.Lock()
				running[c.JobID] = false
				mu.Unlock()
				if _, err := e.tryFinish(c, turnResult{State: agentjob.TurnDone, Summary: fmt.Sprintf("seq %d", c.Seq), At: now}); err != nil {
					t.Errorf("FinishTurn %+v: %v", c, err)
					return
				}
				mu.Lock()
				finished++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if finished != jobs*perJob {
		t.Fatalf("%d turns finished, want %d", finished, jobs*perJob)
	}
	all, err := s.ListJobs(e.ctx, e.proj.ID, agentjob.ListQuery{Limit: 100})
	must(t, err, "ListJobs")
	for _, j := range all {
		if j.Status != agentjob.Completed || len(j.Messages) != perJob {
			t.Errorf("job %s is %s with %d messages, want completed with %d", j.ID, j.Status, len(j.Messages), perJob)
		}
		for _, m := range j.Messages {
			if m.State != agentjob.TurnDone || m.Attempts != 1 {
				t.Errorf("job %s message %d is %s after %d attempts, want done after 1", j.ID, m.Seq, m.State, m.Attempts)
			}
		}
	}
	e.noClaim(now)
}

// testFinishRacesFollowUp finishes a job's only turn while a follow-up
// arrives, many times: whichever wins, the follow-up's turn is never left
// queued behind a job that is no longer active (no worker would run it).
func testFinishRacesFollowUp(t *testing.T, s Store) {
	e := setup(t, s)
	for round := range 20 {
		at := e.t0.Add(time.Duration(round) * time.Minute)
		j := e.create(e.newJob(at))
		c := e.claim("w1", at.Add(time.Second))
		if c.JobID != j.ID {
			t.Fatalf("round %d: claimed %+v, want job %s", round, c, j.ID)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			<-start
			if _, err := e.tryFinish(c, turnResult{State: agentjob.TurnDone, At: at.Add(2 * time.Second)}); err != nil {
				t.Errorf("round %d: FinishTurn: %v", round, err)
			}
		})
		wg.Go(func() {
			<-start
			// What agentjob.Service does: decide from the job as read,
			// and decide again if the store says it changed.
			for attempt := 0; ; attempt++ {
				cur, err := s.GetJob(e.ctx, e.proj.ID, j.ID)
				if err != nil {
					t.Errorf("round %d: GetJob: %v", round, err)
					return
				}
				p, evs, err := agentjob.Reduce(cur, agentjob.Input{Kind: agentjob.InFollowUp, Prompt: "follow-up", At: at.Add(2 * time.Second)})
				if err != nil {
					t.Errorf("round %d: follow-up from %s: %v", round, cur.Status, err)
					return
				}
				_, _, err = s.Apply(e.ctx, e.proj.ID, j.ID, p, nil, evs)
				if err == nil {
					return
				}
				if !errors.Is(err, agentjob.ErrStale) || attempt >= 10 {
					t.Errorf("round %d: follow-up: %v", round, err)
					return
				}
			}
		})
		close(start)
		wg.Wait()
		got := e.job(j.ID)
		if len(got.Messages) != 2 || msg(t, got, 2).State != agentjob.TurnQueued {
			t.Fatalf("round %d: %+v, want the follow-up queued", round, got.Messages)
		}
		if got.Status != agentjob.Active {
			t.Fatalf("round %d: job is %s with its follow-up queued, want active", round, got.Status)
		}
		c2 := e.claim("w1", at.Add(3*time.Second))
		if c2.JobID != j.ID || c2.Seq != 2 {
			t.Fatalf("round %d: claimed %+v, want the follow-up", round, c2)
		}
		if fin := e.finish(c2, turnResult{State: agentjob.TurnDone, At: at.Add(4 * time.Second)}); fin.Status != agentjob.Completed {
			t.Fatalf("round %d: after the follow-up the job is %s, want completed", round, fin.Status)
		}
	}
}

// testEventsWhileAppending follows a job's events the way a stream does
// (after the last id seen) while several writers append: every event is
// seen exactly once, in id order.
func testEventsWhileAppending(t *testing.T, s Store) {
	e := setup(t, s)
	j := e.create(e.newJob(e.t0))
	const writers, each = 4, 40
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for n := range each {
				ev := agentjob.NewEvent{Type: "step", Data: map[string]any{"w": w, "n": n}}
				if err := s.AppendEvents(e.ctx, j.ID, e.t0.Add(time.Second), []agentjob.NewEvent{ev}); err != nil {
					t.Errorf("AppendEvents: %v", err)
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	seen := map[string]int{}
	var last int64
	read := func() int {
		page, err := s.ListEvents(e.ctx, j.ID, last, 7)
		must(t, err, "ListEvents")
		for _, ev := range page {
			if ev.ID <= last {
				t.Fatalf("event id %d after %d", ev.ID, last)
			}
			last = ev.ID
			d := decode(t, ev.Data)
			seen[fmt.Sprint(d["w"], "/", d["n"])]++
		}
		return len(page)
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		read()
	}
	for read() > 0 {
	}
	if len(seen) != writers*each {
		t.Errorf("the follower saw %d distinct events, want %d", len(seen), writers*each)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("event %s seen %d times", k, n)
		}
	}
}

// testRateLimitConcurrent takes from one shared rule and a rule per
// client at once: exactly the shared limit is allowed, and each client's
// own key counts exactly its allowed takes (a refused take records nowhere).
func testRateLimitConcurrent(t *testing.T, s ratelimit.Store) {
	t0 := baseTime()
	const clients, each, limit = 8, 10, 25
	shared := ratelimit.Rule{Name: "per project", Key: "agent:project:shared", Limit: limit, Window: time.Hour}
	allowed := make([]int, clients)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := range clients {
		own := ratelimit.Rule{Name: "per client", Key: fmt.Sprintf("agent:client:%d", c), Limit: 1000, Window: time.Hour}
		wg.Go(func() {
			<-start
			for range each {
				ok, _, err := s.Take(t.Context(), t0, "", []ratelimit.Rule{own, shared})
				if err != nil {
					t.Errorf("Take: %v", err)
					return
				}
				if ok {
					allowed[c]++
				}
			}
		})
	}
	close(start)
	wg.Wait()
	total := 0
	for _, n := range allowed {
		total += n
	}
	if total != limit {
		t.Fatalf("%d takes allowed across %d concurrent clients, want exactly %d", total, clients, limit)
	}
	if ok, usage := take(t, s, t0.Add(time.Second), shared); ok || usage[0].Used != limit {
		t.Errorf("shared rule after the race: allowed=%v used=%d; want false, %d", ok, usage[0].Used, limit)
	}
	for c, n := range allowed {
		// A rule whose limit is what this client was allowed is full.
		own := ratelimit.Rule{Name: "per client", Key: fmt.Sprintf("agent:client:%d", c), Limit: n, Window: time.Hour}
		if ok, usage := take(t, s, t0.Add(time.Second), own); ok || usage[0].Used != n {
			t.Errorf("client %d: own key holds %d hits (allowed=%v), want %d", c, usage[0].Used, ok, n)
		}
	}
}
