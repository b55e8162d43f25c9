package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/tenant"
)

// fakeCheckRunner stands in for checkrun.Runner: it records the requests
// and answers a report that says which ref it checked. With block set, a
// run waits for it to close (or for its context to end).
type fakeCheckRunner struct {
	mu       sync.Mutex
	requests []checkrun.Request
	block    chan struct{}
	started  chan struct{}
}

func (f *fakeCheckRunner) Run(ctx context.Context, req checkrun.Request) (answercheck.Report, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	block, started := f.block, f.started
	f.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return answercheck.Report{}, fmt.Errorf("answer the checks: %w", ctx.Err())
		}
	}
	check := answercheck.Check{Name: "restore-snapshot", Question: "How do I restore a snapshot?", Cite: []string{"guides/backups"}, Origin: answercheck.OriginFile}
	before := answercheck.Judge(check, answercheck.Answer{Status: "not_covered", Text: "The docs do not cover this."})
	after := answercheck.Judge(check, answercheck.Answer{Status: "answered", Text: "Stop the server, then restore.", Cited: []string{"guides/backups"}})
	compared, totals := answercheck.Compare([]answercheck.Result{before}, []answercheck.Result{after})
	return answercheck.Report{Domain: req.Domain.ID, Ref: req.Ref, Commit: "c0ffee", BaseCommit: "bead", Checks: compared, Totals: totals,
		IndexDuration: time.Second, AnswerDuration: 2 * time.Second, StartedAt: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}, nil
}

func (f *fakeCheckRunner) seen() []checkrun.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]checkrun.Request(nil), f.requests...)
}

// newChecksServer is a real Server over SQLite, which keeps the runs,
// whose org acme has the domain docs.acme.test and globex globex.test,
// with the fake runner.
func newChecksServer(t *testing.T, edit func(*Deps)) (*workflowServer, *fakeCheckRunner) {
	t.Helper()
	runner := &fakeCheckRunner{}
	s := newWorkflowServerWith(t, Limits{}, false, func(d *Deps) {
		for id, org := range map[string]string{"docs.acme.test": "acme", "globex.test": "globex"} {
			project := map[string]string{"acme": "docs", "globex": "globex-docs"}[org]
			if _, err := d.Tenants.CreateDomain(t.Context(), tenant.Domain{ID: id, OrgID: org, ProjectID: project}); err != nil {
				t.Fatal(err)
			}
		}
		runs, ok := d.Tenants.Store().(checkrun.Store)
		if !ok {
			t.Fatalf("the SQLite store %T does not keep check runs", d.Tenants.Store())
		}
		d.Checks, d.CheckRuns = runner, runs
		edit(d)
	})
	return s, runner
}

func TestCheckRunRoundTrip(t *testing.T) {
	t.Parallel()
	s, runner := newChecksServer(t, func(*Deps) {})

	resp := s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, strings.NewReader(`{"ref":"refs/pull/7/head"}`), "Content-Type", "application/json")
	if resp.status != http.StatusCreated {
		t.Fatalf("run: %d %s", resp.status, resp.body)
	}
	var run checkrun.Run
	if err := json.Unmarshal([]byte(resp.body), &run); err != nil {
		t.Fatal(err)
	}
	if run.ID == "" || run.Trigger != checkrun.TriggerAPI || run.Report.Ref != "refs/pull/7/head" || run.Report.Totals.NewlyAnswered != 1 {
		t.Errorf("run = %+v", run)
	}
	if !strings.Contains(resp.body, `"summary":"1 reader question now answered, 0 regressed"`) {
		t.Errorf("the run has no summary line: %s", resp.body)
	}
	if got, want := resp.header.Get("Location"), "/v2/domains/docs.acme.test/checks/runs/"+run.ID; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if reqs := runner.seen(); len(reqs) != 1 || reqs[0].Domain.ID != "docs.acme.test" || reqs[0].Ref != "refs/pull/7/head" || reqs[0].Trigger != checkrun.TriggerAPI {
		t.Errorf("the runner was asked %+v", reqs)
	}

	// Without a body the served index is checked alone.
	resp = s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, nil)
	if resp.status != http.StatusCreated {
		t.Fatalf("run without a body: %d %s", resp.status, resp.body)
	}
	if reqs := runner.seen(); len(reqs) != 2 || reqs[1].Ref != "" {
		t.Errorf("a run without a body asked %+v", reqs)
	}

	list := s.do(http.MethodGet, "/v2/domains/docs.acme.test/checks/runs?limit=1", s.admin, nil)
	if list.status != http.StatusOK {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	var page struct {
		Runs []struct {
			ID      string  `json:"id"`
			Ref     *string `json:"ref"`
			Summary string  `json:"summary"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(list.body), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 1 || page.Runs[0].Ref != nil || page.Runs[0].ID == run.ID {
		t.Errorf("the newest run first, one of them: %s", list.body)
	}

	got := s.do(http.MethodGet, "/v2/domains/docs.acme.test/checks/runs/"+run.ID, s.admin, nil)
	if got.status != http.StatusOK {
		t.Fatalf("get: %d %s", got.status, got.body)
	}
	var again checkrun.Run
	if err := json.Unmarshal([]byte(got.body), &again); err != nil {
		t.Fatal(err)
	}
	if again.ID != run.ID || len(again.Report.Checks) != 1 || again.Report.Checks[0].Change != answercheck.NewlyAnswered {
		t.Errorf("get = %+v", again)
	}

	for _, tc := range []struct {
		name, method, path, key string
		want                    int
	}{
		{"unknown run", http.MethodGet, "/v2/domains/docs.acme.test/checks/runs/nope", s.admin, http.StatusNotFound},
		{"run of another org's domain", http.MethodGet, "/v2/domains/docs.acme.test/checks/runs/" + run.ID, s.globexAdm, http.StatusNotFound},
		{"another org's domain", http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.globexAdm, http.StatusNotFound},
		{"assistant key", http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.assistant, http.StatusForbidden},
		{"no key", http.MethodPost, "/v2/domains/docs.acme.test/checks/run", "", http.StatusUnauthorized},
		{"list without a key", http.MethodGet, "/v2/domains/docs.acme.test/checks/runs", "", http.StatusUnauthorized},
		{"limit out of range", http.MethodGet, "/v2/domains/docs.acme.test/checks/runs?limit=0", s.admin, http.StatusBadRequest},
		{"unknown trigger", http.MethodGet, "/v2/domains/docs.acme.test/checks/runs?trigger=nightly", s.admin, http.StatusBadRequest},
	} {
		if resp := s.do(tc.method, tc.path, tc.key, nil); resp.status != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, resp.status, tc.want, resp.body)
		}
	}
	if n := len(runner.seen()); n != 2 {
		t.Errorf("refused requests ran the checks: %d runs", n)
	}
}

func TestCheckRunRequestValidation(t *testing.T) {
	t.Parallel()
	s, runner := newChecksServer(t, func(*Deps) {})
	for _, tc := range []struct {
		name, body, contentType string
		want                    int
		says                    string
	}{
		{"misspelt field", `{"reff":"main"}`, "application/json", http.StatusBadRequest, `unknown field "reff"`},
		{"ref not a string", `{"ref":7}`, "application/json", http.StatusBadRequest, `field "ref" must be a string`},
		{"option-like ref", `{"ref":"--upload-pack=x"}`, "application/json", http.StatusBadRequest, `field "ref" must be a branch (main) or a full ref (refs/pull/7/head) that git accepts: invalid argument: ref "--upload-pack=x" starts with '-'`},
		{"range", `{"ref":"main..evil"}`, "application/json", http.StatusBadRequest, `contains '..'`},
		{"two objects", `{"ref":"main"}{"ref":"x"}`, "application/json", http.StatusBadRequest, "exactly one object"},
		{"not JSON", `ref=main`, "application/json", http.StatusBadRequest, "not valid JSON"},
		{"form", `ref=main`, "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, "Content-Type: application/json"},
		{"too large", `{"ref":"` + strings.Repeat("a", 8<<10) + `"}`, "application/json", http.StatusRequestEntityTooLarge, "limit of 4096 bytes"},
	} {
		resp := s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, strings.NewReader(tc.body), "Content-Type", tc.contentType)
		var e errorBody
		_ = json.Unmarshal([]byte(resp.body), &e)
		if resp.status != tc.want || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, resp.status, resp.body, tc.want, tc.says)
		}
	}
	if n := len(runner.seen()); n != 0 {
		t.Errorf("invalid requests ran the checks %d times", n)
	}
	// An empty object is a run of the served index.
	if resp := s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, strings.NewReader(`{}`), "Content-Type", "application/json"); resp.status != http.StatusCreated {
		t.Errorf("{}: %d %s", resp.status, resp.body)
	}
}

func TestCheckRunsOfOneDomainAreBounded(t *testing.T) {
	t.Parallel()
	s, runner := newChecksServer(t, func(d *Deps) { d.CheckRunsPerDomain = 1 })
	runner.block, runner.started = make(chan struct{}), make(chan struct{}, 4)

	first := make(chan response, 1)
	go func() {
		first <- s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, strings.NewReader(`{"ref":"a"}`), "Content-Type", "application/json")
	}()
	<-runner.started
	busy := s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, strings.NewReader(`{"ref":"b"}`), "Content-Type", "application/json")
	if busy.status != http.StatusConflict || !strings.Contains(busy.body, "1 check runs of domain") {
		t.Errorf("a second run of the domain: %d %s, want 409", busy.status, busy.body)
	}
	// Another domain is not held up by this one.
	other := make(chan response, 1)
	go func() {
		other <- s.do(http.MethodPost, "/v2/domains/globex.test/checks/run", s.globexAdm, nil)
	}()
	<-runner.started
	close(runner.block)
	if r := <-first; r.status != http.StatusCreated {
		t.Errorf("the first run: %d %s", r.status, r.body)
	}
	if r := <-other; r.status != http.StatusCreated {
		t.Errorf("the other domain's run: %d %s", r.status, r.body)
	}
	// Its slot is free again.
	if r := s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, nil); r.status != http.StatusCreated {
		t.Errorf("a run after the first ended: %d %s", r.status, r.body)
	}
}

func TestCheckRunTimesOut(t *testing.T) {
	t.Parallel()
	s, runner := newChecksServer(t, func(d *Deps) { d.CheckRunTimeout = 50 * time.Millisecond })
	runner.block = make(chan struct{}) // never closed: the timeout ends the run
	resp := s.do(http.MethodPost, "/v2/domains/docs.acme.test/checks/run", s.admin, nil)
	if resp.status != http.StatusServiceUnavailable || !strings.Contains(resp.body, "took longer than 50ms") {
		t.Errorf("a run over its time: %d %s", resp.status, resp.body)
	}
	if r := s.do(http.MethodGet, "/v2/domains/docs.acme.test/checks/runs", s.admin, nil); !strings.Contains(r.body, `"runs":[]`) {
		t.Errorf("a run that timed out was stored: %s", r.body)
	}
}

func TestCheckRunsUnavailableWithoutRunner(t *testing.T) {
	t.Parallel()
	s, _ := newChecksServer(t, func(d *Deps) { d.Checks, d.CheckRuns = nil, nil })
	for _, path := range []string{"/v2/domains/docs.acme.test/checks/run", "/v2/domains/docs.acme.test/checks/runs"} {
		method := http.MethodGet
		if strings.HasSuffix(path, "/run") {
			method = http.MethodPost
		}
		if r := s.do(method, path, s.admin, nil); r.status != http.StatusServiceUnavailable {
			t.Errorf("%s %s without a runner: %d %s", method, path, r.status, r.body)
		}
	}
}

func FuzzDecodeCheckRunBody(f *testing.F) {
	for _, seed := range []string{`{"ref":"main"}`, `{}`, `{"ref":null}`, `{"reff":1}`, `[]`, `{"ref":"a"} x`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var b checkRunBody
		err := decodeStrict([]byte(body), &b, "ref")
		if err != nil && apperr.CodeOf(err) != apperr.Invalid {
			t.Fatalf("%q: error %v is not invalid input", body, err)
		}
	})
}
