package app_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docsmith/docsmith/internal/cli"
)

// TestExportLLMsTxt writes a domain's llms files with the CLI and checks
// that they are the bytes the server serves, every answer checked against
// openapi.json.
func TestExportLLMsTxt(t *testing.T) {
	t.Parallel()
	s := assistantSetup(t)
	dir := t.TempDir()
	out := s.cli("export", "llms-txt", "tern", dir)
	if !strings.Contains(out, "llms.txt") || !strings.Contains(out, "llms-full.txt") {
		t.Errorf("export printed %q", out)
	}
	for _, c := range []struct{ file, path string }{
		{"llms.txt", "/discovery/v1/llms.txt/tern"},
		{"llms-full.txt", "/discovery/v1/llms-full.txt/tern"},
	} {
		written, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		r := s.get(c.path, "")
		expectStatus(t, r, http.StatusOK)
		if !bytes.Equal(r.body, written) {
			t.Errorf("%s differs from %s:\n%s\n---\n%s", c.file, c.path, written, r.body)
		}
		if !bytes.HasPrefix(written, []byte("# Tern\n\n> ")) || bytes.Contains(written, []byte("guides/audit")) {
			t.Errorf("%s:\n%s", c.file, written)
		}
		r = s.do(request{method: http.MethodGet, path: c.path, header: map[string]string{"If-None-Match": r.header.Get("ETag")}})
		expectStatus(t, r, http.StatusNotModified)
	}

	// A symbolic link in the way is refused, and what it points at is left alone.
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	if err := os.Symlink(target, filepath.Join(linked, "llms.txt")); err != nil {
		t.Fatal(err)
	}
	if code, stderr := s.cliFails("export", "llms-txt", "tern", linked); code != 1 || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("export over a symlink: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
	if code, stderr := s.cliFails("export", "llms-txt", "nope", dir); code != 1 || !strings.Contains(stderr, `"nope" not found`) {
		t.Errorf("unknown domain: exit %d, %s", code, stderr)
	}
}

// TestFeedbackEndToEnd rates a streamed answer by the message id the
// stream announced, the answer checked against openapi.json.
func TestFeedbackEndToEnd(t *testing.T) {
	t.Parallel()
	s := assistantSetup(t)
	r := s.post("/discovery/v2/assistant/tern/message", s.assistantA, askBody("How do I exclude files from a sync?", ""))
	expectStatus(t, r, http.StatusOK)
	thread, message := r.header.Get("X-Thread-Id"), ""
	for _, c := range uiChunks(t, r.body) {
		if c["type"] == "start" {
			message, _ = c["messageId"].(string)
		}
	}
	if message == "" {
		t.Fatalf("no messageId in the start part:\n%s", r.body)
	}
	r = s.post("/discovery/v1/assistant/tern/feedback", s.assistantA, map[string]any{
		"threadId": thread, "messageId": message, "rating": "down", "comment": "It should mention .ternignore negation.",
	}, "Origin", "https://tern.example")
	expectStatus(t, r, http.StatusOK)
	if r.header.Get("Access-Control-Allow-Origin") != "https://tern.example" || !strings.Contains(string(r.body), `"rating":"down"`) {
		t.Errorf("feedback: %v %s", r.header, r.body)
	}
	r = s.post("/discovery/v1/assistant/tern/feedback", s.assistantA, map[string]any{"threadId": thread, "messageId": "msg_other", "rating": "up"})
	expectStatus(t, r, http.StatusNotFound)
}

// cliFails runs a command that should fail and returns its exit code and
// standard error.
func (s *server) cliFails(args ...string) (int, string) {
	s.t.Helper()
	var stdout, stderr bytes.Buffer
	args = append(args, "--data", s.dir)
	code := cli.Run(s.t.Context(), args, cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, LookupEnv: s.lookupEnv})
	return code, stderr.String()
}
