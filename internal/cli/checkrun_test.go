package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/checkrun"
)

// sampleRun is a run of three checks against a pull request's head: one
// newly answered, one regressed, one unchanged (still failing).
func sampleRun(regress bool) checkrun.Run {
	restore := answercheck.Check{Name: "restore-snapshot", Question: "How do I restore a snapshot of the data directory?", Cite: []string{"guides/backups"}, Contains: []string{"restore"}, Origin: answercheck.OriginFile}
	limits := answercheck.Check{Name: "upload-limits", Question: "What is the largest file I can upload?", Cite: []string{"reference/limits"}, Origin: answercheck.OriginUpvote, ID: "tc_1"}
	helm := answercheck.Check{Name: "helm-chart", Question: "How do I deploy with a Helm chart?", Answered: true, Origin: answercheck.OriginGap, ID: "tc_2"}
	covered := answercheck.Answer{Status: "answered", Text: "Stop the server and restore the snapshot into the data directory.", Cited: []string{"guides/backups"}}
	notCovered := answercheck.Answer{Status: "not_covered", Text: "The docs do not say."}
	limitsAnswer := answercheck.Answer{Status: "answered", Text: "Uploads are capped at 50 MB.", Cited: []string{"reference/limits"}}
	limitsAfter := limitsAnswer
	if regress {
		limitsAfter = answercheck.Answer{Status: "partial", Text: "See the uploads page.", Cited: []string{"guides/uploads"}}
	}
	before := []answercheck.Result{answercheck.Judge(restore, notCovered), answercheck.Judge(limits, limitsAnswer), answercheck.Judge(helm, notCovered)}
	after := []answercheck.Result{answercheck.Judge(restore, covered), answercheck.Judge(limits, limitsAfter), answercheck.Judge(helm, notCovered)}
	compared, totals := answercheck.Compare(before, after)
	return checkrun.Run{
		ID: "cr_1", Domain: "docs.acme.test", Trigger: checkrun.TriggerAPI, CreatedAt: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC),
		Report: answercheck.Report{
			Domain: "docs.acme.test", Ref: "refs/pull/7/head", Commit: "0123456789abcdef0123", BaseCommit: "fedcba9876543210fedc",
			Checks: compared, Totals: totals, Problems: []string{".docsmith/checks.yaml:9: checks[3]: unknown key \"cites\""},
			IndexDuration: 1200 * time.Millisecond, AnswerDuration: 3400 * time.Millisecond, StartedAt: time.Date(2026, 3, 2, 8, 59, 55, 0, time.UTC),
		},
	}
}

// checksAPI is a local server that speaks docsmith's checks API as the
// real one does (the run's JSON is the same type's), recording requests.
type checksAPI struct {
	mu     sync.Mutex
	bodies []string
	auth   []string
	run    checkrun.Run
	status int
	errMsg string
}

func newChecksAPI(t *testing.T, run checkrun.Run) (*checksAPI, string) {
	t.Helper()
	api := &checksAPI{run: run, status: http.StatusCreated}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		api.mu.Lock()
		defer api.mu.Unlock()
		api.bodies = append(api.bodies, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Content-Type")+" "+string(body))
		api.auth = append(api.auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(api.status)
		if api.errMsg != "" {
			_ = json.NewEncoder(w).Encode(map[string]string{"error": api.errMsg})
			return
		}
		_ = json.NewEncoder(w).Encode(api.run)
	}))
	t.Cleanup(srv.Close)
	return api, srv.URL
}

func runEnv(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, LookupEnv: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}}
	code := Run(t.Context(), args, env)
	return result{code, out.String(), errOut.String()}
}

func TestCheckRunOnAServerExitCodes(t *testing.T) {
	t.Parallel()
	api, base := newChecksAPI(t, sampleRun(true))
	vars := map[string]string{"DOCSMITH_URL": base, "DOCSMITH_API_KEY": "svc_test_key"}

	r := runEnv(t, vars, "check", "run", "docs.acme.test", "--ref", "refs/pull/7/head")
	if r.code != exitRegressed {
		t.Errorf("a run with a regression exits %d, want %d: %+v", r.code, exitRegressed, r)
	}
	if !strings.Contains(r.stderr, "1 of 3 checks regressed") {
		t.Errorf("stderr does not say what regressed: %q", r.stderr)
	}
	for _, want := range []string{
		"docs.acme.test at refs/pull/7/head (0123456789ab) against the served index (fedcba987654)",
		"restore-snapshot", "fail → pass", "newly answered",
		"upload-limits", "pass → fail", "regressed", "expected a citation of reference/limits; it cited guides/uploads",
		"helm-chart", "fail → fail", "unchanged", "the answer said the docs do not cover this",
		"3 checks: 1 pass, 2 fail; 1 newly answered, 1 regressed, 1 unchanged, 0 added",
		"temporary index built in 1.2s, answers in 3.4s",
		`.docsmith/checks.yaml:9: checks[3]: unknown key "cites"`,
		"1 reader question now answered, 1 regressed",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, r.stdout)
		}
	}
	api.mu.Lock()
	if len(api.bodies) != 1 || api.bodies[0] != `POST /v2/domains/docs.acme.test/checks/run application/json {"ref":"refs/pull/7/head"}` {
		t.Errorf("requests = %q", api.bodies)
	}
	if api.auth[0] != "Bearer svc_test_key" {
		t.Errorf("Authorization = %q", api.auth[0])
	}
	api.run = sampleRun(false)
	api.mu.Unlock()

	if r := runEnv(t, vars, "check", "run", "docs.acme.test", "--ref", "docs-change"); r.code != 0 {
		t.Errorf("a run without a regression exits %d: %+v", r.code, r)
	}
	// Without --ref the request has no body: the served index alone.
	if r := runEnv(t, vars, "check", "run", "docs.acme.test"); r.code != 0 {
		t.Errorf("a run of the served index: %+v", r)
	}
	api.mu.Lock()
	if last := api.bodies[len(api.bodies)-1]; last != "POST /v2/domains/docs.acme.test/checks/run  " {
		t.Errorf("a run without --ref sent %q", last)
	}
	api.status, api.errMsg = http.StatusNotFound, `domain "nope" not found`
	api.mu.Unlock()

	r = runEnv(t, vars, "check", "run", "nope")
	if r.code != exitCheckFailure || !strings.Contains(r.stderr, `domain "nope" not found (HTTP 404)`) {
		t.Errorf("a run the server refused: %+v", r)
	}
}

func TestCheckRunUsageAndFailures(t *testing.T) {
	t.Parallel()
	_, base := newChecksAPI(t, sampleRun(false))
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		code int
		says string
	}{
		{"no domain", nil, []string{"check", "run"}, 2, "Exit status: 0 when no check regressed, 1 when at least one did"},
		{"two domains", nil, []string{"check", "run", "a", "b"}, 2, "Usage: docsmith check run DOMAIN"},
		{"unknown format", nil, []string{"check", "run", "d", "--format", "xml"}, 2, `--format "xml" must be table, json or junit`},
		{"option-like ref", nil, []string{"check", "run", "d", "--ref=-x"}, 2, "--ref must be a branch or a full ref"},
		{"url without key", nil, []string{"check", "run", "d", "--url", base}, exitCheckFailure, "an admin key is needed with --url"},
		{"unreachable server", nil, []string{"check", "run", "d", "--url", "http://127.0.0.1:1", "--key", "k"}, exitCheckFailure, "cannot reach docsmith at http://127.0.0.1:1"},
		{"unknown domain in the store", map[string]string{"DOCSMITH_DATA_DIR": t.TempDir()}, []string{"check", "run", "nope"}, exitCheckFailure, `"nope"`},
	} {
		r := runEnv(t, tc.vars, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("%s: exit %d, stderr %q; want %d saying %q", tc.name, r.code, r.stderr, tc.code, tc.says)
		}
	}
	if r := runEnv(t, nil, "check", "run", "--help"); r.code != 0 || !strings.Contains(r.stderr, "3 when the\nrun could not be made") {
		t.Errorf("--help: %+v", r)
	}
}

func TestCheckRunJSONIsTheStoredRun(t *testing.T) {
	t.Parallel()
	want := sampleRun(true)
	_, base := newChecksAPI(t, want)
	r := runEnv(t, map[string]string{"DOCSMITH_API_KEY": "k"}, "check", "run", "docs.acme.test", "--ref", "refs/pull/7/head", "--format", "json", "--url", base)
	if r.code != exitRegressed {
		t.Fatalf("exit %d: %+v", r.code, r)
	}
	var got checkrun.Run
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not a run: %v\n%s", err, r.stdout)
	}
	if got.ID != want.ID || got.Report.Totals != want.Report.Totals || len(got.Report.Checks) != 3 || got.Report.Checks[1].Change != answercheck.Regressed {
		t.Errorf("run = %+v", got)
	}
	if !strings.Contains(r.stdout, `"summary": "1 reader question now answered, 1 regressed"`) {
		t.Errorf("the JSON has no summary:\n%s", r.stdout)
	}
}

func TestCheckRunJUnit(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := writeCheckJUnit(&out, sampleRun(true)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML header:\n%s", out.String())
	}
	// Read back as a CI system's JUnit reader does.
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name       string `xml:"name,attr"`
			Tests      int    `xml:"tests,attr"`
			Failures   int    `xml:"failures,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Body    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
			SystemErr string `xml:"system-err"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, out.String())
	}
	if doc.Tests != 3 || doc.Failures != 2 || len(doc.Suites) != 1 {
		t.Fatalf("totals: %+v", doc)
	}
	s := doc.Suites[0]
	if s.Name != "docsmith answer checks: docs.acme.test" || len(s.Cases) != 3 || !strings.Contains(s.SystemErr, `unknown key "cites"`) {
		t.Errorf("suite: %+v", s)
	}
	props := map[string]string{}
	for _, p := range s.Properties {
		props[p.Name] = p.Value
	}
	if props["ref"] != "refs/pull/7/head" || props["summary"] != "1 reader question now answered, 1 regressed" {
		t.Errorf("properties: %v", props)
	}
	if c := s.Cases[0]; c.Name != "restore-snapshot" || c.Failure != nil || c.Classname != "docsmith.docs.acme.test.file" {
		t.Errorf("passing case: %+v", c)
	}
	if c := s.Cases[1]; c.Failure == nil || c.Failure.Type != "regressed" || c.Failure.Message != "expected a citation of reference/limits; it cited guides/uploads" ||
		!strings.Contains(c.Failure.Body, "before: pass, answered, cited reference/limits") {
		t.Errorf("regressed case: %+v", c)
	}
	if c := s.Cases[2]; c.Failure == nil || c.Failure.Type != "failed" || !strings.Contains(c.Failure.Body, "question: How do I deploy with a Helm chart?") {
		t.Errorf("failing case: %+v", c)
	}
}

func TestCheckRunTableOfTheServedIndex(t *testing.T) {
	t.Parallel()
	run := sampleRun(false)
	run.Report.Ref, run.Report.Commit, run.Report.Problems = "", "", nil
	var after []answercheck.Result
	for _, c := range run.Report.Checks {
		after = append(after, c.After)
	}
	run.Report.Checks, run.Report.Totals = answercheck.Compare(nil, after)
	var out bytes.Buffer
	if err := writeCheckTable(&out, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"docs.acme.test, the served index (fedcba987654)", "- → pass", "added", "answers in 3.4s", "2 of 3 checks pass, 0 regressed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "temporary index") {
		t.Errorf("a run of the served index builds no index:\n%s", out.String())
	}
}
