package storetest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/apperr"
	"github.com/docsmith/docsmith/internal/checkrun"
)

func checkRunCases() []testCase {
	return []testCase{
		{"CheckRuns/SaveGetList", testCheckRuns},
		{"CheckRuns/Bounds", testCheckRunBounds},
	}
}

func sampleReport(domain, ref string, t0 time.Time) answercheck.Report {
	check := answercheck.Check{Name: "restore", Question: "How do I restore a snapshot?", Cite: []string{"guides/backups"}, Origin: answercheck.OriginFile}
	before := answercheck.Judge(check, answercheck.Answer{Status: "not_covered", Text: "The documentation does not cover this."})
	after := answercheck.Judge(check, answercheck.Answer{Status: "answered", Text: "Stop the service, then restore — «snapshot» ✓.", Cited: []string{"guides/backups"}})
	checks, totals := answercheck.Compare([]answercheck.Result{before}, []answercheck.Result{after})
	return answercheck.Report{Domain: domain, Ref: ref, Commit: strings.Repeat("a", 40), BaseCommit: strings.Repeat("b", 40),
		Checks: checks, Totals: totals, Problems: []string{".docsmith/checks.yaml:3: checks[0].cites: is not a known key"},
		IndexDuration: 1500 * time.Millisecond, AnswerDuration: 2 * time.Second, StartedAt: t0}
}

// testCheckRuns: a run comes back as it was saved, with an id and a
// time; the domain's runs list newest first, of one trigger or all, and
// another domain's are neither listed nor found.
func testCheckRuns(t *testing.T, s Store) {
	e := setup(t, s)
	rep := sampleReport("help", "refs/pull/7/head", e.t0)
	saved, err := s.SaveRun(e.ctx, checkrun.Run{Domain: "help", Trigger: checkrun.TriggerPullRequest, PRNumber: 7, PRLink: "https://git.example.com/acme/docs/pulls/7", Report: rep, CreatedAt: e.t0})
	must(t, err, "SaveRun")
	if !strings.HasPrefix(saved.ID, "run_") || !saved.CreatedAt.Equal(e.t0) {
		t.Fatalf("saved = %s at %v", saved.ID, saved.CreatedAt)
	}
	got, err := s.GetRun(e.ctx, "help", saved.ID)
	must(t, err, "GetRun")
	sameTime(t, "CreatedAt", got.CreatedAt, e.t0)
	sameTime(t, "Report.StartedAt", got.Report.StartedAt, e.t0)
	got.CreatedAt, got.Report.StartedAt = saved.CreatedAt, saved.Report.StartedAt
	if !reflect.DeepEqual(got, saved) {
		t.Fatalf("GetRun =\n%+v\nwant\n%+v", got, saved)
	}
	if got.Report.Totals.NewlyAnswered != 1 || got.Report.Checks[0].Before == nil || got.Report.Checks[0].After.Answer.Text != rep.Checks[0].After.Answer.Text {
		t.Fatalf("report = %+v", got.Report)
	}

	later, err := s.SaveRun(e.ctx, checkrun.Run{Domain: "help", Trigger: checkrun.TriggerSchedule, Report: sampleReport("help", "", e.t0), CreatedAt: e.t0.Add(time.Hour)})
	must(t, err, "SaveRun schedule")
	_, err = s.SaveRun(e.ctx, checkrun.Run{Domain: "other", Trigger: checkrun.TriggerSchedule, Report: sampleReport("other", "", e.t0), CreatedAt: e.t0.Add(2 * time.Hour)})
	must(t, err, "SaveRun other")

	ids := func(runs []checkrun.Run) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	all, err := s.ListRuns(e.ctx, "help", "", 0)
	must(t, err, "ListRuns")
	if want := []string{later.ID, saved.ID}; !reflect.DeepEqual(ids(all), want) {
		t.Fatalf("ListRuns = %v, want %v", ids(all), want)
	}
	prs, err := s.ListRuns(e.ctx, "help", checkrun.TriggerPullRequest, 10)
	must(t, err, "ListRuns pull_request")
	if want := []string{saved.ID}; !reflect.DeepEqual(ids(prs), want) || prs[0].PRNumber != 7 {
		t.Fatalf("ListRuns pull_request = %v, want %v", ids(prs), want)
	}
	one, err := s.ListRuns(e.ctx, "help", "", 1)
	must(t, err, "ListRuns limit 1")
	if want := []string{later.ID}; !reflect.DeepEqual(ids(one), want) {
		t.Fatalf("ListRuns limit 1 = %v, want %v", ids(one), want)
	}
	if _, err := s.GetRun(e.ctx, "other", saved.ID); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("another domain's run = %v, want NotFound", err)
	}
	if none, err := s.ListRuns(e.ctx, "nobody", "", 5); err != nil || len(none) != 0 || none == nil {
		t.Fatalf("ListRuns of a domain without runs = %v, %v; want an empty list", none, err)
	}
}

// testCheckRunBounds: a report too large keeps short answers; a run
// without a domain or trigger is refused.
func testCheckRunBounds(t *testing.T, s Store) {
	e := setup(t, s)
	rep := sampleReport("help", "main", e.t0)
	long := strings.Repeat("é", checkrun.MaxReportBytes/2/len("é")+10)
	for i := range 3 {
		c := rep.Checks[0]
		c.After.Check.Name = c.After.Check.Name + string(rune('a'+i))
		c.After.Answer.Text = long
		rep.Checks = append(rep.Checks, c)
	}
	saved, err := s.SaveRun(e.ctx, checkrun.Run{Domain: "help", Trigger: checkrun.TriggerCLI, Report: rep})
	must(t, err, "SaveRun of a large report")
	got, err := s.GetRun(e.ctx, "help", saved.ID)
	must(t, err, "GetRun")
	if len(got.Report.Checks) != 4 || len(got.Report.Checks[1].After.Answer.Text) > checkrun.ShortAnswerText+len("…") || !strings.HasPrefix(got.Report.Checks[1].After.Answer.Text, "éé") {
		t.Fatalf("a large report kept %d checks, the second with %d bytes of answer", len(got.Report.Checks), len(got.Report.Checks[1].After.Answer.Text))
	}
	if time.Since(got.CreatedAt) > time.Hour {
		t.Fatalf("a run saved without a time got %v", got.CreatedAt)
	}
	for _, r := range []checkrun.Run{{Trigger: checkrun.TriggerCLI}, {Domain: "help"}} {
		if _, err := s.SaveRun(e.ctx, r); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("SaveRun %+v = %v, want Invalid", r, err)
		}
	}
}
