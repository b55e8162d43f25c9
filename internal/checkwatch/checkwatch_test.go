package checkwatch_test

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/alertwebhook"
	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/assistant"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/checkwatch"
	"github.com/docsmith/docsmith/internal/secretsource"
	"github.com/docsmith/docsmith/internal/store/postgres"
	"github.com/docsmith/docsmith/internal/store/sqlite"
	"github.com/docsmith/docsmith/internal/store/storetest"
	"github.com/docsmith/docsmith/internal/tenant"
)

// scriptedRunner answers every check of a domain as its script says: the
// checks named in pass pass, the others fail.
type scriptedRunner struct {
	mu    sync.Mutex
	calls map[string]int
	pass  map[string][]string // domain -> checks that pass
	all   map[string][]string // domain -> its checks
	err   error
}

func (r *scriptedRunner) Run(_ context.Context, req checkrun.Request) (answercheck.Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[req.Domain.ID]++
	if req.Trigger != checkrun.TriggerSchedule || req.Ref != "" {
		return answercheck.Report{}, fmt.Errorf("a schedule's run must ask the served index: got %+v", req)
	}
	if r.err != nil {
		return answercheck.Report{}, r.err
	}
	var after []answercheck.Result
	for _, name := range r.all[req.Domain.ID] {
		c := answercheck.Check{Name: name, Question: "How do I " + name + "?", Cite: []string{"guides/" + name}, Origin: answercheck.OriginFile}
		a := answercheck.Answer{Status: assistant.StatusAnswered, Text: "See the guide.", Cited: []string{"guides/" + name}}
		if !slices.Contains(r.pass[req.Domain.ID], name) {
			a = answercheck.Answer{Status: assistant.StatusNotCovered, Text: "The docs do not cover this."}
		}
		after = append(after, answercheck.Judge(c, a))
	}
	checks, totals := answercheck.Compare(nil, after)
	return answercheck.Report{Domain: req.Domain.ID, Checks: checks, Totals: totals, StartedAt: time.Now().UTC()}, nil
}

func (r *scriptedRunner) callsOf(domain string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[domain]
}

// memoryRuns is checkrun.Store in memory.
type memoryRuns struct {
	mu   sync.Mutex
	runs []checkrun.Run
}

func (m *memoryRuns) SaveRun(_ context.Context, r checkrun.Run) (checkrun.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.ID = "run-" + strconv.Itoa(len(m.runs)+1)
	r.CreatedAt = time.Now()
	// Stored as JSON, as the stores do.
	b, err := json.Marshal(r.Report)
	if err != nil {
		return checkrun.Run{}, err
	}
	r.Report = answercheck.Report{}
	if err := json.Unmarshal(b, &r.Report); err != nil {
		return checkrun.Run{}, err
	}
	m.runs = append(m.runs, r)
	return r, nil
}

func (m *memoryRuns) GetRun(_ context.Context, domain, id string) (checkrun.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.runs {
		if r.Domain == domain && r.ID == id {
			return r, nil
		}
	}
	return checkrun.Run{}, apperr.New(apperr.NotFound, "run %q not found", id)
}

func (m *memoryRuns) ListRuns(_ context.Context, domain, trigger string, limit int) ([]checkrun.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []checkrun.Run
	for i := len(m.runs) - 1; i >= 0 && len(out) < limit; i-- {
		if r := m.runs[i]; r.Domain == domain && (trigger == "" || r.Trigger == trigger) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (m *memoryRuns) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.runs)
}

// fixture is a SQLite store with domains, a scripted runner and a clock.
type fixture struct {
	t      *testing.T
	store  *sqlite.Store
	runner *scriptedRunner
	runs   *memoryRuns
	now    atomic.Pointer[time.Time]
}

func newFixture(t *testing.T, domains ...tenant.Domain) *fixture {
	t.Helper()
	ctx := t.Context()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{t: t, store: store, runner: &scriptedRunner{pass: map[string][]string{}, all: map[string][]string{}}, runs: &memoryRuns{}}
	start := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	f.now.Store(&start)
	svc := tenant.NewService(store, f.clock)
	if _, err := svc.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for _, d := range domains {
		d.OrgID, d.ProjectID = "acme", "docs"
		if _, err := svc.CreateDomain(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) clock() time.Time { return *f.now.Load() }

func (f *fixture) advance(d time.Duration) {
	next := f.clock().Add(d)
	f.now.Store(&next)
}

func (f *fixture) service(alerts checkwatch.Alerter, env map[string]string) *checkwatch.Service {
	return checkwatch.New(checkwatch.Config{
		Domains: f.store, Runner: f.runner, Runs: f.runs, Schedule: f.store, Alerts: alerts,
		Secrets:   secretsReader(env),
		PublicURL: "https://docsmith.example.com/",
		Now:       f.clock,
	})
}

func secretsReader(env map[string]string) secretsource.Reader {
	return secretsource.Reader{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
}

func TestScheduleRunsDueDomains(t *testing.T) {
	t.Parallel()
	f := newFixture(t,
		tenant.Domain{ID: "help"},
		tenant.Domain{ID: "hourly", Settings: tenant.DomainSettings{ChecksEvery: "hourly"}},
		tenant.Domain{ID: "quiet", Settings: tenant.DomainSettings{ChecksEvery: "off"}},
		tenant.Domain{ID: "nochecks"},
	)
	for _, d := range []string{"help", "hourly", "quiet"} {
		f.runner.all[d] = []string{"restore", "install"}
		f.runner.pass[d] = []string{"restore", "install"}
	}
	s := f.service(nil, nil)
	ctx := t.Context()

	stored := s.Tick(ctx)
	if len(stored) != 2 || f.runs.count() != 2 {
		t.Fatalf("first tick stored %d runs (%d in the store), want help's and hourly's", len(stored), f.runs.count())
	}
	for _, r := range stored {
		if r.Trigger != checkrun.TriggerSchedule || r.Report.Totals.Passed != 2 || r.Report.Totals.Added != 2 {
			t.Fatalf("stored run %+v", r)
		}
	}
	if f.runner.callsOf("quiet") != 0 {
		t.Fatal("a domain whose schedule is off was run")
	}
	if f.runner.callsOf("nochecks") != 1 {
		t.Fatalf("the domain without checks was asked %d times", f.runner.callsOf("nochecks"))
	}

	// Not due: nothing runs.
	f.advance(30 * time.Minute)
	if stored := s.Tick(ctx); len(stored) != 0 {
		t.Fatalf("a tick before any domain is due stored %+v", stored)
	}
	// An hour on, only the hourly domain is due.
	f.advance(31 * time.Minute)
	stored = s.Tick(ctx)
	if len(stored) != 1 || stored[0].Domain != "hourly" {
		t.Fatalf("an hour on: stored %+v, want hourly's run alone", stored)
	}
	if c := stored[0].Report.Checks; c[0].Change != answercheck.Unchanged || c[0].Before == nil {
		t.Fatalf("the second scheduled run was not compared with the first: %+v", c[0])
	}
	// A day on, the daily domain too.
	f.advance(24 * time.Hour)
	if stored := s.Tick(ctx); len(stored) != 2 {
		t.Fatalf("a day on: stored %d runs, want 2", len(stored))
	}
	if f.runner.callsOf("help") != 2 {
		t.Fatalf("help ran %d times in a day and an hour, want 2", f.runner.callsOf("help"))
	}
}

// alertReceiver is a team's webhook receiver on a local server: it checks
// the signature as the answer checks page tells a team to, and keeps the bodies.
type alertReceiver struct {
	t      *testing.T
	secret string
	bodies chan []byte
	status atomic.Int32
}

func (a *alertReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	ts := r.Header.Get(alertwebhook.HeaderTimestamp)
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		a.t.Errorf("timestamp %q", ts)
	}
	if !hmac.Equal([]byte(r.Header.Get(alertwebhook.HeaderSignature)), []byte(alertwebhook.Sign([]byte(a.secret), n, body))) {
		a.t.Errorf("the alert's signature does not verify")
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if s := a.status.Load(); s != 0 {
		w.WriteHeader(int(s))
		return
	}
	a.bodies <- body
}

func TestScheduleRegressionAlerts(t *testing.T) {
	t.Parallel()
	recv := &alertReceiver{t: t, secret: "team-secret", bodies: make(chan []byte, 4)}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	f := newFixture(t, tenant.Domain{ID: "help", Settings: tenant.DomainSettings{
		AlertWebhookURL: srv.URL + "/slack/T0/B0", AlertWebhookSecretEnv: "HELP_ALERT_SECRET"}})
	f.runner.all["help"] = []string{"restore", "install", "upgrade"}
	f.runner.pass["help"] = []string{"restore", "install"}
	alerts := alertwebhook.New(alertwebhook.Config{Policy: alertwebhook.Policy{AllowHTTP: true, AllowPrivate: true}, Backoff: time.Millisecond})
	s := f.service(alerts, map[string]string{"HELP_ALERT_SECRET": "team-secret"})
	ctx := t.Context()

	// The first run has nothing to compare with: no alert.
	if stored := s.Tick(ctx); len(stored) != 1 {
		t.Fatalf("first tick stored %d runs", len(stored))
	}
	// A day on, restore fails (a fact was removed) and upgrade passes.
	f.advance(24 * time.Hour)
	f.runner.pass["help"] = []string{"install", "upgrade"}
	stored := s.Tick(ctx)
	s.Wait()
	if len(stored) != 1 {
		t.Fatalf("second tick stored %d runs", len(stored))
	}
	run := stored[0]
	if run.Report.Totals.Regressed != 1 || run.Report.Totals.NewlyAnswered != 1 {
		t.Fatalf("second run's totals %+v, want 1 regressed and 1 newly answered", run.Report.Totals)
	}
	if reg := checkwatch.Regressed(run.Report); len(reg) != 1 || reg[0].After.Check.Name != "restore" || reg[0].Before == nil || !reg[0].Before.Pass {
		t.Fatalf("regressed %+v", reg)
	}
	var body []byte
	select {
	case body = <-recv.bodies:
	case <-time.After(5 * time.Second):
		t.Fatal("no alert received")
	}
	checkSlackMessage(t, body)
	var got struct {
		Text     string `json:"text"`
		Metadata struct {
			EventType    string `json:"event_type"`
			EventPayload struct {
				Domain      string `json:"domain"`
				RunID       string `json:"run_id"`
				RunURL      string `json:"run_url"`
				Regressed   int    `json:"regressed"`
				Regressions []struct {
					Name, Question, Failure string
				} `json:"regressions"`
			} `json:"event_payload"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Metadata.EventPayload
	if p.Domain != "help" || p.RunID != run.ID || p.Regressed != 1 || len(p.Regressions) != 1 || p.Regressions[0].Name != "restore" ||
		p.RunURL != "https://docsmith.example.com/ui/domains/help/checks/runs/"+run.ID {
		t.Fatalf("payload %+v", p)
	}
	if p.Regressions[0].Failure != "the answer said the docs do not cover this; expected a citation of guides/restore; it cited nothing" {
		t.Fatalf("failure %q", p.Regressions[0].Failure)
	}

	// A day on, still failing: not a new regression, no alert.
	f.advance(24 * time.Hour)
	if stored := s.Tick(ctx); len(stored) != 1 || stored[0].Report.Totals.Regressed != 0 {
		t.Fatalf("third run %+v", stored)
	}
	s.Wait()
	select {
	case b := <-recv.bodies:
		t.Fatalf("an alert without a regression: %s", b)
	default:
	}
}

// checkSlackMessage checks a body against what Slack's incoming webhooks
// document: a text, blocks of known types with mrkdwn text within Slack's
// bounds, message metadata with an event type and payload, and no other
// top-level field.
func checkSlackMessage(t *testing.T, body []byte) {
	t.Helper()
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("alert body is not a JSON object: %v", err)
	}
	for k := range msg {
		if k != "text" && k != "blocks" && k != "metadata" {
			t.Errorf("top-level field %q is not one Slack's incoming webhooks document", k)
		}
	}
	var text string
	if err := json.Unmarshal(msg["text"], &text); err != nil || text == "" || len(text) > 40000 {
		t.Errorf("text %q", text)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(msg["blocks"], &blocks); err != nil || len(blocks) == 0 || len(blocks) > 50 {
		t.Fatalf("blocks %s: %v", msg["blocks"], err)
	}
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Type != "mrkdwn" || b.Text.Text == "" || len([]rune(b.Text.Text)) > 3000 {
				t.Errorf("section block %+v", b)
			}
		case "context":
			if len(b.Elements) == 0 || len(b.Elements) > 10 || b.Elements[0].Type != "mrkdwn" {
				t.Errorf("context block %+v", b)
			}
		default:
			t.Errorf("block type %q", b.Type)
		}
	}
	var meta struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if err := json.Unmarshal(msg["metadata"], &meta); err != nil || meta.EventType == "" || len(meta.EventPayload) == 0 {
		t.Errorf("metadata %s: %v", msg["metadata"], err)
	}
}

// TestScheduleRunFailure: a run that fails stores nothing and is tried
// again after RetryAfter, not a whole interval later.
func TestScheduleRunFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, tenant.Domain{ID: "help"})
	f.runner.all["help"] = []string{"restore"}
	f.runner.err = fmt.Errorf("the model is down")
	s := f.service(nil, nil)
	if stored := s.Tick(t.Context()); len(stored) != 0 || f.runs.count() != 0 {
		t.Fatalf("a failed run stored %+v", stored)
	}
	f.runner.err = nil
	f.advance(59 * time.Minute)
	if stored := s.Tick(t.Context()); len(stored) != 0 {
		t.Fatal("retried before RetryAfter")
	}
	f.advance(time.Minute)
	if stored := s.Tick(t.Context()); len(stored) != 1 {
		t.Fatalf("not retried after RetryAfter: %+v", stored)
	}
}

// TestScheduleReplicasPostgres: two replicas over one PostgreSQL database
// tick at the same moments; each due run happens once.
func TestScheduleReplicasPostgres(t *testing.T) {
	t.Parallel()
	url := storetest.PostgresURL(t)
	ctx := t.Context()
	open := func() *postgres.Store {
		s, err := postgres.Open(ctx, url, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	first, second := open(), open()
	svc := tenant.NewService(first, time.Now)
	if _, err := svc.CreateOrg(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateProject(ctx, tenant.Project{ID: "docs", OrgID: "acme", RepoURL: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	runner := &scriptedRunner{pass: map[string][]string{}, all: map[string][]string{}}
	for _, id := range []string{"help", "beta", "gamma"} {
		if _, err := svc.CreateDomain(ctx, tenant.Domain{ID: id, OrgID: "acme", ProjectID: "docs"}); err != nil {
			t.Fatal(err)
		}
		runner.all[id] = []string{"restore"}
		runner.pass[id] = []string{"restore"}
	}
	runs := &memoryRuns{}
	now := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC)
	replica := func(s *postgres.Store) *checkwatch.Service {
		return checkwatch.New(checkwatch.Config{Domains: s, Runner: runner, Runs: runs, Schedule: s, Now: func() time.Time { return now }})
	}
	replicas := []*checkwatch.Service{replica(first), replica(second)}
	for day := range 3 {
		now = now.Add(time.Duration(day) * 24 * time.Hour)
		var wg sync.WaitGroup
		for _, r := range replicas {
			wg.Go(func() { r.Tick(ctx) })
		}
		wg.Wait()
		for _, id := range []string{"help", "beta", "gamma"} {
			if n := runner.callsOf(id); n != day+1 {
				t.Fatalf("day %d: %s ran %d times over the two replicas, want %d", day, id, n, day+1)
			}
		}
	}
	if n := runs.count(); n != 9 {
		t.Fatalf("%d runs stored, want 9", n)
	}
}
