package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/llm"
)

// Exit codes of check run besides 0 (no check regressed) and 2 (usage):
// a docs repository's CI tells a regression from a run that could not
// be made.
const (
	exitRegressed    = 1
	exitCheckFailure = 3
)

const checkRunUsage = `Usage: docsmith check run DOMAIN [--ref REF] [--format table|json|junit] [--url URL --key KEY | --data DIR]

Runs the domain's answer checks: the questions of .docsmith/checks.yaml in the docs repository (at
REF) and the checks kept from the domain's traffic. With --ref, a temporary index of that branch or
full ref (refs/pull/7/head, refs/merge-requests/7/head) is built, every check is answered on it and
on the served index, and the report says which checks are newly answered, which regressed and which
are unchanged; the served index is not touched. Without --ref the served index alone is asked.
The run is stored (GET /v2/domains/DOMAIN/checks/runs).

With --url (or DOCSMITH_URL) the server runs the checks, with an admin key (--key or
DOCSMITH_API_KEY): what a docs repository's CI does. Without it this process opens the store of
--data DIR (or DOCSMITH_DATA_DIR, or the configured database) and runs them itself.

Exit status: 0 when no check regressed, 1 when at least one did, 2 for a usage error, 3 when the
run could not be made (an unknown domain, a ref that cannot be read, a server that cannot be reached).

`

// checkRunCommand runs 'docsmith check run'.
func checkRunCommand(ctx context.Context, args []string, env Env) error {
	fs := newFlagSet("check run", env)
	loader := config.Bind(fs, false)
	var ref, format, serverURL, key string
	fs.StringVar(&ref, "ref", "", "branch or full ref whose docs are checked (default: the served index alone)")
	fs.StringVar(&format, "format", "table", "table, json (the stored run) or junit (XML for CI)")
	fs.StringVar(&serverURL, "url", envOr(env, "DOCSMITH_URL", ""), "run on this docsmith server (env DOCSMITH_URL); without it, on the store of --data")
	fs.StringVar(&key, "key", envOr(env, "DOCSMITH_API_KEY", ""), "admin key svc_... for --url (env DOCSMITH_API_KEY)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, checkRunUsage)
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return usageErr(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	render, ok := checkRenderers[format]
	if !ok {
		fmt.Fprintf(env.Stderr, "docsmith check run: --format %q must be table, json or junit\n", format)
		return errUsage
	}
	if ref != "" {
		if err := gitcli.ValidateRef(ref); err != nil {
			fmt.Fprintf(env.Stderr, "docsmith check run: --ref must be a branch or a full ref that git accepts: %v\n", err)
			return errUsage
		}
	}
	domain := pos[0]
	var run checkrun.Run
	if serverURL != "" {
		run, err = remoteCheckRun(ctx, serverURL, key, domain, ref)
	} else {
		run, err = localCheckRun(ctx, loader, env, domain, ref)
	}
	if err != nil {
		return &exitError{code: exitCheckFailure, err: err}
	}
	if err := render(env.Stdout, run); err != nil {
		return &exitError{code: exitCheckFailure, err: fmt.Errorf("write the report: %w", err)}
	}
	if n := run.Report.Totals.Regressed; n > 0 {
		return &exitError{code: exitRegressed, err: fmt.Errorf("%d of %d checks regressed", n, run.Report.Totals.Checks)}
	}
	return nil
}

// exitError is an error that ends the process with its own exit code;
// Run prints err, when there is one, as it prints other errors.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// remoteCheckRun asks a docsmith server to run the checks and returns the
// run it stored.
func remoteCheckRun(ctx context.Context, base, key, domain, ref string) (checkrun.Run, error) {
	if key == "" {
		return checkrun.Run{}, errors.New("an admin key is needed with --url: --key or DOCSMITH_API_KEY")
	}
	c := &jobClient{base: base, key: key, http: &http.Client{}}
	u := strings.TrimRight(base, "/") + "/v2/domains/" + url.PathEscape(domain) + "/checks/run"
	var body io.Reader
	if ref != "" {
		b, err := json.Marshal(map[string]string{"ref": ref})
		if err != nil {
			return checkrun.Run{}, err
		}
		body = bytes.NewReader(b)
	}
	var run checkrun.Run
	if err := c.send(ctx, http.MethodPost, u, body, body != nil, &run); err != nil {
		return checkrun.Run{}, fmt.Errorf("run the checks of %s: %w", domain, err)
	}
	return run, nil
}

// localCheckRun runs the checks in this process, on the configured store,
// and stores the run there.
func localCheckRun(ctx context.Context, loader *config.Loader, env Env, domain, ref string) (checkrun.Run, error) {
	cfg, err := loader.Load(env.LookupEnv)
	if err != nil {
		return checkrun.Run{}, err
	}
	// One logger for the store and the runner: two handlers writing to one
	// stderr would interleave their lines.
	log := cfg.Logger(env.Stderr)
	b, err := app.OpenBackend(ctx, cfg, log)
	if err != nil {
		return checkrun.Run{}, err
	}
	defer func() { _ = b.Close() }()
	d, err := b.Tenants.GetDomain(ctx, domain)
	if err != nil {
		return checkrun.Run{}, err
	}
	runner, runs, err := localChecks(cfg, b, env, log)
	if err != nil {
		return checkrun.Run{}, err
	}
	report, err := runner.Run(ctx, checkrun.Request{Domain: d, Ref: ref, Trigger: checkrun.TriggerCLI})
	if err != nil {
		return checkrun.Run{}, fmt.Errorf("run the checks of %s: %w", domain, err)
	}
	run, err := runs.SaveRun(ctx, checkrun.Run{Domain: d.ID, Trigger: checkrun.TriggerCLI, Report: report})
	if err != nil {
		return checkrun.Run{}, fmt.Errorf("store the run of the checks of %s: %w", domain, err)
	}
	return run, nil
}

// checkRunner runs a domain's checks (checkrun.Runner).
type checkRunner interface {
	Run(ctx context.Context, req checkrun.Request) (answercheck.Report, error)
}

// localChecks is the runner and the store of runs of the backend, as a
// server has them.
func localChecks(cfg config.Config, b *app.Backend, env Env, log *slog.Logger) (checkRunner, checkrun.Store, error) {
	git, err := gitcli.New(app.GitConfig(cfg, log))
	if err != nil {
		return nil, nil, fmt.Errorf("docsmith needs git: %w", err)
	}
	lookupEnv := env.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	models := llm.Config{
		OpenAIBaseURL:    cfg.Models.OpenAIBaseURL,
		OpenAIAPIKey:     cfg.Models.OpenAIAPIKey,
		AnthropicBaseURL: cfg.Models.AnthropicBaseURL,
		AnthropicAPIKey:  cfg.Models.AnthropicAPIKey,
		CallTimeout:      cfg.Models.CallTimeout,
		Log:              log,
	}
	return app.NewCheckRunner(cfg, git, b, models, app.NewTrafficChecks(b, nil, log), lookupEnv, log), b.CheckRuns, nil
}

// checkRenderers write a run as --format says.
var checkRenderers = map[string]func(io.Writer, checkrun.Run) error{
	"table": writeCheckTable,
	"json":  writeCheckJSON,
	"junit": writeCheckJUnit,
}

func writeCheckJSON(w io.Writer, run checkrun.Run) error {
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// writeCheckTable writes one line per check (its name, its result before
// and after, the change and why it failed), the totals and the summary.
func writeCheckTable(w io.Writer, run checkrun.Run) error {
	rep := run.Report
	if rep.Ref != "" {
		fmt.Fprintf(w, "%s at %s (%s) against the served index (%s)\n\n", rep.Domain, rep.Ref, shortCommit(rep.Commit), shortCommit(rep.BaseCommit))
	} else {
		fmt.Fprintf(w, "%s, the served index (%s)\n\n", rep.Domain, shortCommit(rep.BaseCommit))
	}
	if err := table(w, []string{"CHECK", "BEFORE → AFTER", "CHANGE", "WHY IT FAILED"}, len(rep.Checks), func(i int) []string {
		c := rep.Checks[i]
		before := "-"
		if c.Before != nil {
			before = passWord(c.Before.Pass)
		}
		return []string{oneLine(c.After.Check.Name, 60), before + " → " + passWord(c.After.Pass), changeWords(c.Change), strings.Join(c.After.Failures, "; ")}
	}); err != nil {
		return err
	}
	t := rep.Totals
	fmt.Fprintf(w, "\n%d checks: %d pass, %d fail; %d newly answered, %d regressed, %d unchanged, %d added\n",
		t.Checks, t.Passed, t.Failed, t.NewlyAnswered, t.Regressed, t.Unchanged, t.Added)
	if rep.Ref != "" {
		fmt.Fprintf(w, "temporary index built in %s, answers in %s\n", rep.IndexDuration.Round(time.Millisecond), rep.AnswerDuration.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "answers in %s\n", rep.AnswerDuration.Round(time.Millisecond))
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintf(w, "\n%d problems:\n", len(rep.Problems))
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", rep.Summary())
	return err
}

func passWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

func changeWords(c answercheck.Change) string {
	return strings.ReplaceAll(string(c), "_", " ")
}

func shortCommit(sha string) string {
	switch {
	case sha == "":
		return "commit unknown"
	case len(sha) > 12:
		return sha[:12]
	}
	return sha
}

// The JUnit XML that CI systems read (GitHub Actions' test reporters,
// GitLab's junit artifacts, Jenkins): one suite per run, one test case per
// check, a failure per failing check.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemErr  string          `xml:"system-err,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func writeCheckJUnit(w io.Writer, run checkrun.Run) error {
	rep := run.Report
	seconds := func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
	suite := junitSuite{
		Name:  "docsmith answer checks: " + rep.Domain,
		Tests: rep.Totals.Checks, Failures: rep.Totals.Failed,
		Time: seconds(rep.IndexDuration + rep.AnswerDuration),
	}
	if !rep.StartedAt.IsZero() {
		suite.Timestamp = rep.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	for _, p := range []junitProperty{{"domain", rep.Domain}, {"ref", rep.Ref}, {"commit", rep.Commit}, {"baseCommit", rep.BaseCommit}, {"run", run.ID}, {"summary", rep.Summary()}} {
		if p.Value != "" {
			suite.Properties = append(suite.Properties, p)
		}
	}
	if len(rep.Problems) > 0 {
		suite.SystemErr = strings.Join(rep.Problems, "\n")
	}
	classname := "docsmith." + rep.Domain
	for _, c := range rep.Checks {
		tc := junitCase{Name: c.After.Check.Name, Classname: classname + "." + c.After.Check.Origin, Time: "0"}
		tc.SystemOut = checkDetails(c)
		if !c.After.Pass {
			kind := "failed"
			if c.Change == answercheck.Regressed {
				kind = "regressed"
			}
			tc.Failure = &junitFailure{Message: strings.Join(c.After.Failures, "; "), Type: kind, Text: tc.SystemOut}
			tc.SystemOut = ""
		}
		suite.Cases = append(suite.Cases, tc)
	}
	doc := junitSuites{Name: "docsmith answer checks", Tests: suite.Tests, Failures: suite.Failures, Time: suite.Time, Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// checkDetails is a check's question, change and answer, for a test
// case's body.
func checkDetails(c answercheck.Compared) string {
	var b strings.Builder
	fmt.Fprintf(&b, "question: %s\nchange: %s\n", c.After.Check.Question, changeWords(c.Change))
	if c.Before != nil {
		fmt.Fprintf(&b, "before: %s, %s, cited %s\n", passWord(c.Before.Pass), statusOrNone(c.Before.Answer.Status), citedOrNothing(c.Before.Answer.Cited))
	}
	fmt.Fprintf(&b, "after: %s, %s, cited %s\n", passWord(c.After.Pass), statusOrNone(c.After.Answer.Status), citedOrNothing(c.After.Answer.Cited))
	for _, f := range c.After.Failures {
		fmt.Fprintf(&b, "- %s\n", f)
	}
	if text := oneLine(c.After.Answer.Text, 600); text != "" {
		fmt.Fprintf(&b, "answer: %s\n", text)
	}
	return b.String()
}

func statusOrNone(s string) string {
	if s == "" {
		return "no status"
	}
	return s
}

func citedOrNothing(pages []string) string {
	if len(pages) == 0 {
		return "nothing"
	}
	return strings.Join(pages, ", ")
}
