package app_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docsmith/docsmith/internal/llm/llmtest"
)

// clientsDir holds the Node tests that drive the real AI SDK chat clients.
const clientsDir = "../../clients/aisdk"

// TestAISDKClients runs the real Vercel AI SDK chat clients (ai 4, 5, 6, 7
// and the strict-era 5.0.0, installed by 'make test' with npm ci) against a
// real server, and against a server that streams an answer with a status,
// grounding and quoted sources (wireServer): the Node tests in clients/aisdk
// get the URLs and key from the environment. Without Node or the installed packages the test is skipped,
// except in CI (CI=true), where it fails.
func TestAISDKClients(t *testing.T) {
	t.Parallel()
	unavailable := t.Skipf
	if os.Getenv("CI") != "" && os.Getenv("CI") != "false" {
		unavailable = t.Fatalf
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not installed: %v", err)
		return
	}
	for _, pkg := range []string{"ai-v4", "ai-v5", "ai-v5-0-0", "ai-v6", "ai-v7", "@ai-sdk/ui-utils"} {
		if _, err := os.Stat(filepath.Join(clientsDir, "node_modules", pkg, "package.json")); err != nil {
			unavailable("the AI SDK clients are not installed (make aisdk-clients, or npm ci in clients/aisdk): %v", err)
			return
		}
	}
	files, err := filepath.Glob(filepath.Join(clientsDir, "*.test.mjs"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Node tests in %s: %v", clientsDir, err)
	}
	sort.Strings(files)

	// The model domain's scripted model cites a passage that exists and one
	// that does not.
	model := llmtest.NewOpenAIServer(t, llmtest.Forever(llmtest.Text("Put patterns in ", "a .ternignore file [1", "]; see also [8].")))
	s := assistantSetup(t, "DOCSMITH_OPENAI_BASE_URL="+model.URL, "DOCSMITH_OPENAI_API_KEY=test-key")
	for _, d := range []struct{ id, flag string }{
		{"tern-strict", "--finish-thread-id=false"},
		{"tern-model", "--model=openai/test-model"},
	} {
		s.cli("domain", "create", "--org", orgA, "--domain", d.id, "--project", "tern", "--site-url", "https://tern.example/docs", d.flag)
		s.cli("index", d.id)
	}

	wire := wireServer(t)

	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	args := []string{"--test", "--test-reporter=spec"}
	for _, f := range files {
		rel, err := filepath.Rel("../..", f)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, rel)
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(),
		"DOCSMITH_URL="+s.base,
		"DOCSMITH_ASSISTANT_KEY="+s.assistantA,
		"DOCSMITH_DOMAIN=tern",
		"DOCSMITH_STRICT_DOMAIN=tern-strict",
		"DOCSMITH_MODEL_DOMAIN=tern-model",
		"DOCSMITH_WIRE_URL="+wire.URL,
		"NO_COLOR=1",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node %s\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("the AI SDK client tests failed: %v", err)
	}
	// Every client test must have run: the environment above is complete.
	if m := regexp.MustCompile(`skipped (\d+)`).FindStringSubmatch(string(out)); m == nil || m[1] != "0" {
		t.Fatalf("some client tests were skipped (or the summary is missing)")
	}
}
