package app_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/answercheck"
	"github.com/docsmith/docsmith/internal/app"
	"github.com/docsmith/docsmith/internal/checkrun"
	"github.com/docsmith/docsmith/internal/cli"
	"github.com/docsmith/docsmith/internal/config"
	"github.com/docsmith/docsmith/internal/gitcli"
	"github.com/docsmith/docsmith/internal/search"
)

// servedState is everything a domain's served index is made of, as bytes:
// the store's chunks and index version, its page catalog and index state
// (statistics), and the snapshot files of the data directory.
func servedState(t *testing.T, b *app.Backend, dataDir, domain string) map[string][]byte {
	t.Helper()
	ctx := t.Context()
	out := map[string][]byte{}
	var chunks bytes.Buffer
	version, err := b.Local.DomainChunks(ctx, domain, func(c search.Chunk) error { return json.NewEncoder(&chunks).Encode(c) })
	if err != nil {
		t.Fatal(err)
	}
	out["chunks"] = chunks.Bytes()
	out["version"], _ = json.Marshal(version)
	catalog, err := b.Catalogs.GetCatalog(ctx, domain)
	if err != nil {
		t.Fatal(err)
	}
	out["catalog"], _ = json.Marshal(catalog)
	st, err := b.IndexStates.IndexState(ctx, domain)
	if err != nil {
		t.Fatal(err)
	}
	out["index state"], _ = json.Marshal(st)
	snapshots := filepath.Join(dataDir, "search-cache")
	err = filepath.WalkDir(snapshots, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out["file "+strings.TrimPrefix(p, snapshots)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckRunLeavesTheServedIndexAlone: check run --ref leaves the served
// index, its snapshot and its statistics byte-identical, and keeps none of
// its questions as threads.
func TestCheckRunLeavesTheServedIndexAlone(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	repo := filepath.Join(t.TempDir(), "docs")
	files := map[string]string{
		"docs/docs.json":        `{"name": "Lanterns", "navigation": {"pages": ["index", "guides/wicks", "guides/oil", "guides/glass"]}}`,
		"docs/guides/oil.mdx":   "---\ntitle: Oil\n---\n\nFill each lamp with paraffin oil; never mix oils in one tank.\n",
		"docs/guides/glass.mdx": "---\ntitle: Glass\n---\n\nClean the chimney glass with warm water and a soft cloth once a month.\n",
		"docs/index.mdx":        "---\ntitle: Lanterns\n---\n\nLanterns is a lamp controller for greenhouses.\n",
		"docs/guides/wicks.mdx": "---\ntitle: Wicks\n---\n\nTrim the wick of each lamp every week with the wick cutter.\n",
		".docsmith/checks.yaml": "checks:\n  - question: How do I trim a wick?\n    cite: [guides/wicks]\n  - question: How do I dim the lamps at night?\n    cite: [guides/dimming]\n",
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + repo, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, content string) {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		write(name, content)
	}
	git("init", "--quiet", "--initial-branch=main")
	git("add", "-A")
	git("commit", "--quiet", "-m", "docs")
	git("checkout", "--quiet", "-b", "dimming")
	write("docs/guides/dimming.mdx", "---\ntitle: Dimming\n---\n\nTo dim the lamps at night, set a night schedule in the controller; lamps dim at sunset.\n")
	write("docs/docs.json", `{"name": "Lanterns", "navigation": {"pages": ["index", "guides/wicks", "guides/oil", "guides/glass", "guides/dimming"]}}`)
	git("add", "-A")
	git("commit", "--quiet", "-m", "dimming")
	git("update-ref", "refs/pull/3/head", "HEAD")
	git("checkout", "--quiet", "main")

	env := cli.Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{},
		LookupEnv: func(k string) (string, bool) { return dir, k == "DOCSMITH_DATA_DIR" }}
	for _, args := range [][]string{
		{"org", "create", "acme"},
		{"project", "create", "--org", "acme", "--id", "lanterns", "--repo", repo, "--docs-root", "docs"},
		{"domain", "create", "--org", "acme", "--domain", "lanterns", "--project", "lanterns", "--index=false"},
		{"index", "lanterns"},
	} {
		if code := cli.Run(ctx, args, env); code != 0 {
			t.Fatalf("docsmith %v: %s", args, env.Stderr)
		}
	}
	cfg, err := config.Bind(flag.NewFlagSet("t", flag.ContinueOnError), true).Load(func(k string) (string, bool) {
		v, ok := map[string]string{"DOCSMITH_DATA_DIR": dir, "DOCSMITH_DEMO": "false"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	// A first process loads the domain and writes its snapshot.
	b, err := app.OpenBackend(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Index.Search(ctx, "lanterns", search.Query{Text: "wick", Limit: 3}); err != nil {
		t.Fatal(err)
	}
	_ = b.Close()

	b, err = app.OpenBackend(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	before := servedState(t, b, dir, "lanterns")
	g, err := gitcli.New(app.GitConfig(cfg, log))
	if err != nil {
		t.Fatal(err)
	}
	runner := app.NewCheckRunner(cfg, g, b, app.ModelConfig(cfg, nil, log), nil, nil, log)
	d, err := b.Tenants.GetDomain(ctx, "lanterns")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := runner.Run(ctx, checkrun.Request{Domain: d, Ref: "refs/pull/3/head", Trigger: checkrun.TriggerCLI})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Totals.NewlyAnswered != 1 || rep.Totals.Unchanged != 1 || rep.BaseCommit != git("rev-parse", "main") {
		js, _ := json.MarshalIndent(rep, "", " ")
		t.Fatalf("report = %s", js)
	}
	var dimming answercheck.Compared
	for _, c := range rep.Checks {
		if strings.Contains(c.After.Check.Question, "dim") {
			dimming = c
		}
	}
	if dimming.Change != answercheck.NewlyAnswered {
		t.Fatalf("the dimming check = %+v", dimming)
	}
	// The served index still answers as before the run.
	hits, err := b.Index.Search(ctx, "lanterns", search.Query{Text: "dim lamps night", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.PagePath == "guides/dimming" {
			t.Fatalf("the served index found the pull request's page")
		}
	}
	_ = b.Close()
	b, err = app.OpenBackend(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	after := servedState(t, b, dir, "lanterns")
	if !reflect.DeepEqual(before, after) {
		for k := range before {
			if !bytes.Equal(before[k], after[k]) {
				t.Errorf("%s changed", k)
			}
		}
		t.Fatalf("the served index changed: %v before, %v after", mapsKeys(before), mapsKeys(after))
	}
	// No question of the run was kept as a reader's.
	turns, err := b.Analytics.DomainTurns(ctx, "lanterns", time.Time{}, time.Time{}, 10)
	if err != nil || len(turns) != 0 {
		t.Fatalf("turns kept: %d, %v", len(turns), err)
	}
}

func mapsKeys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
