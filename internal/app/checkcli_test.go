package app_test

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/cli"
)

// The docs of a made-up product, a lantern daemon, for the checks tests.
var lanternDocs = map[string]string{
	"docs.json":            `{"name": "Lanternd", "navigation": {"pages": ["index", "guides/install", "guides/timetable", "guides/pairing", "reference/config"]}}`,
	"guides/timetable.mdx": "---\ntitle: Timetables\n---\n\nA timetable says when each lantern brightens and dims. Write it in `timetable.toml`, one entry per lantern group.\n",
	"guides/pairing.mdx":   "---\ntitle: Pairing lanterns\n---\n\nPair a new lantern by holding its button for five seconds while `lanternd pair` runs.\n",
	"reference/config.mdx": "---\ntitle: Configuration\n---\n\nThe configuration file sets the radio channel, the log level and the path of the timetable.\n",
	"index.mdx":            "---\ntitle: Lanternd\n---\n\nLanternd dims and brightens garden lanterns on a timetable.\n",
	"guides/install.mdx": "---\ntitle: Install Lanternd\n---\n\n" +
		"Install Lanternd with the package archive: unpack it and run `lanternd setup` to pair the lanterns.\n",
	".docsmith/checks.yaml": `checks:
  - name: install
    question: How do I install Lanternd?
    cite: [guides/install]
  - name: moonlight-mode
    question: How do I turn on moonlight mode?
    cite: [guides/moonlight]
    contains: ["moonlight"]
`,
}

const moonlightPage = "---\ntitle: Moonlight mode\n---\n\n" +
	"Moonlight mode keeps every lantern at a tenth of its brightness through the night.\n\n" +
	"## Turn on moonlight mode\n\nTo turn on moonlight mode, run `lanternd mode moonlight` and the lanterns dim at dusk.\n"

func lanternGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=writer", "GIT_AUTHOR_EMAIL=writer@example.com", "GIT_COMMITTER_NAME=writer", "GIT_COMMITTER_EMAIL=writer@example.com"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeLanternFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// lanternRepo is a docs repository on main, with two pull requests kept
// as a forge keeps them: refs/pull/1/head adds the page that answers
// moonlight-mode, refs/pull/2/head removes the install guide.
func lanternRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "lanternd-docs")
	writeLanternFiles(t, repo, lanternDocs)
	lanternGit(t, repo, "init", "--quiet", "--initial-branch=main")
	lanternGit(t, repo, "add", "-A")
	lanternGit(t, repo, "commit", "--quiet", "-m", "docs")
	pull := func(n string, files map[string]string, remove ...string) {
		lanternGit(t, repo, "checkout", "--quiet", "-b", "proposal-"+n, "main")
		writeLanternFiles(t, repo, files)
		for _, f := range remove {
			if err := os.Remove(filepath.Join(repo, filepath.FromSlash(f))); err != nil {
				t.Fatal(err)
			}
		}
		lanternGit(t, repo, "add", "-A")
		lanternGit(t, repo, "commit", "--quiet", "-m", "proposal "+n)
		lanternGit(t, repo, "update-ref", "refs/pull/"+n+"/head", "HEAD")
		lanternGit(t, repo, "checkout", "--quiet", "main")
	}
	pull("1", map[string]string{
		"guides/moonlight.mdx": moonlightPage,
		"docs.json":            `{"name": "Lanternd", "navigation": {"pages": ["index", "guides/install", "guides/timetable", "guides/pairing", "reference/config", "guides/moonlight"]}}`,
	})
	pull("2", map[string]string{"docs.json": `{"name": "Lanternd", "navigation": {"pages": ["index", "guides/timetable", "guides/pairing", "reference/config"]}}`}, "guides/install.mdx")
	return repo
}

// TestCheckRunCLIAndAPI: docsmith check run on a real git repository and
// a real SQLite store, in this process and through a running server; a
// pull request that answers a check exits 0, one that breaks a check
// exits 1; every run is stored and read back over HTTP as openapi.json
// describes it.
func TestCheckRunCLIAndAPI(t *testing.T) {
	t.Parallel()
	s := setup(t)
	repo := lanternRepo(t)
	main := lanternGit(t, repo, "rev-parse", "main")
	s.cli("project", "create", "--org", orgA, "--id", "lanternd", "--repo", repo, "--forge", "local")
	s.cli("domain", "create", "--org", orgA, "--domain", "lanternd-docs", "--project", "lanternd")

	checkRun := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Run(t.Context(), append([]string{"check", "run"}, args...), cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, LookupEnv: s.lookupEnv})
		return code, stdout.String(), stderr.String()
	}

	// In this process, on the data directory.
	code, out, errOut := checkRun("lanternd-docs", "--ref", "refs/pull/1/head", "--data", s.dir)
	if code != 0 {
		t.Fatalf("check run of the pull request that answers a check: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"moonlight-mode", "fail → pass", "newly answered", "1 reader question now answered, 0 regressed", main[:12]} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = checkRun("lanternd-docs", "--ref", "refs/pull/2/head", "--data", s.dir)
	if code != 1 || !strings.Contains(out, "regressed") || !strings.Contains(errOut, "1 of 2 checks regressed") {
		t.Fatalf("check run of the pull request that breaks a check: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := checkRun("lanternd-docs", "--ref", "refs/pull/9/head", "--data", s.dir); code != 3 || errOut == "" {
		t.Errorf("a pull request that does not exist: exit %d, want 3: %s", code, errOut)
	}

	// Over HTTP: the run, then the runs and the run read back.
	r := s.post("/v2/domains/lanternd-docs/checks/run", s.adminA, map[string]string{"ref": "refs/pull/1/head"})
	expectStatus(t, r, http.StatusCreated)
	run := decode[checkrun.Run](t, r)
	if run.Trigger != checkrun.TriggerAPI || run.Report.Totals.NewlyAnswered != 1 || run.Report.Commit == "" || run.Report.BaseCommit != main {
		t.Errorf("the API's run = %+v", run)
	}
	if loc := r.header.Get("Location"); loc != "/v2/domains/lanternd-docs/checks/runs/"+run.ID {
		t.Errorf("Location = %q", loc)
	}
	list := decode[struct {
		Runs []struct {
			ID, Trigger, Summary string
		} `json:"runs"`
	}](t, s.get("/v2/domains/lanternd-docs/checks/runs", s.adminA))
	if len(list.Runs) != 3 || list.Runs[0].ID != run.ID || list.Runs[1].Trigger != checkrun.TriggerCLI || list.Runs[1].Summary != "0 reader questions now answered, 1 regressed" {
		t.Errorf("runs = %+v", list.Runs)
	}
	again := decode[checkrun.Run](t, s.get("/v2/domains/lanternd-docs/checks/runs/"+run.ID, s.adminA))
	if again.ID != run.ID || len(again.Report.Checks) != 2 {
		t.Errorf("the run read back = %+v", again)
	}
	expectStatus(t, s.get("/v2/domains/lanternd-docs/checks/runs/"+run.ID, s.adminB), http.StatusNotFound)

	// Through the server, as a docs repository's CI calls it.
	code, out, errOut = checkRun("lanternd-docs", "--ref", "refs/pull/2/head", "--url", s.base, "--key", s.adminA, "--format", "junit")
	if code != 1 {
		t.Fatalf("check run on the server of the breaking pull request: exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, out)
	}
	failed := map[string]string{}
	for _, c := range suites.Suites[0].Cases {
		if c.Failure != nil {
			failed[c.Name] = c.Failure.Type
		}
	}
	if suites.Tests != 2 || failed["install"] != "regressed" || failed["moonlight-mode"] != "failed" {
		t.Errorf("JUnit: %d tests, failures %v\n%s", suites.Tests, failed, out)
	}

	// Checks never reach the domain's analytics.
	convs := s.get("/v2/analytics/lanternd-docs/conversations", s.adminA)
	expectStatus(t, convs, http.StatusOK)
	if strings.Contains(string(convs.body), "moonlight") {
		t.Errorf("a check's question shows in the conversations: %s", convs.body)
	}
}
