package app_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/docsmith/docsmith/internal/httpapi"
	"github.com/docsmith/docsmith/internal/workflow"
)

// badSignature is a well-formed GitHub signature that matches no secret.
var badSignature = "sha256=" + strings.Repeat("0b", 32)

// withWebhookSecret names a secret file on projA and restarts the server,
// so that it reads the project as the CLI left it.
func withWebhookSecret(t *testing.T, s *server) string {
	t.Helper()
	secretFile := filepath.Join(t.TempDir(), "docs-hook-secret")
	if err := os.WriteFile(secretFile, []byte("s3cret-of-the-docs-hook\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.cli("project", "update", "--id", projA, "--webhook-secret-file", secretFile)
	s.restart()
	return secretFile
}

// heldBody is a webhook body sent whole but for its last byte, which it
// sends only once release is closed; arrived is called when the rest has
// been handed to the connection.
type heldBody struct {
	data    []byte
	off     int
	arrived func()
	release <-chan struct{}
}

func (b *heldBody) Read(p []byte) (int, error) {
	if b.off == len(b.data) {
		return 0, io.EOF
	}
	if b.off == len(b.data)-1 {
		b.arrived()
		<-b.release
	}
	end := min(len(b.data)-1, b.off+len(p))
	if b.off == len(b.data)-1 {
		end = len(b.data)
	}
	n := copy(p, b.data[b.off:end])
	b.off += n
	return n, nil
}

// liveHeap is the bytes the process's live objects hold.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestWebhookFloodKeepsMemoryBounded sends 160 unsigned webhooks of 5 MiB
// at once to a project with a webhook secret, each holding back its last
// byte, and measures the server's live heap while they are held: only
// webhook_concurrency bodies are read, the others are answered 503
// unread, and /healthz answers meanwhile. The server reading every body
// would hold 800 MiB.
//
// Not parallel: it measures the heap of the whole test process, which
// tests running beside it would add to.
func TestWebhookFloodKeepsMemoryBounded(t *testing.T) {
	s := setup(t, "DOCSMITH_LOG_LEVEL=warn")
	withWebhookSecret(t, s)
	const senders = 160
	body := bytes.Repeat([]byte("x"), workflow.MaxWebhookBytes)
	transport := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(transport.CloseIdleConnections)
	client := &http.Client{Transport: transport}

	baseline := liveHeap()
	release := make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce)
	var arrived sync.WaitGroup
	arrived.Add(senders)
	statuses := make(chan int, senders)
	for i := range senders {
		go func() {
			done := sync.OnceFunc(arrived.Done)
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/v2/hooks/"+projA,
				&heldBody{data: body, arrived: done, release: release})
			if err != nil {
				done()
				statuses <- -1
				return
			}
			req.ContentLength = int64(len(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-GitHub-Event", "push")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("flood-%03d", i))
			req.Header.Set("X-Hub-Signature-256", badSignature)
			resp, err := client.Do(req)
			done()
			if err != nil {
				// The server closed a connection whose body it did not
				// read while the body was still being sent.
				statuses <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	arrived.Wait()

	if r := s.get("/healthz", ""); r.status != http.StatusOK {
		t.Errorf("/healthz during the flood: %s", r)
	}
	grown := int64(liveHeap()) - int64(baseline)
	releaseOnce()
	counts := map[int]int{}
	for range senders {
		counts[<-statuses]++
	}
	// Each body read is at most 5 MiB; three times the bodies the server
	// may read at once leaves room for everything else it holds.
	bound := int64(3 * httpapi.DefaultWebhookReads * workflow.MaxWebhookBytes)
	if grown > bound {
		t.Errorf("the live heap grew by %d MiB while %d webhook bodies were sent at once, more than %d MiB", grown>>20, senders, bound>>20)
	}
	if read := counts[http.StatusUnauthorized]; read == 0 || read > httpapi.DefaultWebhookReads {
		t.Errorf("%d deliveries were read and refused, want 1 to %d: %v", read, httpapi.DefaultWebhookReads, counts)
	}
	if counts[http.StatusUnauthorized]+counts[http.StatusServiceUnavailable]+counts[0] != senders {
		t.Errorf("answers by status %v: want only 401 (read and refused), 503 or a closed connection (not read)", counts)
	}
}

// TestWebhookRefusalsLookTheSameToTheSender: an unknown project, a project
// without a webhook secret, a wrong signature and headers no forge sends
// all get the same 401 and body, which names neither the secret's file
// nor a project's set-up; the log has the reason under the request id.
func TestWebhookRefusalsLookTheSameToTheSender(t *testing.T) {
	t.Parallel()
	s := setup(t)
	secretFile := withWebhookSecret(t, s)
	github := map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d-1", "X-Hub-Signature-256": badSignature}
	tests := []struct {
		name    string
		project string
		header  map[string]string
		logged  string
	}{
		{"unknown project", "nope", github, "project=nope"},
		{"project without a secret", projA2, github, "has no webhook secret"},
		{"wrong signature", projA, github, "does not match"},
		{"no forge headers", projA, map[string]string{}, "no GitHub, GitLab, Gitea or Forgejo event header"},
		{"unsigned", projA, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d-2"}, "X-Hub-Signature-256 is missing"},
	}
	var first reply
	for i, tc := range tests {
		r := s.do(request{method: http.MethodPost, path: "/v2/hooks/" + tc.project, body: `{"ref":"refs/heads/main"}`, header: tc.header})
		if i == 0 {
			first = r
		}
		if r.status != http.StatusUnauthorized || !bytes.Equal(r.body, first.body) {
			t.Errorf("%s: %s, want the answer to %s: %s", tc.name, r, tests[0].name, first)
		}
		for _, leak := range []string{secretFile, filepath.Base(secretFile), "webhook-secret", projA} {
			if bytes.Contains(r.body, []byte(leak)) {
				t.Errorf("%s: the answer names %q: %s", tc.name, leak, r)
			}
		}
		id := r.header.Get("X-Request-Id")
		var warned bool
		for _, line := range strings.Split(s.logs.String(), "\n") {
			warned = warned || strings.Contains(line, "webhook refused") && strings.Contains(line, "request_id="+id) && strings.Contains(line, tc.logged)
		}
		if !warned {
			t.Errorf("%s: no warning under request id %s says %q", tc.name, id, tc.logged)
		}
	}
}
