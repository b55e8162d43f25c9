package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"
)

// mcpClientDir holds the Node test that drives the official TypeScript MCP
// client.
const mcpClientDir = "../../clients/mcp"

// TestMCPTypeScriptClient runs the official TypeScript MCP client
// (@modelcontextprotocol/sdk, installed by 'make test' with npm ci) against
// a real server's MCP endpoint: list the tools, search, read a page, give
// feedback on a page, a bad key, another organization's domain, and a
// domain that serves its public pages without a key. Without Node or the installed package
// the test is skipped, except in CI (CI=true), where it fails.
func TestMCPTypeScriptClient(t *testing.T) {
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
	if _, err := os.Stat(filepath.Join(mcpClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		unavailable("the MCP client is not installed (make mcp-client, or npm ci in clients/mcp): %v", err)
		return
	}
	s := assistantSetup(t)
	s.cli("domain", "create", "--org", orgB, "--domain", "globex-docs", "--project", projB)
	s.cli("domain", "create", "--org", orgA, "--domain", "tern-public", "--project", "tern", "--site-url", "https://tern.example/docs", "--mcp-public")

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "clients/mcp/mcp.test.mjs")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(),
		"DOCSMITH_URL="+s.base,
		"DOCSMITH_ASSISTANT_KEY="+s.assistantA,
		"DOCSMITH_DOMAIN=tern",
		"DOCSMITH_FOREIGN_DOMAIN=globex-docs",
		"DOCSMITH_PUBLIC_DOMAIN=tern-public",
		"NO_COLOR=1",
	)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test clients/mcp/mcp.test.mjs\n%s", out)
	if err != nil {
		t.Fatalf("the MCP client tests failed: %v", err)
	}
	// Every client test must have run.
	pass := regexp.MustCompile(`pass (\d+)`).FindStringSubmatch(string(out))
	skipped := regexp.MustCompile(`skipped (\d+)`).FindStringSubmatch(string(out))
	if pass == nil || pass[1] == "0" || skipped == nil || skipped[1] != "0" {
		t.Fatalf("the MCP client tests did not all run (or the summary is missing)")
	}

	// The client's feedback is the domain's, as an agent's over MCP.
	r := s.get("/v2/analytics/tern/feedback?source=mcp", s.adminA)
	var fb struct {
		Feedback []struct {
			Source, Rating, Comment string
			Pages                   []string
		}
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &fb) != nil || len(fb.Feedback) != 1 {
		t.Fatalf("feedback from MCP: %d %s", r.status, r.body)
	}
	if f := fb.Feedback[0]; f.Source != "mcp" || f.Rating != "down" || f.Comment != "No example of excluding a folder." || !slices.Equal(f.Pages, []string{"guides/sync"}) {
		t.Errorf("feedback from MCP = %+v", f)
	}
}
